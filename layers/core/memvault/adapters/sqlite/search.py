"""SearchIndex on SQLite FTS5 (the embedded backend).

One FTS5 table holds every account's notes; the account is both an indexed column
(so the MATCH itself is confined to the tenant) and an exact-compare filter in WHERE.
Ranking is domain.ranking's formula evaluated in SQL over *all* matches, so results
agree with the OpenSearch adapter, which evaluates the same formula in a script score.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence

from memvault.adapters.sqlite.db import Database
from memvault.domain import query as query_terms
from memvault.domain import ranking
from memvault.domain.models import SearchDoc, SearchHit, SearchQuery

SCHEMA = """
CREATE TABLE IF NOT EXISTS search_rows (
    rowid INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL,
    path TEXT NOT NULL,
    UNIQUE (account_id, path)
);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
    account, path, title, tags, body,
    note_id UNINDEXED, updated_at UNINDEXED, inbound UNINDEXED, tag_keys UNINDEXED,
    tags_json UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
"""

SNIPPET_OPEN = "<mark>"
SNIPPET_CLOSE = "</mark>"
_BODY_COLUMN = 4


def _tag_keys(tags: Sequence[str]) -> str:
    # Tab-delimited so a tag filter is an exact token test: "\tproject\t" or "\tproject/".
    return "\t" + "\t".join(t.casefold() for t in tags) + "\t"


def _quote(value: str) -> str:
    return '"' + value.replace('"', '""') + '"'


def _score_sql() -> str:
    w = ranking.FIELD_WEIGHTS
    bm25 = f"bm25(search_fts, 0.0, {w['path']}, {w['title']}, {w['tags']}, {w['body']})"
    recency = (
        f"(1.0 / (1.0 + max(0.0, :now - updated_at) / {ranking.SECONDS_PER_DAY}"
        f" / {ranking.RECENCY_HALF_LIFE_DAYS}))"
    )
    links = f"(inbound * 1.0 / (inbound + {ranking.LINK_SATURATION}))"
    return (
        f"(-{bm25}) * (1.0 + {ranking.RECENCY_WEIGHT} * {recency}"
        f" + {ranking.LINK_WEIGHT} * {links})"
    )


class SqliteSearchIndex:
    def __init__(self, db: Database) -> None:
        self.db = db
        db.add_schema(SCHEMA)
        self._score = _score_sql()

    def upsert(self, account_id: str, docs: Sequence[SearchDoc]) -> None:
        if not docs:
            return
        with self.db.transaction() as conn:
            for doc in docs:
                row = conn.execute(
                    "SELECT rowid FROM search_rows WHERE account_id = ? AND path = ?",
                    (account_id, doc.path),
                ).fetchone()
                if row is None:
                    rowid = conn.execute(
                        "INSERT INTO search_rows (account_id, path) VALUES (?, ?)",
                        (account_id, doc.path),
                    ).lastrowid
                else:
                    rowid = row[0]
                    conn.execute("DELETE FROM search_fts WHERE rowid = ?", (rowid,))
                conn.execute(
                    "INSERT INTO search_fts (rowid, account, path, title, tags, body, note_id,"
                    " updated_at, inbound, tag_keys, tags_json)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        rowid,
                        account_id,
                        doc.path,
                        doc.title,
                        " ".join(doc.tags),
                        doc.body,
                        doc.note_id,
                        doc.updated_at,
                        doc.inbound_links,
                        _tag_keys(doc.tags),
                        json.dumps(doc.tags),
                    ),
                )

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
            for path, count in counts.items():
                row = conn.execute(
                    "SELECT rowid FROM search_rows WHERE account_id = ? AND path = ?",
                    (account_id, path),
                ).fetchone()
                if row is not None:
                    conn.execute(
                        "UPDATE search_fts SET inbound = ? WHERE rowid = ? AND inbound != ?",
                        (count, row[0], count),
                    )

    def search(self, account_id: str, query: SearchQuery, *, now: float) -> list[SearchHit]:
        terms = query_terms.search_terms(query.text)
        if not terms or query.limit <= 0:
            return []
        match = (
            f"account : {_quote(account_id)} AND {{path title tags body}} : ("
            + " OR ".join(_quote(t) for t in terms)
            + ")"
        )
        clauses = ["search_fts MATCH :match", "account = :account"]
        params: dict[str, object] = {
            "match": match,
            "account": account_id,
            "now": now,
            "limit": query.limit,
        }
        if query.folder:
            clauses.append("substr(path, 1, :folder_len) = :folder")
            params.update(folder=query.folder, folder_len=len(query.folder))
        if query.tag:
            tag = query.tag.casefold().lstrip("#")
            clauses.append("(instr(tag_keys, :tag_exact) > 0 OR instr(tag_keys, :tag_nested) > 0)")
            params.update(tag_exact=f"\t{tag}\t", tag_nested=f"\t{tag}/")
        sql = (
            f"SELECT note_id, path, title, tags_json, updated_at, {self._score} AS score,"
            f" snippet(search_fts, {_BODY_COLUMN}, '{SNIPPET_OPEN}', '{SNIPPET_CLOSE}', '…', 16)"
            f" AS snippet FROM search_fts WHERE {' AND '.join(clauses)}"
            " ORDER BY score DESC, path LIMIT :limit"
        )
        rows = self.db.connection().execute(sql, params).fetchall()
        return [
            SearchHit(
                note_id=r["note_id"],
                path=r["path"],
                title=r["title"],
                tags=tuple(json.loads(r["tags_json"])),
                score=round(float(r["score"]), 6),
                snippet=r["snippet"],
                updated_at=float(r["updated_at"]),
            )
            for r in rows
        ]

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
