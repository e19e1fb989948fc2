"""Responses chain links (ResponseChainStore, ADR 0045) on every backend: per
organisation, expiry on read, replaced in place, bounded per organisation oldest first,
erasure."""

from __future__ import annotations

from typing import Any

from memvault.container import Services
from memvault.domain.response_chains import ChainLink, OwedOutput
from memvault.ports import ResponseChainStore
from memvault.services.context import Caller


def chains_bounded_at(services: Services, max_links: int) -> ResponseChainStore:
    """The backend's store over the test's storage, with a small bound."""
    if services.settings.backend == "sqlite":
        from memvault.adapters.sqlite.response_chains import SqliteResponseChains

        return SqliteResponseChains(services.store.db, max_links=max_links)  # type: ignore[attr-defined]
    from memvault.adapters.aws.response_chains import DynamoResponseChains

    store: Any = services.store
    return DynamoResponseChains(store.table, max_links=max_links)


def link(upstream_id: str, created_at: float, *owed: tuple[str, str]) -> ChainLink:
    return ChainLink(upstream_id, tuple(OwedOutput(c, o) for c, o in owed), created_at)


def test_a_link_is_read_back_within_its_organisation_until_it_expires(
    services: Services, user: Caller, clock: Any
) -> None:
    chains, now = services.response_chains, clock.now
    stored = link("resp_last", now, ("call_1", "wrote facts/Tea.md"), ("call_2", "not run"))
    chains.put(user.account_id, "resp_first", stored, expires_at=now + 60)
    assert chains.get(user.account_id, "resp_first", now=now) == stored
    assert chains.get("someone-else", "resp_first", now=now) is None  # never across orgs
    assert chains.get(user.account_id, "resp_last", now=now) is None
    assert chains.get(user.account_id, "resp_first", now=now + 60) is None  # expired on read
    again = link("resp_later", now + 1)
    chains.put(user.account_id, "resp_first", again, expires_at=now + 120)
    assert chains.get(user.account_id, "resp_first", now=now + 60) == again  # replaced


def test_past_the_bound_the_oldest_links_go_first(
    services: Services, user: Caller, clock: Any
) -> None:
    chains = chains_bounded_at(services, 3)
    ids = [f"resp_{i}" for i in range(5)]
    for i, rid in enumerate(ids):
        chains.put(user.account_id, rid, link(f"up_{i}", clock.now + i), expires_at=1e12)
        chains.put("other-org", rid, link(f"other_{i}", clock.now + i), expires_at=1e12)
    present = [r for r in ids if chains.get(user.account_id, r, now=clock.now)]
    assert present == ids[2:]
    # Each organisation has its own bound.
    assert [r for r in ids if chains.get("other-org", r, now=clock.now)] == ids[2:]
    # A link stored again is the newest: the next one pushes out the oldest other.
    chains.put(user.account_id, "resp_2", link("up_2b", clock.now + 9), expires_at=1e12)
    chains.put(user.account_id, "resp_5", link("up_5", clock.now + 10), expires_at=1e12)
    present = [r for r in [*ids, "resp_5"] if chains.get(user.account_id, r, now=clock.now)]
    assert sorted(present) == ["resp_2", "resp_4", "resp_5"]
    got = chains.get(user.account_id, "resp_2", now=clock.now)
    assert got is not None and got.upstream_id == "up_2b"


def test_clear_erases_the_organisations_links_only(
    services: Services, user: Caller, clock: Any
) -> None:
    chains, now = services.response_chains, clock.now
    chains.put(user.account_id, "a", link("x", now), expires_at=now + 60)
    chains.put(user.account_id, "b", link("y", now), expires_at=now + 60)
    chains.put("other-org", "a", link("z", now), expires_at=now + 60)
    assert chains.clear(user.account_id) == 2
    assert chains.get(user.account_id, "a", now=now) is None
    assert chains.get("other-org", "a", now=now) == link("z", now)
