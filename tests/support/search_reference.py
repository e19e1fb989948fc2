"""The reference answer of an embedded-backend search: one plain SQL statement.

``SqliteSearchIndex.search`` avoids reading most matches' rows, and remembers term counts
per account generation (see its docstring). Its answer must equal this statement's,
which ranks every match of every term by the formula, filters exactly, snippets, and
orders by score then path, with the score's weight counted afresh from the account's own
table (FTS5's row count and one count per term): hits equal field for field.
"""

from __future__ import annotations

import json

from memvault.adapters.sqlite import search
from memvault.adapters.sqlite.db import Database
from memvault.domain import query as query_terms
from memvault.domain import ranking
from memvault.domain.models import SearchHit, SearchQuery


def reference(db: Database, account_id: str, query: SearchQuery, now: float) -> list[SearchHit]:
    """The one-statement search the adapter's passes must agree with."""
    terms = query_terms.search_terms(query.text)
    if not terms or query.limit <= 0:
        return []
    conn = db.connection()
    found = conn.execute(
        "SELECT id FROM search_tables WHERE account_id = ?", (account_id,)
    ).fetchone()
    if found is None:
        return []
    table = search.fts_table(found[0])
    notes = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    held = {
        t: n
        for t in terms
        if (
            n := conn.execute(
                f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (search._any_term([t]),)
            ).fetchone()[0]
        )
        > 0
    }
    weight = ranking.query_weight(ranking.idf(notes, n) for n in held.values())
    clauses = [f"{table} MATCH :match", "r.account_id = :account"]
    params: dict[str, object] = {"match": search._any_term(terms), "account": account_id}
    params.update(now=now, limit=query.limit)
    if query.folder:
        clauses.append("substr(r.path, 1, :folder_len) = :folder")
        params.update(folder=query.folder, folder_len=len(query.folder))
    if query.tag:
        tag = query.tag.casefold().lstrip("#")
        clauses.append("(instr(r.tag_keys, :tag_exact) > 0 OR instr(r.tag_keys, :tag_nested) > 0)")
        params.update(tag_exact=f"\t{tag}\t", tag_nested=f"\t{tag}/")
    score = search._score_sql(search._bm25_sql(table), "r.")
    marks = f"'{search.SNIPPET_OPEN}', '{search.SNIPPET_CLOSE}'"
    sql = (
        f"SELECT note_id, r.path AS path, title, tags_json, r.updated_at AS updated_at,"
        f" {score} AS score, snippet({table}, 4, {marks}, '…', 16) AS snippet"
        f" FROM {table} JOIN search_rows AS r ON r.rowid = {table}.rowid"
        f" WHERE {' AND '.join(clauses)} ORDER BY score DESC, r.path LIMIT :limit"
    )
    return [
        SearchHit(
            note_id=r["note_id"],
            path=r["path"],
            title=r["title"],
            tags=tuple(json.loads(r["tags_json"])),
            score=ranking.score(float(r["score"]), weight),
            snippet=search._snippet_html(r["snippet"]),
            updated_at=float(r["updated_at"]),
        )
        for r in conn.execute(sql, params).fetchall()
    ]
