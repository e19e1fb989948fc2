"""SqliteSearchIndex: its shortcuts give the answer of the plain ranking statement.

A search reads only the matches that can make the answer (a walk of the most relevant,
then, when that does not settle it, only those that can still reach it). Whatever path
it takes, the hits must equal those of one statement that ranks every match by the
formula, filters exactly, and orders by score then path.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from memvault.adapters.sqlite import search
from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.search import SqliteSearchIndex
from memvault.domain.models import SearchDoc, SearchHit, SearchQuery
from tests.support.search_reference import reference as search_reference

NOW = 1_780_000_000.0
WORDS = ["otter", "otters", "badger", "heron", "marsh", "reed", "willow", "stream"]
TENANTS = ("acct", "acct-b")


def reference(db: Database, account_id: str, query: SearchQuery) -> list[SearchHit]:
    return search_reference(db, account_id, query, NOW)


def corpus(tenant: str, count: int, rng: random.Random) -> list[SearchDoc]:
    # A small vocabulary makes many near-equal matches, so that recency and links decide
    # the order and the leading matches by relevance rarely settle the answer.
    docs = []
    for i in range(count):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 40)))
        docs.append(
            SearchDoc(
                note_id=f"{tenant}-{i}",
                path=f"{rng.choice(['a', 'b'])}/note {i:03}.md",
                title=f"note {i}",
                tags=("wild",) if i % 3 else (),
                body=body,
                updated_at=NOW - rng.random() * 400 * 86_400,
                inbound_links=rng.choice((0, 0, 1, 2, 5, 40)),
            )
        )
    return docs


Indexed = tuple[Database, SqliteSearchIndex, tuple[str, ...]]


# The index alone (queries skip the tenant clause and scan for snippets), or shared with
# a tenant that outnumbers it.
@pytest.fixture(params=[TENANTS[:1], TENANTS], ids=["one tenant", "two tenants"])
def index(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Indexed]:
    db = Database(tmp_path / "search.sqlite3")
    ix = SqliteSearchIndex(db)
    rng = random.Random(7)
    for n, tenant in enumerate(request.param):
        ix.upsert(tenant, corpus(tenant, 300 * (n + 1), rng))
    yield db, ix, request.param
    db.close()


QUERIES = ["otter", "heron marsh", "willow stream reed badger", "otters in the reed"]


@pytest.mark.parametrize("walk", [1, 3, 64])
@pytest.mark.parametrize("limit", [1, 10, 100])
def test_every_path_gives_the_reference_answer(
    index: Indexed,
    monkeypatch: pytest.MonkeyPatch,
    walk: int,
    limit: int,
) -> None:
    db, ix, tenants = index
    ix.impact_lists = False  # the walk of FTS5's matches (the lists: test_sqlite_search_impacts)
    # Short walks rarely settle: the search goes on to its second pass, or to ranking
    # every match when too few walked matches are the tenant's own.
    monkeypatch.setattr(search, "_WALK", walk)
    monkeypatch.setattr(search, "_WALK_PER_RESULT", 1)
    for account in tenants:
        for text in QUERIES:
            for query in (
                SearchQuery(text, limit=limit),
                SearchQuery(text, folder="a/", limit=limit),
            ):
                got = ix.search(account, query, now=NOW)
                assert got == reference(db, account, query), (account, query)
                assert got  # every query matches something


@pytest.mark.parametrize("share", [1, 8])
@pytest.mark.parametrize("limit", [1, 10])
def test_a_walk_as_deep_as_a_share_of_the_matches_gives_the_reference_answer(
    index: Indexed, monkeypatch: pytest.MonkeyPatch, share: int, limit: int
) -> None:
    # A walk at least 1/share of the matches deep (all of them with 1): it settles in one
    # pass more often, and must give what the single statement gives.
    db, ix, tenants = index
    ix.impact_lists = False
    monkeypatch.setattr(search, "_WALK", 1)
    monkeypatch.setattr(search, "_WALK_PER_RESULT", 1)
    monkeypatch.setattr(search, "_WALK_SHARE", share)
    for account in tenants:
        for text in QUERIES:
            query = SearchQuery(text, limit=limit)
            got = ix.search(account, query, now=NOW)
            assert got == reference(db, account, query), (account, query)
            assert got


def test_reindexing_replaces_a_notes_text_and_fields(index: Indexed) -> None:
    db, ix, _ = index
    old = ix.search(TENANTS[0], SearchQuery("otter", limit=1), now=NOW)[0]
    renamed = SearchDoc(
        note_id=old.note_id,
        path=old.path,
        title="kingfisher",
        tags=("bird",),
        body="a kingfisher by the water",
        updated_at=NOW,
        inbound_links=3,
    )
    later = SearchDoc(renamed.note_id, "c/new.md", "new", (), "kingfisher too", NOW, 0)
    ix.upsert(TENANTS[0], [later, renamed, later])  # a path twice: as if written in turn
    assert old.path not in {h.path for h in ix.search(TENANTS[0], SearchQuery("otter"), now=NOW)}
    hits = ix.search(TENANTS[0], SearchQuery("kingfisher"), now=NOW)
    assert {(h.path, h.title, h.tags) for h in hits} == {
        ("c/new.md", "new", ()),
        (old.path, "kingfisher", ("bird",)),
    }
    assert hits == reference(db, TENANTS[0], SearchQuery("kingfisher"))
    assert ix.search(TENANTS[1], SearchQuery("kingfisher"), now=NOW) == []


# The search tables before ADR 0017: one FTS5 table for every account, the account an
# indexed column, rowids shared with search_rows.
SHARED_SCHEMA = """
CREATE TABLE search_rows (
    rowid INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL,
    path TEXT NOT NULL,
    updated_at REAL NOT NULL,
    inbound INTEGER NOT NULL,
    tag_keys TEXT NOT NULL,
    UNIQUE (account_id, path)
);
CREATE VIRTUAL TABLE search_fts USING fts5(
    account, path, title, tags, body,
    note_id UNINDEXED, tags_json UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


def shared_database(path: Path, docs: dict[str, list[SearchDoc]]) -> None:
    """A database file as the release before ADR 0017 wrote it."""
    conn = sqlite3.connect(path)
    conn.executescript(SHARED_SCHEMA)
    rowid = 0
    for tenant, batch in docs.items():
        for d in batch:
            rowid += 1
            conn.execute(
                "INSERT INTO search_rows VALUES (?, ?, ?, ?, ?, ?)",
                (rowid, tenant, d.path, d.updated_at, d.inbound_links, search._tag_keys(d.tags)),
            )
            conn.execute(
                "INSERT INTO search_fts (rowid, account, path, title, tags, body, note_id,"
                " tags_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (rowid, tenant, d.path, d.title, " ".join(d.tags), d.body, d.note_id, "[]"),
            )
    conn.commit()
    conn.close()


def test_a_database_with_the_shared_table_is_moved_to_one_table_per_account(
    tmp_path: Path,
) -> None:
    rng = random.Random(3)
    docs = {t: [replace(d, tags=()) for d in corpus(t, 120, rng)] for t in TENANTS}
    shared_database(tmp_path / "old.sqlite3", docs)
    db = Database(tmp_path / "old.sqlite3")
    ix = SqliteSearchIndex(db)  # opening it moves the notes
    fresh_db = Database(tmp_path / "fresh.sqlite3")
    fresh = SqliteSearchIndex(fresh_db)
    for tenant in TENANTS:
        fresh.upsert(tenant, docs[tenant])
    try:
        conn = db.connection()
        assert not search._table_exists(conn, search.SHARED_TABLE)
        for tenant in TENANTS:
            table = ix.fts_table(tenant)
            assert table is not None
            assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 120
            for text in QUERIES:
                query = SearchQuery(text, limit=20)
                got = ix.search(tenant, query, now=NOW)
                assert got == reference(db, tenant, query)
                # As if every note had been indexed afresh, apart from the rowids.
                assert got == fresh.search(tenant, query, now=NOW)
        # Opening it again finds nothing left to move; writes go on as usual.
        SqliteSearchIndex(db)
        ix.upsert(TENANTS[0], [replace(docs[TENANTS[0]][0], body="kingfisher")])
        assert [h.path for h in ix.search(TENANTS[0], SearchQuery("kingfisher"), now=NOW)] == [
            docs[TENANTS[0]][0].path
        ]
    finally:
        db.close()
        fresh_db.close()


def _selection_corpus(rng: random.Random) -> list[SearchDoc]:
    # "zephyr" rare (matching), "harbor" frequent (scoring only when a rarer word is
    # asked for too), the animal words common.
    # 440 notes: a word in 106 of them is frequent, not common (test_common_terms.py).
    docs = []
    for i in range(440):
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 30))]
        if i % 7 == 0:
            words.insert(rng.randrange(len(words) + 1), "zephyr")
        if i % 4 == 0 and i < 424:
            words += ["harbor"] * rng.randint(1, 3)
        docs.append(
            SearchDoc(
                note_id=f"s-{i}",
                path=f"s/note {i:03}.md",
                title=f"note {i}",
                tags=(),
                body=" ".join(words),
                updated_at=NOW - rng.random() * 400 * 86_400,
                inbound_links=rng.choice((0, 0, 1, 2, 5, 40)),
            )
        )
    return docs


