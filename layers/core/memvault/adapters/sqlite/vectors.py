"""VectorIndex on SQLite: chunk vectors as float32 blobs, exact search with numpy (ADR 0025).

Each chunk is a row of ``vector_chunks`` (its note's path, heading, offset, text, tags and
the model that embedded it). A search is exact: the dot product of the query with every
vector of the account and model (vectors are unit length, so it is the cosine), then the
best ``limit``. The account's matrix is read once and kept in memory per (account, model)
until the account's vectors change: ``vector_accounts.generation`` moves in the same
transaction as every write, so a matrix is never used once its rows have changed, in this
process or another (the same rule as the text index's term counts). Measured against
sqlite-vec in bench/vectors.py: at 100k chunks a cached exact search takes a few
milliseconds; the account's rows are the only ones read.

The account filter and the model filter select the rows the matrix is built from (SQL
``WHERE account_id = ? AND model = ?``); folder and tag filters mask the matrix's rows
before the best are taken, so a filter never empties a page of otherwise good hits.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memvault.adapters.sqlite.db import Database
from memvault.domain.tags import ancestor_keys, tag_key
from memvault.ports import ChunkVector, VectorHit

SCHEMA = """
CREATE TABLE IF NOT EXISTS vector_chunks (
    id INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL,
    path TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    note_id TEXT NOT NULL,
    model TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    heading TEXT NOT NULL,
    start INTEGER NOT NULL,
    length INTEGER NOT NULL,
    text TEXT NOT NULL,
    tag_keys TEXT NOT NULL,
    updated_at REAL NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (account_id, path, chunk_index)
);
CREATE INDEX IF NOT EXISTS vector_chunks_by_model ON vector_chunks(account_id, model);
CREATE TABLE IF NOT EXISTS vector_accounts (
    account_id TEXT PRIMARY KEY,
    generation INTEGER NOT NULL DEFAULT 0
);
"""

# Matrices kept in memory: a few accounts' worth (100k chunks x 256 dimensions is 100 MB).
CACHE_ROWS = 400_000


@dataclass(frozen=True, slots=True)
class _Matrix:
    generation: int
    ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]
    paths: npt.NDArray[np.str_]
    tags: dict[str, npt.NDArray[np.int64]]  # tag key (and each ancestor) -> row numbers


def _blob(vector: Sequence[float], dimension: int) -> bytes:
    array = np.asarray(vector, dtype=np.float32)
    if array.shape != (dimension,):
        raise ValueError(f"a vector of {array.shape} for dimension {dimension}")
    return array.tobytes()


class SqliteVectorIndex:
    def __init__(self, db: Database, *, cache_rows: int = CACHE_ROWS) -> None:
        self.db = db
        db.add_schema(SCHEMA)
        self._cache: OrderedDict[tuple[str, str], _Matrix] = OrderedDict()
        self._cache_rows = cache_rows
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ writes
    def upsert_chunks(self, account_id: str, path: str, chunks: Sequence[ChunkVector]) -> None:
        rows = []
        for chunk in chunks:
            if chunk.path != path:
                raise ValueError(f"chunk of {chunk.path!r} upserted under {path!r}")
            rows.append(
                (
                    account_id,
                    path,
                    chunk.chunk_index,
                    chunk.note_id,
                    chunk.model,
                    len(chunk.vector),
                    chunk.heading,
                    chunk.offset,
                    chunk.length,
                    chunk.text,
                    json.dumps(ancestor_keys(chunk.tags)),
                    chunk.updated_at,
                    _blob(chunk.vector, len(chunk.vector)),
                )
            )
        with self.db.transaction() as conn:
            conn.execute(
                "DELETE FROM vector_chunks WHERE account_id = ? AND path = ?", (account_id, path)
            )
            conn.executemany(
                "INSERT INTO vector_chunks (account_id, path, chunk_index, note_id, model,"
                " dimension, heading, start, length, text, tag_keys, updated_at, vector)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._bump(conn, account_id)

    def delete_notes(self, account_id: str, paths: Collection[str]) -> None:
        if not paths:
            return
        with self.db.transaction() as conn:
            conn.executemany(
                "DELETE FROM vector_chunks WHERE account_id = ? AND path = ?",
                [(account_id, p) for p in paths],
            )
            self._bump(conn, account_id)

    def clear(self, account_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM vector_chunks WHERE account_id = ?", (account_id,))
            self._bump(conn, account_id)

    @staticmethod
    def _bump(conn: sqlite3.Connection, account_id: str) -> None:
        conn.execute(
            "INSERT INTO vector_accounts (account_id, generation) VALUES (?, 1)"
            " ON CONFLICT(account_id) DO UPDATE SET generation = generation + 1",
            (account_id,),
        )

    # ------------------------------------------------------------------ reads
    def indexed_models(self, account_id: str) -> dict[str, int]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT model, COUNT(*) AS n FROM vector_chunks WHERE account_id = ?"
                " GROUP BY model ORDER BY model",
                (account_id,),
            )
            .fetchall()
        )
        return {r["model"]: int(r["n"]) for r in rows}

    def indexed_paths(self, account_id: str, paths: Collection[str]) -> dict[str, str]:
        """path -> the model its chunks were embedded with, for those of ``paths`` that have
        chunks (a note whose chunks mix models reports the first by name)."""
        if not paths:
            return {}
        conn = self.db.connection()
        out: dict[str, str] = {}
        for path in paths:
            row = conn.execute(
                "SELECT MIN(model) AS model FROM vector_chunks WHERE account_id = ? AND path = ?",
                (account_id, path),
            ).fetchone()
            if row is not None and row["model"] is not None:
                out[path] = row["model"]
        return out

    def nearest(
        self,
        account_id: str,
        vector: Sequence[float],
        *,
        model: str,
        limit: int,
        folder: str = "",
        tag: str | None = None,
    ) -> list[VectorHit]:
        if limit <= 0:
            return []
        matrix = self._matrix(account_id, model)
        if matrix is None or not len(matrix.ids):
            return []
        query = np.asarray(vector, dtype=np.float32)
        if query.shape != (matrix.vectors.shape[1],):
            return []  # a query of another dimension cannot be of this model
        rows: npt.NDArray[np.int64] | None = None
        if tag:
            rows = matrix.tags.get(tag_key(tag))
            if rows is None:
                return []
        if folder:
            in_folder = np.flatnonzero(np.char.startswith(matrix.paths, folder))
            rows = in_folder if rows is None else np.intersect1d(rows, in_folder)
        if rows is not None and not len(rows):
            return []
        candidates = matrix.vectors if rows is None else matrix.vectors[rows]
        scores = candidates @ query
        k = min(limit, len(scores))
        best = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        best = best[np.argsort(-scores[best], kind="stable")]
        picked = best if rows is None else rows[best]
        ids = [int(i) for i in matrix.ids[picked]]
        similarity = {i: float(s) for i, s in zip(ids, scores[best], strict=True)}
        return self._hits(account_id, model, ids, similarity)

    def _hits(
        self, account_id: str, model: str, ids: list[int], similarity: dict[int, float]
    ) -> list[VectorHit]:
        marks = ",".join("?" * len(ids))
        rows = (
            self.db.connection()
            .execute(
                "SELECT id, note_id, path, chunk_index, heading, start, length, text, updated_at"
                f" FROM vector_chunks WHERE account_id = ? AND model = ? AND id IN ({marks})",
                (account_id, model, *ids),
            )
            .fetchall()
        )
        by_id = {int(r["id"]): r for r in rows}
        hits = []
        for i in ids:  # rows deleted since the matrix was read are left out
            r = by_id.get(i)
            if r is None:
                continue
            hits.append(
                VectorHit(
                    note_id=r["note_id"],
                    path=r["path"],
                    chunk_index=int(r["chunk_index"]),
                    heading=r["heading"],
                    offset=int(r["start"]),
                    length=int(r["length"]),
                    text=r["text"],
                    similarity=max(-1.0, min(1.0, similarity[i])),
                    updated_at=float(r["updated_at"]),
                )
            )
        return hits

    def _matrix(self, account_id: str, model: str) -> _Matrix | None:
        conn = self.db.connection()
        row = conn.execute(
            "SELECT generation FROM vector_accounts WHERE account_id = ?", (account_id,)
        ).fetchone()
        if row is None:
            return None
        generation = int(row["generation"])
        key = (account_id, model)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and cached.generation == generation:
                self._cache.move_to_end(key)
                return cached
        matrix = self._load(account_id, model)
        if matrix is None:
            return None
        with self._lock:
            self._cache[key] = matrix
            self._cache.move_to_end(key)
            total = sum(len(m.ids) for m in self._cache.values())
            while total > self._cache_rows and len(self._cache) > 1:
                _, dropped = self._cache.popitem(last=False)
                total -= len(dropped.ids)
        return matrix

    def _load(self, account_id: str, model: str) -> _Matrix | None:
        """The account's vectors of ``model`` and their generation, from one snapshot."""
        conn = self.db.connection()
        conn.execute("BEGIN")
        try:
            row = conn.execute(
                "SELECT generation FROM vector_accounts WHERE account_id = ?", (account_id,)
            ).fetchone()
            rows = conn.execute(
                "SELECT id, path, dimension, tag_keys, vector FROM vector_chunks"
                " WHERE account_id = ? AND model = ? ORDER BY id",
                (account_id, model),
            ).fetchall()
        finally:
            conn.execute("COMMIT")
        if row is None:
            return None
        dimension = int(rows[0]["dimension"]) if rows else 0
        # A model has one dimension; a row of another (corrupt or hand-made) is skipped.
        rows = [r for r in rows if int(r["dimension"]) == dimension]
        vectors = (
            np.frombuffer(b"".join(r["vector"] for r in rows), dtype=np.float32)
            .reshape(len(rows), dimension)
            .copy()
            if rows
            else np.zeros((0, 0), dtype=np.float32)
        )
        tags: dict[str, list[int]] = {}
        for number, r in enumerate(rows):
            for key in json.loads(r["tag_keys"]):
                tags.setdefault(key, []).append(number)
        return _Matrix(
            generation=int(row["generation"]),
            ids=np.array([int(r["id"]) for r in rows], dtype=np.int64),
            vectors=vectors,
            paths=np.array([r["path"] for r in rows], dtype=np.str_),
            tags={k: np.array(v, dtype=np.int64) for k, v in tags.items()},
        )
