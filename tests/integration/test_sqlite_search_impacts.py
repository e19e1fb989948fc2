"""SqliteSearchIndex from impact lists (ADR 0075): the reference statement's answer, always.

An unfiltered search scores every match from the lists kept beside the account's FTS5
table (each token's notes and weighted frequencies, the account's note lengths, dates and
link counts), in bm25()'s own operations. Whatever was written since the lists were built
(small writes, a large one, deletes, new link counts), its hits must equal, field for field
and score for score, those of the one statement that ranks every match by the formula.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memvault.adapters.sqlite import search, search_bounds
from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.search import SqliteSearchIndex
from memvault.domain.models import SearchDoc, SearchHit, SearchQuery
from tests.integration.test_sqlite_search_index import (
    NOW,
    QUERIES,
    WORDS,
    _selection_corpus,
    corpus,
)
from tests.support.search_reference import reference as search_reference

ACCOUNT = "acct"
LIMITS = (1, 10, 100)


def reference(db: Database, query: SearchQuery) -> list[SearchHit]:
    return search_reference(db, ACCOUNT, query, NOW)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[Database, SqliteSearchIndex, list[SearchDoc]]]:
    db = Database(tmp_path / "search.sqlite3")
    ix = SqliteSearchIndex(db)
    docs = corpus(ACCOUNT, 400, random.Random(5))
    ix.upsert(ACCOUNT, docs)
    ix.upsert("other", corpus("other", 150, random.Random(6)))  # rowids interleave
    yield db, ix, docs
    ix.merges_settled(30)
    db.close()


class Paths:
    """Which path each search took: the impact lists, or the walk of FTS5's matches."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.walked = 0
        top = SqliteSearchIndex._top

        def counted(ix: SqliteSearchIndex, *args: object, **kwargs: object) -> object:
            self.walked += 1
            return top(ix, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(SqliteSearchIndex, "_top", counted)


def built(db: Database) -> dict[str, int]:
    rows = db.connection().execute("SELECT token, built FROM search_impacts").fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def check(db: Database, ix: SqliteSearchIndex, texts: tuple[str, ...] = tuple(QUERIES)) -> None:
    for text in texts:
        for limit in LIMITS:
            for folder in ("", "a/", "c/"):
                query = SearchQuery(text, limit=limit, folder=folder)
                got = ix.search(ACCOUNT, query, now=NOW)
                assert got == reference(db, query), (text, limit, folder)
                assert got or folder == "c/"


def test_searches_from_the_lists_give_the_reference_answer(
    index: tuple[Database, SqliteSearchIndex, list[SearchDoc]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, ix, _ = index
    paths = Paths(monkeypatch)
    check(db, ix)
    assert paths.walked == 0  # every one from the lists
    assert {"otter", "heron", "marsh"} <= set(built(db))
    # Snippets off, as recall asks: the same hits without them.
    query = SearchQuery("willow stream", limit=20, snippets=False)
    assert ix.search(ACCOUNT, query, now=NOW) == [
        replace(h, snippet="") for h in reference(db, replace(query, snippets=True))
    ]


def test_writes_after_the_lists_are_scored_exactly_without_building_them_again(
    index: tuple[Database, SqliteSearchIndex, list[SearchDoc]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, ix, docs = index
    check(db, ix)
    before = built(db)
    paths = Paths(monkeypatch)
    # Updates that hold the words more often than any note did (a list built before says
    # less than they now score), new notes, deletes of the best hits, new link counts.
    best = [h.path for h in ix.search(ACCOUNT, SearchQuery("otter heron"), now=NOW)]
    by_path = {d.path: d for d in docs}
    ix.upsert(
        ACCOUNT,
        [
            replace(by_path[docs[7].path], body="otter " * 60, updated_at=NOW),
            replace(by_path[docs[8].path], title="heron heron", body="marsh"),
            SearchDoc("n-1", "c/new one.md", "otter", (), "otter heron reed", NOW, 9),
            SearchDoc("n-2", "c/new two.md", "kingfisher", (), "willow kingfisher", NOW, 0),
        ],
    )
    ix.delete(ACCOUNT, best[:2])
    ix.set_inbound(ACCOUNT, {docs[20].path: 400, docs[21].path: 0, best[3]: 250})
    check(db, ix, (*QUERIES, "otter heron", "kingfisher willow"))
    assert paths.walked == 0
    assert built(db) == {**before, **{t: g for t, g in built(db).items() if t not in before}}
    # A note moved back to an older date scores as it is now, not as the snapshot says.
    ix.upsert(ACCOUNT, [replace(by_path[docs[30].path], updated_at=NOW - 900 * 86_400)])
    check(db, ix, ("otter", "reed badger"))
    assert paths.walked == 0


def test_notes_written_since_are_tokenized_until_too_many_have_the_lists_built_again(
    index: tuple[Database, SqliteSearchIndex, list[SearchDoc]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, ix, docs = index
    check(db, ix, ("otter",))
    first = built(db)["otter"]
    rng = random.Random(9)
    # A batch of notes written since: read and tokenized by the search, the lists as they were.
    ix.upsert(ACCOUNT, [replace(d, body=f"{d.body} otter {rng.choice(WORDS)}") for d in docs[:40]])
    check(db, ix, ("otter", "willow"))
    assert built(db)["otter"] == first
    # Past the floor of rows written since: the notes written since are merged into the
    # snapshot and the stored lists (FTS5 is read only for lists never built), deletes and
    # new link counts too.
    monkeypatch.setattr(search_bounds, "FRESH_FLOOR", 45)  # 46 rows written since
    monkeypatch.setattr(search_bounds, "FRESH_SHARE", 0.0)
    for d in docs[50:55]:
        ix.upsert(ACCOUNT, [replace(d, body="otter marsh otter")])
    ix.delete(ACCOUNT, [docs[60].path, docs[0].path])
    ix.set_inbound(ACCOUNT, {docs[61].path: 300})
    read: list[str] = []
    collect = search_bounds.collect

    def counted(conn: object, table: str, token: str, generation: int) -> object:
        read.append(token)
        return collect(conn, table, token, generation)  # type: ignore[arg-type]

    monkeypatch.setattr(search_bounds, "collect", counted)
    # The search that finds them stale answers at once (exact: the rows written since are
    # read back) and leaves the merge to the background thread; so do those after it,
    # while it runs.
    check(db, ix, ("otter",))
    ix.merges_settled(30)
    assert built(db)["otter"] > first
    assert "otter" not in read  # merged, not read again
    fresh = db.connection().execute("SELECT count(*) FROM search_writes").fetchone()[0]
    assert fresh == 0  # what the new lists hold is no longer kept apart
    check(db, ix, ("otter", "marsh", "willow stream reed badger"))
    # The same lists as reading the FTS5 table afresh would give.
    merged = db.connection().execute("SELECT token, rowids, freqs FROM search_impacts").fetchall()
    again = SqliteSearchIndex(db)
    with db.transaction() as conn:
        account = again._account(conn, ACCOUNT)
        assert account is not None
        for token, rowids, freqs in merged:
            fresh_list = collect(conn, account.table, str(token), account.generation)
            assert np.array_equal(np.frombuffer(rowids, dtype=np.int64), fresh_list.rowids)
            assert np.array_equal(np.frombuffer(freqs, dtype=np.int32), fresh_list.freqs)


def test_a_rowid_deleted_in_one_account_and_reused_by_another(
    index: tuple[Database, SqliteSearchIndex, list[SearchDoc]],
) -> None:
    # Rowids are shared by every account: the last note deleted here, the next note of
    # another account gets its rowid, while this account's lists still hold it.
    db, ix, _ = index
    ix.upsert(ACCOUNT, [SearchDoc("z", "z/last.md", "otter", (), "otter otter", NOW, 0)])
    ix.search("other", SearchQuery("otter"), now=NOW)  # the other account has lists too
    check(db, ix, ("otter",))
    conn = db.connection()
    rowid = conn.execute("SELECT max(rowid) FROM search_rows").fetchone()[0]
    assert rowid in built_rowids(db, "otter")
    ix.delete(ACCOUNT, ["z/last.md"])
    ix.upsert("other", [SearchDoc("o", "o/new.md", "otter", (), "otter otter otter", NOW, 9)])
    assert conn.execute("SELECT max(rowid) FROM search_rows").fetchone()[0] == rowid
    check(db, ix, ("otter", "heron marsh"))


def built_rowids(db: Database, token: str) -> set[int]:
    found = set()
    for (rowids,) in db.connection().execute(
        "SELECT rowids FROM search_impacts WHERE token = ?", (token,)
    ):
        found |= set(np.frombuffer(rowids, dtype=np.int64).tolist())
    return found


def test_a_list_that_says_less_than_a_note_holds_gives_a_wrong_answer(
    index: tuple[Database, SqliteSearchIndex, list[SearchDoc]],
) -> None:
    # The lists are trusted: the reference check is what proves them. Lower one note's
    # frequency in the stored list and the answer moves (so the checks above can fail).
    db, ix, _ = index
    query = SearchQuery("otter", limit=10)
    best = ix.search(ACCOUNT, query, now=NOW)[0]
    assert [h.path for h in ix.search(ACCOUNT, query, now=NOW)] == [
        h.path for h in reference(db, query)
    ]
    conn = db.connection()
    row = conn.execute(
        "SELECT rowid FROM search_rows WHERE account_id = ? AND path = ?", (ACCOUNT, best.path)
    ).fetchone()
    rowids, freqs = conn.execute(
        "SELECT rowids, freqs FROM search_impacts WHERE token = 'otter'"
    ).fetchone()
    lowered = np.frombuffer(freqs, dtype=np.int32).copy()
    lowered[np.frombuffer(rowids, dtype=np.int64) == row[0]] = 1
    with db.transaction() as tx:
        tx.execute(
            "UPDATE search_impacts SET freqs = ? WHERE token = 'otter'", (lowered.tobytes(),)
        )
    wrong = SqliteSearchIndex(db).search(ACCOUNT, query, now=NOW)  # nothing decoded yet
    assert wrong != reference(db, query)
    assert best.path not in [h.path for h in wrong[:1]]


def test_a_search_that_may_not_build_the_lists_walks_the_matches(
    index: tuple[Database, SqliteSearchIndex, list[SearchDoc]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Inside the caller's transaction (or on a file it cannot write), no list is built:
    # the walk answers, the same.
    db, ix, _ = index
    paths = Paths(monkeypatch)
    with db.transaction():
        for text in QUERIES:
            query = SearchQuery(text, limit=10)
            assert ix.search(ACCOUNT, query, now=NOW) == reference(db, query)
    assert paths.walked == len(QUERIES)
    assert built(db) == {}
    # A word FTS5 splits into two tokens, a tag filter, a folder of too many notes: the
    # walk too.
    monkeypatch.setattr(search, "_FOLDER_MAX", 100)
    for query in (
        SearchQuery("otter_reed heron"),
        SearchQuery("otter", tag="wild"),
        SearchQuery("otter", folder="a/"),
    ):
        assert ix.search(ACCOUNT, query, now=NOW) == reference(db, query)
    assert paths.walked == len(QUERIES) + 3


def test_recalls_selection_from_the_lists_gives_the_walks_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = Database(tmp_path / "search.sqlite3")
    ix = SqliteSearchIndex(db)
    docs = _selection_corpus(random.Random(11))
    # A word three notes hold: its notes are looked up in the frequent word's list.
    for i in (5, 12, 41):  # the second holds the frequent word too
        docs[i] = replace(docs[i], body=f"{docs[i].body} quetzal")
    ix.upsert("acct", docs)
    paths = Paths(monkeypatch)
    texts = (
        "zephyr harbor",
        "zephyr harbor otter",
        "harbor zephyr reed willow",
        "otter reed",
        "quetzal harbor reed",
    )
    for _ in range(2):
        for text in texts:
            for limit in (1, 5, 40):
                query = SearchQuery(text, limit=limit, skip_common_terms=True, snippets=False)
                ix.impact_lists = True
                got = ix.search("acct", query, now=NOW)
                ix.impact_lists = False
                assert got == ix.search("acct", query, now=NOW), (text, limit)
                assert got
        # Then a note gains the rare word and many frequent ones, another is deleted.
        ix.upsert("acct", [replace(docs[1], body="zephyr harbor harbor otter")])
        ix.delete("acct", [docs[0].path])
    assert paths.walked == 2 * len(texts) * 3  # only when asked to walk
    db.close()


def test_clearing_the_account_forgets_its_lists(
    index: tuple[Database, SqliteSearchIndex, list[SearchDoc]],
) -> None:
    db, ix, docs = index
    check(db, ix, ("otter",))
    ix.clear(ACCOUNT)
    assert built(db) == {}
    ix.upsert(ACCOUNT, docs[:100])
    check(db, ix, ("otter", "heron marsh"))


def _stale_lists(
    db: Database, ix: SqliteSearchIndex, docs: list[SearchDoc], monkeypatch: pytest.MonkeyPatch
) -> int:
    """Lists built, then more rows written since (50) than the stale mark (45) allows."""
    monkeypatch.setattr(search_bounds, "FRESH_FLOOR", 45)
    monkeypatch.setattr(search_bounds, "FRESH_SHARE", 0.0)
    check(db, ix, ("otter",))
    ix.merges_settled(30)
    first = built(db)["otter"]
    ix.upsert(ACCOUNT, [replace(d, body=f"{d.body} otter otter") for d in docs[100:150]])
    return first


def _no_background_merge(monkeypatch: pytest.MonkeyPatch) -> None:
    """A merge handed to the background thread fails the test (it must run in the search)."""

    def refused(self: SqliteSearchIndex, account_id: str) -> None:
        raise AssertionError("the merge was left to the background thread")

    monkeypatch.setattr(SqliteSearchIndex, "_merge_later", refused)


def test_lists_far_past_the_stale_mark_are_merged_before_the_search_answers(
    index: tuple[Database, SqliteSearchIndex, list[SearchDoc]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, ix, docs = index
    monkeypatch.setattr(search_bounds, "OVERDUE_FACTOR", 1)  # 50 written: overdue
    first = _stale_lists(db, ix, docs, monkeypatch)
    _no_background_merge(monkeypatch)
    query = SearchQuery("otter", limit=10)
    assert ix.search(ACCOUNT, query, now=NOW) == reference(db, query)
    assert built(db)["otter"] > first  # merged by the search itself, nothing left pending
    assert db.connection().execute("SELECT count(*) FROM search_writes").fetchone()[0] == 0


def test_a_search_merges_stale_lists_itself_when_told_not_to_leave_it_to_the_thread(
    index: tuple[Database, SqliteSearchIndex, list[SearchDoc]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, ix, docs = index
    ix.merge_in_background = False
    first = _stale_lists(db, ix, docs, monkeypatch)
    _no_background_merge(monkeypatch)
    query = SearchQuery("otter heron", limit=10)
    assert ix.search(ACCOUNT, query, now=NOW) == reference(db, query)
    assert built(db)["otter"] > first


def test_a_stale_search_answers_before_the_background_merge_and_after_it(
    index: tuple[Database, SqliteSearchIndex, list[SearchDoc]], monkeypatch: pytest.MonkeyPatch
) -> None:
    db, ix, docs = index
    first = _stale_lists(db, ix, docs, monkeypatch)
    # The merge is held at its start, so the search provably answers before it.
    gate = threading.Event()
    build = SqliteSearchIndex._build_bounds

    def held(self: SqliteSearchIndex, *args: object, **kwargs: object) -> None:
        assert gate.wait(30)
        build(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(SqliteSearchIndex, "_build_bounds", held)
    query = SearchQuery("otter", limit=10)
    assert ix.search(ACCOUNT, query, now=NOW) == reference(db, query)
    assert built(db)["otter"] == first  # not merged yet: answered from the rows read back
    gate.set()
    ix.merges_settled(30)
    assert built(db)["otter"] > first
    assert ix.search(ACCOUNT, query, now=NOW) == reference(db, query)
