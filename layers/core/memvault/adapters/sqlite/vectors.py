"""VectorIndex on SQLite: chunk vectors as float32 blobs, exact search with numpy (ADR 0025).

Each note is a row of ``vector_notes`` (ADR 0069): its path, tags and the model that
embedded it, its chunks' spans (index, heading, offset, length) as JSON, the stretch of
its markdown they were cut from, and their vectors, one float32 row after the other. A
chunk is known by its note row's id and its place among the note's chunks
(``CHUNK_BITS``); the view ``vector_chunks`` shows one row a chunk, as the table of that
name held before (a database made before is migrated when it is opened, ``_migrate``).
A search is exact: the dot product of the query with every vector of the account and
model (vectors are unit length, so it is the cosine), then the best ``limit``. The
account's matrix is read once and kept in memory per (account, model) until the account's
vectors change: ``vector_accounts.generation`` moves in the same transaction as every
write, so a matrix is never used once its rows have changed, in this process or another
(the same rule as the text index's term counts). Measured against sqlite-vec in
bench/vectors.py: at 100k chunks a cached exact search takes a few milliseconds; the
account's rows are the only ones read.

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
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memvault.adapters.sqlite.db import Database
from memvault.domain.tags import tag_key
from memvault.ports import ChunkVector, PackedChunks, VectorHit

SCHEMA = """
CREATE TABLE IF NOT EXISTS vector_notes (
    id INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL,
    path TEXT NOT NULL,
    note_id TEXT NOT NULL,
    model TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    tag_keys TEXT NOT NULL,
    updated_at REAL NOT NULL,
    -- [[chunk index, heading, offset, length], ...]; a fifth item is the chunk's text
    -- when text[offset - text_start:][:length] is not (chunks made by hand).
    spans TEXT NOT NULL,
    text_start INTEGER NOT NULL,
    text TEXT NOT NULL,
    vectors BLOB NOT NULL,
    UNIQUE (account_id, path)
);
CREATE INDEX IF NOT EXISTS vector_notes_by_model ON vector_notes(account_id, model);
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

# Notes whose decoded spans a process keeps for its hits (a few MB).
SPANS_KEPT = 8192

# A chunk's id (in a matrix, in ``_hits``): its note row's id shifted left by CHUNK_BITS,
# plus its place among the note's chunks (a 1 MiB note has a few thousand at most).
CHUNK_BITS = 20
_PLACE = (1 << CHUNK_BITS) - 1

# One row a chunk, as the table of this name held before ADR 0069 (bench/, tests, anyone
# reading the file by hand): read-only, never read by the index itself.
VIEW = f"""
CREATE VIEW IF NOT EXISTS vector_chunks AS
SELECT (n.id << {CHUNK_BITS}) + s.key AS id, n.account_id AS account_id, n.path AS path,
    json_extract(s.value, '$[0]') AS chunk_index, n.note_id AS note_id, n.model AS model,
    n.dimension AS dimension, json_extract(s.value, '$[1]') AS heading,
    json_extract(s.value, '$[2]') AS start, json_extract(s.value, '$[3]') AS length,
    CASE WHEN json_array_length(s.value) > 4 THEN json_extract(s.value, '$[4]')
        ELSE substr(n.text, json_extract(s.value, '$[2]') - n.text_start + 1,
            json_extract(s.value, '$[3]')) END AS text,
    n.tag_keys AS tag_keys, n.updated_at AS updated_at,
    substr(n.vectors, s.key * n.dimension * 4 + 1, n.dimension * 4) AS vector
FROM vector_notes AS n, json_each(n.spans) AS s
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
# 150k until ADR 0076: a 10k-note vault (107,518 chunks) was scanned exactly, 6.1 ms CPU a
# query against 2.1 two-stage at recall@10 0.993-0.994 and @60 0.979-0.981 (2,000
# candidates); an account of 50k chunks scans 2.9 ms exactly.
ANN_MIN_ROWS = 50_000
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
# 2,000 (ADR 0076; 1,000 before): at 107,518 rows 1,000 candidates kept @60 at 0.955.
MIN_CANDIDATES = 2_000
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
    """How many rows of the projected pass are scored again exactly: the share of the rows
    widened for a weak query, or the floor widened by the square root of that (ADR 0076:
    in an account of 50k-400k chunks the floor is the larger; widened in full it cost a
    10k-note vault's median query 2.16 ms of CPU against 1.37, for recall@10 0.994 against
    0.989 and @60 0.981 against 0.972)."""
    widen = min(8.0, max(1.0, (TYPICAL_ENERGY / max(energy, 1e-6)) ** 2))
    floor = int(max(MIN_CANDIDATES, 20 * limit) * widen**0.5)
    return min(rows, max(floor, int(int(rows * CANDIDATE_SHARE) * widen)))


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
        updated: Sequence[float] = (),
        indexes: Sequence[int] = (),
    ) -> None:
        """``updated`` and ``indexes``: each row's note time and chunk index, what a hit
        without its text carries (ADR 0076; empty: zeros)."""
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
        self.updated = np.zeros(capacity, dtype=np.float64)
        self.index = np.zeros(capacity, dtype=np.int64)
        if len(updated):
            self.updated[: self.size] = updated
        if len(indexes):
            self.index[: self.size] = indexes
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

    def append(self, rows: Sequence[_Added]) -> bool:
        """Add (id, path, tag keys, vector, note time, chunk index) rows; False when a
        row's dimension differs."""
        for row_id, path, keys, blob, updated_at, chunk_index in rows:
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
            self.updated[row] = updated_at
            self.index[row] = chunk_index
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
        self.updated = np.concatenate([self.updated, np.zeros(capacity - len(self.updated))])
        self.index = np.concatenate(
            [self.index, np.zeros(capacity - len(self.index), dtype=np.int64)]
        )
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


