"""SearchIndex on SQLite FTS5 (the embedded backend).

One FTS5 table holds every account's notes; the account is both an indexed column
(so the MATCH itself is confined to the tenant) and an exact-compare filter.
Ranking is domain.ranking's formula evaluated in SQL, and the answer is the best of
*all* matches by it, so results agree with the OpenSearch adapter, which evaluates the
same formula in a script score.

Reading a match's stored row (for the score's inputs, filters or a snippet) costs about
as much as matching it, so a search reads only the rows that can make the answer, over
one snapshot: the leading matches in relevance order from the index alone (what a plain
``ORDER BY bm25(...)`` costs), scored from their small ranking rows in the same statement
(``_walk``); only when they cannot settle the answer, one more pass that reads just the
matches whose best possible score still reaches it (``_top``); then stored fields and
snippets of the winners (``_hits``).
"""

from __future__ import annotations

import html
import json
import math
import sqlite3
from collections.abc import Collection, Mapping, Sequence

from memvault.adapters.sqlite.db import Database
from memvault.domain import query as query_terms
from memvault.domain import ranking
from memvault.domain.models import SearchDoc, SearchHit, SearchQuery

# search_rows holds what ranking and filters read (small rows, cheap to update: a new
# inbound-link count rewrites 50 bytes, not the note's whole FTS5 document);
# search_fts holds the text, with the same rowid.
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
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
    account, path, title, tags, body,
    note_id UNINDEXED, tags_json UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
