"""The SQLite VectorIndex's in-memory matrices never answer from stale rows.

A process patches its cached matrix with its own writes; another process's write (here: a
second index on the same file) makes it read the rows again. Whatever the order of writes,
a search answers what a fresh read of the database would.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.vectors import SqliteVectorIndex
from memvault.ports import ChunkVector

DIM = 8


def chunks(path: str, seed: int, count: int, model: str = "m") -> list[ChunkVector]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        v = rng.standard_normal(DIM).astype(np.float32)
        v /= np.linalg.norm(v)
        out.append(
            ChunkVector(
                note_id=f"id-{path}",
                path=path,
                chunk_index=i,
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
            index.upsert_chunks("acc", note, chunks(note, seed, count))
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
