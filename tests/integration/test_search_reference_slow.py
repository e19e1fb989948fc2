"""SqliteSearchIndex.search gives exactly the reference answer on a realistic vault.

A bench-sized check (it was bench/check_search.py): synthetic notes with varied recency
and inbound counts, several tenants whose ids are prefixes or stems of one another
(``foo``/``foo-bar``, ``run``/``runs``), and random queries, folders, tags and limits.
Every hit must equal the plain statement's (tests.support.search_reference), field for
field. ``HYPOTHESIS_PROFILE=thorough`` runs it at its full size (1,000 notes, 200 random
queries: about a minute); the default size takes seconds.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from bench.synth import VaultGenerator

from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.search import SqliteSearchIndex
from memvault.domain import markdown as md
from memvault.domain.models import SearchDoc, SearchQuery
from tests.support.hypothesis import PROFILE
from tests.support.search_reference import reference

TENANTS = ("local", "foo", "foo-bar", "run", "runs")
NOTES, RANDOM_QUERIES = (1000, 200) if PROFILE == "thorough" else (250, 40)
NOW = 1.70e9 + 4e7

pytestmark = pytest.mark.slow


def build(index: SqliteSearchIndex, tenants: tuple[str, ...]) -> None:
    gen = VaultGenerator(NOTES, seed=5)
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


def query_texts(gen: VaultGenerator) -> list[str]:
    rng = random.Random(3)
    words = gen.vocab.words
    texts = [text for _, text in gen.queries()]
    for _ in range(RANDOM_QUERIES):
        n = rng.choice((1, 1, 2, 3, 5, 12))
        ranks = [min(len(words) - 1, int(rng.paretovariate(0.5))) for _ in range(n)]
        texts.append(" ".join(words[r] for r in ranks))
    return texts


# One tenant (the adapter drops the tenant clause from its MATCH) and several.
@pytest.mark.parametrize("tenants", [TENANTS[:1], TENANTS], ids=["one tenant", "five tenants"])
def test_every_search_equals_the_reference(tmp_path: Path, tenants: tuple[str, ...]) -> None:
    gen = VaultGenerator(NOTES, seed=5)
    folders = sorted({s.path.rsplit("/", 1)[0] + "/" for s in gen.notes if "/" in s.path})
    rng = random.Random(3)
    db = Database(tmp_path / "check.sqlite3")
    index = SqliteSearchIndex(db)
    build(index, tenants)
    checked = 0
    try:
        for i, text in enumerate(query_texts(gen)):
            account = tenants[i % len(tenants)]
            queries = [SearchQuery(text, limit=n) for n in (1, 10, 100)]
            if i % 2 == 0:
                queries += [
                    SearchQuery(text, folder=rng.choice(folders)),
                    SearchQuery(text, folder=rng.choice(folders).split("/")[0] + "/"),
                    SearchQuery(text, tag=rng.choice(gen.tags)),
                ]
            for query in queries:
                assert index.search(account, query, now=NOW) == reference(
                    db, account, query, NOW
                ), (account, query)
                checked += 1
    finally:
        db.close()
    assert checked > 100