@pytest.mark.parametrize("walk", [1, 3, 64])
def test_a_selection_walked_in_two_parts_gives_the_markers_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, walk: int
) -> None:
    # Recall's searches match a message's rarer words and let its frequent ones only add
    # to the score: walked as the notes holding a frequent word and those holding none,
    # the answer is that of the one query with the marker phrase, field for field.
    db = Database(tmp_path / "search.sqlite3")
    ix = SqliteSearchIndex(db)
    ix.impact_lists = False
    ix.upsert("acct", _selection_corpus(random.Random(11)))
    monkeypatch.setattr(search, "_WALK", walk)
    monkeypatch.setattr(search, "_WALK_PER_RESULT", 1)
    split = search._walk_parts
    parts_used: list[int] = []

    def counted(*args: object) -> list[str] | None:
        parts = split(*args)  # type: ignore[arg-type]
        parts_used.append(0 if parts is None else len(parts))
        return parts

    for text in ("zephyr harbor", "zephyr harbor otter", "harbor zephyr reed willow"):
        for limit in (1, 5, 40):
            query = SearchQuery(text, limit=limit, skip_common_terms=True)
            monkeypatch.setattr(search, "_walk_parts", counted)
            got = ix.search("acct", query, now=NOW)
            monkeypatch.setattr(search, "_walk_parts", lambda *_: None)
            assert got == ix.search("acct", query, now=NOW), (text, limit)
            # only notes holding the rare word match (every seventh)
            assert got and all(int(h.note_id[2:]) % 7 == 0 for h in got)
    assert parts_used and all(n == 2 for n in parts_used)  # the two parts were walked
    db.close()