def _hit(
    note_id: str,
    path: str,
    span: list[Any],
    start: int,
    text: str,
    similarity: float,
    updated_at: float,
) -> VectorHit:
    """A chunk's hit from its note row: the span (index, heading, offset, length, and its
    own text when the note's stored text does not hold it) and the row's text from
    ``start``."""
    index, heading, offset, length, *own = span
    chunk = own[0] if own else text[offset - start : offset - start + length]
    return VectorHit(note_id, path, index, heading, offset, length, chunk, similarity, updated_at)


# A chunk added to a matrix held in memory: id, path, tag keys, vector (float32 bytes),
# the note's time, the chunk's index.
_Added = tuple[int, str, list[str], bytes, float, int]

# A stored note: account, path, note id, model, dimension, chunks, tag keys (JSON),
# updated at, spans (JSON), text start, text, vectors (float32 bytes, a row a chunk).
_Row = tuple[str, str, str, str, int, int, str, float, str, int, str, bytes]


@lru_cache(maxsize=4096)
def _tag_key(tag: str) -> str:
    return tag_key(tag)


@lru_cache(maxsize=4096)
def _tag_keys(tags: tuple[str, ...]) -> str:
    """The stored form of a note's tag keys, ancestors included (a vault repeats its tag
    sets: encoded once each, not once a note; and its tags, folded once each):
    ``json.dumps(ancestor_keys(tags))``."""
    out: dict[str, None] = {}
    for key in dict.fromkeys(map(_tag_key, tags)):
        parts = key.split("/")
        for depth in range(1, len(parts) + 1):
            out["/".join(parts[:depth])] = None
    return json.dumps(list(out))


def _blob(vector: Sequence[float], dimension: int) -> bytes:
    if isinstance(vector, memoryview) and vector.format == "f" and len(vector) == dimension:
        return vector.tobytes()  # float32 already (services.vectors, from the workers)
    if isinstance(vector, array) and vector.typecode == "f" and len(vector) == dimension:
        return vector.tobytes()
    array_ = np.asarray(vector, dtype=np.float32)
    if array_.shape != (dimension,):
        raise ValueError(f"a vector of {array_.shape} for dimension {dimension}")
    return array_.tobytes()


