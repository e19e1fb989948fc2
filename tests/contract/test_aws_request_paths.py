"""The AWS backend's lean request paths: what each write reads and sends, and that every
shortcut (tombstone markers, items and bodies just read, move destinations assumed
free, link items inside the transaction, trimmed bodies deleted by exact key, the API
key cache) gives exactly the outcome a full read would.

AWS backend only (DynamoDB + S3 on moto, the real local OpenSearch node). Request counts
are the issue-3 targets: they are what AWS bills.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest

from memvault.adapters.aws import keys
from memvault.adapters.aws.bodies import GET_MANY_WORKERS
from memvault.adapters.aws.key_cache import KeyCachingStore
from memvault.adapters.aws.search import doc_id
from memvault.container import Services
from memvault.domain.models import VERSIONS_KEPT, DeleteNote, MoveNote, Toggles
from memvault.errors import Conflict, NotFound, Unauthenticated
from memvault.services.accounts import LOCAL_ACCOUNT_ID, hash_key
from memvault.services.context import Caller
from memvault.services.recall import RecallService
from memvault.services.vault import build_put
from tests.support.aws import REGION
from tests.support.clock import FakeClock


@pytest.fixture
def backend() -> str:
    return "aws"


@contextmanager
def counted(services: Services) -> Iterator[dict[str, int]]:
    """DynamoDB and S3 requests made inside the block."""
    store: Any = services.store
    out: dict[str, int] = {}
    ddb, s3 = store.table.requests, store.bodies.requests
    yield out
    out["ddb"] = store.table.requests - ddb
    out["s3"] = store.bodies.requests - s3
    out["total"] = out["ddb"] + out["s3"]


def commit(services: Services, user: Caller, *changes: Any) -> Any:
    return services.store.commit(user.account_id, list(changes), now=1.0)


def objects(services: Services, prefix: str = "") -> list[str]:
    s3 = boto3.client("s3", region_name=REGION)
    listing = s3.list_objects_v2(Bucket=services.settings.bucket, Prefix=prefix)
    return sorted(o["Key"] for o in listing.get("Contents", []))


def items(services: Services, prefix: str) -> list[str]:
    ddb = boto3.client("dynamodb", region_name=REGION)
    found = ddb.scan(TableName=services.settings.table)["Items"]
    return sorted(i["sk"]["S"] for i in found if i["sk"]["S"].startswith(prefix))


# ---------------------------------------------------------------------- request counts
def test_a_new_note_is_one_read_one_upload_one_transaction(
    services: Services, user: Caller
) -> None:
    with counted(services) as n:
        commit(services, user, build_put("a.md", "links to [[b]] and [[c/d]]"))
    # BatchGetItem (note + tombstone marker), PutObject, TransactWriteItems (links inside)
    assert n == {"ddb": 2, "s3": 1, "total": 3}
    assert [b.source_path for b in services.store.links_to(user.account_id, ["b"])] == ["a.md"]


def test_an_append_reuses_the_note_it_has_just_read(services: Services, user: Caller) -> None:
    services.vault.write(user, "log.md", "first")
    with counted(services) as n:
        note = services.store.get_note(user.account_id, "log.md")
        assert note is not None
        commit(services, user, build_put("log.md", note.markdown + "\nsecond", note.version))
    # GetItem + GetObject for the read; PutObject + TransactWriteItems for the write
    assert n == {"ddb": 2, "s3": 2, "total": 4}
    assert services.vault.read(user, "log.md").markdown == "first\nsecond"


def test_a_plain_move_reads_nothing_twice(services: Services, user: Caller) -> None:
    services.vault.write(user, "a.md", "alone, links to [[x]]")
    with counted(services) as n:
        assert services.store.get_note(user.account_id, "a.md") is not None
        result = commit(services, user, MoveNote(path="a.md", new_path="b.md"))
    # GetItem + GetObject for the read, then one TransactWriteItems
    assert n == {"ddb": 2, "s3": 1, "total": 3}
    assert result.notes[0].markdown == "alone, links to [[x]]"
    assert [b.source_path for b in services.store.links_to(user.account_id, ["x"])] == ["b.md"]


def test_a_note_write_reads_each_link_target_once(services: Services, user: Caller) -> None:
    services.vault.write(user, "n/target.md", "the note linked to")
    services.vault.write(user, "n/other.md", "also links to [[target]]")
    with counted(services) as n:
        services.vault.write(user, "n/new.md", "links to [[target]]")
    # The budget's UpdateItem; the commit's BatchGetItem, PutObject, TransactWriteItems;
    # then the index update: the link targets (BatchGetItem for [[target]], a Query for
    # its name) read once, shared by finding the notes whose counts move and by
    # counting their inbound links (a Query for the links to each of the two notes),
    # and a Query for the notes sharing the new note's name.
    assert n == {"ddb": 8, "s3": 1, "total": 9}
    # What the counts are right about: test_incremental_link_counts_match_a_full_recount.
    backlinks = services.vault.backlinks(user, "n/target.md")
    assert sorted(s.path for s in backlinks) == ["n/new.md", "n/other.md"]


class SlowBodies:
    """Every GetObject takes ``delay`` seconds (an S3 round trip, long enough for others
    to start meanwhile); ``most`` is how many were ever in flight at once. Starts with
    no body cached, as in a fresh Lambda container."""

    def __init__(self, store: Any, monkeypatch: pytest.MonkeyPatch, delay: float) -> None:
        store.body_cache.clear()
        self.delay = delay
        self.most = 0
        self._in_flight = 0
        self._lock = threading.Lock()
        self._get_object = store.bodies.client.get_object
        monkeypatch.setattr(store.bodies.client, "get_object", self)

    def __call__(self, **kwargs: Any) -> Any:
        with self._lock:
            self._in_flight += 1
            self.most = max(self.most, self._in_flight)
        try:
            time.sleep(self.delay)
            return self._get_object(**kwargs)
        finally:
            with self._lock:
                self._in_flight -= 1


def test_recall_reads_its_notes_in_one_batch_with_the_bodies_side_by_side(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(5):
        services.vault.write(user, f"n{n}.md", f"kiwi note {n}")
    # The organisation's search defaults are read once and remembered a few seconds
    # (ADR 0050; the gateway hands over the account it read anyway): warm them first.
    RecallService(services.vault).recall(user, "kiwi", max_notes=5, token_budget=2000)
    store: Any = services.store
    slow = SlowBodies(store, monkeypatch, delay=0.2)
    with counted(services) as n:
        block = RecallService(services.vault).recall(user, "kiwi", max_notes=5, token_budget=2000)
    assert block is not None and len(block.paths) == 5
    # The search is OpenSearch's; the reads are one BatchGetItem and five GetObject.
    assert n == {"ddb": 1, "s3": 5, "total": 6}
    with counted(services) as n:
        notes = services.vault.read_many(user, [f"n{i}.md" for i in range(5)] + ["none.md"])
    # Served from the bodies the recall just fetched: one BatchGetItem, no GetObject.
    assert n == {"ddb": 1, "s3": 0, "total": 1}
    assert [note.markdown for note in notes] == [f"kiwi note {i}" for i in range(5)]
    # The recall's five GetObject requests were in flight together, not one after another.
    assert slow.most == 5


def test_listing_every_note_fetches_the_bodies_a_page_at_a_time_side_by_side(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What an export and a reindex read. 40 notes: a full page and a partial one.
    commit(services, user, *(build_put(f"n{n:02}.md", f"note {n}") for n in range(40)))
    store: Any = services.store
    slow = SlowBodies(store, monkeypatch, delay=0.05)
    with counted(services) as n:
        notes = list(store.iter_notes(user.account_id))
    assert [(note.path, note.markdown) for note in notes] == [
        (f"n{i:02}.md", f"note {i}") for i in range(40)
    ]
    assert notes[3] == services.vault.read(user, "n03.md")
    assert n["s3"] == 40
    assert slow.most == GET_MANY_WORKERS  # side by side, and no more at once than the pool


def test_a_delete_is_one_read_and_one_transaction(services: Services, user: Caller) -> None:
    services.vault.write(user, "a.md", "[[b]]")
    with counted(services) as n:
        commit(services, user, DeleteNote(path="a.md"))
    assert n == {"ddb": 2, "s3": 0, "total": 2}
    assert services.store.links_to(user.account_id, ["b"]) == []


def versions_kept(services: Services, user: Caller) -> None:
    """n.md at version VERSIONS_KEPT, v1 to v50: each version its own commit in storage
    (these tests are about its items and objects; search indexing would double the cost)."""
    for i in range(VERSIONS_KEPT):
        commit(services, user, build_put("n.md", f"v{i + 1}"))


def test_trimming_deletes_the_oldest_body_by_its_key(services: Services, user: Caller) -> None:
    versions_kept(services, user)
    note_id = services.vault.read(user, "n.md").id
    prefix = f"{user.account_id}/notes/{note_id}/"
    assert len(objects(services, prefix)) == VERSIONS_KEPT
    with counted(services) as n:
        commit(services, user, build_put("n.md", "v51", VERSIONS_KEPT))
    # PutObject, TransactWriteItems (version 1's item deleted inside it), DeleteObjects
    # by exact key: no ListObjects; and no BatchGetItem, the read above is reused
    assert n == {"ddb": 1, "s3": 2, "total": 3}
    kept = objects(services, prefix)
    assert len(kept) == VERSIONS_KEPT
    assert not [k for k in kept if k.startswith(f"{prefix}00000001-")]
    with pytest.raises(NotFound):
        services.vault.version(user, "n.md", 1)
    assert services.vault.version(user, "n.md", 2).markdown == "v2"


def test_a_note_written_before_body_tokens_is_trimmed_by_listing(
    services: Services, user: Caller
) -> None:
    versions_kept(services, user)
    note_id = services.vault.read(user, "n.md").id
    ddb = boto3.client("dynamodb", region_name=REGION)
    ddb.update_item(  # as an item stored before the note item kept its body tokens
        TableName=services.settings.table,
        Key={"pk": {"S": keys.account_pk(user.account_id)}, "sk": {"S": keys.note_sk("n.md")}},
        UpdateExpression="REMOVE tokens",
    )
    services.vault.write(user, "n.md", "v51")
    kept = objects(services, f"{user.account_id}/notes/{note_id}/")
    assert len(kept) == VERSIONS_KEPT
    assert [v.version for v in services.vault.versions(user, "n.md")][-1] == 2


# ---------------------------------------------------------------------- tombstone markers
def test_a_delete_leaves_a_marker_and_recreating_revives_the_history(
    services: Services, user: Caller
) -> None:
    services.vault.write(user, "n.md", "v1")
    services.vault.write(user, "n.md", "v2")
    services.vault.delete(user, "n.md")
    assert items(services, "DM#") == ["DM#n.md"]
    again = services.vault.write(user, "n.md", "v3")
    assert again.created and again.note.version == 3
    assert [v.version for v in services.vault.versions(user, "n.md")] == [3, 2, 1]
    # deleted again and re-created again: still one history, numbering goes on
    services.vault.delete(user, "n.md")
    assert services.vault.write(user, "n.md", "v4").note.version == 4


def test_recreating_under_another_spelling_revives_the_history(
    services: Services, user: Caller
) -> None:
    services.vault.write(user, "Note.md", "old")
    services.vault.delete(user, "Note.md")
    again = services.vault.write(user, "note.md", "new")
    # Paths differing only in case name one note: its history goes on, under the new
    # spelling, behind the same marker.
    assert (again.note.path, again.note.version, again.created) == ("note.md", 2, True)
    assert [v.version for v in services.vault.versions(user, "Note.md")] == [2, 1]
    assert services.vault.version(user, "NOTE.md", 1).markdown == "old"
    assert items(services, "D#") == []
    assert items(services, "DM#") == ["DM#note.md"]


def test_a_purged_history_is_not_revived(services: Services, user: Caller) -> None:
    services.vault.write(user, "n.md", "v1")
    services.vault.delete(user, "n.md")
    services.vault.purge(user, "n.md")
    assert services.vault.write(user, "n.md", "again").note.version == 1


def test_a_delete_racing_a_create_cannot_slip_past_its_marker_check(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The create reads no note and no marker; before it commits, another writer creates
    and deletes the same path. The create must then revive that note, not fork it."""
    table: Any = services.store.table  # type: ignore[attr-defined]
    real = table.batch_get
    raced: list[bool] = []

    def batch_get(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        if not raced:
            raced.append(True)
            monkeypatch.setattr(table, "batch_get", real)
            services.vault.write(user, "n.md", "the other writer's note")
            services.vault.delete(user, "n.md")
        return found

    monkeypatch.setattr(table, "batch_get", batch_get)
    outcome = services.vault.write(user, "n.md", "mine")
    assert raced and outcome.note.version == 2
    assert [v.version for v in services.vault.versions(user, "n.md")] == [2, 1]


def test_reindex_backfills_markers_for_older_tombstones(services: Services, user: Caller) -> None:
    services.vault.write(user, "n.md", "v1")
    services.vault.delete(user, "n.md")
    ddb = boto3.client("dynamodb", region_name=REGION)
    ddb.delete_item(  # as a tombstone written before markers existed
        TableName=services.settings.table,
        Key={"pk": {"S": keys.account_pk(user.account_id)}, "sk": {"S": "DM#n.md"}},
    )
    store: Any = services.store
    store.rebuild_links(user.account_id)
    assert services.vault.write(user, "n.md", "v2").note.version == 2


# ---------------------------------------------------------------------- reads reused
def test_an_append_after_another_writer_loses_nothing(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The note read for the append changes before its commit: the cached item fails
    the write's condition, the commit plans again, and the append retries."""
    services.vault.write(user, "log.md", "first")
    store: Any = services.store
    real = store.get_note
    sneaked: list[bool] = []

    def get_note(*args: Any, **kwargs: Any) -> Any:
        note = real(*args, **kwargs)
        if not sneaked:
            sneaked.append(True)
            commit(services, user, build_put("log.md", "first\nsneaked in"))
        return note

    monkeypatch.setattr(store, "get_note", get_note)
    services.vault.append(user, "log.md", "appended")
    assert services.vault.read(user, "log.md").markdown == "first\nsneaked in\nappended"


def test_a_pinned_append_on_a_changed_note_is_a_conflict(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.vault.write(user, "log.md", "first")
    note = services.store.get_note(user.account_id, "log.md")  # cached for this thread
    assert note is not None
    commit(services, user, build_put("log.md", "changed"))
    with pytest.raises(Conflict):
        commit(services, user, build_put("log.md", "first\nmore", note.version))
    assert services.vault.read(user, "log.md").markdown == "changed"


def test_a_move_moves_the_note_as_it_is_when_the_move_commits(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.vault.write(user, "a.md", "v1")
    store: Any = services.store
    real = store.links_to

    def links_to(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(store, "links_to", real)
        commit(services, user, build_put("a.md", "v2"))  # lands after the move's read
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "links_to", links_to)
    moved = services.vault.move(user, "a.md", "b.md")
    assert (moved.path, moved.markdown, moved.version) == ("b.md", "v2", 2)
    with pytest.raises(NotFound):
        services.vault.read(user, "a.md")


def test_a_move_onto_a_note_that_appears_meanwhile_is_refused(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.vault.write(user, "a.md", "mine")
    store: Any = services.store
    real = store.links_to

    def links_to(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(store, "links_to", real)
        commit(services, user, build_put("B.md", "theirs"))
        return real(*args, **kwargs)

    monkeypatch.setattr(store, "links_to", links_to)
    with pytest.raises(Conflict) as err:
        services.vault.move(user, "a.md", "b.md")
    assert err.value.code == "path_occupied"
    assert services.vault.read(user, "a.md").markdown == "mine"
    assert services.vault.read(user, "B.md").markdown == "theirs"


# ---------------------------------------------------------------------- link counts
def stored_inbound(services: Services, user: Caller, paths: set[str]) -> dict[str, int]:
    """Each note's inbound count as its search document holds it, in one request."""
    index: Any = services.index
    wanted = sorted(paths)
    if not wanted:
        return {}
    found = index.client.mget(
        index=index.index,
        body={"ids": [doc_id(user.account_id, p) for p in wanted]},
        routing=user.account_id,
        _source_includes=["inbound_links"],
    )["docs"]
    return {p: doc["_source"]["inbound_links"] for p, doc in zip(wanted, found, strict=True)}


@pytest.mark.parametrize("seed", [1, 2])
def test_incremental_link_counts_match_a_full_recount(
    services: Services, user: Caller, seed: int
) -> None:
    """Random edits, moves and deletes over a small linked vault: after each, every
    note's inbound count in search equals a recount of the whole vault."""
    rng = random.Random(seed)
    names = ["a", "b", "c", "f/a", "f/d", "g/b"]
    live: set[str] = set()

    def body() -> str:
        picks = rng.sample([*names, "F/A", "zz"], k=rng.randint(0, 3))
        return " ".join(f"[[{p}]]" for p in picks) + f" text {rng.random()}"

    for _ in range(40):
        action = rng.random()
        if action < 0.6 or not live:
            path = rng.choice(names) + ".md"
            services.vault.write(user, path, body())
            live.add(path)
        elif action < 0.8:
            old = rng.choice(sorted(live))
            new = rng.choice(names) + ".md"
            if new in live:
                continue
            services.vault.move(user, old, new)
            live = (live - {old}) | {new}
        else:
            gone = rng.choice(sorted(live))
            services.vault.delete(user, gone)
            live.discard(gone)
        truth = services.vault.links.inbound_counts_all(user.account_id)
        assert stored_inbound(services, user, live) == truth


# ---------------------------------------------------------------------- key cache
ALL = Toggles(recall=True, tools=True, mcp=True)


def admin_key(services: Services) -> Any:
    return services.accounts.issue_key(LOCAL_ACCOUNT_ID, name="admin", toggles=ALL, admin=True)


def test_authentication_is_served_from_the_key_cache(services: Services) -> None:
    issued = admin_key(services)
    services.accounts.authenticate(issued.secret)
    with counted(services) as n:
        services.accounts.authenticate(issued.secret)
    assert n["total"] == 0


def test_a_revocation_in_this_process_takes_effect_at_once(services: Services) -> None:
    issued = admin_key(services)
    other = services.accounts.issue_key(issued.key.account_id, name="other", toggles=ALL)
    assert services.accounts.authenticate(other.secret).id == other.key.id
    services.accounts.revoke(issued.key.account_id, other.key.id)
    with pytest.raises(Unauthenticated):
        services.accounts.authenticate(other.secret)


def test_a_revocation_elsewhere_reaches_this_process_within_the_ttl(
    services: Services, clock: FakeClock
) -> None:
    issued = admin_key(services)
    other = services.accounts.issue_key(issued.key.account_id, name="other", toggles=ALL)
    store: Any = services.store
    here = KeyCachingStore(store.table, store.bodies, ttl=30.0, clock=clock)
    assert here.key_by_hash(hash_key(other.secret)) is not None  # cached here
    services.accounts.revoke(issued.key.account_id, other.key.id)  # in another process
    cached = here.key_by_hash(hash_key(other.secret))
    assert cached is not None and cached.active  # still cached: the documented lag
    clock.advance(31)
    fresh = here.key_by_hash(hash_key(other.secret))
    assert fresh is not None and not fresh.active
