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

import ctypes
import json
import sqlite3
import threading
from array import array
from collections import OrderedDict
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memvault.adapters.sqlite.db import Database
from memvault.domain.tags import ancestor_keys, tag_key
from memvault.ports import ChunkVector, PackedChunks, VectorHit

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
CREATE TABLE IF NOT EXISTS vector_projections (
    account_id TEXT NOT NULL,
    model TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    trained_rows INTEGER NOT NULL,
    basis BLOB NOT NULL,
    PRIMARY KEY (account_id, model)
);
"""


def one_blas_thread() -> bool:
    """Ask numpy's OpenBLAS for one thread. A search is one matrix-vector product of a few
    MB; on a busy 2-core machine OpenBLAS's threads wait on each other and a 0.1 ms product
    takes 10-20 ms (bench/vectors.py, ADR 0025), and a server runs requests side by side
    anyway. Best effort: True when a known OpenBLAS was found and told."""
    libs = Path(np.__file__).parent.parent / "numpy.libs"
    for lib in sorted(libs.glob("*openblas*")) if libs.is_dir() else []:
        try:
            handle = ctypes.CDLL(str(lib))
        except OSError:
            continue
        for name in (
            "scipy_openblas_set_num_threads64_",
            "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_",
            "openblas_set_num_threads",
        ):
            setter = getattr(handle, name, None)
            if setter is not None:
                setter(1)
                return True
    return False


one_blas_thread()

# Matrices kept in memory: a few accounts' worth (100k chunks x 256 dimensions is 100 MB).
CACHE_ROWS = 400_000

# The two-stage search (ADR 0047): an (account, model) with at least this many chunks is
# searched first in ``PROJECTED_DIMS`` dimensions (its own principal directions), and the
# best ``candidates`` of that pass are scored again exactly. Below it, every row exactly.
ANN_MIN_ROWS = 150_000
# 48 directions and 0.5% of the rows rescored, each row's projected score raised by
# RESIDUAL_WEIGHT x (the query's length outside the directions) x (the row's): ADR 0066.
# On the 100k vault's 1,079,145 chunks, 150 held-out phrases: recall@10 against exact
# 0.985 and @60 0.965, where 64 directions with 1% rescored and no residual term gave
# 0.953 / 0.959, reading three quarters of the bytes and rescoring half the rows.
PROJECTED_DIMS = 48
# Rows the projection is trained from (evenly spaced over the account's rows).
TRAIN_ROWS = 20_000
# Candidates scored exactly: a share of the rows searched, and never fewer than this.
CANDIDATE_SHARE = 0.005
MIN_CANDIDATES = 1_000
# A row's exact score is its projected score plus the product of the query's and the
# row's parts outside the directions, at most |q_r| |x_r|. Rows whose residual is long
# are the ones the projected pass underrates, so candidates are chosen by
# q_p . x_p + RESIDUAL_WEIGHT |q_r| |x_r|: the row's residual length is one more row of
# the projected matrix, the query's one more component (0.3-1.0 measured, 0.7 best).
RESIDUAL_WEIGHT = 0.7


# A query whose vector lies mostly outside the projected directions is ranked worse by the
# projected pass: its candidates grow by (TYPICAL_ENERGY / energy)^2, up to 8x, where energy
# is the share of the query's squared length the projection keeps; below MIN_ENERGY the
# search is exact.
TYPICAL_ENERGY = 0.65
MIN_ENERGY = 0.2


# Accounts of at least this many rows scan the second half of their projected rows on
# another thread while the caller scans the first (ADR 0057): the scan is memory-bound, so
# two cores halve its wall time when they are free; the CPU spent is the same.
SPLIT_ROWS = 300_000
_SCAN = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memvault-vector-scan")


def candidate_count(rows: int, limit: int, energy: float = TYPICAL_ENERGY) -> int:
    """How many rows of the projected pass are scored again exactly."""
    widen = min(8.0, max(1.0, (TYPICAL_ENERGY / max(energy, 1e-6)) ** 2))
    base = max(MIN_CANDIDATES, 20 * limit, int(rows * CANDIDATE_SHARE))
    return min(rows, int(base * widen))


def train_projection(vectors: npt.NDArray[np.float32], dims: int) -> npt.NDArray[np.float32]:
    """The ``dims`` principal directions of ``vectors`` (rows centred first), as a
    (dims, dimension) float32 basis. Deterministic: evenly spaced rows, no randomness."""
    step = max(1, len(vectors) // TRAIN_ROWS)
    sample = vectors[::step].astype(np.float64)
    sample -= sample.mean(axis=0)
    _, _, vt = np.linalg.svd(sample, full_matrices=False)
    return np.ascontiguousarray(vt[: min(dims, vt.shape[0])], dtype=np.float32)


class _Matrix:
    """One (account, model)'s vectors in memory, as of ``generation``. Writes made by this
    process are applied in place (rows of a replaced or deleted note are marked dead, new
    rows appended into spare capacity); a write by another process moves the generation
    past what this process applied, and the matrix is read again."""

    def __init__(
        self,
        generation: int,
        ids: list[int],
        vectors: npt.NDArray[np.float32],
        paths: list[str],
        tags: list[list[str]],
    ) -> None:
        self.generation = generation
        self.dimension = int(vectors.shape[1]) if vectors.size else 0
        self.size = len(ids)
        capacity = max(16, self.size)
        self.ids = np.zeros(capacity, dtype=np.int64)
        self.ids[: self.size] = ids
        self.vectors = np.zeros((capacity, max(self.dimension, 1)), dtype=np.float32)
        if self.size:
            self.vectors[: self.size] = vectors
        self.alive = np.zeros(capacity, dtype=bool)
        self.alive[: self.size] = True
        self.dead = 0
        self.paths: list[str] = list(paths)
        self._path_array: npt.NDArray[np.str_] | None = None
        self.rows_of: dict[str, list[int]] = {}
        self.tags: dict[str, list[int]] = {}
        # The two-stage search's basis and every row projected on it (None: exact only).
        self.basis: npt.NDArray[np.float32] | None = None
        self.projected: npt.NDArray[np.float32] | None = None
        self.trained_rows = 0
        for row, (path, keys) in enumerate(zip(paths, tags, strict=True)):
            self.rows_of.setdefault(path, []).append(row)
            for key in keys:
                self.tags.setdefault(key, []).append(row)

    def project(self, basis: npt.NDArray[np.float32]) -> None:
        """Keep every row projected on ``basis`` too (rows appended later are projected as
        they come). Stored one projected dimension a row, (dims, capacity): the product
        with the projected query then streams the array once (a tall, narrow matrix costs
        OpenBLAS a quarter more)."""
        self.basis = basis
        # One row more than the basis: each row's residual length (RESIDUAL_WEIGHT).
        self.projected = np.zeros((basis.shape[0] + 1, len(self.ids)), dtype=np.float32)
        step = 65_536  # in blocks: no second full-size temporary
        for start in range(0, self.size, step):
            end = min(self.size, start + step)
            self.projected[:, start:end] = _projected(basis, self.vectors[start:end])

    def remove(self, path: str) -> None:
        for row in self.rows_of.pop(path, []):
            if self.alive[row]:
                self.alive[row] = False
                self.dead += 1

    def append(self, rows: Sequence[tuple[int, str, list[str], bytes]]) -> bool:
        """Add (id, path, tag keys, vector) rows; False when a row's dimension differs."""
        for row_id, path, keys, blob in rows:
            vector = np.frombuffer(blob, dtype=np.float32)
            if self.dimension == 0:
                self.dimension = len(vector)
                self.vectors = np.zeros((len(self.ids), self.dimension), dtype=np.float32)
            if len(vector) != self.dimension:
                return False
            if self.size == len(self.ids):
                self._grow()
            row = self.size
            self.size += 1
            self.ids[row] = row_id
            self.vectors[row] = vector
            if self.projected is not None and self.basis is not None:
                self.projected[:, row] = _projected(self.basis, vector[None, :])[:, 0]
            self.alive[row] = True
            self.paths.append(path)
            self._path_array = None
            self.rows_of.setdefault(path, []).append(row)
            for key in keys:
                self.tags.setdefault(key, []).append(row)
        return True

    def _grow(self) -> None:
        capacity = 2 * len(self.ids)
        self.ids = np.resize(self.ids, capacity)
        self.alive = np.concatenate([self.alive, np.zeros(capacity - len(self.alive), bool)])
        grown = np.zeros((capacity, self.vectors.shape[1]), dtype=np.float32)
        grown[: self.size] = self.vectors[: self.size]
        self.vectors = grown
        if self.projected is not None:
            projected = np.zeros((self.projected.shape[0], capacity), dtype=np.float32)
            projected[:, : self.size] = self.projected[:, : self.size]
            self.projected = projected

    def path_array(self) -> npt.NDArray[np.str_]:
        if self._path_array is None:
            self._path_array = np.array(self.paths, dtype=np.str_)
        return self._path_array

    @property
    def live_rows(self) -> int:
        return self.size - self.dead


