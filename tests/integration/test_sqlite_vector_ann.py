"""The SQLite VectorIndex's two-stage search on large accounts (ADR 0047).

An account past ``ann_min_rows`` chunks is searched first in its own principal directions,
then its best candidates are scored exactly. From the caller's side: the hits are nearly
those of the exact scan and carry exact similarities, an account's answers never depend on
another account's vectors, deletes and new writes show at once, and a restart reads the
stored projection instead of training another.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import memvault.adapters.sqlite.vectors as vectors_module
from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.vectors import SqliteVectorIndex
from memvault.ports import ChunkVector

DIM = 32
ANN_ROWS = 1_000  # the two-stage search from this many chunks on (tests only)
NOTES = 150
CHUNKS = 10  # a note


def vectors(seed: int, count: int) -> np.ndarray:
    """Unit vectors around a few topics, with a common direction (as static embeddings)."""
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((12, DIM))
    common = rng.standard_normal(DIM) * 2
    rows = common + topics[rng.integers(0, 12, count)] + 0.8 * rng.standard_normal((count, DIM))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def store(index: SqliteVectorIndex, account: str, seed: int, folder: str = "") -> np.ndarray:
    rows = vectors(seed, NOTES * CHUNKS)
    notes = {}
    for n in range(NOTES):
        path = f"{folder}n{n}.md"
        notes[path] = [
            ChunkVector(
                note_id=f"{account}-{n}",
                path=path,
                chunk_index=i,
                heading="",
                offset=i,
                length=1,
                text=f"{account}:{path}#{i}",
                tags=("t",) if n % 3 == 0 else (),
                vector=rows[n * CHUNKS + i].tolist(),
                model="m",
                updated_at=1.0,
            )
            for i in range(CHUNKS)
        ]
    index.upsert_notes(account, notes)
    return rows


def queries(seed: int, count: int = 40) -> list[list[float]]:
    return [q.tolist() for q in vectors(seed, count)]


def nearest(index: SqliteVectorIndex, account: str, query: list[float], **kw: object):  # type: ignore[no-untyped-def]
    return index.nearest(account, query, model="m", limit=10, **kw)  # type: ignore[arg-type]


def keys(hits) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    return [(h.path, h.chunk_index) for h in hits]


@pytest.fixture()
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "v.sqlite3"


@pytest.fixture(autouse=True)
def few_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    # A real vault's floor is 1,000 candidates; here 200 of 1,500 rows are scored exactly,
    # gathered 64 rows at a time (512 in a real vault).
    monkeypatch.setattr(vectors_module, "MIN_CANDIDATES", 50)
    monkeypatch.setattr(vectors_module, "GATHER_ROWS", 64)


def test_two_stage_hits_match_the_exact_scan_with_exact_scores(db_path: Path) -> None:
    ann = SqliteVectorIndex(Database(db_path), ann_min_rows=ANN_ROWS, projected_dims=8)
    exact = SqliteVectorIndex(Database(db_path), ann_min_rows=10**9)
    rows = store(ann, "acc", seed=1)
    found, wanted = 0, 0
    for query in queries(seed=7):
        got, truth = nearest(ann, "acc", query), nearest(exact, "acc", query)
        assert len(got) == 10
        found += len(set(keys(got)) & set(keys(truth)))
        wanted += len(truth)
        for hit in got:  # the similarity returned is the exact cosine of that chunk
            n = int(hit.path[1:-3])
            cosine = float(rows[n * CHUNKS + hit.chunk_index] @ np.asarray(query))
            assert hit.similarity == pytest.approx(cosine, abs=1e-5)
        assert [h.similarity for h in got] == sorted((h.similarity for h in got), reverse=True)
    assert found / wanted >= 0.9
    # The projection is stored with the account and model it was trained from.
    conn = Database(db_path).connection()
    stored = conn.execute("SELECT account_id, model FROM vector_projections").fetchall()
    assert [tuple(r) for r in stored] == [("acc", "m")]


def test_an_accounts_answers_do_not_depend_on_another_accounts_vectors(tmp_path: Path) -> None:
    alone = SqliteVectorIndex(Database(tmp_path / "a.sqlite3"), ann_min_rows=ANN_ROWS)
    shared = SqliteVectorIndex(Database(tmp_path / "b.sqlite3"), ann_min_rows=ANN_ROWS)
    store(alone, "acc", seed=1)
    store(shared, "other", seed=2)  # a neighbour with more, different vectors
    store(shared, "other", seed=3, folder="more/")
    store(shared, "acc", seed=1)
    for query in queries(seed=9, count=20):
        mine = nearest(alone, "acc", query)
        assert [(h.path, h.chunk_index, h.similarity) for h in nearest(shared, "acc", query)] == [
            (h.path, h.chunk_index, h.similarity) for h in mine
        ]
        theirs = nearest(shared, "other", query)
        assert theirs and all(h.text.startswith("other:") for h in theirs)
    # Filters stay inside the search: a tag or folder page is full and only of its rows.
    tagged = nearest(shared, "other", queries(seed=9)[0], tag="t")
    assert len(tagged) == 10 and all(int(h.path.split("n")[-1][:-3]) % 3 == 0 for h in tagged)
    foldered = nearest(shared, "other", queries(seed=9)[0], folder="more/")
    assert len(foldered) == 10 and all(h.path.startswith("more/") for h in foldered)


def test_deletes_and_new_writes_show_at_once_and_a_restart_reads_the_stored_projection(
    db_path: Path,
) -> None:
    index = SqliteVectorIndex(Database(db_path), ann_min_rows=ANN_ROWS)
    store(index, "acc", seed=1)
    query = queries(seed=11, count=1)[0]
    before = nearest(index, "acc", query)
    best = before[0].path
    index.delete_notes("acc", [best])
    after = nearest(index, "acc", query)
    assert best not in {h.path for h in after} and len(after) == 10
    # A new note holding the query itself is the best hit at once.
    index.upsert_chunks(
        "acc",
        "new.md",
        [
            ChunkVector(
                note_id="new",
                path="new.md",
                chunk_index=0,
                heading="",
                offset=0,
                length=1,
                text="acc:new",
                tags=(),
                vector=query,
                model="m",
                updated_at=2.0,
            )
        ],
    )
    top = nearest(index, "acc", query)[0]
    assert (top.path, top.similarity) == ("new.md", pytest.approx(1.0, abs=1e-5))
    conn = Database(db_path).connection()
    (basis,) = conn.execute("SELECT basis FROM vector_projections").fetchone()
    # Another process (a restart) answers the same, from the stored projection.
    restarted = SqliteVectorIndex(Database(db_path), ann_min_rows=ANN_ROWS)
    assert keys(nearest(restarted, "acc", query)) == keys(nearest(index, "acc", query))
    (again,) = conn.execute("SELECT basis FROM vector_projections").fetchone()
    assert again == basis
    # Erasing the account's vectors takes its projection with them.
    restarted.clear("acc")
    assert nearest(restarted, "acc", query) == []
    assert conn.execute("SELECT COUNT(*) FROM vector_projections").fetchone()[0] == 0


def test_a_scan_split_across_two_threads_finds_what_one_thread_finds(db_path: Path) -> None:
    # ADR 0057: a large account's projected rows are scanned in two halves side by side.
    # The halves choose their own candidates; the page is still full, exact, filtered
    # inside and without the deleted note, and nearly the exact scan's.
    split = SqliteVectorIndex(Database(db_path), ann_min_rows=ANN_ROWS, split_rows=1)
    exact = SqliteVectorIndex(Database(db_path), ann_min_rows=10**9)
    store(split, "acc", seed=1)
    store(split, "other", seed=2)
    split.delete_notes("acc", ["n3.md"])
    found = wanted = 0
    for query in queries(seed=13, count=20):
        got, truth = nearest(split, "acc", query), nearest(exact, "acc", query)
        assert len(got) == 10 and all(h.text.startswith("acc:") for h in got)
        assert "n3.md" not in {h.path for h in got}
        assert [h.similarity for h in got] == sorted((h.similarity for h in got), reverse=True)
        found += len(set(keys(got)) & set(keys(truth)))
        wanted += len(truth)
        tagged = nearest(split, "acc", query, tag="t")
        assert len(tagged) == 10 and all(int(h.path[1:-3]) % 3 == 0 for h in tagged)
    assert found / wanted >= 0.9


def static_vectors(seed: int, count: int) -> np.ndarray:
    """Unit means of 3-39 words' vectors, the words Zipf-distributed, the way a static
    embedding model makes a chunk's vector (no topics: ADR 0047's synthetic vault)."""
    words = np.random.default_rng(0).standard_normal((3000, DIM)) + 0.3
    weights = 1.0 / np.arange(1, 3001)
    rng = np.random.default_rng(seed)
    rows = np.stack(
        [
            words[rng.choice(3000, rng.integers(3, 40), p=weights / weights.sum())].mean(axis=0)
            for _ in range(count)
        ]
    )
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def test_the_residual_term_finds_more_of_the_exact_hits_than_the_projection_alone(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ADR 0066: candidates are chosen by the projected score plus RESIDUAL_WEIGHT x the
    # query's and the row's lengths outside the directions. Here 40 of 1,500 rows are
    # rescored (the floor of 20 per hit asked for), from 8 directions of 32, no widening.
    monkeypatch.setattr(vectors_module, "MIN_CANDIDATES", 12)
    monkeypatch.setattr(vectors_module, "MIN_ENERGY", 0.0)
    monkeypatch.setattr(vectors_module, "TYPICAL_ENERGY", 1e-6)
    monkeypatch.setattr(sys.modules[__name__], "vectors", static_vectors)
    exact = SqliteVectorIndex(Database(db_path), ann_min_rows=10**9)
    store(exact, "acc", seed=1)
    asked = [q.tolist() for q in static_vectors(17, 100)]

    def found(residual_weight: float) -> float:
        monkeypatch.setattr(vectors_module, "RESIDUAL_WEIGHT", residual_weight)
        ann = SqliteVectorIndex(Database(db_path), ann_min_rows=ANN_ROWS, projected_dims=8)
        hits = wanted = 0
        for query in asked:
            truth = keys(exact.nearest("acc", query, model="m", limit=2))
            got = ann.nearest("acc", query, model="m", limit=2)
            assert len(got) == 2 and got[0].similarity >= got[1].similarity
            hits += len(set(keys(got)) & set(truth))
            wanted += len(truth)
        return hits / wanted

    with_term, without = found(vectors_module.RESIDUAL_WEIGHT), found(0.0)
    # 0.785 against 0.645 when written
    assert with_term >= without + 0.08, (with_term, without)


def test_a_basis_stored_with_more_directions_serves_as_its_leading_ones(db_path: Path) -> None:
    # A vault whose basis was stored with 64 directions (before ADR 0066's 48) is searched
    # in the leading ones at once: nothing is trained or stored again, and the hits are
    # those of a basis trained with as many directions as the index uses.
    wide = SqliteVectorIndex(Database(db_path), ann_min_rows=ANN_ROWS, projected_dims=12)
    store(wide, "acc", seed=1)
    query = queries(seed=19, count=1)[0]
    nearest(wide, "acc", query)
    conn = Database(db_path).connection()
    (stored,) = conn.execute("SELECT basis FROM vector_projections").fetchone()
    narrow = SqliteVectorIndex(Database(db_path), ann_min_rows=ANN_ROWS, projected_dims=8)
    got = nearest(narrow, "acc", query)
    assert conn.execute("SELECT basis FROM vector_projections").fetchone()[0] == stored
    fresh_path = db_path.with_name("fresh.sqlite3")
    fresh = SqliteVectorIndex(Database(fresh_path), ann_min_rows=ANN_ROWS, projected_dims=8)
    store(fresh, "acc", seed=1)
    assert keys(got) == keys(nearest(fresh, "acc", query))
    assert [h.similarity for h in got] == [h.similarity for h in nearest(fresh, "acc", query)]


def test_candidates_scored_in_one_gather_score_as_scored_block_by_block() -> None:
    """Up to GATHER_ONCE_ROWS candidates are gathered at once (ADR 0078): every row gets
    the score it got when the candidates went 512 at a time, bit for bit (the order of
    equal similarities, and so the hits, hang on it), at every count around a block's
    end, a block of one row (scored as a dot product) included."""
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((20_000, 256)).astype(np.float32)
    block = vectors_module.GATHER_ROWS

    def block_by_block(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
        if len(rows) <= block:
            return np.asarray(matrix[rows] @ query, dtype=np.float32)
        out = np.empty(len(rows), dtype=np.float32)
        for start in range(0, len(rows), block):
            part = np.ascontiguousarray(matrix[rows[start : start + block]])
            np.dot(part, query, out=out[start : start + len(part)])
        return out

    counts = [1, 2, 511, 512, 513, 514, 1023, 1024, 1025, 3000, 4097]
    counts += [vectors_module.GATHER_ONCE_ROWS + d for d in (-1, 0, 1, 2)]
    for count in counts:
        rows = np.sort(rng.choice(len(matrix), size=count, replace=False))
        query = rng.standard_normal(256).astype(np.float32)
        assert np.array_equal(
            vectors_module._scores_of(matrix, rows, query), block_by_block(rows, query)
        ), count
