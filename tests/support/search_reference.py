"""The reference answer of an embedded-backend search: one plain SQL statement.

``SqliteSearchIndex.search`` avoids reading most matches' rows (see its docstring). Its
answer must equal this statement's, which ranks every match by the formula, filters
exactly, snippets, and orders by score then path: hits equal field for field.
"""

from __future__ import annotations

import json

from memvault.adapters.sqlite import search
from memvault.adapters.sqlite.db import Database
from memvault.domain import query as query_terms
from memvault.domain.models import SearchHit, SearchQuery


def reference(db: Database, account_id: str, query: SearchQuery, now: float) -> list[SearchHit]:
    """The one-statement search the adapter's passes must agree with."""
    terms = query_terms.search_terms(query.text)
    if not terms or query.limit <= 0:
        return []
    q = search._quote
    match = (
        f"account : {q(account_id)} AND {{path title tags body}} : ("
        + " OR ".join(q(t) for t in terms)
        + ")"
    )
    clauses = ["search_fts MATCH :match", "r.account_id = :account"]
    params: dict[str, object] = {"match": match, "account": account_id, "now": now}
    params["limit"] = query.limit
    if query.folder:
        clauses.append("substr(r.path, 1, :folder_len) = :folder")
        params.update(folder=query.folder, folder_len=len(query.folder))
    if query.tag:
        tag = query.tag.casefold().lstrip("#")
        clauses.append("(instr(r.tag_keys, :tag_exact) > 0 OR instr(r.tag_keys, :tag_nested) > 0)")
        params.update(tag_exact=f"\t{tag}\t", tag_nested=f"\t{tag}/")
    score = search._score_sql(search._bm25_sql(), "r.")
    marks = f"'{search.SNIPPET_OPEN}', '{search.SNIPPET_CLOSE}'"
    sql = (
        f"SELECT note_id, r.path AS path, title, tags_json, r.updated_at AS updated_at,"
        f" {score} AS score, snippet(search_fts, 4, {marks}, '…', 16) AS snippet"
        " FROM search_fts JOIN search_rows AS r ON r.rowid = search_fts.rowid"
        f" WHERE {' AND '.join(clauses)} ORDER BY score DESC, r.path LIMIT :limit"
    )
    return [
        SearchHit(
            note_id=r["note_id"],
            path=r["path"],
            title=r["title"],
            tags=tuple(json.loads(r["tags_json"])),
            score=float(r["score"]),
            snippet=search._snippet_html(r["snippet"]),
            updated_at=float(r["updated_at"]),
        )
        for r in db.connection().execute(sql, params).fetchall()
    ]
