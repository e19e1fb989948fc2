"""The SQLite VectorIndex's in-memory matrices never answer from stale rows.

A process patches its cached matrix with its own writes; another process's write (here: a
second index on the same file) makes it read the rows again. Whatever the order of writes,
a search answers what a fresh read of the database would.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.vectors import SqliteVectorIndex
from memvault.domain.tags import ancestor_keys
from memvault.ports import ChunkVector

DIM = 8


def chunks(path: str, seed: int, count: int, model: str = "m", first: int = 0) -> list[ChunkVector]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        v = rng.standard_normal(DIM).astype(np.float32)
        v /= np.linalg.norm(v)
        out.append(
            ChunkVector(
                note_id=f"id-{path}",
                path=path,
                chunk_index=first + i,
                heading="",
                offset=i,
                length=1,
                text=f"{path}#{i}",
                tags=("even",) if seed % 2 == 0 else ("odd/x",),
                vector=v.tolist(),
                model=model,
                updated_at=float(seed),
            )
        )
    return out


def answer(index: SqliteVectorIndex, **kw: object) -> list[tuple[str, int]]:
    query = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)
    hits = index.nearest("acc", query.tolist(), model="m", limit=50, **kw)  # type: ignore[arg-type]
    return [(h.path, h.chunk_index) for h in hits]


def light_is_whole(index: SqliteVectorIndex, **kw: object) -> None:
    """Hits without texts (ADR 0076) are the whole hits' keys, scores and times, and
    ``with_texts`` fills them to the whole hits."""
    query = (np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)).tolist()
    whole = index.nearest("acc", query, model="m", limit=50, **kw)  # type: ignore[arg-type]
    light = index.nearest("acc", query, model="m", limit=50, texts=False, **kw)  # type: ignore[arg-type]
    keys = [(h.path, h.chunk_index, h.similarity, h.updated_at) for h in light]
    assert keys == [(h.path, h.chunk_index, h.similarity, h.updated_at) for h in whole]
    assert all(h.text == "" and h.note_id == "" for h in light)
    assert index.with_texts("acc", "m", light) == whole


OPS = st.lists(
    st.tuples(
        st.sampled_from(["mine", "theirs"]),
        st.sampled_from(["upsert", "delete", "other-model"]),
        st.sampled_from(["a.md", "b.md", "f/c.md", "f/d.md"]),
        st.integers(0, 50),
        st.integers(0, 4),
    ),
    max_size=15,
)


@given(ops=OPS)
def test_searches_agree_with_a_fresh_read_whatever_the_writes(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, str, str, int, int]]
) -> None:
    path = Path(tmp_path_factory.mktemp("v")) / "v.sqlite3"
    mine = SqliteVectorIndex(Database(path))
    theirs = SqliteVectorIndex(Database(path))
    for who, op, note, seed, count in ops:
        index = mine if who == "mine" else theirs
        if op == "upsert":
            index.upsert_chunks("acc", note, chunks(note, seed, count, first=seed % 3))
        elif op == "other-model":
            index.upsert_chunks("acc", note, chunks(note, seed, count, model="other"))
        else:
            index.delete_notes("acc", [note])
        answer(mine)  # keep a matrix cached between writes
        answer(mine, folder="f/")
    fresh = SqliteVectorIndex(Database(path))
    for kw in ({}, {"folder": "f/"}, {"tag": "odd"}, {"tag": "even"}):
        assert answer(mine, **kw) == answer(fresh, **kw)
        assert answer(theirs, **kw) == answer(fresh, **kw)
        light_is_whole(mine, **kw)  # its matrix patched by its own writes
        light_is_whole(fresh, **kw)


def test_hits_without_texts_leave_out_notes_rewritten_or_removed_since(tmp_path: Path) -> None:
    index = SqliteVectorIndex(Database(tmp_path / "v.sqlite3"))
    for seed, note in enumerate(["a.md", "b.md", "c.md", "d.md"], start=1):
        index.upsert_chunks("acc", note, chunks(note, seed, 3, first=5))
    query = (np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)).tolist()
    light = index.nearest("acc", query, model="m", limit=12, texts=False)
    assert {h.chunk_index for h in light} == {5, 6, 7}
    index.upsert_chunks("acc", "a.md", chunks("a.md", 9, 3, first=5))  # rewritten: a new time
    index.delete_notes("acc", ["b.md"])
    index.upsert_chunks("acc", "c.md", chunks("c.md", 3, 3, model="other"))  # re-embedded
    filled = index.with_texts("acc", "m", light)
    assert [(h.path, h.chunk_index) for h in filled] == [
        (h.path, h.chunk_index) for h in light if h.path == "d.md"
    ]
    assert {h.text for h in filled} == {"d.md#0", "d.md#1", "d.md#2"}
    assert {h.note_id for h in filled} == {"id-d.md"}


def test_another_account_and_model_never_answer(tmp_path: Path) -> None:
    index = SqliteVectorIndex(Database(tmp_path / "v.sqlite3"))
    index.upsert_chunks("other", "a.md", chunks("a.md", 1, 3))
    index.upsert_chunks("acc", "b.md", chunks("b.md", 2, 2, model="other"))
    assert answer(index) == []
    index.upsert_chunks("acc", "c.md", chunks("c.md", 3, 2))
    assert {p for p, _ in answer(index)} == {"c.md"}
    assert index.indexed_models("acc") == {"m": 2, "other": 2}
    assert index.indexed_paths("acc", ["b.md", "c.md", "nope.md"]) == {"b.md": "other", "c.md": "m"}
    # A query of another dimension cannot be of this model.
    assert index.nearest("acc", [1.0, 0.0], model="m", limit=5) == []


# The vector table of a database made before ADR 0069: one row a chunk.
BEFORE_0069 = """
CREATE TABLE vector_chunks (
    id INTEGER PRIMARY KEY, account_id TEXT NOT NULL, path TEXT NOT NULL,
    chunk_index INTEGER NOT NULL, note_id TEXT NOT NULL, model TEXT NOT NULL,
    dimension INTEGER NOT NULL, heading TEXT NOT NULL, start INTEGER NOT NULL,
    length INTEGER NOT NULL, text TEXT NOT NULL, tag_keys TEXT NOT NULL,
    updated_at REAL NOT NULL, vector BLOB NOT NULL, UNIQUE (account_id, path, chunk_index)
);
CREATE INDEX vector_chunks_by_model ON vector_chunks(account_id, model);
CREATE TABLE vector_accounts (account_id TEXT PRIMARY KEY, generation INTEGER NOT NULL DEFAULT 0);
"""


def note_chunks(
    path: str, seed: int, markdown: str, cuts: list[tuple[int, int]]
) -> list[ChunkVector]:
    """Chunks of ``markdown`` as the chunker makes them (text = markdown[offset:][:length])."""
    rng = np.random.default_rng(seed)
    out = []
    for i, (offset, length) in enumerate(cuts):
        v = rng.standard_normal(DIM).astype(np.float32)
        v /= np.linalg.norm(v)
        out.append(
            ChunkVector(
                note_id=f"id-{path}",
                path=path,
                chunk_index=i,
                heading=f"h{i % 2}",
                offset=offset,
                length=length,
                text=markdown[offset : offset + length],
                tags=("Even", "odd/x") if seed % 2 else ("even",),
                vector=v.tolist(),
                model="m",
                updated_at=float(seed),
            )
        )
    return out


def hits(index: SqliteVectorIndex, **kw: object) -> list[tuple[object, ...]]:
    query = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)
    found = index.nearest("acc", query.tolist(), model="m", limit=50, **kw)  # type: ignore[arg-type]
    return [
        (h.note_id, h.path, h.chunk_index, h.heading, h.offset, h.length, h.text, h.updated_at)
        for h in found
    ]


def test_a_database_from_before_one_row_a_note_opens_migrated_and_answers_the_same(
    tmp_path: Path,
) -> None:
    text = "---\ntags: [x]\n---\n# Title ü\n\nFirst line.\nSecond line, 🙂 longer.\n\nLast.\n"
    notes = {
        # overlapping chunks, a gap between two (a blank line), non-ASCII text
        "f/a.md": note_chunks("f/a.md", 1, text, [(18, 12), (26, 23), (50, 5)]),
        "b.md": note_chunks("b.md", 2, "", [(0, 0)]),  # an empty note's one chunk
        "f/c.md": chunks("f/c.md", 3, 4),  # texts that are no slice of anything
    }
    old = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(old)
    conn.executescript(BEFORE_0069)
    rows = []
    # Stored in this order: f/c.md's chunks first, the others interleaved after them.
    for path, i in (
        [("f/c.md", i) for i in range(4)]
        + [("b.md", 0), ("f/a.md", 0)]
        + [
            ("f/a.md", 1),
            ("f/a.md", 2),
        ]
    ):
        c = notes[path][i]
        rows.append(
            (
                "acc",
                c.path,
                c.chunk_index,
                c.note_id,
                c.model,
                DIM,
                c.heading,
                c.offset,
                c.length,
                c.text,
                json.dumps(ancestor_keys(c.tags)),
                c.updated_at,
                np.asarray(c.vector, dtype=np.float32).tobytes(),
            )
        )
    conn.executemany(
        "INSERT INTO vector_chunks (account_id, path, chunk_index, note_id, model, dimension,"
        " heading, start, length, text, tag_keys, updated_at, vector)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.execute("INSERT INTO vector_accounts VALUES ('acc', 7)")
    conn.commit()
    before = [tuple(r) for r in conn.execute("SELECT * FROM vector_chunks ORDER BY id")]
    conn.close()

    fresh = SqliteVectorIndex(Database(tmp_path / "fresh.sqlite3"))
    for path in ("f/c.md", "b.md", "f/a.md"):
        fresh.upsert_chunks("acc", path, notes[path])
    migrated = SqliteVectorIndex(Database(old))
    again = SqliteVectorIndex(Database(old))  # a second open finds nothing to migrate
    for kw in ({}, {"folder": "f/"}, {"tag": "odd"}, {"tag": "even"}):
        assert hits(migrated, **kw) == hits(again, **kw) == hits(fresh, **kw)
    expected = {
        (c.path, c.chunk_index, c.offset, c.length, c.text) for n in notes.values() for c in n
    }
    assert {h[1:2] + h[2:3] + h[4:7] for h in hits(migrated)} == expected
    assert migrated.indexed_models("acc") == fresh.indexed_models("acc") == {"m": 8}
    # The view shows the rows the table held, in their order, each chunk's text its own.
    view = migrated.db.connection().execute("SELECT * FROM vector_chunks ORDER BY id").fetchall()
    assert [tuple(r)[1:] for r in view] == [r[1:] for r in before]
    # Writes after the migration land and show.
    migrated.delete_notes("acc", ["f/c.md"])
    assert {h[1] for h in hits(again)} == {"f/a.md", "b.md"}