def _covered(
    chunks: Sequence[tuple[int, str, int, int, str]],
) -> tuple[int, str, list[list[object]]]:
    """(text start, text, spans) for chunks given with their texts: a text from which
    every chunk's text is cut by its offset and length (what lies between two chunks is
    blank), and a chunk whose own text is not (made by hand) keeps it in its span."""
    if not chunks:
        return 0, "", []
    start = min(c[2] for c in chunks)
    parts: list[str] = []
    end = start
    for _, _, offset, length, text in sorted(chunks, key=lambda c: c[2]):
        if len(text) != length:
            continue
        if offset > end:
            parts.append(" " * (offset - end))
            end = offset
        if offset + length > end:
            parts.append(text[end - offset :])
            end = offset + length
    covered = "".join(parts)
    spans: list[list[object]] = []
    for index, heading, offset, length, text in chunks:
        span: list[object] = [index, heading, offset, length]
        if covered[offset - start : offset - start + length] != text:
            span.append(text)
        spans.append(span)
    return start, covered, spans


# JSON's C scanner without ``json.loads``' checks and whitespace matches: a hit's spans
# are 4.5 us to read instead of 6.3 (the spans are memvault's own JSON).
_JSON_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_decode: Callable[[str, int], tuple[Any, int]] = _JSON_SCAN


def _migrate(db: Database) -> None:
    """A database made before ADR 0069 held a row a chunk in the table ``vector_chunks``:
    its rows become a row a note, in the order their notes' chunks were stored (a search
    breaks exact ties by it), and the table makes way for the view. Idempotent, and a
    no-op once the name is the view's; one transaction, so two processes opening the
    file at once migrate it once."""
    conn = db.connection()

    def old_table() -> bool:
        row = conn.execute("SELECT type FROM sqlite_master WHERE name = 'vector_chunks'").fetchone()
        return row is not None and row[0] == "table"

    if old_table():
        with db.transaction() as tx:
            if old_table():
                _move_chunk_rows(tx)
                tx.execute("DROP TABLE vector_chunks")
    conn.execute(VIEW)


