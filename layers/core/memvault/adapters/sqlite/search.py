"""SearchIndex on SQLite FTS5 (the embedded backend).

Each account's notes have an FTS5 table of their own, ``search_fts_<id>`` (ids in
``search_tables``), so everything FTS5's ``bm25()`` reads besides the note itself (the
note count, each term's note count, the average length) is the account's own: no score
or ranking an account observes depends on another account's notes (ADR 0017). The
exact account compare on the ranking rows (``search_rows``, one table for all, keyed by
rowid) stays as well. Ranking is domain.ranking's formula evaluated in SQL, and the
answer is the best of *all* matches by it, so results agree with the OpenSearch adapter,
which evaluates the same formula in a script score.

Reading a match's stored row (for the score's inputs, filters or a snippet) costs about
as much as matching it, so a search reads only the rows that can make the answer, over
one snapshot: the leading matches in relevance order from the index alone (what a plain
``ORDER BY bm25(...)`` costs), scored from their small ranking rows in the same statement
(``_walk``); only when they cannot settle the answer, one more pass that reads just the
matches whose best possible score still reaches it (``_top``); then stored fields and
snippets of the winners (``_hits``).

The 0-1 score divides by the weight of the query's terms (domain.ranking.score), which
needs each term's note count in the account: counted exactly in the same snapshot, and
remembered per account *generation* (``search_tables.generation``, moved by every write
to the account's index in the same transaction), so a count is never served once the
account's notes have changed, in this process or another.
"""

from __future__ import annotations

import html
import json
import logging
import math
import sqlite3
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memvault.adapters.sqlite import search_bounds as bounds
from memvault.adapters.sqlite.db import Database
from memvault.domain import query as query_terms
from memvault.domain import ranking
from memvault.domain.models import SearchDoc, SearchHit, SearchQuery

log = logging.getLogger(__name__)

# search_rows holds what ranking and filters read (small rows, cheap to update: a new
# inbound-link count rewrites 50 bytes, not the note's whole FTS5 document); the
# account's FTS5 table holds the text, with the same rowid (rowids are unique across
# accounts: they are search_rows'). search_tables names each account's FTS5 table and
# keeps its note count (FTS5's own row count, which idf needs) and its generation.
SCHEMA = """
CREATE TABLE IF NOT EXISTS search_rows (
    rowid INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL,
    path TEXT NOT NULL,
    updated_at REAL NOT NULL,
    inbound INTEGER NOT NULL,
    tag_keys TEXT NOT NULL,
    UNIQUE (account_id, path)
);
CREATE TABLE IF NOT EXISTS search_tables (
    id INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL UNIQUE,
    notes INTEGER NOT NULL DEFAULT 0,
    generation INTEGER NOT NULL DEFAULT 0
);
"""

# The FTS5 table before ADR 0017: every account's notes in one table, the account an
# indexed column. A database that still has it is moved to per-account tables when the
# index is opened (``_migrate_shared_table``).
SHARED_TABLE = "search_fts"

# Every row's marker column holds MARKER, one token no search term can be (search terms
# are word characters; a private-use character is not one), weighted 0: a scoring-only
# term is OR-ed with it, so it adds to the notes that hold it without matching any of its
# own (``_selected``). It is one token of each note's length (ranking.LENGTH_OFFSET).
MARKER = "\ue010"
_COLUMNS = "marker, path, title, tags, body, note_id UNINDEXED, tags_json UNINDEXED"
_TOKENIZE = "porter unicode61 remove_diacritics 2"
_BODY_COLUMN = 4

# Snippets are HTML-escaped note text with <mark> around the hits (as OpenSearch's
# html encoder gives), so a page can show them as they are and a note's own "<mark>" or
# "<script>" stays text. FTS5 marks hits with private-use characters, escaped around.
SNIPPET_OPEN = "\ue000"
SNIPPET_CLOSE = "\ue001"


def _snippet_html(raw: str) -> str:
    return (
        html.escape(raw, quote=False)
        .replace(SNIPPET_OPEN, "<mark>")
        .replace(SNIPPET_CLOSE, "</mark>")
    )


# Pending index data FTS5 holds in memory before writing a segment (its default is 1 MiB).
# Larger means fewer, larger segments from a bulk load: a 10k-note import indexes ~30%
# faster and leaves 3 segments instead of 8, so later queries open fewer. Larger still
# is slower again (64 MiB, one segment: ~20% slower to index, and searches measured no
# faster). Results are unaffected (segments only split storage; bm25 uses whole-table
# statistics). A persistent setting of each table, written when it is made.
_HASH_SIZE = 16 * 1024 * 1024


def fts_table(table_id: int) -> str:
    """The name of the FTS5 table with this id (an integer: never text from a user)."""
    return f"search_fts_{int(table_id)}"


def _tag_keys(tags: Sequence[str]) -> str:
    # Tab-delimited so a tag filter is an exact token test: "\tproject\t" or "\tproject/".
    return "\t" + "\t".join(t.casefold() for t in tags) + "\t"


