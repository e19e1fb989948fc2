"""A commit of many puts (what an import makes) is the puts applied one by one, on every
backend: same notes, history, tags, links, usage and search, and the same refusals."""

from __future__ import annotations

from typing import Any

import pytest

from memvault.container import Services
from memvault.domain.models import VERSIONS_KEPT, Limits, Note, NoteChange
from memvault.errors import Conflict, QuotaExceeded
from memvault.services.context import Caller, Surface
from memvault.services.vault import build_put

ONE_BY_ONE = "each"  # one token, as "bulk": an index may count the account id's tokens
BULK = "bulk"


def caller(account_id: str) -> Caller:
    return Caller(account_id=account_id, surface=Surface.REST)


@pytest.fixture
def pair(services: Services) -> tuple[Caller, Caller]:
    """Two accounts with the same history: one gets the puts one by one, one in bulk."""
    for account_id in (ONE_BY_ONE, BULK):
        services.accounts.create_account(account_id, account_id=account_id)
        me = caller(account_id)
        services.vault.write(me, "live.md", "v1 [[gone]]\n")
        services.vault.write(me, "live.md", "v2 #old links [[target]]\n")
        services.vault.write(me, "same.md", "unchanged #keep\n")
        services.vault.write(me, "gone.md", "was here #before\n")
        services.vault.delete(me, "gone.md")
        services.vault.write(me, "Target.md", "# Target\n")
    return caller(ONE_BY_ONE), caller(BULK)


def batch(*notes: tuple[str, str, int | None]) -> list[NoteChange]:
    return [build_put(path, markdown, expected) for path, markdown, expected in notes]


MIXED = (
    ("new.md", "---\ntags: [Fresh, fresh]\n---\n# New\nlinks [[Target]] and #Tag #tag\n", 0),
    ("live.md", "v3 rewritten, links [[new]] #new\n", 2),
    ("same.md", "unchanged #keep\n", None),
    ("gone.md", "back again [[Target]]\n", 0),
    ("deep/Other.md", "another [[target]] zanzibarquokka\n", None),
)


def observed(services: Services, me: Caller) -> dict[str, Any]:
    """Everything a user can see of the vault, without note ids (they are random)."""
    notes = {}
    for summary in services.vault.list_notes(me, limit=500).items:
        note = services.vault.read(me, summary.path)
        notes[summary.path] = (
            note.markdown,
            note.title,
            note.tags,
            note.version,
            note.created_at,
            note.updated_at,
            [(v.version, v.sha256, v.created_at) for v in services.vault.versions(me, note.path)],
            [n.path for n in services.vault.backlinks(me, note.path)],
        )
    account = services.accounts.get_account(me.account_id)
    assert account is not None
    hits = services.vault.search(me, "zanzibarquokka target back", charge=False)
    return {
        "notes": notes,
        "history of gone.md": [v.version for v in services.vault.versions(me, "gone.md")],
        "tags": services.vault.tags(me),
        "usage": (account.note_count, account.total_bytes),
        "search": [(h.path, h.title, h.tags, h.score, h.snippet) for h in hits],
    }


def without_ids(notes: list[Note | None]) -> list[tuple[Any, ...] | None]:
    return [
        None
        if n is None
        else (n.path, n.title, n.tags, n.version, n.size, n.created_at, n.updated_at, n.sha256)
        for n in notes
    ]


def test_many_puts_in_one_commit_equal_the_puts_one_by_one(
    services: Services, pair: tuple[Caller, Caller]
) -> None:
    one, bulk = pair
    each = [services.vault.commit(one, [change])[0] for change in batch(*MIXED)]
    together = services.vault.commit(bulk, batch(*MIXED))
    assert without_ids(together) == without_ids(each)
    assert observed(services, bulk) == observed(services, one)
    after = observed(services, bulk)
    assert after["history of gone.md"] == [2, 1]  # revived: its history continues
    assert after["notes"]["same.md"][3] == 1  # identical markdown made no version
    assert after["notes"]["new.md"][2] == ("Fresh", "Tag")  # first spelling of each tag
    assert after["notes"]["Target.md"][-1] == ["deep/Other.md", "gone.md", "new.md"]


def test_a_bulk_commit_keeps_only_the_last_versions(
    services: Services, pair: tuple[Caller, Caller]
) -> None:
    one, bulk = pair
    # The history, VERSIONS_KEPT versions, is written in storage, a commit a version: the
    # search index has no part in what is kept (the commits below index busy.md), and
    # indexing each of the 100 edits was half of this test's cost.
    for me in (one, bulk):
        for n in range(VERSIONS_KEPT):
            now = services.vault.clock()
            services.store.commit(me.account_id, [build_put("busy.md", f"edit {n}\n")], now=now)
    changes = batch(("busy.md", "the last edit\n", VERSIONS_KEPT), ("other.md", "x\n", 0))
    for change in changes:
        services.vault.commit(one, [change])
    services.vault.commit(bulk, changes)
    kept = [v.version for v in services.vault.versions(bulk, "busy.md")]
    assert kept == list(range(VERSIONS_KEPT + 1, 1, -1))
    assert observed(services, bulk) == observed(services, one)


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        (("live.md", "stale edit\n", 1), "version_conflict"),  # live.md is at version 2
        (("new-twice.md", "x\n", 3), "version_conflict"),  # no such note
        (("LIVE.md", "another spelling\n", None), "path_case_conflict"),
    ],
)
def test_a_refused_put_in_a_bulk_commit_changes_nothing(
    services: Services, pair: tuple[Caller, Caller], bad: tuple[str, str, int | None], code: str
) -> None:
    _, bulk = pair
    before = observed(services, bulk)
    with pytest.raises(Conflict) as refused:
        services.vault.commit(bulk, batch(*MIXED[:2], bad, *MIXED[2:]))
    assert refused.value.code == code
    assert observed(services, bulk) == before


def test_a_bulk_commit_raises_the_first_failing_puts_error(
    services: Services, pair: tuple[Caller, Caller]
) -> None:
    _, bulk = pair
    with pytest.raises(Conflict) as refused:
        services.vault.commit(
            bulk, batch(("LIVE.md", "case\n", None), ("live.md", "stale\n", 1), *MIXED[2:])
        )
    assert refused.value.code == "path_case_conflict"


def test_a_bulk_commit_over_the_quota_changes_nothing(
    services: Services, pair: tuple[Caller, Caller]
) -> None:
    _, bulk = pair
    services.accounts.set_limits(BULK, Limits(max_notes=5, max_bytes=10**6))
    before = observed(services, bulk)
    with pytest.raises(QuotaExceeded):  # 3 live notes + new.md, gone.md, deep/Other.md
        services.vault.commit(bulk, batch(*MIXED))
    assert observed(services, bulk) == before