def _move_chunk_rows(conn: sqlite3.Connection) -> None:
    """Every note of the old ``vector_chunks`` inserted into ``vector_notes``, one note's
    rows read at a time (a vault of a million chunks does not fit in memory twice)."""
    order = conn.execute(
        "SELECT account_id, path FROM vector_chunks GROUP BY account_id, path ORDER BY MIN(id)"
    ).fetchall()
    first = int(conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM vector_notes").fetchone()[0])
    row_id = {(r[0], r[1]): first + n for n, r in enumerate(order)}
    group: list[sqlite3.Row] = []

    def flush() -> None:
        if not group:
            return
        group.sort(key=lambda r: int(r["id"]))
        head = group[0]
        dimension = int(head["dimension"])
        kept = [r for r in group if int(r["dimension"]) == dimension]
        start, text, spans = _covered(
            [
                (int(r["chunk_index"]), r["heading"], int(r["start"]), int(r["length"]), r["text"])
                for r in kept
            ]
        )
        conn.execute(
            "INSERT INTO vector_notes (id, account_id, path, note_id, model, dimension, chunks,"
            " tag_keys, updated_at, spans, text_start, text, vectors)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row_id[(head["account_id"], head["path"])],
                head["account_id"],
                head["path"],
                head["note_id"],
                head["model"],
                dimension,
                len(kept),
                head["tag_keys"],
                float(head["updated_at"]),
                json.dumps(spans),
                start,
                text,
                b"".join(bytes(r["vector"]) for r in kept),
            ),
        )
        group.clear()

    rows = conn.execute(
        "SELECT id, account_id, path, chunk_index, note_id, model, dimension, heading, start,"
        " length, text, tag_keys, updated_at, vector FROM vector_chunks"
        " ORDER BY account_id, path, chunk_index"
    )
    for row in rows:
        if group and (group[0]["account_id"], group[0]["path"]) != (row["account_id"], row["path"]):
            flush()
        group.append(row)
    flush()


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
        _migrate(db)
        self._cache: OrderedDict[tuple[str, str], _Matrix] = OrderedDict()
        self._cache_rows = cache_rows
        self._ann_min_rows = ann_min_rows
        self._projected_dims = projected_dims
        # One lock for the cache and every matrix in it: searches read a matrix while
        # this process's writes patch it.
        self._lock = threading.Lock()
        # Note rows' decoded spans, by row id, with the text they were decoded from.
        self._decoded: dict[int, tuple[str, list[list[Any]]]] = {}

    # ------------------------------------------------------------------ writes
    def upsert_chunks(self, account_id: str, path: str, chunks: Sequence[ChunkVector]) -> None:
        self.upsert_notes(account_id, {path: chunks})

    def upsert_notes(self, account_id: str, notes: Mapping[str, Sequence[ChunkVector]]) -> None:
        """Every note's chunks replaced, in one transaction (ADR 0048: an import's drain
        writes a thousand notes a call; one transaction each was a third of its time). A
        note's chunks share its id, tags, model, time and dimension (one row a note)."""
        rows: list[_Row] = []
        for path, chunks in notes.items():
            if not chunks:
                continue  # the note's vectors removed
            head = chunks[0]
            dimension = len(head.vector)
            for chunk in chunks:
                if chunk.path != path:
                    raise ValueError(f"chunk of {chunk.path!r} upserted under {path!r}")
                if (chunk.note_id, chunk.model, chunk.tags, chunk.updated_at) != (
                    head.note_id,
                    head.model,
                    head.tags,
                    head.updated_at,
                ):
                    raise ValueError(f"chunks of {path!r} disagree on their note")
            if len(chunks) > _PLACE:
                raise ValueError(f"{len(chunks)} chunks of {path!r}: too many for one note")
            start, text, spans = _covered(
                [(c.chunk_index, c.heading, c.offset, c.length, c.text) for c in chunks]
            )
            rows.append(
                (
                    account_id,
                    path,
                    head.note_id,
                    head.model,
                    dimension,
                    len(chunks),
                    _tag_keys(tuple(head.tags)),
                    head.updated_at,
                    json.dumps(spans),
                    start,
                    text,
                    b"".join(_blob(c.vector, dimension) for c in chunks),
                )
            )
        if notes:
            self._replace(account_id, list(notes), rows)

    def upsert_packed(self, account_id: str, notes: Sequence[PackedChunks]) -> None:
        """``upsert_notes`` from the workers' spans and float32 buffers, with no
        ``ChunkVector`` a chunk and the tag keys encoded once a tag set (ADR 0067): the
        buffer is the row's vectors as it is, and the text the note's markdown (ADR
        0069)."""
        rows: list[_Row] = []
        for packed in notes:
            note, spans, blob = packed.note, packed.spans, packed.vectors
            if not spans:
                continue
            width = len(blob) // len(spans)  # bytes a vector
            if width * len(spans) != len(blob) or width % 4:
                raise ValueError(f"vectors of {note.path!r} do not split into {len(spans)} rows")
            if len(spans) > _PLACE:
                raise ValueError(f"{len(spans)} chunks of {note.path!r}: too many for one note")
            rows.append(
                (
                    account_id,
                    note.path,
                    note.id,
                    packed.model,
                    width // 4,
                    len(spans),
                    _tag_keys(note.tags),
                    note.updated_at,
                    json.dumps(spans),
                    0,
                    note.markdown,  # every chunk's text is a slice of it
                    bytes(blob),
                )
            )
        if notes:
            self._replace(account_id, [p.note.path for p in notes], rows)

    def _replace(self, account_id: str, paths: list[str], rows: list[_Row]) -> None:
        """Every row of ``paths`` deleted and ``rows`` inserted, in one transaction."""
        with self.db.transaction() as conn:
            conn.executemany(
                "DELETE FROM vector_notes WHERE account_id = ? AND path = ?",
                [(account_id, p) for p in paths],
            )
            first = int(
                conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM vector_notes").fetchone()[0]
            )
            conn.executemany(
                "INSERT INTO vector_notes (id, account_id, path, note_id, model, dimension,"
                " chunks, tag_keys, updated_at, spans, text_start, text, vectors)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(first + n, *row) for n, row in enumerate(rows)],
            )
            before, after = self._bump(conn, account_id)
        # The new chunks, for a matrix of this account held in memory (ids given above, in
        # one write transaction: no other writer came between).
        added: dict[str, list[_Added]] = {}
        if self._holds(account_id):
            for n, row in enumerate(rows):
                _, path, _, model, dimension, count, keys, updated_at, spans, *_, blob = row
                base, width, tags = (first + n) << CHUNK_BITS, 4 * dimension, json.loads(keys)
                indexes = [int(span[0]) for span in _decode(spans, 0)[0]]
                added.setdefault(model, []).extend(
                    (base + k, path, tags, blob[k * width : (k + 1) * width], updated_at, index)
                    for k, index in enumerate(indexes[:count])
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
                "DELETE FROM vector_notes WHERE account_id = ? AND path = ?",
                [(account_id, p) for p in paths],
            )
            before, after = self._bump(conn, account_id)
        self._patch(account_id, before, after, list(paths), {})

    def clear(self, account_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM vector_notes WHERE account_id = ?", (account_id,))
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
        added: dict[str, list[_Added]],
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
                "SELECT model, SUM(chunks) AS n FROM vector_notes WHERE account_id = ?"
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
                "SELECT 1 FROM vector_notes WHERE account_id = ? AND model = ? LIMIT 1",
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
                "SELECT model FROM vector_notes WHERE account_id = ? AND path = ?",
                (account_id, path),
            ).fetchone()
            if row is not None:
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
        texts: bool = True,
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
            if not texts:
                # From the matrix alone, no row read (ADR 0076): ``with_texts`` reads the
                # notes of the hits a caller keeps.
                paths = matrix.paths
                return [
                    VectorHit(
                        "",
                        paths[row],
                        index,
                        "",
                        0,
                        0,
                        "",
                        max(-1.0, min(1.0, float(score))),
                        updated_at,
                    )
                    for row, index, updated_at, score in zip(
                        rows.tolist(),
                        matrix.index[rows].tolist(),
                        matrix.updated[rows].tolist(),
                        scores.tolist(),
                        strict=True,
                    )
                ]
            ids = [int(i) for i in matrix.ids[rows]]
            similarity = {i: float(sc) for i, sc in zip(ids, scores, strict=True)}
        return self._hits(account_id, model, ids, similarity)

    def with_texts(self, account_id: str, model: str, hits: Sequence[VectorHit]) -> list[VectorHit]:
        """The notes of ``hits`` read by path, one row each; a hit is filled from its
        note's row when that row is the one it was found in (the same model and note time,
        a chunk of its index), else left out, as a note written or removed since."""
        wanted = list(dict.fromkeys(hit.path for hit in hits if not hit.text and not hit.note_id))
        if not wanted:
            return list(hits)
        marks = ",".join("?" * len(wanted))
        cursor = self.db.connection().cursor()
        cursor.row_factory = None
        rows = cursor.execute(
            "SELECT id, note_id, path, updated_at, spans, text_start, text FROM vector_notes"
            f" WHERE account_id = ? AND path IN ({marks}) AND +model = ?",
            (account_id, *wanted, model),
        ).fetchall()
        by_path = {row[2]: row for row in rows}
        out: list[VectorHit] = []
        for hit in hits:
            if hit.text or hit.note_id:
                out.append(hit)  # whole already
                continue
            row = by_path.get(hit.path)
            if row is None or float(row[3]) != hit.updated_at:
                continue
            row_id, note_id, _, _, stored, start, text = row
            span = next((s for s in self._spans(row_id, stored) if s[0] == hit.chunk_index), None)
            if span is not None:
                out.append(
                    _hit(note_id, hit.path, span, start, text, hit.similarity, hit.updated_at)
                )
        return out

    def _hits(
        self, account_id: str, model: str, ids: list[int], similarity: dict[int, float]
    ) -> list[VectorHit]:
        notes = sorted({i >> CHUNK_BITS for i in ids})
        marks = ",".join("?" * len(notes))
        cursor = self.db.connection().cursor()
        cursor.row_factory = None  # plain tuples: a hit reads its note's row by position
        rows = cursor.execute(
            "SELECT id, note_id, path, updated_at, spans, text_start, text FROM vector_notes"
            f" WHERE id IN ({marks}) AND +account_id = ? AND +model = ?",
            (*notes, account_id, model),
        ).fetchall()
        # By primary key (the unary + keeps the planner off the account index, which
        # would walk every row of the account); the account and model still must match.
        by_id = {
            row[0]: (row[1], row[2], float(row[3]), self._spans(row[0], row[4]), row[5], row[6])
            for row in rows
        }
        hits = []
        for i in ids:  # rows deleted since the matrix was read are left out
            found = by_id.get(i >> CHUNK_BITS)
            if found is None:
                continue
            note_id, path, updated_at, spans, start, text = found
            place = i & _PLACE
            if place < len(spans):
                score = max(-1.0, min(1.0, similarity[i]))
                hits.append(_hit(note_id, path, spans[place], start, text, score, updated_at))
        return hits

    def _spans(self, row_id: int, stored: str) -> list[list[Any]]:
        """A note row's spans, decoded once while they stay the same: reading them is most
        of a hit's cost (3.5-6 us a note), and a vault's hits come back to its notes. Kept
        by row id with the stored text they were read from, so a row id used again holds
        its own; at most ``SPANS_KEPT`` notes."""
        kept = self._decoded.get(row_id)
        if kept is not None and kept[0] == stored:
            return kept[1]
        spans: list[list[Any]] = _decode(stored, 0)[0]
        if len(self._decoded) >= SPANS_KEPT:
            self._decoded.clear()
        self._decoded[row_id] = (stored, spans)
        return spans

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
                "SELECT id, path, dimension, chunks, tag_keys, vectors, updated_at, spans"
                " FROM vector_notes WHERE account_id = ? AND model = ? ORDER BY id",
                (account_id, model),
            ).fetchall()
        finally:
            conn.execute("COMMIT")
        if row is None:
            return None
        dimension = int(rows[0]["dimension"]) if rows else 0
        # A model has one dimension; a row of another (corrupt or hand-made) is skipped.
        rows = [
            r
            for r in rows
            if int(r["dimension"]) == dimension
            and len(r["vectors"]) == 4 * dimension * int(r["chunks"])
        ]
        ids: list[int] = []
        paths: list[str] = []
        tags: list[list[str]] = []
        updated: list[float] = []
        indexes: list[int] = []
        for r in rows:
            count, base, keys = (
                int(r["chunks"]),
                int(r["id"]) << CHUNK_BITS,
                json.loads(r["tag_keys"]),
            )
            ids.extend(range(base, base + count))
            paths.extend([r["path"]] * count)
            tags.extend([keys] * count)
            updated.extend([float(r["updated_at"])] * count)
            # Each chunk's index, by its place (a row with fewer spans than chunks, never
            # written by this code, gives its extra chunks -1: a hit no note holds).
            places = [int(span[0]) for span in _decode(r["spans"], 0)[0][:count]]
            indexes.extend(places + [-1] * (count - len(places)))
        vectors = (
            np.frombuffer(b"".join(r["vectors"] for r in rows), dtype=np.float32).reshape(
                len(ids), dimension
            )
            if ids
            else np.zeros((0, 0), dtype=np.float32)
        )
        return _Matrix(
            generation=int(row["generation"]),
            ids=ids,
            vectors=vectors,
            paths=paths,
            tags=tags,
            updated=updated,
            indexes=indexes,
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
# Up to this many rows are gathered at once, by ``np.take`` (ADR 0078): at 10k notes a
# query's 2,500-7,300 candidates 0.57 -> 0.37 ms (and beside a keyword search on another
# thread each block's two calls no longer wait for the interpreter lock again); at 100k,
# 8,192 candidates 0.70 -> 0.63 ms, while 12,000 cost more so (1.29 -> 1.42 ms).
GATHER_ONCE_ROWS = 8 * 1024


def _scores_of(
    vectors: npt.NDArray[np.float32], rows: Rows, query: npt.NDArray[np.float32]
) -> Scores:
    """``vectors[rows] @ query``, gathered ``GATHER_ROWS`` rows at a time past
    ``GATHER_ONCE_ROWS``. The same scores either way, bit for bit: each block's product
    gives a row what the product of all gives it, but for a block of one row (a dot
    product), which is scored alone as before."""
    if len(rows) <= GATHER_ONCE_ROWS:
        scores = np.asarray(np.take(vectors, rows, axis=0) @ query, dtype=np.float32)
        if len(rows) > GATHER_ROWS and len(rows) % GATHER_ROWS == 1:
            np.dot(vectors[rows[-1:]], query, out=scores[-1:])
        return scores
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
