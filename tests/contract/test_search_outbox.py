"""When the search index is down, writes still succeed and indexing catches up later."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from memvault.container import Services
from memvault.errors import ServiceUnavailable
from memvault.services.context import Caller


@contextmanager
def index_down(services: Services, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def unavailable(*_args: object, **_kwargs: object) -> None:
        raise ServiceUnavailable("search is down", code="search_unavailable")

    with monkeypatch.context() as patch:
        for method in ("upsert", "delete", "set_inbound", "search", "clear"):
            patch.setattr(services.index, method, unavailable)
        yield


def paths_found(services: Services, user: Caller, text: str) -> list[str]:
    return [hit.path for hit in services.vault.search(user, text)]


def test_writes_succeed_while_search_is_down_and_are_indexed_later(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.vault.write(user, "old.md", "tangerine, to be deleted")
    with index_down(services, monkeypatch):
        outcome = services.vault.write(user, "n.md", "durian notes")
        services.vault.delete(user, "old.md")
        with pytest.raises(ServiceUnavailable):
            services.vault.search(user, "durian")  # an honest 503, not wrong results
    assert outcome.changed and services.vault.read(user, "n.md").markdown == "durian notes"
    assert set(services.store.queued_reindex(user.account_id)) == {"n.md", "old.md"}
    services.vault.write(user, "other.md", "unrelated")  # the next good commit drains
    assert services.store.queued_reindex(user.account_id) == []
    assert paths_found(services, user, "durian") == ["n.md"]
    assert paths_found(services, user, "tangerine") == []


def test_the_scheduled_drain_and_reindex_empty_the_outbox(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    with index_down(services, monkeypatch):
        services.vault.write(user, "a.md", "lychee")
    assert services.store.accounts_with_queued_reindex() == [user.account_id]
    assert services.vault.indexing.drain_all() == 1
    assert services.store.accounts_with_queued_reindex() == []
    assert paths_found(services, user, "lychee") == ["a.md"]
    with index_down(services, monkeypatch):
        services.vault.write(user, "b.md", "lychee two")
    assert services.vault.reindex(user.account_id) == 2
    assert services.store.queued_reindex(user.account_id) == []
    assert sorted(paths_found(services, user, "lychee")) == ["a.md", "b.md"]


def test_a_queued_note_is_found_by_one_lookup_in_its_own_outbox_only(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    with index_down(services, monkeypatch):
        services.vault.write(user, "work/a.md", "kumquat")
    services.vault.write(user, "b.md", "the next good commit drains the outbox")
    assert not services.store.is_queued_reindex(user.account_id, "work/a.md")  # drained
    services.store.queue_reindex(user.account_id, ["work/a.md", "c.md"])
    assert services.store.is_queued_reindex(user.account_id, "work/a.md")
    assert services.store.is_queued_reindex(user.account_id, "c.md")
    assert not services.store.is_queued_reindex(user.account_id, "b.md")
    assert not services.store.is_queued_reindex(user.account_id, "work")
    assert not services.store.is_queued_reindex("another-account", "work/a.md")
    services.store.unqueue_reindex(user.account_id, ["c.md"])
    assert not services.store.is_queued_reindex(user.account_id, "c.md")
