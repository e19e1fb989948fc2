"""Impact lists beside each account's FTS5 table: a search scores only what it must.

FTS5's ``bm25()`` costs about 0.9 us a match and a query's matches grow with the vault,
while its best few are settled within a small share of them (ADR 0074). For each term
(FTS5 token) a search has used, this module keeps the token's *impact list*: the rowid of
every note of the account holding it and the token's field-weighted frequency ``F`` there
(bm25's per-phrase input, from FTS5's own instances); and for the account a *snapshot*:
each note's length ``D`` (FTS5's docsize), ``updated_at`` and inbound-link count. From
them ``scores`` computes every matching note's final score with numpy, in the operations
and order of FTS5's ``bm25()`` and of the SQL multiplier (ADR 0075): the same doubles, as
the tests compare bit for bit against the reference statement.

The lists are derived data, built per token when a search first needs them, and a write
never waits for them. A write records its rows in ``search_writes`` (by table and rowid:
rowids are shared by every account) with the account's generation, in its own transaction
(nothing while no search has built a snapshot), and a list or snapshot built at generation
``g`` holds exactly the notes whose last write is at or before ``g``. A search scores the
notes written since from their own text, which it reads from the FTS5 table and tokenizes
with FTS5's tokenizer in memory (once per process and note generation). A new inbound
count is kept in ``search_relinks`` and read afresh. When the rows written since grow past
FRESH_FLOOR (and FRESH_SHARE of the notes), they are merged into the snapshot and every
stored list (``merged``; on a background thread, search._MERGES, unless ``overdue``), or
the lists are built from the FTS5 table again.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memvault.domain import ranking

SCHEMA = """
CREATE TABLE IF NOT EXISTS search_impacts (
    table_id INTEGER NOT NULL,
    token TEXT NOT NULL,
    built INTEGER NOT NULL,
    rowids BLOB NOT NULL,
    freqs BLOB NOT NULL,
    PRIMARY KEY (table_id, token)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS search_snapshots (
    table_id INTEGER PRIMARY KEY,
    built INTEGER NOT NULL,
    rowids BLOB NOT NULL,
    lengths BLOB NOT NULL,
    updated BLOB NOT NULL,
    inbound BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS search_writes (
    table_id INTEGER NOT NULL,
    row_id INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    gone INTEGER NOT NULL,
    PRIMARY KEY (table_id, row_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS search_writes_by_generation ON search_writes (table_id, generation);
CREATE TABLE IF NOT EXISTS search_relinks (
    table_id INTEGER NOT NULL,
    row_id INTEGER NOT NULL,
    generation INTEGER NOT NULL,
    PRIMARY KEY (table_id, row_id)
) WITHOUT ROWID;
"""

# A token held by fewer notes than this is read from FTS5's instances when a search needs
# it (at 0.57 us an instance, under a millisecond), not stored.
STORE_MIN = 256
# Rows written since the lists a search uses, past FRESH_FLOOR (and this share of the
# account's notes), are merged into the snapshot and the lists (``stale``): until then a
# search tokenizes each note written since once (about 1.2 ms for 600 words).
FRESH_SHARE = 0.0025
FRESH_FLOOR = 256
# Past this many times that mark (``overdue``) a search merges before it answers, instead
# of leaving the merge to the background thread while it reads the rows back.
OVERDUE_FACTOR = 8

# An fts5vocab instance's weight in F: its column's bm25 weight (domain.ranking's; the
# marker column 0), as the account tables' bm25() call is given them.
_COLUMN_WEIGHT = (
    "CASE col "
    + " ".join(f"WHEN '{col}' THEN {int(w)}" for col, w in ranking.FIELD_WEIGHTS.items())
    + " ELSE 0 END"
)
# The account tables' columns a note's text goes in, in order (search._COLUMNS).
_TEXT_COLUMNS = ("marker", "path", "title", "tags", "body")

_I64 = npt.NDArray[np.int64]
_F64 = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Impacts:
    """A token's impact list: its notes' rowids (ascending) and its F in each."""

    token: str
    built: int  # the account generation it was built at
    rowids: _I64
    freqs: _F64


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The account's notes' lengths, updated_at and inbound counts at ``built``."""

    built: int
    rowids: _I64
    lengths: _F64
    updated: _F64
    inbound: _F64


@dataclass(frozen=True, slots=True)
class Fresh:
    """What a search reads of the rows written since the lists it uses."""

    rows: frozenset[int]  # every row written since (the deleted ones too)
    notes: dict[int, tuple[int, dict[str, int]]]  # the live ones: D and each token's F


# ---------------------------------------------------------------- tokens
class _Tokenizer:
    """FTS5's own tokens of a word or a note (the account tables' tokenizer, in memory)."""

    def __init__(self, tokenize: str) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        columns = ", ".join(_TEXT_COLUMNS)
        self._conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '{tokenize}')")
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        self._conn.execute(f"CREATE VIRTUAL TABLE n USING fts5({columns}, tokenize = '{tokenize}')")
        self._conn.execute("CREATE VIRTUAL TABLE nv USING fts5vocab(n, 'instance')")
        self._lock = threading.Lock()
        self._known: dict[str, tuple[str, ...]] = {}

    def tokens(self, word: str) -> tuple[str, ...]:
        found = self._known.get(word)
        if found is not None:
            return found
        with self._lock:
            self._conn.execute("DELETE FROM t")
            self._conn.execute("INSERT INTO t (x) VALUES (?)", (word,))
            rows = self._conn.execute("SELECT term FROM v ORDER BY offset").fetchall()
        found = tuple(str(r[0]) for r in rows)
        if len(self._known) > 65_536:
            self._known.clear()
        self._known[word] = found
        return found

    def notes(self, texts: Sequence[Sequence[str]]) -> list[tuple[int, dict[str, int]]]:
        """Per note (its columns' texts, _TEXT_COLUMNS), bm25's D and each token's F."""
        marks = ", ".join("?" * len(_TEXT_COLUMNS))
        with self._lock:
            self._conn.execute("DELETE FROM n")
            self._conn.executemany(
                f"INSERT INTO n (rowid, {', '.join(_TEXT_COLUMNS)}) VALUES (?, {marks})",
                [(i, *text) for i, text in enumerate(texts)],
            )
            sizes = self._conn.execute("SELECT id, sz FROM n_docsize").fetchall()
            rows = self._conn.execute(
                f"SELECT doc, term, sum({_COLUMN_WEIGHT}) FROM nv GROUP BY doc, term"
            ).fetchall()
            self._conn.execute("DELETE FROM n")
        found: list[tuple[int, dict[str, int]]] = [(0, {}) for _ in texts]
        for doc, size in sizes:
            found[int(doc)] = (sum(_varints(bytes(size))), {})
        for doc, term, f in rows:
            if f:
                found[int(doc)][1][str(term)] = int(f)
        return found


_tokenizers: dict[str, _Tokenizer] = {}
_tokenizers_lock = threading.Lock()


def _tokenizer(tokenize: str) -> _Tokenizer:
    with _tokenizers_lock:
        found = _tokenizers.get(tokenize)
        if found is None:
            found = _tokenizers[tokenize] = _Tokenizer(tokenize)
        return found


def token_of(word: str, tokenize: str) -> str | None:
    """The one FTS5 token a search word is, or None when it is several (or none)."""
    tokens = _tokenizer(tokenize).tokens(word)
    return tokens[0] if len(tokens) == 1 else None


# ---------------------------------------------------------------- FTS5's records
def _varints(blob: bytes) -> Iterable[int]:
    """SQLite's varints, as FTS5 writes its docsize and averages records."""
    i, n = 0, len(blob)
    while i < n:
        value = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        yield value


def averages(conn: sqlite3.Connection, table: str) -> tuple[int, float]:
    """FTS5's own row count and average row length (``bm25()``'s nRow and avgdl, the same
    double division)."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0, 0.0
    values = list(_varints(bytes(row[0])))
    notes, tokens = values[0], sum(values[1:])
    return notes, (float(tokens) / float(notes) if notes else 0.0)


# ---------------------------------------------------------------- building
def _vocab(conn: sqlite3.Connection, table: str) -> str:
    name = f"{table}_instances"
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} USING fts5vocab(main, {table}, instance)"
    )
    return f"temp.{name}"


def collect(conn: sqlite3.Connection, table: str, token: str, generation: int) -> Impacts:
    """The token's impact list from the account table as ``conn`` sees it (at
    ``generation``): FTS5's own instances of the token, weighted by column."""
    vocab = _vocab(conn, table)
    rows = conn.execute(
        f"SELECT doc, sum({_COLUMN_WEIGHT}) FROM {vocab} WHERE term = ? GROUP BY doc ORDER BY doc",
        (token,),
    ).fetchall()
    kept = [(int(doc), int(f)) for doc, f in rows if f]
    rowids = np.array([doc for doc, _ in kept], dtype=np.int64)
    freqs = np.array([f for _, f in kept], dtype=np.float64)
    return Impacts(token, generation, rowids, freqs)


def snapshot(conn: sqlite3.Connection, table: str, account_id: str, generation: int) -> Snapshot:
    """The account's snapshot as ``conn`` sees it (at ``generation``): each note's length
    from FTS5's docsize records (bm25's D), its updated_at and inbound count."""
    rows = conn.execute(
        f"SELECT d.id, d.sz, r.updated_at, r.inbound FROM {table}_docsize AS d"
        " JOIN search_rows AS r ON r.rowid = d.id WHERE r.account_id = ? ORDER BY d.id",
        (account_id,),
    ).fetchall()
    return Snapshot(
        generation,
        np.array([r[0] for r in rows], dtype=np.int64),
        np.array([sum(_varints(bytes(r[1]))) for r in rows], dtype=np.float64),
        np.array([r[2] for r in rows], dtype=np.float64),
        np.array([r[3] for r in rows], dtype=np.float64),
    )


def store_impacts(conn: sqlite3.Connection, table_id: int, impacts: Impacts) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO search_impacts (table_id, token, built, rowids, freqs)"
        " VALUES (?, ?, ?, ?, ?)",
        (
            table_id,
            impacts.token,
            impacts.built,
            impacts.rowids.astype(np.int64).tobytes(),
            impacts.freqs.astype(np.int32).tobytes(),
        ),
    )


def store_snapshot(conn: sqlite3.Connection, table_id: int, snap: Snapshot) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO search_snapshots (table_id, built, rowids, lengths, updated,"
        " inbound) VALUES (?, ?, ?, ?, ?, ?)",
        (
            table_id,
            snap.built,
            snap.rowids.astype(np.int64).tobytes(),
            snap.lengths.astype(np.int32).tobytes(),
            snap.updated.astype(np.float64).tobytes(),
            snap.inbound.astype(np.int32).tobytes(),
        ),
    )


def rebuilt(conn: sqlite3.Connection, table_id: int, generation: int) -> None:
    """After a build at ``generation`` of the snapshot and the lists a search uses: every
    older list is dropped (built again when next used), and the fresh rows they all cover."""
    conn.execute(
        "DELETE FROM search_impacts WHERE table_id = ? AND built < ?", (table_id, generation)
    )
    conn.execute(
        "DELETE FROM search_writes WHERE table_id = ? AND generation <= ?", (table_id, generation)
    )
    conn.execute(
        "DELETE FROM search_relinks WHERE table_id = ? AND generation <= ?", (table_id, generation)
    )


def merged(
    conn: sqlite3.Connection,
    decoded: Decoded,
    table: str,
    table_id: int,
    account_id: str,
    generation: int,
    tokenize: str,
) -> bool:
    """Bring the stored snapshot and every stored list to ``generation`` (in its write
    transaction) by merging in the rows written since each was built, tokenized as FTS5
    tokenized them (``fresh``): no FTS5 scan, no docsize decoded. False (nothing changed)
    when there is no snapshot or some note is in neither it nor the rows written since."""
    snap = stored_snapshot(conn, decoded, table_id)
    if snap is None:
        return False
    tokens = [
        str(r[0])
        for r in conn.execute("SELECT token FROM search_impacts WHERE table_id = ?", (table_id,))
    ]
    lists = stored_impacts(conn, decoded, table_id, tokens)
    oldest = min([snap.built, *(impacts.built for impacts in lists.values())])
    rows = written_since(conn, table_id, oldest)
    fresh_notes = fresh(conn, decoded, table, table_id, rows, tokenize).notes
    current = conn.execute(
        "SELECT rowid, updated_at, inbound FROM search_rows WHERE account_id = ? ORDER BY rowid",
        (account_id,),
    ).fetchall()
    rowids = np.array([r[0] for r in current], dtype=np.int64)
    since_snap = [rowid for rowid, written, _ in rows if written > snap.built]
    at, held = _find(snap.rowids, rowids)
    from_snap = held & np.isin(rowids, np.asarray(since_snap, dtype=np.int64), invert=True)
    lengths = np.zeros(len(rowids), dtype=np.float64)
    lengths[from_snap] = snap.lengths[at[from_snap]]
    for place in np.flatnonzero(~from_snap).tolist():
        own = fresh_notes.get(int(rowids[place]))
        if own is None:
            return False  # a note the records missed: build afresh instead
        lengths[place] = own[0]
    store_snapshot(
        conn,
        table_id,
        Snapshot(
            generation,
            rowids,
            lengths,
            np.array([r[1] for r in current], dtype=np.float64),
            np.array([r[2] for r in current], dtype=np.float64),
        ),
    )
    for token, impacts in lists.items():
        changed = [rowid for rowid, written, _ in rows if written > impacts.built]
        if changed:
            keep = np.isin(impacts.rowids, np.asarray(changed, dtype=np.int64), invert=True)
            added = [
                (rowid, fresh_notes[rowid][1][token])
                for rowid in changed
                if rowid in fresh_notes and token in fresh_notes[rowid][1]
            ]
            new_rowids = np.concatenate(
                [impacts.rowids[keep], np.array([r for r, _ in added], dtype=np.int64)]
            )
            new_freqs = np.concatenate(
                [impacts.freqs[keep], np.array([f for _, f in added], dtype=np.float64)]
            )
            order = np.argsort(new_rowids, kind="stable")
            impacts = Impacts(token, generation, new_rowids[order], new_freqs[order])
        store_impacts(conn, table_id, Impacts(token, generation, impacts.rowids, impacts.freqs))
    rebuilt(conn, table_id, generation)
    return True


class Decoded:
    """Decoded lists and snapshots of one database, by (table id, token, generation built):
    a stored one never changes, so it is decoded once ("" is the snapshot's token); and
    where each list's notes are in a snapshot."""

    # Lists of a 100k-note account's frequent tokens hold up to ~60k notes (1.4 MB
    # decoded with their places): at most this many of each are kept.
    MAX = 256

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stored: dict[tuple[int, str, int], Impacts | Snapshot] = {}
        self.places: dict[tuple[int, str, int], tuple[Snapshot, _I64, _F64, _F64]] = {}
        # (table id, rowid, generation written) -> the note's D and tokens' F.
        self.notes: dict[tuple[int, int, int], tuple[int, dict[str, int]]] = {}
        self._lengths: tuple[Snapshot, float, _F64] | None = None

    def lengths(self, snap: Snapshot, avgdl: float) -> _F64:
        """``k1 (1 - b + b D / avgdl)`` of the snapshot's notes (kept for the last one)."""
        known = self._lengths
        if known is not None and known[0] is snap and known[1] == avgdl:
            return known[2]
        k1, b = ranking.BM25_K1, ranking.BM25_B
        found: _F64 = k1 * (1 - b + b * snap.lengths / avgdl)
        self._lengths = (snap, avgdl, found)
        return found

    def remember(self, key: tuple[int, str, int], value: Impacts | Snapshot) -> None:
        with self.lock:
            if len(self.stored) >= self.MAX:
                self.stored.clear()
            self.stored[key] = value


def stored_impacts(
    conn: sqlite3.Connection, decoded: Decoded, table_id: int, tokens: Sequence[str]
) -> dict[str, Impacts]:
    """The impact lists stored for these tokens (those that have one)."""
    if not tokens:
        return {}
    marks = ", ".join("?" * len(tokens))
    found: dict[str, Impacts] = {}
    built = conn.execute(
        f"SELECT token, built FROM search_impacts WHERE table_id = ? AND token IN ({marks})",
        (table_id, *tokens),
    ).fetchall()
    for token, generation in built:
        key = (table_id, str(token), int(generation))
        known = decoded.stored.get(key)
        if not isinstance(known, Impacts):
            row = conn.execute(
                "SELECT rowids, freqs FROM search_impacts WHERE table_id = ? AND token = ?",
                (table_id, token),
            ).fetchone()
            known = Impacts(
                str(token),
                int(generation),
                np.frombuffer(row[0], dtype=np.int64),
                np.frombuffer(row[1], dtype=np.int32).astype(np.float64),
            )
            decoded.remember(key, known)
        found[str(token)] = known
    return found


def read_impacts(
    conn: sqlite3.Connection,
    decoded: Decoded,
    table_id: int,
    table: str,
    token: str,
    generation: int,
) -> Impacts:
    """The token's list as ``conn`` sees the table now (at ``generation``), not stored."""
    key = (table_id, token, generation)
    known = decoded.stored.get(key)
    if isinstance(known, Impacts):
        return known
    found = collect(conn, table, token, generation)
    decoded.remember(key, found)
    return found


def stored_snapshot(conn: sqlite3.Connection, decoded: Decoded, table_id: int) -> Snapshot | None:
    row = conn.execute(
        "SELECT built FROM search_snapshots WHERE table_id = ?", (table_id,)
    ).fetchone()
    if row is None:
        return None
    key = (table_id, "", int(row[0]))
    known = decoded.stored.get(key)
    if isinstance(known, Snapshot):
        return known
    r = conn.execute(
        "SELECT rowids, lengths, updated, inbound FROM search_snapshots WHERE table_id = ?",
        (table_id,),
    ).fetchone()
    snap = Snapshot(
        int(row[0]),
        np.frombuffer(r[0], dtype=np.int64),
        np.frombuffer(r[1], dtype=np.int32).astype(np.float64),
        np.frombuffer(r[2], dtype=np.float64),
        np.frombuffer(r[3], dtype=np.int32).astype(np.float64),
    )
    decoded.remember(key, snap)
    return snap


def written_since(
    conn: sqlite3.Connection, table_id: int, generation: int
) -> list[tuple[int, int, int]]:
    """(rowid, generation, gone) of the table's rows written after ``generation``."""
    rows = conn.execute(
        "SELECT row_id, generation, gone FROM search_writes WHERE table_id = ? AND generation > ?",
        (table_id, generation),
    ).fetchall()
    return [(int(r[0]), int(r[1]), int(r[2])) for r in rows]


def _mark(notes: int) -> float:
    return max(FRESH_FLOOR, FRESH_SHARE * notes)


def stale(fresh: int, notes: int) -> bool:
    return fresh > _mark(notes)


def overdue(fresh: int, notes: int) -> bool:
    return fresh > OVERDUE_FACTOR * _mark(notes)


def fresh(
    conn: sqlite3.Connection,
    decoded: Decoded,
    table: str,
    table_id: int,
    rows: Sequence[tuple[int, int, int]],
    tokenize: str,
) -> Fresh:
    """The rows written since (``written_since``), the live ones tokenized as FTS5
    tokenized them."""
    notes: dict[int, tuple[int, dict[str, int]]] = {}
    unread: dict[int, int] = {}
    for rowid, generation, gone in rows:
        if gone:
            continue
        known = decoded.notes.get((table_id, int(rowid), int(generation)))
        if known is None:
            unread[int(rowid)] = int(generation)
        else:
            notes[int(rowid)] = known
    waiting = list(unread)
    for start in range(0, len(waiting), 256):
        chunk = waiting[start : start + 256]
        marks = ", ".join("?" * len(chunk))
        texts = conn.execute(
            f"SELECT rowid, {', '.join(_TEXT_COLUMNS)} FROM {table} WHERE rowid IN ({marks})",
            chunk,
        ).fetchall()
        tokenized = _tokenizer(tokenize).notes([tuple(r)[1:] for r in texts])
        with decoded.lock:
            if len(decoded.notes) >= 16 * decoded.MAX:
                decoded.notes.clear()
            for r, found in zip(texts, tokenized, strict=True):
                rowid = int(r[0])
                decoded.notes[(table_id, rowid, unread[rowid])] = found
                notes[rowid] = found
    return Fresh(frozenset(int(r[0]) for r in rows), notes)


def links_since(conn: sqlite3.Connection, table_id: int, since: int) -> list[int]:
    """Rows whose inbound count changed after ``since``."""
    return [
        int(r[0])
        for r in conn.execute(
            "SELECT row_id FROM search_relinks WHERE table_id = ? AND generation > ?",
            (table_id, since),
        )
    ]


# ---------------------------------------------------------------- writes
def written(
    conn: sqlite3.Connection, table_id: int, generation: int, rowids: Sequence[int], *, gone: bool
) -> None:
    """Record rows written (or deleted) at ``generation``, in the write's own transaction.
    While the table has no snapshot (no search has built one yet) there is nothing to
    record: what is built later is built from the table as it is then."""
    if not rowids or not built(conn, table_id):
        return
    conn.executemany(
        "INSERT OR REPLACE INTO search_writes (row_id, table_id, generation, gone)"
        " VALUES (?, ?, ?, ?)",
        [(rowid, table_id, generation, int(gone)) for rowid in rowids],
    )


def built(conn: sqlite3.Connection, table_id: int) -> bool:
    """Whether the table has a snapshot (so writes must be recorded)."""
    found = conn.execute("SELECT 1 FROM search_snapshots WHERE table_id = ?", (table_id,))
    return found.fetchone() is not None


def linked(conn: sqlite3.Connection, table_id: int, generation: int, rowids: Iterable[int]) -> None:
    """Record rows whose inbound count changed, one generation on (the current one may be a
    snapshot's, which holds the old counts)."""
    conn.executemany(
        "INSERT OR REPLACE INTO search_relinks (row_id, table_id, generation) VALUES (?, ?, ?)",
        [(rowid, table_id, generation + 1) for rowid in rowids],
    )


def forget(conn: sqlite3.Connection, table_id: int) -> None:
    """Drop the table's lists, snapshot and fresh rows (its table was emptied)."""
    conn.execute("DELETE FROM search_impacts WHERE table_id = ?", (table_id,))
    conn.execute("DELETE FROM search_snapshots WHERE table_id = ?", (table_id,))
    conn.execute("DELETE FROM search_writes WHERE table_id = ?", (table_id,))
    conn.execute("DELETE FROM search_relinks WHERE table_id = ?", (table_id,))


# ---------------------------------------------------------------- searching
def _places(decoded: Decoded, snap: Snapshot, impacts: Impacts) -> tuple[_I64, _F64, _F64]:
    """Where the list's notes are in the snapshot, their F and F (k1 + 1); notes the
    snapshot does not hold (written since it was built: fresh) are left out. Kept per list
    and snapshot."""
    key = (id(snap), impacts.token, impacts.built)
    known = decoded.places.get(key)
    if known is not None and known[0] is snap:
        return known[1], known[2], known[3]
    at, held = _find(snap.rowids, impacts.rowids)
    freqs = impacts.freqs[held]
    found = (at[held], freqs, freqs * (ranking.BM25_K1 + 1.0))
    with decoded.lock:
        if len(decoded.places) >= decoded.MAX:
            decoded.places.clear()
        decoded.places[key] = (snap, *found)
    return found


def _find(ordered: _I64, wanted: _I64) -> tuple[_I64, npt.NDArray[np.bool_]]:
    """Where each of ``wanted`` stands in ``ordered`` (ascending), and whether it is there
    (where it is not, its place is 0: index with the mask)."""
    at = np.searchsorted(ordered, wanted)
    at[at >= len(ordered)] = 0
    return at, ordered[at] == wanted


def _multiplier(updated: _F64, inbound: _F64, now: float) -> _F64:
    """search._score_sql's multiplier, operation for operation."""
    age = np.maximum(0.0, now - updated) / ranking.SECONDS_PER_DAY
    recency = 1.0 / (1.0 + age / ranking.RECENCY_HALF_LIFE_DAYS)
    links = inbound * 1.0 / (inbound + ranking.LINK_SATURATION)
    out: _F64 = 1.0 + ranking.RECENCY_WEIGHT * recency + ranking.LINK_WEIGHT * links
    return out


def scores(
    decoded: Decoded,
    snap: Snapshot,
    terms: Sequence[tuple[Impacts, float, bool]],
    written: Fresh,
    relinked: Mapping[int, tuple[float, float]],
    fresh_rows: Mapping[int, tuple[float, float]],
    avgdl: float,
    now: float,
    limit: int,
    inside: _I64 | None = None,
) -> tuple[_I64, _F64]:
    """(rowids, final scores) of the matching notes that can make the best ``limit``: at
    least those, and every note tied with the last of them.

    ``terms`` are the query's phrases in order: (impact list, idf, matching); a note
    matches when it holds a matching one. Each phrase adds ``idf * F (k1 + 1) / (F + k1
    (1 - b + b D / avgdl))`` as FTS5's bm25() adds it (0.0 where F is 0), so the sum is the
    same double. Notes written since (``written``) are scored from their own tokens;
    ``relinked`` and ``fresh_rows`` give (updated_at, inbound) read afresh. ``inside``:
    only these rowids (ascending) may match (a folder's)."""
    k1, b = ranking.BM25_K1, ranking.BM25_B
    places = [(_places(decoded, snap, impacts), idf) for impacts, idf, _ in terms]
    # The matching notes first (those holding a matching phrase, less the fresh ones)...
    matched = np.zeros(len(snap.rowids), dtype=bool)
    for ((at, _, _), _), (_, _, matching) in zip(places, terms, strict=True):
        if matching:
            matched[at] = True
    if inside is not None:
        allow = np.zeros(len(snap.rowids), dtype=bool)
        at, hit = _find(snap.rowids, inside)
        allow[at[hit]] = True
        matched &= allow
    if written.rows:
        gone = np.fromiter(written.rows, dtype=np.int64, count=len(written.rows))
        at, hit = _find(snap.rowids, gone)
        matched[at[hit]] = False
    held = np.flatnonzero(matched)
    # ... then each phrase's share of their relevance, phrase after phrase (F (k1 + 1) is
    # kept per list, k1 (1 - b + b D / avgdl) per note). A list much longer than the
    # matching notes (recall's frequent scoring words) is searched for them instead.
    length = decoded.lengths(snap, avgdl)
    scratch = np.zeros(len(snap.rowids), dtype=np.float64)
    for (at, f, saturated), idf in places:
        if len(at) > 16 * len(held):
            found, hit = _find(at, held)
            into, found = held[hit], found[hit]
            scratch[into] += idf * (saturated[found] / (f[found] + length[into]))
        else:
            scratch[at] += idf * (saturated / (f + length[at]))
    relevance = scratch[held]
    if len(held) > limit:
        # The best ``limit`` by relevance score at least that (the multiplier is at least
        # 1), and no note scores more than its relevance times MAX_MULTIPLIER (rounding is
        # monotonic): a note under the n-th relevance that way cannot rank.
        nth = np.partition(relevance, len(held) - limit)[len(held) - limit]
        reach = relevance * ranking.MAX_MULTIPLIER >= nth
        held, relevance = held[reach], relevance[reach]
    rowids = snap.rowids[held]
    updated, inbound = snap.updated[held], snap.inbound[held]
    if relinked:
        at = np.searchsorted(rowids, np.fromiter(relinked, dtype=np.int64, count=len(relinked)))
        for place, rowid in zip(at.tolist(), relinked, strict=True):
            if place < len(rowids) and rowids[place] == rowid:
                if not updated.flags.writeable:
                    updated, inbound = updated.copy(), inbound.copy()
                updated[place], inbound[place] = relinked[rowid]
    final = relevance * _multiplier(updated, inbound, now)
    # Notes written since: the same operations on their own tokens, one note at a time.
    extra_rowids: list[int] = []
    extra_relevance: list[float] = []
    allowed = None if inside is None else set(inside.tolist())
    for rowid, (size, own) in written.notes.items():
        if rowid not in fresh_rows:
            continue  # its ranking row is gone
        if allowed is not None and rowid not in allowed:
            continue
        if not any(matching and impacts.token in own for impacts, _, matching in terms):
            continue
        value = 0.0
        for impacts, idf, _ in terms:
            freq = float(own.get(impacts.token, 0))
            value += idf * ((freq * (k1 + 1.0)) / (freq + k1 * (1 - b + b * float(size) / avgdl)))
        extra_rowids.append(rowid)
        extra_relevance.append(value)
    if extra_rowids:
        rows = np.asarray(extra_rowids, dtype=np.int64)
        moved = np.array([fresh_rows[r] for r in extra_rowids], dtype=np.float64)
        extra = np.asarray(extra_relevance) * _multiplier(moved[:, 0], moved[:, 1], now)
        rowids = np.concatenate([rowids, rows])
        final = np.concatenate([final, extra])
    if len(final) <= limit:
        return rowids, final
    nth = float(np.partition(final, len(final) - limit)[len(final) - limit])
    keep = final >= nth
    return rowids[keep], final[keep]