def _quote(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def _any_term(terms: Sequence[str]) -> str:
    """An FTS5 query for notes holding any of ``terms`` in a searched column."""
    return "{path title tags body} : (" + " OR ".join(_quote(t) for t in terms) + ")"


def _selected(selection: query_terms.TermSelection) -> str:
    """An FTS5 query for notes holding any of the selection's matching terms.

    Its scoring terms are OR-ed with the marker, which every note holds: so they match no
    note of their own, yet bm25 (a sum over every phrase of the query, each weighted over
    the table) adds their weight to the notes that hold them. The marker column weighs 0,
    so its phrase adds exactly nothing.
    """
    matching = _any_term(selection.matching)
    if not selection.scoring:
        return matching
    return f"{matching} AND ({_any_term(selection.scoring)} OR marker : {_quote(MARKER)})"


def _walk_parts(
    selection: query_terms.TermSelection, counts: Mapping[str, int], notes: int
) -> list[str] | None:
    """``_selected``'s matches as two queries, the notes holding a scoring term and those
    holding none, or None when one query with the marker costs less.

    ``bm25()`` counts the notes of every phrase of its query, over the whole table, before
    it scores a row: the marker's phrase is every note (at 100k notes, 2.6 ms of a 4.5 ms
    walk for a recall message). Apart, each query holds the matching and the scoring
    phrases (a phrase on the right of NOT is counted, and adds nothing to a note its
    query matched), so every note is scored as ``_selected`` scores it; the phrases are
    counted twice, which costs less while their notes number fewer than the account's.
    """
    if not selection.scoring:
        return None
    if sum(counts[t] for t in selection.terms) >= notes:
        return None
    matching, scoring = _any_term(selection.matching), _any_term(selection.scoring)
    return [f"{matching} AND ({scoring})", f"({matching}) NOT ({scoring})"]


def _bm25_sql(table: str) -> str:
    w = ranking.FIELD_WEIGHTS
    return f"bm25({table}, 0.0, {w['path']}, {w['title']}, {w['tags']}, {w['body']})"


def _score_sql(bm25: str, row: str = "") -> str:
    """The final score in SQL, from a bm25 value and the row's ``updated_at``/``inbound``."""
    recency = (
        f"(1.0 / (1.0 + max(0.0, :now - {row}updated_at) / {ranking.SECONDS_PER_DAY}"
        f" / {ranking.RECENCY_HALF_LIFE_DAYS}))"
    )
    links = f"({row}inbound * 1.0 / ({row}inbound + {ranking.LINK_SATURATION}))"
    return (
        f"(-{bm25}) * (1.0 + {ranking.RECENCY_WEIGHT} * {recency}"
        f" + {ranking.LINK_WEIGHT} * {links})"
    )


def _bound(relevance: float) -> float:
    """The highest score a match of this relevance can reach, whatever its row holds.

    The multiplier is within [1, MAX_MULTIPLIER] (recency and link factors are within
    [0, 1]; inbound counts are never negative), and rounding is monotonic, so the
    computed score never exceeds this computed bound.
    """
    return relevance * (ranking.MAX_MULTIPLIER if relevance > 0 else 1.0)


def _create_table(conn: sqlite3.Connection, table: str) -> None:
    conn.execute(f"CREATE VIRTUAL TABLE {table} USING fts5({_COLUMNS}, tokenize = '{_TOKENIZE}')")
    conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('hashsize', ?)", (_HASH_SIZE,))


def _table_exists(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    return row.fetchone() is not None


# An unfiltered search first walks this many matches in relevance order (at least this
# many, and 4 per result asked for), reading only their stored rows. At 10k notes most
# searches settle within 64; walking more costs every search a longer sort (256 cost
# ~0.6 ms more than 10), while one that does not settle costs one more pass over the
# matches, reading only those that can still reach the answer.
_WALK = 64
_WALK_PER_RESULT = 4
# ... and at least this share of the matches: FTS5 scores every match to sort them, so a
# walk that does not settle costs a second pass as long as the first (``_top``), while
# walking deeper costs only the rows read. A word most notes hold settles deeper than 64
# (100k notes: 274-344 for words in 58-60% of them, 85 for two words in 35%), a rarer one
# within 64; 1/128 of the matches covers the first and costs the second little.
_WALK_SHARE = 128


# A folder-filtered search reads the rowids of the folder's notes first, while they are
# at most this many.
_FOLDER_MAX = 20_000
# How long a search waits for the write lock to build impact lists before it walks.
_BUILD_WAIT_MS = 100
# Lists grown stale (more rows written since than bounds.stale allows) are merged with
# those rows by a background thread while searches go on answering from the lists and
# the rows read back (exact either way): at 100k notes the merge costs a second of CPU,
# which would otherwise fall on whichever search (a gateway request's recall) came next.
# Past this many times the stale mark (bounds.overdue) the search merges first, since the
# rows it reads back on every search would cost it more than the merge. The merge waits
# longer for the write lock than a search does: nobody is waiting on it.
_MERGE_WAIT_MS = 5_000
_MERGES = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memvault-search-merge")
# Snippets scan the matches while they number fewer than this many per (winner, term).
_SCAN_PER_LOOKUP = 120


@dataclass(frozen=True, slots=True)
class _Build:
    """A search's answer when impact lists it would use are missing or stale."""

    tokens: tuple[str, ...]
    snapshot: bool


@dataclass(frozen=True, slots=True)
class _Account:
    """An account's entry in search_tables, as one snapshot saw it."""

    table: str
    notes: int
    generation: int
    table_id: int
    account_id: str


class SqliteSearchIndex:
    def __init__(self, db: Database) -> None:
        self.db = db
        # Searches score from impact lists (ADR 0075); False: the walk of FTS5's matches
        # alone (the bench alternates the two, tests compare them).
        self.impact_lists = True
        # Stale lists merged by a background thread while searches answer (False: the
        # search that finds them stale merges first, as when they are overdue).
        self.merge_in_background = True
        self._merging: dict[str, Future[None]] = {}
        self._merging_lock = threading.Lock()
        self.decoded = bounds.Decoded()
        # Recall's selection: counts capped at one past the common cutoff, kept 60 s
        # (domain.query.TermCounts), as for every engine.
        self.term_counts = query_terms.TermCounts()
        # The score's weight: exact counts, per account generation.
        self.doc_counts = query_terms.TermCounts()
        db.add_schema(SCHEMA)
        db.add_schema(bounds.SCHEMA)
        self._migrate_shared_table()

    # ------------------------------------------------------------------ tables
    def fts_table(self, account_id: str) -> str | None:
        """The name of the account's FTS5 table; None while it has never had a note."""
        found = self._account(self.db.connection(), account_id)
        return None if found is None else found.table

    @staticmethod
    def _account(conn: sqlite3.Connection, account_id: str) -> _Account | None:
        row = conn.execute(
            "SELECT id, notes, generation FROM search_tables WHERE account_id = ?",
            (account_id,),
        ).fetchone()
        if row is None:
            return None
        return _Account(fts_table(row[0]), int(row[1]), int(row[2]), int(row[0]), account_id)

    @classmethod
    def _writable(cls, conn: sqlite3.Connection, account_id: str) -> str:
        """The account's FTS5 table, made if it has none (inside a write transaction)."""
        found = cls._account(conn, account_id)
        if found is not None:
            return found.table
        cursor = conn.execute("INSERT INTO search_tables (account_id) VALUES (?)", (account_id,))
        assert cursor.lastrowid is not None
        table = fts_table(cursor.lastrowid)
        _create_table(conn, table)
        return table

    @staticmethod
    def _changed(conn: sqlite3.Connection, account_id: str, added: int = 0) -> None:
        """Record a change to the account's index: ``added`` notes more (or fewer)."""
        conn.execute(
            "UPDATE search_tables SET notes = notes + ?, generation = generation + 1"
            " WHERE account_id = ?",
            (added, account_id),
        )

    def _migrate_shared_table(self) -> None:
        """Move a database made before ADR 0017 to per-account tables, once.

        Every note's text is copied from the shared table into its account's own (FTS5
        tokenizes it again: about the time the notes' first indexing took), then the
        shared table is dropped, all in one transaction: a process opening the file
        meanwhile waits for it, and a failure leaves the shared table as it was.
        """
        if not _table_exists(self.db.connection(), SHARED_TABLE):
            return
        with self.db.transaction() as conn:
            if not _table_exists(conn, SHARED_TABLE):
                return  # another process moved it first
            accounts = [
                str(r[0]) for r in conn.execute("SELECT DISTINCT account_id FROM search_rows")
            ]
            # Tables first: no statement may be reading while the schema changes.
            tables = {account_id: self._writable(conn, account_id) for account_id in accounts}
            moved = 0
            for account_id, table in tables.items():
                rows = conn.execute(
                    "SELECT f.rowid, f.path, f.title, f.tags, f.body, f.note_id, f.tags_json"
                    f" FROM search_rows AS r JOIN {SHARED_TABLE} AS f ON f.rowid = r.rowid"
                    " WHERE r.account_id = ?",
                    (account_id,),
                )
                copied = 0
                for batch in _batches(rows, 500):
                    conn.executemany(
                        f"INSERT INTO {table} (rowid, marker, path, title, tags, body,"
                        " note_id, tags_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [(r[0], MARKER, *tuple(r)[1:]) for r in batch],
                    )
                    copied += len(batch)
                self._changed(conn, account_id, copied)
                moved += copied
            conn.execute(f"DROP TABLE {SHARED_TABLE}")
        log.info("search index moved to one table per account", extra={"notes": moved})

    # ------------------------------------------------------------------ writes
    def upsert(self, account_id: str, docs: Sequence[SearchDoc]) -> None:
        if not docs:
            return
        with self.db.transaction() as conn:
            table = self._writable(conn, account_id)
            by_path = {doc.path: doc for doc in docs}
            if len(by_path) != len(docs):
                # The same path twice: the last document wins, as writing them in turn would.
                docs = list(by_path.values())
            existing = self._rowids(conn, account_id, list(by_path))
            # New rows get the rowids SQLite would hand out one by one (max + 1 onwards;
            # this transaction holds the write lock), so each text row can be written
            # with its search_rows row in one statement per table, in rowid order.
            next_rowid = conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM search_rows")
            base = int(next_rowid.fetchone()[0])
            rowids: list[int] = []
            fresh: list[tuple[object, ...]] = []
            for doc in docs:
                found = existing.get(doc.path)
                if found is None:
                    found = base + len(fresh)
                    fresh.append(
                        (
                            found,
                            account_id,
                            doc.path,
                            doc.updated_at,
                            doc.inbound_links,
                            _tag_keys(doc.tags),
                        )
                    )
                rowids.append(found)
            conn.executemany(
                "UPDATE search_rows SET updated_at = ?, inbound = ?, tag_keys = ? WHERE rowid = ?",
                [
                    (doc.updated_at, doc.inbound_links, _tag_keys(doc.tags), existing[doc.path])
                    for doc in docs
                    if doc.path in existing
                ],
            )
            conn.executemany(
                f"DELETE FROM {table} WHERE rowid = ?", [(r,) for r in existing.values()]
            )
            conn.executemany(
                "INSERT INTO search_rows (rowid, account_id, path, updated_at, inbound,"
                " tag_keys) VALUES (?, ?, ?, ?, ?, ?)",
                fresh,
            )
            conn.executemany(
                f"INSERT INTO {table} (rowid, marker, path, title, tags, body, note_id,"
                " tags_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        rowid,
                        MARKER,
                        doc.path,
                        doc.title,
                        " ".join(doc.tags),
                        doc.body,
                        doc.note_id,
                        json.dumps(doc.tags),
                    )
                    for rowid, doc in zip(rowids, docs, strict=True)
                ],
            )
            self._changed(conn, account_id, len(fresh))
            # Impact lists built before this write do not hold these rows (ADR 0075).
            written = self._account(conn, account_id)
            assert written is not None
            bounds.written(conn, written.table_id, written.generation, rowids, gone=False)

    @staticmethod
    def _rowids(conn: sqlite3.Connection, account_id: str, paths: list[str]) -> dict[str, int]:
        """The rowids of these paths' rows, for those the index holds."""
        found: dict[str, int] = {}
        for start in range(0, len(paths), 500):
            chunk = paths[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT path, rowid FROM search_rows WHERE account_id = ? AND path IN ({marks})",
                [account_id, *chunk],
            ).fetchall()
            found.update((str(r[0]), int(r[1])) for r in rows)
        return found

    def delete(self, account_id: str, paths: Collection[str]) -> None:
        if not paths:
            return
        with self.db.transaction() as conn:
            account = self._account(conn, account_id)
            if account is None:
                return
            removed: list[int] = []
            for path in dict.fromkeys(paths):
                row = conn.execute(
                    "SELECT rowid FROM search_rows WHERE account_id = ? AND path = ?",
                    (account_id, path),
                ).fetchone()
                if row is not None:
                    conn.execute(f"DELETE FROM {account.table} WHERE rowid = ?", (row[0],))
                    conn.execute("DELETE FROM search_rows WHERE rowid = ?", (row[0],))
                    removed.append(int(row[0]))
            if removed:
                self._changed(conn, account_id, -len(removed))
                # Impact lists built before may still hold these rows (ADR 0075).
                bounds.written(conn, account.table_id, account.generation + 1, removed, gone=True)

    def set_inbound(self, account_id: str, counts: Mapping[str, int]) -> None:
        if not counts:
            return
        # Ranking rows only: no statistic the score's weight reads, so no new generation.
        with self.db.transaction() as conn:
            account = self._account(conn, account_id)
            if account is not None and bounds.built(conn, account.table_id):
                # A snapshot built before holds the old counts: searches read these rows'
                # afresh until the next is built (ADR 0075).
                changed = conn.execute(
                    "SELECT r.rowid FROM json_each(?) AS c CROSS JOIN search_rows AS r"
                    " ON r.account_id = ? AND r.path = c.key WHERE r.inbound != c.value",
                    (json.dumps(dict(counts)), account_id),
                ).fetchall()
                bounds.linked(conn, account.table_id, account.generation, [r[0] for r in changed])
            conn.executemany(
                "UPDATE search_rows SET inbound = ? WHERE account_id = ? AND path = ?"
                " AND inbound != ?",
                [(count, account_id, path, count) for path, count in counts.items()],
            )

    def clear(self, account_id: str) -> None:
        with self.db.transaction() as conn:
            account = self._account(conn, account_id)
            if account is None:
                return
            # The account's own table: dropped and made again empty, whatever it held.
            conn.execute(f"DROP TABLE {account.table}")
            _create_table(conn, account.table)
            bounds.forget(conn, account.table_id)
            conn.execute("DELETE FROM search_rows WHERE account_id = ?", (account_id,))
            self._changed(conn, account_id, -account.notes)

    # ------------------------------------------------------------------ search
    def search(self, account_id: str, query: SearchQuery, *, now: float) -> list[SearchHit]:
        terms = query_terms.search_terms(query.text)
        if not terms or query.limit <= 0:
            return []
        found = self._search(account_id, query, terms, now, build=True)
        if isinstance(found, _Build):
            # Bounds its terms lack, built in a write transaction of their own; the search
            # then runs again on a new snapshot (it is exact with or without them).
            self._build_bounds(account_id, found)
            found = self._search(account_id, query, terms, now, build=False)
            assert not isinstance(found, _Build)
        return found

    def _search(
        self, account_id: str, query: SearchQuery, terms: list[str], now: float, *, build: bool
    ) -> list[SearchHit] | _Build:
        conn = self.db.connection()
        # The passes must see one snapshot, as the single statement they replace did.
        own_snapshot = not conn.in_transaction
        if own_snapshot:
            conn.execute("BEGIN")
        try:
            account = self._account(conn, account_id)
            if account is None or account.notes <= 0:
                return []
            selection = query_terms.TermSelection.every(terms)
            if query.skip_common_terms and len(terms) > 1:
                selection = self._select_terms(conn, account_id, account, terms)
            counts = self.note_counts(conn, account_id, account, selection.terms)
            # A term no note holds adds nothing to any note: it is left out of the match
            # and of the query's weight (bm25 adds exactly 0.0 for it either way).
            selection = query_terms.held(selection, counts)
            if not selection.matching:
                return []  # no note holds any of them
            weight = ranking.query_weight(
                ranking.idf(account.notes, counts[t]) for t in selection.terms
            )
            # At most this many notes match (each matching term's notes, summed): how deep
            # the walk goes before it may have to score every match again (``_walk``).
            matches = min(account.notes, sum(counts[t] for t in selection.matching))
            walk_parts = _walk_parts(selection, counts, account.notes)
            exact = self._exact(
                conn, account, query, selection, counts, now, build=build and own_snapshot
            )
            if isinstance(exact, _Build):
                return exact
            top = exact
            if top is None:
                top = self._top(
                    conn,
                    account.table,
                    account_id,
                    query,
                    _selected(selection),
                    now,
                    matches,
                    walk_parts,
                )
            # Scanning the matches once costs less than looking up each winner when each
            # lookup seeks several terms, while they are few (a match scanned costs about
            # 0.25 us, a term looked up for a winner 20-40 us: 10k and 100k notes).
            lookups = len(top) * len(selection.terms)
            held = sum(counts[t] for t in selection.terms)
            scan = len(selection.terms) > 1 and held < _SCAN_PER_LOOKUP * lookups
            rowids = [rowid for rowid, _, _ in top]
            if query.snippets:
                rows = self._hits(
                    conn, account.table, _any_term(selection.terms), rowids, scan=scan
                )
            else:
                rows = self._fields(conn, account.table, rowids)
        finally:
            if own_snapshot:
                conn.execute("COMMIT")
        return [
            SearchHit(
                note_id=r["note_id"],
                path=r["path"],
                title=r["title"],
                tags=tuple(json.loads(r["tags_json"])),
                score=ranking.score(float(final), weight),
                snippet=_snippet_html(r["snippet"]) if query.snippets else "",
                updated_at=float(r["updated_at"]),
            )
            for rowid, final, _ in top
            if (r := rows.get(rowid)) is not None
        ]

    def _exact(
        self,
        conn: sqlite3.Connection,
        account: _Account,
        query: SearchQuery,
        selection: query_terms.TermSelection,
        counts: Mapping[str, int],
        now: float,
        *,
        build: bool,
    ) -> list[tuple[int, float, str]] | _Build | None:
        """(rowid, final score, path) of the best matches, best first, from the impact lists
        (ADR 0075); _Build when lists it needs are missing or stale; None when it cannot
        answer (a tag filter, a folder of very many notes, a word of several tokens, or lists
        it may not build)."""
        if not self.impact_lists or query.tag:
            return None
        inside = self._folder_rows(conn, account, query.folder) if query.folder else None
        if query.folder and inside is None:
            return None
        tokens: list[str] = []
        for term in selection.terms:
            token = bounds.token_of(term, _TOKENIZE)
            if token is None:
                return None
            tokens.append(token)
        # A token held by few notes is read from FTS5 as the search needs it (in its own
        # snapshot, nothing stored); the others' lists are stored, built when missing.
        rare = {
            token
            for term, token in zip(selection.terms, tokens, strict=True)
            if counts[term] < bounds.STORE_MIN
        }
        distinct = sorted(set(tokens) - rare)
        table_id = account.table_id
        have = bounds.stored_impacts(conn, self.decoded, table_id, distinct)
        snap = bounds.stored_snapshot(conn, self.decoded, table_id)
        missing = tuple(token for token in distinct if token not in have)
        renew = snap is None
        since = -1
        written: list[tuple[int, int, int]] = []
        if snap is not None:
            since = min([snap.built, *(impacts.built for impacts in have.values())])
            written = bounds.written_since(conn, table_id, since)
            renew = bounds.stale(len(written), account.notes)
            if (
                renew
                and self.merge_in_background
                and not bounds.overdue(len(written), account.notes)
            ):
                # Answered from the lists and the rows written since; a list never built
                # is still built first, at this generation (the merge leaves it as it is).
                self._merge_later(account.account_id)
                renew = False
        if missing or renew:
            if not build:
                return None
            return _Build(tuple(distinct) if renew else missing, snapshot=renew)
        assert snap is not None
        notes, avgdl = bounds.averages(conn, account.table)
        if notes <= 0:
            return None
        for token in rare:
            have[token] = bounds.read_impacts(
                conn, self.decoded, table_id, account.table, token, account.generation
            )
        terms = [
            (have[token], ranking.idf(notes, counts[term]), term in selection.matching)
            for term, token in zip(selection.terms, tokens, strict=True)
        ]
        fresh = bounds.fresh(conn, self.decoded, account.table, table_id, written, _TOKENIZE)
        relinked = bounds.links_since(conn, table_id, snap.built)
        current = self._ranking_rows(conn, [*relinked, *fresh.notes])
        rowids, finals = bounds.scores(
            self.decoded,
            snap,
            terms,
            fresh,
            {rowid: current[rowid] for rowid in relinked if rowid in current},
            current,
            avgdl,
            now,
            query.limit,
            inside,
        )
        paths = self._paths(conn, rowids.tolist())
        top = sorted(
            (
                (rowid, final, paths[rowid])
                for rowid, final in zip(rowids.tolist(), finals.tolist(), strict=True)
                if rowid in paths
            ),
            key=lambda hit: (-hit[1], hit[2]),
        )
        return top[: query.limit]

    @staticmethod
    def _folder_rows(
        conn: sqlite3.Connection, account: _Account, folder: str
    ) -> npt.NDArray[np.int64] | None:
        """The rowids of the account's notes under ``folder`` (ascending), None when they
        are more than _FOLDER_MAX (reading them would cost more than the walk). The same
        test as the walk's, within the range of paths starting with the folder (paths that
        start with "a/b/" sort before "a/b0", the next character after "/")."""
        end = folder[:-1] + chr(ord(folder[-1]) + 1)
        rows = conn.execute(
            "SELECT rowid FROM search_rows WHERE account_id = ? AND path >= ? AND path < ?"
            " AND substr(path, 1, ?) = ? LIMIT ?",
            (account.account_id, folder, end, len(folder), folder, _FOLDER_MAX + 1),
        ).fetchall()
        if len(rows) > _FOLDER_MAX:
            return None
        return np.sort(np.array([r[0] for r in rows], dtype=np.int64))

    @staticmethod
    def _ranking_rows(
        conn: sqlite3.Connection, rowids: Sequence[int]
    ) -> dict[int, tuple[float, float]]:
        """(updated_at, inbound) of these ranking rows, as they are now."""
        found: dict[int, tuple[float, float]] = {}
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            found.update(
                (int(r[0]), (float(r[1]), float(r[2])))
                for r in conn.execute(
                    f"SELECT rowid, updated_at, inbound FROM search_rows WHERE rowid IN ({marks})",
                    chunk,
                )
            )
        return found

    @staticmethod
    def _paths(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, str]:
        found: dict[int, str] = {}
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            found.update(
                (int(r[0]), str(r[1]))
                for r in conn.execute(
                    f"SELECT rowid, path FROM search_rows WHERE rowid IN ({marks})", chunk
                )
            )
        return found

    def _merge_later(self, account_id: str) -> None:
        """Merge the account's stale lists on the background thread (once at a time)."""
        with self._merging_lock:
            if account_id in self._merging:
                return
            self._merging[account_id] = _MERGES.submit(self._merge, account_id)

    def _merge(self, account_id: str) -> None:
        try:
            self._build_bounds(account_id, _Build((), snapshot=True), wait_ms=_MERGE_WAIT_MS)
        except Exception:
            # Nobody awaits it: say so; searches stay exact and merge first once overdue.
            log.exception("search impact lists not merged")
        finally:
            with self._merging_lock:
                self._merging.pop(account_id, None)

    def merges_settled(self, timeout: float | None = None) -> None:
        """Wait for the background merges started so far (tests, and a clean shutdown)."""
        with self._merging_lock:
            pending = list(self._merging.values())
        for future in pending:
            future.result(timeout)

    def _build_bounds(
        self, account_id: str, build: _Build, *, wait_ms: int = _BUILD_WAIT_MS
    ) -> None:
        """Build (again) and keep impact lists and the snapshot, in one write transaction.

        A search does not wait long for the write lock (an import may hold it for a
        while): when it cannot have it soon, it walks FTS5's matches instead."""
        conn = self.db.connection()
        waited = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
        conn.execute(f"PRAGMA busy_timeout = {wait_ms}")
        try:
            with self.db.transaction() as conn:
                account = self._account(conn, account_id)
                if account is None:
                    return
                generation = account.generation
                tokens = build.tokens
                if build.snapshot and bounds.merged(
                    conn,
                    self.decoded,
                    account.table,
                    account.table_id,
                    account_id,
                    generation,
                    _TOKENIZE,
                ):
                    # The notes written since merged in: only lists never built are read.
                    have = bounds.stored_impacts(conn, self.decoded, account.table_id, tokens)
                    tokens = tuple(token for token in tokens if token not in have)
                elif build.snapshot:
                    snap = bounds.snapshot(conn, account.table, account_id, generation)
                    bounds.store_snapshot(conn, account.table_id, snap)
                for token in tokens:
                    impacts = bounds.collect(conn, account.table, token, generation)
                    bounds.store_impacts(conn, account.table_id, impacts)
                if build.snapshot:
                    bounds.rebuilt(conn, account.table_id, generation)
        except sqlite3.OperationalError:
            # A read-only file or a lock held too long: the search runs without them.
            log.warning("search impact lists not built", exc_info=True)
        finally:
            conn.execute(f"PRAGMA busy_timeout = {waited}")

    def note_counts(
        self, conn: sqlite3.Connection, account_id: str, account: _Account, terms: Sequence[str]
    ) -> dict[str, int]:
        """How many of the account's notes hold each term (FTS5's own count for bm25's idf:
        notes holding the term in a searched column), exact for the account's generation."""
        _, counts = self.doc_counts.lookup(account_id, terms, version=account.generation)
        unknown = [term for term in dict.fromkeys(terms) if term not in counts]
        if unknown:
            table = account.table
            counted = ", ".join(
                f"(SELECT count(*) FROM {table} WHERE {table} MATCH ?{i})"
                for i in range(1, len(unknown) + 1)
            )
            row = conn.execute(f"SELECT {counted}", [_any_term([t]) for t in unknown]).fetchone()
            fresh = dict(zip(unknown, map(int, row), strict=True))
            self.doc_counts.remember(account_id, account.notes, fresh, version=account.generation)
            counts.update(fresh)
        return counts

    def _select_terms(
        self, conn: sqlite3.Connection, account_id: str, account: _Account, terms: list[str]
    ) -> query_terms.TermSelection:
        """``terms`` less those no note holds and the account's common ones, its frequent
        ones scoring only (domain.query.distinctive_terms).

        Each term's notes are counted only up to one past the cutoff, so telling that a
        term is common costs a fraction of matching it."""
        table = account.table

        def count(unknown: list[str], _total: int | None) -> tuple[int, dict[str, int]]:
            total = account.notes
            cutoff = query_terms.common_term_cutoff(total)
            if total <= cutoff or not unknown:
                return total, {}
            counts = ", ".join(
                f"(SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ?{i}"
                f" LIMIT {cutoff + 1}))"
                for i in range(1, len(unknown) + 1)
            )
            row = conn.execute(
                f"SELECT {counts}", [_any_term([term]) for term in unknown]
            ).fetchone()
            fresh = dict(zip(unknown, map(int, row), strict=True))
            # A count within the cutoff is exact, and of this snapshot: the score's weight
            # needs no second count of the terms recall keeps.
            exact = {term: n for term, n in fresh.items() if n <= cutoff}
            self.doc_counts.remember(account_id, total, exact, version=account.generation)
            return total, fresh

        return query_terms.distinctive_terms(account_id, terms, self.term_counts, count)

    def _top(
        self,
        conn: sqlite3.Connection,
        table: str,
        account_id: str,
        query: SearchQuery,
        match: str,
        now: float,
        matches: int,
        walk_parts: Sequence[str] | None = None,
    ) -> list[tuple[int, float, str]]:
        """(rowid, final score, path) of the best ``query.limit`` matches, best first: the
        answer of ``ORDER BY score DESC, path LIMIT n`` over every match that passes the
        filters. ``walk_parts``: queries whose matches, apart, are ``match``'s, each scored
        as ``match`` scores them (``_walk_parts``), walked instead of ``match``."""
        params: dict[str, object] = {
            "match": match,
            "account": account_id,
            "now": now,
            "limit": query.limit,
        }
        conditions = ["r.account_id = :account"]
        if query.folder:
            conditions.append("substr(r.path, 1, :folder_len) = :folder")
            params.update(folder=query.folder, folder_len=len(query.folder))
        if query.tag:
            tag = query.tag.casefold().lstrip("#")
            conditions.append(
                "(instr(r.tag_keys, :tag_exact) > 0 OR instr(r.tag_keys, :tag_nested) > 0)"
            )
            params.update(tag_exact=f"\t{tag}\t", tag_nested=f"\t{tag}/")
        where = " AND ".join(conditions)
        # A folder or tag filter can reject most of the leading matches, so walking them
        # rarely settles anything: such searches rank in SQL directly.
        floor = -math.inf
        if not (query.folder or query.tag):
            found, floor = self._walk(
                conn, table, where, params, query.limit, matches, walk_parts or [match]
            )
            if found is not None:
                return found
        # Every match that passes the filters, ranked in SQL; after a walk, only those whose
        # best possible score reaches its floor are read and scored (the rest cannot rank).
        bm25 = _bm25_sql(table)
        reach = ""
        if floor > -math.inf:
            # ``_bound`` of a match's relevance, with the same float operations.
            reach = f" AND max(-{bm25} * :max_multiplier, -{bm25}) >= :floor"
            params.update(floor=floor, max_multiplier=ranking.MAX_MULTIPLIER)
        rows = conn.execute(
            f"SELECT {table}.rowid, {_score_sql(bm25, 'r.')} AS score, r.path FROM {table}"
            f" JOIN search_rows AS r ON r.rowid = {table}.rowid"
            f" WHERE {table} MATCH :match{reach} AND {where}"
            " ORDER BY score DESC, r.path LIMIT :limit",
            params,
        ).fetchall()
        return [(int(r[0]), float(r[1]), str(r[2])) for r in rows]

    def _walk(
        self,
        conn: sqlite3.Connection,
        table: str,
        where: str,
        params: Mapping[str, object],
        limit: int,
        matches: int,
        parts: Sequence[str],
    ) -> tuple[list[tuple[int, float, str]] | None, float]:
        """(the answer, _) from the leading matches by relevance; or (None, floor) when they
        cannot settle it, floor being a score every match in the answer reaches.

        The leading matches come from the index alone (what a plain ``ORDER BY bm25``
        costs), and only their stored rows are read, for their score. The multiplier is at
        most ranking.MAX_MULTIPLIER, so once the n-th best score found beats the best score
        a match of the last relevance walked could reach, no later match makes the answer.
        Each of ``parts`` is walked so (their matches never overlap), and the least
        relevant match walked in any part that had more bounds the rest.
        """
        walk = max(_WALK, _WALK_PER_RESULT * limit, matches // _WALK_SHARE)
        statement = (
            f"SELECT c.rid, c.bm25, CASE WHEN {where} THEN {_score_sql('c.bm25', 'r.')} END,"
            f" r.path FROM (SELECT rowid AS rid, {_bm25_sql(table)} AS bm25 FROM {table}"
            f" WHERE {table} MATCH :match ORDER BY 2 LIMIT :walk) AS c"
            " LEFT JOIN search_rows AS r ON r.rowid = c.rid"
        )
        rows: list[tuple[int, float, float | None, str | None]] = []
        unwalked: list[float] = []  # per part with more matches: its least relevance walked
        for part in parts:
            found = conn.execute(statement, {**params, "match": part, "walk": walk}).fetchall()
            rows += found
            if len(found) == walk:
                unwalked.append(-max(bm25 for _, bm25, _, _ in found))
        best = sorted(
            ((rid, score, str(path)) for rid, _, score, path in rows if score is not None),
            key=lambda hit: (-hit[1], hit[2]),
        )
        del best[limit:]
        if not unwalked:  # that was every match
            return best, -math.inf
        if len(best) < limit:  # too few of them pass the filters to say anything
            return None, -math.inf
        # Matches past the walk rank at most like the least relevant one walked.
        nth = best[-1][1]
        if _bound(max(unwalked)) < nth:
            return best, -math.inf
        return None, nth

    def _hits(
        self,
        conn: sqlite3.Connection,
        table: str,
        any_term: str,
        rowids: Sequence[int],
        *,
        scan: bool,
    ) -> dict[int, sqlite3.Row]:
        """Stored fields and body snippet of the chosen rows only.

        FTS5 runs ``rowid IN (...)`` as one lookup per row, each seeking every term in
        every segment. With ``scan`` it instead walks the matches between the lowest and
        highest rowid once (``+`` keeps the IN list a filter, not a lookup); a row's
        snippet depends only on its own text and phrase instances, so it is the same.
        """
        if not rowids:
            return {}
        marks = ", ".join("?" * len(rowids))
        chosen = f"f.rowid IN ({marks})"
        params: list[object] = [any_term]
        if scan:
            chosen = f"f.rowid >= ? AND f.rowid <= ? AND +{chosen}"
            params += [min(rowids), max(rowids)]
        rows = conn.execute(
            "SELECT f.rowid, f.note_id, f.path, f.title, f.tags_json, r.updated_at,"
            f" snippet({table}, {_BODY_COLUMN}, '{SNIPPET_OPEN}', '{SNIPPET_CLOSE}', '…', 16)"
            f" AS snippet FROM {table} AS f JOIN search_rows AS r ON r.rowid = f.rowid"
            f" WHERE {table} MATCH ? AND {chosen}",
            (*params, *rowids),
        ).fetchall()
        return {int(r["rowid"]): r for r in rows}

    def _fields(
        self, conn: sqlite3.Connection, table: str, rowids: Sequence[int]
    ) -> dict[int, sqlite3.Row]:
        """Stored fields of the chosen rows, without snippets: rowid lookups, no MATCH."""
        if not rowids:
            return {}
        marks = ", ".join("?" * len(rowids))
        rows = conn.execute(
            "SELECT f.rowid, f.note_id, f.path, f.title, f.tags_json, r.updated_at"
            f" FROM {table} AS f JOIN search_rows AS r ON r.rowid = f.rowid"
            f" WHERE f.rowid IN ({marks})",
            tuple(rowids),
        ).fetchall()
        return {int(r["rowid"]): r for r in rows}


def _batches(rows: Iterator[sqlite3.Row], size: int) -> Iterator[list[sqlite3.Row]]:
    batch: list[sqlite3.Row] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