"""

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


_BODY_COLUMN = 4
# Pending index data FTS5 holds in memory before writing a segment (its default is 1 MiB).
# Larger means fewer, larger segments from a bulk load: a 10k-note import indexes ~30%
# faster and leaves 3 segments instead of 8, so later queries open fewer. Larger still
# is slower again (64 MiB, one segment: ~20% slower to index, and searches measured no
# faster). Results are unaffected (segments only split storage; bm25 uses whole-table
# statistics).
_HASH_SIZE = 16 * 1024 * 1024


def _tag_keys(tags: Sequence[str]) -> str:
    # Tab-delimited so a tag filter is an exact token test: "\tproject\t" or "\tproject/".
    return "\t" + "\t".join(t.casefold() for t in tags) + "\t"


def _quote(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def _any_term(terms: Sequence[str]) -> str:
    """An FTS5 query for notes holding any of ``terms`` in a searched column."""
    return "{path title tags body} : (" + " OR ".join(_quote(t) for t in terms) + ")"


def _selected(selection: query_terms.TermSelection, account_id: str) -> str:
    """An FTS5 query for notes holding any of the selection's matching terms.

    Its scoring terms are OR-ed with the account's own phrase, which every note of the
    account holds: so they match no note of their own, yet bm25 (a sum over every phrase
    of the query, each weighted over the whole table) adds their weight to the notes
    that hold them. The account column weighs 0, so its phrase adds nothing.
    """
    matching = _any_term(selection.matching)
    if not selection.scoring:
        return matching
    return f"{matching} AND ({_any_term(selection.scoring)} OR account : {_quote(account_id)})"


def _bm25_sql() -> str:
    w = ranking.FIELD_WEIGHTS
    return f"bm25(search_fts, 0.0, {w['path']}, {w['title']}, {w['tags']}, {w['body']})"


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


# An unfiltered search first walks this many matches in relevance order (at least this
# many, and 4 per result asked for), reading only their stored rows. At 10k notes most
# searches settle within 64; walking more costs every search a longer sort (256 cost
# ~0.6 ms more than 10), while one that does not settle costs one more pass over the
# matches, reading only those that can still reach the answer.
_WALK = 64
_WALK_PER_RESULT = 4


class SqliteSearchIndex:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.term_counts = query_terms.TermCounts()
        db.add_schema(SCHEMA)
        self._bm25 = _bm25_sql()
        self._score = _score_sql(self._bm25, "r.")
        self._candidate_score = _score_sql("c.bm25", "r.")
        # ``_bound`` of a match's relevance, with the same float operations.
        self._reach = f"max(-{self._bm25} * :max_multiplier, -{self._bm25})"
        self._configure()

    def _configure(self) -> None:
        # A persistent FTS5 setting: written once per database, read on every start.
        row = (
            self.db.connection()
            .execute("SELECT v FROM search_fts_config WHERE k = 'hashsize'")
            .fetchone()
        )
        if row is None or row[0] != _HASH_SIZE:
            with self.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO search_fts (search_fts, rank) VALUES ('hashsize', ?)",
                    (_HASH_SIZE,),
                )

    def upsert(self, account_id: str, docs: Sequence[SearchDoc]) -> None:
        if not docs:
            return
        with self.db.transaction() as conn:
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
                "DELETE FROM search_fts WHERE rowid = ?", [(r,) for r in existing.values()]
            )
            conn.executemany(
                "INSERT INTO search_rows (rowid, account_id, path, updated_at, inbound,"
                " tag_keys) VALUES (?, ?, ?, ?, ?, ?)",
                fresh,
            )
            conn.executemany(
                "INSERT INTO search_fts (rowid, account, path, title, tags, body, note_id,"
                " tags_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        rowid,
                        account_id,
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
            for path in paths:
                row = conn.execute(
                    "SELECT rowid FROM search_rows WHERE account_id = ? AND path = ?",
                    (account_id, path),
                ).fetchone()
                if row is not None:
                    conn.execute("DELETE FROM search_fts WHERE rowid = ?", (row[0],))
                    conn.execute("DELETE FROM search_rows WHERE rowid = ?", (row[0],))

    def set_inbound(self, account_id: str, counts: Mapping[str, int]) -> None:
        if not counts:
            return
        with self.db.transaction() as conn:
            conn.executemany(
                "UPDATE search_rows SET inbound = ? WHERE account_id = ? AND path = ?"
                " AND inbound != ?",
                [(count, account_id, path, count) for path, count in counts.items()],
            )

    def search(self, account_id: str, query: SearchQuery, *, now: float) -> list[SearchHit]:
        terms = query_terms.search_terms(query.text)
        if not terms or query.limit <= 0:
            return []
        conn = self.db.connection()
        # The passes must see one snapshot, as the single statement they replace did.
        own_snapshot = not conn.in_transaction
        if own_snapshot:
            conn.execute("BEGIN")
        try:
            # The tenant clause only narrows the match: the exact account compare in
            # ranking (``_top``) is what isolates tenants. When the index holds this account
            # alone it narrows nothing, and it costs a quarter of the relevance pass.
            # It adds exactly 0.0 to bm25 (its column's weight is 0), so scores agree.
            sole = self._sole_tenant(conn, account_id)
            tenant = "" if sole else f"account : {_quote(account_id)} AND "
            selection = query_terms.TermSelection.every(terms)
            if query.skip_common_terms and len(terms) > 1:
                selection = self._select_terms(conn, account_id, tenant, terms)
                if not selection.matching:
                    return []  # no note holds any of them
            any_term = _any_term(selection.terms)
            match = tenant + _selected(selection, account_id)
            top = self._top(conn, account_id, query, match, now)
            # Scanning the matches once costs less than looking up each winner when each
            # lookup seeks several terms; it visits at most the matches the walk did, and
            # only this tenant's when the index holds no other.
            scan = sole and len(selection.terms) > 1
            rowids = [rowid for rowid, _, _ in top]
            if query.snippets:
                rows = self._hits(conn, any_term, rowids, scan=scan)
            else:
                rows = self._fields(conn, rowids)
        finally:
            if own_snapshot:
                conn.execute("COMMIT")
        return [
            SearchHit(
                note_id=r["note_id"],
                path=r["path"],
                title=r["title"],
                tags=tuple(json.loads(r["tags_json"])),
                score=float(score),
                snippet=_snippet_html(r["snippet"]) if query.snippets else "",
                updated_at=float(r["updated_at"]),
            )
            for rowid, score, _ in top
            if (r := rows.get(rowid)) is not None
        ]

    def _select_terms(
        self, conn: sqlite3.Connection, account_id: str, tenant: str, terms: list[str]
    ) -> query_terms.TermSelection:
        """``terms`` less those no note holds and the account's common ones, its frequent
        ones scoring only (domain.query.distinctive_terms). ``tenant`` is the match's
        tenant clause, "" when the index holds this account alone.

        Each term's notes are counted only up to one past the cutoff, so telling that a
        term is common costs a fraction of matching it."""

        def count(unknown: list[str], total: int | None) -> tuple[int, dict[str, int]]:
            if total is None:
                # A whole-table count is read off the b-tree (~40x faster than an account's).
                total = conn.execute(
                    "SELECT count(*) FROM search_rows WHERE account_id = ?"
                    if tenant
                    else "SELECT count(*) FROM search_rows",
                    (account_id,) if tenant else (),
                ).fetchone()[0]
            cutoff = query_terms.common_term_cutoff(int(total))
            if total <= cutoff or not unknown:
                return int(total), {}
            counts = ", ".join(
                f"(SELECT count(*) FROM (SELECT 1 FROM search_fts WHERE search_fts MATCH ?{i}"
                f" LIMIT {cutoff + 1}))"
                for i in range(1, len(unknown) + 1)
            )
            row = conn.execute(
                f"SELECT {counts}", [tenant + _any_term([term]) for term in unknown]
            ).fetchone()
            return int(total), dict(zip(unknown, map(int, row), strict=True))

        return query_terms.distinctive_terms(account_id, terms, self.term_counts, count)

    def _sole_tenant(self, conn: sqlite3.Connection, account_id: str) -> bool:
        row = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM search_rows WHERE account_id < :a)"
            " OR EXISTS (SELECT 1 FROM search_rows WHERE account_id > :a)",
            {"a": account_id},
        ).fetchone()
        return not row[0]

    def _top(
        self, conn: sqlite3.Connection, account_id: str, query: SearchQuery, match: str, now: float
    ) -> list[tuple[int, float, str]]:
        """(rowid, score, path) of the best ``query.limit`` matches, best first: the answer
        of ``ORDER BY score DESC, path LIMIT n`` over every match that passes the filters."""
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
            found, floor = self._walk(conn, where, params, query.limit)
            if found is not None:
                return found
        # Every match that passes the filters, ranked in SQL; after a walk, only those whose
        # best possible score reaches its floor are read and scored (the rest cannot rank).
        reach = ""
        if floor > -math.inf:
            reach = f" AND {self._reach} >= :floor"
            params.update(floor=floor, max_multiplier=ranking.MAX_MULTIPLIER)
        rows = conn.execute(
            f"SELECT search_fts.rowid, {self._score} AS score, r.path FROM search_fts"
            " JOIN search_rows AS r ON r.rowid = search_fts.rowid"
            f" WHERE search_fts MATCH :match{reach} AND {where}"
            " ORDER BY score DESC, r.path LIMIT :limit",
            params,
        ).fetchall()
        return [(int(r[0]), float(r[1]), str(r[2])) for r in rows]

    def _walk(
        self, conn: sqlite3.Connection, where: str, params: Mapping[str, object], limit: int
    ) -> tuple[list[tuple[int, float, str]] | None, float]:
        """(the answer, _) from the leading matches by relevance; or (None, floor) when they
        cannot settle it, floor being a score every match in the answer reaches.

        The leading matches come from the index alone (what a plain ``ORDER BY bm25``
        costs), and only their stored rows are read, for their score. The multiplier is at
        most ranking.MAX_MULTIPLIER, so once the n-th best score found beats the best score
        a match of the last relevance walked could reach, no later match makes the answer.
        """
        walk = max(_WALK, _WALK_PER_RESULT * limit)
        rows: list[tuple[int, float, float | None, str | None]] = conn.execute(
            f"SELECT c.rid, c.bm25, CASE WHEN {where} THEN {self._candidate_score} END, r.path"
            f" FROM (SELECT rowid AS rid, {self._bm25} AS bm25 FROM search_fts"
            " WHERE search_fts MATCH :match ORDER BY 2 LIMIT :walk) AS c"
            " LEFT JOIN search_rows AS r ON r.rowid = c.rid",
            {**params, "walk": walk},
        ).fetchall()
        best = sorted(
            ((rid, score, str(path)) for rid, _, score, path in rows if score is not None),
            key=lambda hit: (-hit[1], hit[2]),
        )
        del best[limit:]
        if len(rows) < walk:  # that was every match
            return best, -math.inf
        if len(best) < limit:  # too few of them pass the filters to say anything
            return None, -math.inf
        # Matches past the walk rank at most like the least relevant one walked.
        nth = best[-1][1]
        if _bound(-max(bm25 for _, bm25, _, _ in rows)) < nth:
            return best, -math.inf
        return None, nth

    def _hits(
        self, conn: sqlite3.Connection, any_term: str, rowids: Sequence[int], *, scan: bool
    ) -> dict[int, sqlite3.Row]:
        """Stored fields and body snippet of the chosen rows only.

        Matched without the tenant clause: that phrase is confined to the account
        column, so it has no instance in the body and the snippet is the same.

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
            f" snippet(search_fts, {_BODY_COLUMN}, '{SNIPPET_OPEN}', '{SNIPPET_CLOSE}', '…', 16)"
            " AS snippet FROM search_fts AS f JOIN search_rows AS r ON r.rowid = f.rowid"
            f" WHERE search_fts MATCH ? AND {chosen}",
            (*params, *rowids),
        ).fetchall()
        return {int(r["rowid"]): r for r in rows}

    def _fields(self, conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, sqlite3.Row]:
        """Stored fields of the chosen rows, without snippets: rowid lookups, no MATCH."""
        if not rowids:
            return {}
        marks = ", ".join("?" * len(rowids))
        rows = conn.execute(
            "SELECT f.rowid, f.note_id, f.path, f.title, f.tags_json, r.updated_at"
            " FROM search_fts AS f JOIN search_rows AS r ON r.rowid = f.rowid"
            f" WHERE f.rowid IN ({marks})",
            tuple(rowids),
        ).fetchall()
        return {int(r["rowid"]): r for r in rows}

    def clear(self, account_id: str) -> None:
        with self.db.transaction() as conn:
            rowids = [
                r[0]
                for r in conn.execute(
                    "SELECT rowid FROM search_rows WHERE account_id = ?", (account_id,)
                ).fetchall()
            ]
            for rowid in rowids:
                conn.execute("DELETE FROM search_fts WHERE rowid = ?", (rowid,))
            conn.execute("DELETE FROM search_rows WHERE account_id = ?", (account_id,))
