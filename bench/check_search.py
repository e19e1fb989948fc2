"""Check that SqliteSearchIndex.search gives exactly the reference answer.

    .venv/bin/python bench/check_search.py [--notes 1000] [--queries 200]

The adapter avoids reading most matches' rows (see its docstring); this compares it, on
synthetic data with varied recency and inbound counts, several tenants (ids chosen so
that one's tokens are a prefix or a stem of another's) and random queries, filters and
limits, with the straightforward single statement it must agree with: rank every
match by the formula in SQL, filter exactly, snippet, ORDER BY score DESC, path LIMIT n.
Hits must be equal field for field (score, snippet, order). Exits 1 on a difference.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from memvault.adapters.sqlite import search
from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.search import SqliteSearchIndex
from memvault.domain import markdown as md
from memvault.domain import query as query_terms
from memvault.domain.models import SearchDoc, SearchHit, SearchQuery
from synth import VaultGenerator

TENANTS = ("local", "foo", "foo-bar", "run", "runs")


def reference(db: Database, account_id: str, query: SearchQuery, now: float) -> list[SearchHit]:
    """The one-statement search the adapter replaced, as the definition of the answer."""
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


def build(db: Database, index: SqliteSearchIndex, notes: int, tenants: tuple[str, ...]) -> None:
    gen = VaultGenerator(notes, seed=5)
    rng = random.Random(11)
    docs: dict[str, list[SearchDoc]] = {t: [] for t in tenants}
    for i, (spec, text) in enumerate(gen.iter_notes()):
        parsed = md.parse_note(spec.path, text)
        for tenant in tenants:
            if tenant == tenants[0] or rng.random() < 0.5:
                docs[tenant].append(
                    SearchDoc(
                        note_id=f"{tenant}-{i}",
                        path=spec.path,
                        title=parsed.title,
                        tags=parsed.tags,
                        body=md.body_for_search(text),
                        updated_at=1.70e9 + rng.random() * 3e7,
                        inbound_links=rng.choice((0, 0, 0, 1, 2, 3, 5, 8, 40)),
                    )
                )
    for tenant, batch in docs.items():
        index.upsert(tenant, batch)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    gen = VaultGenerator(args.notes, seed=5)
    folders = sorted({s.path.rsplit("/", 1)[0] + "/" for s in gen.notes if "/" in s.path})
    rng = random.Random(3)
    words = gen.vocab.words
    texts = [text for _, text in gen.queries()]
    for _ in range(args.queries):
        n = rng.choice((1, 1, 2, 3, 5, 12))
        ranks = [min(len(words) - 1, int(rng.paretovariate(0.5))) for _ in range(n)]
        texts.append(" ".join(words[r] for r in ranks))
    checked = 0
    # Two layouts: one tenant (the tenant clause is dropped from the MATCH) and several.
    for tenants in (TENANTS[:1], TENANTS):
        with tempfile.TemporaryDirectory(prefix="memvault-check-") as tmp:
            db = Database(Path(tmp) / "check.sqlite3")
            index = SqliteSearchIndex(db)
            build(db, index, args.notes, tenants)
            now = 1.70e9 + 4e7
            for i, text in enumerate(texts):
                account = tenants[i % len(tenants)]
                queries = [SearchQuery(text, limit=n) for n in (1, 10, 100)]
                if i % 2 == 0:
                    queries += [
                        SearchQuery(text, folder=rng.choice(folders)),
                        SearchQuery(text, folder=rng.choice(folders).split("/")[0] + "/"),
                        SearchQuery(text, tag=rng.choice(gen.tags)),
                    ]
                for query in queries:
                    got = index.search(account, query, now=now)
                    want = reference(db, account, query, now)
                    if got != want:
                        print(f"DIFFERENT for {account!r} {query}:", file=sys.stderr)
                        for g, w in zip(got, want, strict=False):
                            if g != w:
                                print(f"  got  {g}\n  want {w}", file=sys.stderr)
                                break
                        print(f"  {len(got)} hits, want {len(want)}", file=sys.stderr)
                        return 1
                    checked += 1
            db.close()
    print(f"{checked} searches identical to the reference ({time.process_time():.0f} s CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