def _projected(
    basis: npt.NDArray[np.float32], rows: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """``rows`` projected on ``basis``, one column each, with each row's residual length
    (its length outside the basis's directions) as one more component."""
    projected = basis @ rows.T
    residual = np.einsum("ij,ij->i", rows, rows) - np.einsum("ij,ij->j", projected, projected)
    return np.vstack([projected, np.sqrt(np.maximum(residual, 0.0))[None, :]]).astype(
        np.float32, copy=False
    )


# A stored chunk: account, path, chunk index, note id, model, dimension, heading, offset,
# length, text, tag keys (JSON), updated at, vector (float32 bytes).
_Row = tuple[str, str, int, str, str, int, str, int, int, str, str, float, bytes]


@lru_cache(maxsize=4096)
def _tag_keys(tags: tuple[str, ...]) -> str:
    """The stored form of a note's tag keys, ancestors included (a vault repeats its tag
    sets: encoded once each, not once a note)."""
    return json.dumps(ancestor_keys(tags))


def _blob(vector: Sequence[float], dimension: int) -> bytes:
    if isinstance(vector, memoryview) and vector.format == "f" and len(vector) == dimension:
        return vector.tobytes()  # float32 already (services.vectors, from the workers)
    if isinstance(vector, array) and vector.typecode == "f" and len(vector) == dimension:
        return vector.tobytes()
    array_ = np.asarray(vector, dtype=np.float32)
    if array_.shape != (dimension,):
        raise ValueError(f"a vector of {array_.shape} for dimension {dimension}")
    return array_.tobytes()


class SqliteVectorIndex:
    def __init__(
        self,
        db: Database,
        *,
        cache_rows: int = CACHE_ROWS,
        ann_min_rows: int = ANN_MIN_ROWS,
        projected_dims: int = PROJECTED_DIMS,
        split_rows: int = SPLIT_ROWS,
    ) -> None:
        self.db = db
        self._split_rows = split_rows
        db.add_schema(SCHEMA)
        self._cache: OrderedDict[tuple[str, str], _Matrix] = OrderedDict()
        self._cache_rows = cache_rows
        self._ann_min_rows = ann_min_rows
        self._projected_dims = projected_dims
        # One lock for the cache and every matrix in it: searches read a matrix while
        # this process's writes patch it.
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ writes
    def upsert_chunks(self, account_id: str, path: str, chunks: Sequence[ChunkVector]) -> None:
        self.upsert_notes(account_id, {path: chunks})

    def upsert_notes(self, account_id: str, notes: Mapping[str, Sequence[ChunkVector]]) -> None:
        """Every note's chunks replaced, in one transaction (ADR 0048: an import's drain
        writes a thousand notes a call; one transaction each was a third of its time)."""
        rows: list[_Row] = []
        for path, chunks in notes.items():
            for chunk in chunks:
                if chunk.path != path:
                    raise ValueError(f"chunk of {chunk.path!r} upserted under {path!r}")
                keys = _tag_keys(chunk.tags)
                vector = chunk.vector
                dimension = len(vector)
                rows.append(
                    (
                        account_id,
                        path,
                        chunk.chunk_index,
                        chunk.note_id,
                        chunk.model,
                        dimension,
                        chunk.heading,
                        chunk.offset,
                        chunk.length,
                        chunk.text,
                        keys,
                        chunk.updated_at,
                        _blob(vector, dimension),
                    )
                )
        if notes:
            self._replace(account_id, list(notes), rows)

    def upsert_packed(self, account_id: str, notes: Sequence[PackedChunks]) -> None:
        """``upsert_notes`` from the workers' spans and float32 buffers, with no
        ``ChunkVector`` a chunk and the tag keys encoded once a tag set (ADR 0067)."""
        rows: list[_Row] = []
        for packed in notes:
            note, spans, blob, model = packed.note, packed.spans, packed.vectors, packed.model
            if not spans:
                continue
            width = len(blob) // len(spans)  # bytes a vector
            if width * len(spans) != len(blob) or width % 4:
                raise ValueError(f"vectors of {note.path!r} do not split into {len(spans)} rows")
            keys, dimension, markdown = _tag_keys(note.tags), width // 4, note.markdown
            path, note_id, updated_at = note.path, note.id, note.updated_at
            rows.extend(
                (
                    account_id,
                    path,
                    index,
                    note_id,
                    model,
                    dimension,
                    heading,
                    offset,
                    length,
                    markdown[offset : offset + length],
                    keys,
                    updated_at,
                    blob[n * width : (n + 1) * width],
                )
                for n, (index, heading, offset, length) in enumerate(spans)
            )
        if notes:
            self._replace(account_id, [p.note.path for p in notes], rows)

    def _replace(self, account_id: str, paths: list[str], rows: list[_Row]) -> None:
        """Every chunk of ``paths`` deleted and ``rows`` inserted, in one transaction."""
        with self.db.transaction() as conn:
            conn.executemany(
                "DELETE FROM vector_chunks WHERE account_id = ? AND path = ?",
                [(account_id, p) for p in paths],
            )
            first = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM vector_chunks").fetchone()
            conn.executemany(
                "INSERT INTO vector_chunks (id, account_id, path, chunk_index, note_id, model,"
                " dimension, heading, start, length, text, tag_keys, updated_at, vector)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(int(first[0]) + n, *row) for n, row in enumerate(rows)],
            )
            before, after = self._bump(conn, account_id)
        # The new rows, for a matrix of this account held in memory (ids given above, in
        # one write transaction: no other writer came between).
        added: dict[str, list[tuple[int, str, list[str], bytes]]] = {}
        if self._holds(account_id):
            for n, row in enumerate(rows):
                added.setdefault(row[4], []).append(
                    (int(first[0]) + n, row[1], json.loads(row[10]), row[12])
                )
        self._patch(account_id, before, after, paths, added)

    def _holds(self, account_id: str) -> bool:
        with self._lock:
            return any(key[0] == account_id for key in self._cache)

    def delete_notes(self, account_id: str, paths: Collection[str]) -> None:
        if not paths:
            return
        with self.db.transaction() as conn:
            conn.executemany(
                "DELETE FROM vector_chunks WHERE account_id = ? AND path = ?",
                [(account_id, p) for p in paths],
            )
            before, after = self._bump(conn, account_id)
        self._patch(account_id, before, after, list(paths), {})

    def clear(self, account_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM vector_chunks WHERE account_id = ?", (account_id,))
            conn.execute("DELETE FROM vector_projections WHERE account_id = ?", (account_id,))
            self._bump(conn, account_id)
        with self._lock:
            for key in [k for k in self._cache if k[0] == account_id]:
                del self._cache[key]

    @staticmethod
    def _bump(conn: sqlite3.Connection, account_id: str) -> tuple[int, int]:
        """Move the account's generation; (before, after), in the write's transaction."""
        row = conn.execute(
            "SELECT generation FROM vector_accounts WHERE account_id = ?", (account_id,)
        ).fetchone()
        before = int(row["generation"]) if row is not None else 0
        conn.execute(
            "INSERT INTO vector_accounts (account_id, generation) VALUES (?, ?)"
            " ON CONFLICT(account_id) DO UPDATE SET generation = excluded.generation",
            (account_id, before + 1),
        )
        return before, before + 1

    def _patch(
        self,
        account_id: str,
        before: int,
        after: int,
        removed: Sequence[str],
        added: dict[str, list[tuple[int, str, list[str], bytes]]],
    ) -> None:
        """Apply this process's write to the account's cached matrices, when they are of
        the generation the write started from; drop them otherwise."""
        with self._lock:
            for key in [k for k in self._cache if k[0] == account_id]:
                matrix = self._cache[key]
                if matrix.generation == after:
                    continue  # read after this write committed: it holds it already
                if matrix.generation != before:
                    del self._cache[key]
                    continue
                for path in removed:
                    matrix.remove(path)
                if not matrix.append(added.get(key[1], [])) or (
                    matrix.dead > 1024 and matrix.dead > matrix.size // 4
                ):
                    del self._cache[key]  # read again, compact, on the next search
                    continue
                matrix.generation = after

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

    def holds_model(self, account_id: str, model: str) -> bool:
        row = (
            self.db.connection()
            .execute(
                "SELECT 1 FROM vector_chunks WHERE account_id = ? AND model = ? LIMIT 1",
                (account_id, model),
            )
            .fetchone()
        )
        return row is not None

    def indexed_paths(self, account_id: str, paths: Collection[str]) -> dict[str, str]:
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
        query = np.asarray(vector, dtype=np.float32)
        with self._lock:
            matrix = self._matrix(account_id, model)
            if matrix is None or matrix.live_rows == 0 or query.shape != (matrix.dimension,):
                return []  # nothing stored, or a query of another dimension (model)
            size = matrix.size
            keep: npt.NDArray[np.bool_] | None = None
            count = matrix.live_rows
            if tag or folder or matrix.dead:
                keep = matrix.alive[:size].copy()
                if tag:
                    tagged = np.zeros(size, dtype=bool)
                    tagged[matrix.tags.get(tag_key(tag), [])] = True
                    keep &= tagged
                if folder:
                    keep &= np.char.startswith(matrix.path_array(), folder)
                count = int(np.count_nonzero(keep))
            if count == 0:
                return []
            k = min(limit, count)
            if matrix.projected is not None and count >= self._ann_min_rows:
                rows, scores = _two_stage(
                    matrix, query, keep, count, k, split_rows=self._split_rows
                )
            else:
                rows, scores = _exact(matrix, query, keep, count, k)
            ids = [int(i) for i in matrix.ids[rows]]
            similarity = {i: float(sc) for i, sc in zip(ids, scores, strict=True)}
        return self._hits(account_id, model, ids, similarity)

    def _hits(
        self, account_id: str, model: str, ids: list[int], similarity: dict[int, float]
    ) -> list[VectorHit]:
        marks = ",".join("?" * len(ids))
        rows = (
            self.db.connection()
            .execute(
                "SELECT id, note_id, path, chunk_index, heading, start, length, text, updated_at"
                f" FROM vector_chunks WHERE id IN ({marks}) AND +account_id = ? AND +model = ?",
                (*ids, account_id, model),
            )
            .fetchall()
        )
        # By primary key (the unary + keeps the planner off the account index, which
        # would walk every row of the account); the account and model still must match.
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
        """The account's matrix of ``model`` as of the stored generation (caller holds the
        lock)."""
        row = (
            self.db.connection()
            .execute("SELECT generation FROM vector_accounts WHERE account_id = ?", (account_id,))
            .fetchone()
        )
        if row is None:
            return None
        key = (account_id, model)
        cached = self._cache.get(key)
        if cached is not None and cached.generation == int(row["generation"]):
            self._cache.move_to_end(key)
            self._ensure_projection(account_id, model, cached)
            return cached
        matrix = self._load(account_id, model)
        if matrix is None:
            return None
        self._ensure_projection(account_id, model, matrix)
        self._cache[key] = matrix
        self._cache.move_to_end(key)
        total = sum(m.size for m in self._cache.values())
        while total > self._cache_rows and len(self._cache) > 1:
            _, dropped = self._cache.popitem(last=False)
            total -= dropped.size
        return matrix

    def _ensure_projection(self, account_id: str, model: str, matrix: _Matrix) -> None:
        """Give a large matrix its two-stage search (caller holds the lock): the stored
        basis of the (account, model), or one trained from its own rows and stored (the
        first search past ``ann_min_rows``, or once the rows doubled since training)."""
        live = matrix.live_rows
        if live < self._ann_min_rows or matrix.dimension == 0:
            return
        if matrix.projected is not None and live < 2 * matrix.trained_rows:
            return
        conn = self.db.connection()
        stored = conn.execute(
            "SELECT dimension, trained_rows, basis FROM vector_projections"
            " WHERE account_id = ? AND model = ?",
            (account_id, model),
        ).fetchone()
        basis: npt.NDArray[np.float32] | None = None
        if (
            stored is not None
            and int(stored["dimension"]) == matrix.dimension
            and live < 2 * int(stored["trained_rows"])
        ):
            basis = np.frombuffer(stored["basis"], dtype=np.float32).reshape(-1, matrix.dimension)
            # Directions come strongest first: a basis stored with more of them (64 before
            # ADR 0066) serves as its leading ones.
            basis = np.ascontiguousarray(basis[: self._projected_dims])
            trained = int(stored["trained_rows"])
        if basis is None:
            alive = matrix.vectors[: matrix.size][matrix.alive[: matrix.size]]
            basis = train_projection(alive, self._projected_dims)
            trained = live
            with self.db.transaction() as tx:
                tx.execute(
                    "INSERT INTO vector_projections"
                    " (account_id, model, dimension, trained_rows, basis) VALUES (?, ?, ?, ?, ?)"
                    " ON CONFLICT(account_id, model) DO UPDATE SET dimension ="
                    " excluded.dimension, trained_rows = excluded.trained_rows,"
                    " basis = excluded.basis",
                    (account_id, model, matrix.dimension, trained, basis.tobytes()),
                )
        matrix.project(basis)
        matrix.trained_rows = trained

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
            np.frombuffer(b"".join(r["vector"] for r in rows), dtype=np.float32).reshape(
                len(rows), dimension
            )
            if rows
            else np.zeros((0, 0), dtype=np.float32)
        )
        return _Matrix(
            generation=int(row["generation"]),
            ids=[int(r["id"]) for r in rows],
            vectors=vectors,
            paths=[r["path"] for r in rows],
            tags=[json.loads(r["tag_keys"]) for r in rows],
        )


Rows = npt.NDArray[np.intp]
Scores = npt.NDArray[np.float32]


def _best(scores: Scores, k: int) -> Rows:
    """Positions of the ``k`` highest scores, highest first (ties in position order)."""
    best = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return best[np.argsort(-scores[best], kind="stable")]


def _exact(
    matrix: _Matrix,
    query: npt.NDArray[np.float32],
    keep: npt.NDArray[np.bool_] | None,
    count: int,
    k: int,
) -> tuple[Rows, Scores]:
    """The best ``k`` rows (of ``keep``) by their exact similarity to ``query``."""
    size = matrix.size
    if keep is None:
        scores = matrix.vectors[:size] @ query
        best = _best(scores, k)
        return best, scores[best]
    rows = np.flatnonzero(keep)
    if 4 * count < size:
        # A narrow filter: score only its rows.
        scores = _scores_of(matrix.vectors, rows, query)
    else:
        # Score every row and rule out the rest: cheaper than copying most rows.
        scores = (matrix.vectors[:size] @ query)[rows]
    best = _best(scores, k)
    return rows[best], scores[best]


def _two_stage(
    matrix: _Matrix,
    query: npt.NDArray[np.float32],
    keep: npt.NDArray[np.bool_] | None,
    count: int,
    k: int,
    *,
    split_rows: int = SPLIT_ROWS,
) -> tuple[Rows, Scores]:
    """ADR 0047: every row (of ``keep``) scored in the projected space (under a fifth of
    the bytes of the exact scan), with ADR 0066's residual term, the best
    ``candidate_count`` of them scored again exactly, and the best ``k`` of those
    returned with their exact similarity. Past ``split_rows`` rows the second half of the
    rows is scanned on ``_SCAN`` meanwhile, its candidates chosen from it alone (ADR
    0057)."""
    assert matrix.projected is not None and matrix.basis is not None
    size = matrix.size
    projected_query = matrix.basis @ query
    norm = float(query @ query)
    kept = float(projected_query @ projected_query)
    energy = kept / norm if norm > 0 else 0.0
    if energy < MIN_ENERGY:
        return _exact(matrix, query, keep, count, k)
    # The residual term's weight on each row's residual length (the matrix's last row).
    residual = RESIDUAL_WEIGHT * np.sqrt(max(norm - kept, 0.0))
    projected_query = np.append(projected_query, np.float32(residual)).astype(np.float32)
    wanted = candidate_count(count, k, energy)
    if size < split_rows or wanted >= size // 2:
        candidates = _candidates(matrix, projected_query, keep, 0, size, wanted)
    else:
        middle = size // 2
        # Each half's share of the candidates, and a little more: the best rows are
        # spread over the halves by chance, not evenly.
        share = min(middle, int(wanted * 0.55))
        later = _SCAN.submit(_candidates, matrix, projected_query, keep, middle, size, share)
        try:
            first = _candidates(matrix, projected_query, keep, 0, middle, share)
        finally:
            second = later.result()
        candidates = np.concatenate([first, second])
    exact = _scores_of(matrix.vectors, candidates, query)
    best = _best(exact, min(k, len(candidates)))
    return candidates[best], exact[best]


# Rows gathered at a time when only some rows are scored: the gathered block stays in the
# core's cache for its product instead of going through memory (16k candidates of a
# million rows: 2.1 ms against 2.9 for one gather, ADR 0057).
GATHER_ROWS = 512


def _scores_of(
    vectors: npt.NDArray[np.float32], rows: Rows, query: npt.NDArray[np.float32]
) -> Scores:
    """``vectors[rows] @ query``, gathered ``GATHER_ROWS`` rows at a time."""
    if len(rows) <= GATHER_ROWS:
        return np.asarray(vectors[rows] @ query, dtype=np.float32)
    out = np.empty(len(rows), dtype=np.float32)
    block = np.empty((GATHER_ROWS, vectors.shape[1]), dtype=np.float32)
    for start in range(0, len(rows), GATHER_ROWS):
        part = rows[start : start + GATHER_ROWS]
        gathered = block[: len(part)]
        np.take(vectors, part, axis=0, out=gathered)
        np.dot(gathered, query, out=out[start : start + len(part)])
    return out


def _candidates(
    matrix: _Matrix,
    projected_query: npt.NDArray[np.float32],
    keep: npt.NDArray[np.bool_] | None,
    start: int,
    end: int,
    wanted: int,
) -> Rows:
    """About the ``wanted`` best rows of ``start:end`` (of ``keep``) in the projected
    space, as positions in the matrix."""
    assert matrix.projected is not None
    approx = np.asarray(projected_query @ matrix.projected[:, start:end], dtype=np.float32)
    if keep is not None:
        approx[~keep[start:end]] = -np.inf
    found = _top_unordered(approx, min(wanted, end - start))
    if keep is not None:
        found = found[keep[start:end][found]]
    return found + start


def _top_unordered(scores: Scores, wanted: int) -> Rows:
    """Positions of about the ``wanted`` highest scores (at least ``wanted``), in no order.
    A full selection over a million scores costs more than the projected product itself:
    a threshold is read off every 16th score first, and a selection runs only when the
    threshold let through too few or far too many."""
    n = len(scores)
    if wanted >= n:
        return np.arange(n)
    stride = 16
    sample = scores[::stride]
    if wanted // stride >= 8:
        # The sample's (wanted / stride * 1.25)-th best: a little past the wanted share.
        place = min(len(sample) - 1, int(wanted / stride * 1.25))
        threshold = np.partition(sample, len(sample) - 1 - place)[len(sample) - 1 - place]
        found = np.flatnonzero(scores >= threshold)
        if wanted <= len(found) <= 4 * wanted:
            return found
    return np.argpartition(-scores, wanted - 1)[:wanted]
