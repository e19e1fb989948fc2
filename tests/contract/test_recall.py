"""Recall on every backend: the vault's best notes for a message, as one memory block."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from memvault.container import Services
from memvault.domain.budgets import Bucket
from memvault.domain.recall import EXCERPT_MARK, PASSAGE_MARK
from memvault.errors import MemvaultError, RateLimited, ServiceUnavailable
from memvault.services.context import Caller
from memvault.services.recall import (
    MAX_QUERY_CHARS,
    MEMO_MAX_AGE_SECONDS,
    RecallService,
    new_recall_memo,
)
from memvault.tokens import count_tokens
from tests.contract.test_common_terms import import_notes

NOTE_TAG_RE = re.compile(r'<note path="([^"]*)" updated="([^"]*)"( excerpt="true")?>')


@pytest.fixture
def recall(services: Services) -> RecallService:
    return RecallService(services.vault)


@contextmanager
def search_down(services: Services, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The search index fails as an unreachable node does (as test_search_outbox does)."""

    def unavailable(*_args: object, **_kwargs: object) -> None:
        raise ServiceUnavailable("search is down", code="search_unavailable")

    with monkeypatch.context() as patch:
        for method in ("upsert", "delete", "set_inbound", "search", "clear"):
            patch.setattr(services.index, method, unavailable)
        yield


def tags_in(text: str) -> list[tuple[str, str, bool]]:
    return [(m[1], m[2], bool(m[3])) for m in NOTE_TAG_RE.finditer(text)]


def test_best_matches_come_back_in_rank_order_with_paths_and_dates(
    services: Services, user: Caller, recall: RecallService
) -> None:
    services.vault.write(user, "projects/Launch plan.md", "# Launch\n\nShip the beta on Friday.")
    services.vault.write(user, "beta.md", "The beta testers want the beta badge. Beta beta.")
    services.vault.write(user, "unrelated.md", "Groceries: apples, bread.")
    message = "When do we ship the beta on friday?"
    ranked = [
        hit.path
        for hit in services.vault.search(user, message, charge=False, skip_common_terms=True)
    ]
    assert set(ranked) == {"projects/Launch plan.md", "beta.md"}

    block = recall.recall(user, message, max_notes=5, token_budget=2000)

    assert block is not None
    assert list(block.paths) == ranked  # the search's order, unrelated notes left out
    # 1_780_000_000 (the fake clock) is 2026-05-28 in UTC.
    assert tags_in(block.text) == [(path, "2026-05-28", False) for path in ranked]
    assert "Ship the beta on Friday." in block.text
    assert block.text.startswith('<memory source="memvault vault">\n')
    assert block.text.endswith("</note>\n</memory>")
    assert block.tokens == count_tokens(block.text) and block.excerpted == ()


def test_max_notes_limits_the_block(
    services: Services, user: Caller, recall: RecallService
) -> None:
    for i in range(4):
        services.vault.write(user, f"n{i}.md", f"quince note number {i}")
    block = recall.recall(user, "quince", max_notes=2, token_budget=2000)
    assert block is not None and len(block.paths) == 2
    assert block.text.count("<note ") == 2


def test_another_accounts_notes_never_appear(
    services: Services, user: Caller, recall: RecallService
) -> None:
    services.accounts.create_account("other", account_id="other")
    other = Caller(account_id="other")
    services.vault.write(other, "theirs.md", "secret apricot plan, apricot apricot")
    services.vault.write(other, "shared-name.md", "apricot in their vault")
    services.vault.write(user, "shared-name.md", "my own apricot jam")

    block = recall.recall(user, "apricot plan", max_notes=5, token_budget=2000)

    assert block is not None and block.paths == ("shared-name.md",)
    assert "my own apricot jam" in block.text and "secret" not in block.text
    assert "their vault" not in block.text
    assert (
        recall.recall(Caller(account_id="nobody"), "apricot", max_notes=5, token_budget=2000)
        is None
    )


def test_deleted_notes_never_appear(
    services: Services, user: Caller, recall: RecallService, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.vault.write(user, "gone.md", "mango smoothie recipe")
    services.vault.write(user, "stale.md", "mango chutney, deleted while search was down")
    services.vault.write(user, "kept.md", "mango salad")
    services.vault.delete(user, "gone.md")
    with search_down(services, monkeypatch):
        services.vault.delete(user, "stale.md")  # the index still holds it
    assert "stale.md" in [hit.path for hit in services.vault.search(user, "mango", charge=False)]

    block = recall.recall(user, "mango", max_notes=5, token_budget=2000)

    assert block is not None and block.paths == ("kept.md",)
    assert "chutney" not in block.text and "smoothie" not in block.text


@pytest.mark.parametrize("budget", [120, 400, 2000])
def test_the_token_budget_holds_for_the_whole_block(
    services: Services, user: Caller, recall: RecallService, budget: int
) -> None:
    paragraph = "The walnut harvest log records rainfall, yields and the pickers' notes. "
    for i in range(5):
        body = "\n\n".join(f"Day {d}: " + paragraph * 6 for d in range(40))
        services.vault.write(user, f"harvest/{i}.md", f"# Harvest {i}\n\n{body}")

    block = recall.recall(user, "walnut harvest rainfall", max_notes=5, token_budget=budget)

    assert block is not None
    assert count_tokens(block.text) <= budget and block.tokens <= budget
    assert block.excerpted == block.paths  # every note is too long to go whole
    # Each is its passages that matched (or an excerpt of them), saying the note has more.
    marks = block.text.count(EXCERPT_MARK) + block.text.count(PASSAGE_MARK)
    assert marks == len(block.paths)


def test_recall_does_not_spend_the_search_budget(
    services: Services, user: Caller, recall: RecallService
) -> None:
    services.vault.write(user, "n.md", "papaya")
    with pytest.raises(RateLimited):
        for _ in range(1000):
            services.vault.budgets.charge(user.account_id, Bucket.SEARCHES)

    block = recall.recall(user, "papaya", max_notes=5, token_budget=2000)

    assert block is not None and block.paths == ("n.md",)
    with pytest.raises(RateLimited):  # still exhausted: recall neither spent nor refilled it
        services.vault.search(user, "papaya")


def test_search_failure_propagates(
    services: Services, user: Caller, recall: RecallService, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.vault.write(user, "n.md", "guava")
    with search_down(services, monkeypatch), pytest.raises(ServiceUnavailable):
        recall.recall(user, "guava", max_notes=5, token_budget=2000)


def test_storage_failure_propagates(
    services: Services, user: Caller, recall: RecallService, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.vault.write(user, "n.md", "guava")

    def unavailable(*_args: object, **_kwargs: object) -> None:
        raise ServiceUnavailable("storage is down", code="storage_unavailable")

    # Recall reads the notes it found in one batch.
    monkeypatch.setattr(services.store, "get_notes", unavailable)
    with pytest.raises(ServiceUnavailable):
        recall.recall(user, "guava", max_notes=5, token_budget=2000)


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
def test_a_blank_message_recalls_nothing_without_searching(
    services: Services,
    user: Caller,
    recall: RecallService,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
) -> None:
    with search_down(services, monkeypatch):  # a search would raise
        assert recall.recall(user, text, max_notes=5, token_budget=2000) is None


def test_no_match_and_too_small_a_budget_recall_nothing(
    services: Services, user: Caller, recall: RecallService
) -> None:
    services.vault.write(user, "n.md", "persimmon " * 50)
    assert recall.recall(user, "kumquat", max_notes=5, token_budget=2000) is None
    assert recall.recall(user, "persimmon", max_notes=5, token_budget=30) is None


def test_a_long_message_searches_with_its_opening(
    services: Services, user: Caller, recall: RecallService
) -> None:
    services.vault.write(user, "early.md", "elderberry wine")
    services.vault.write(user, "late.md", "zucchini bread")
    message = "elderberry " + "filler " * 2000 + "zucchini"
    assert len(message) > MAX_QUERY_CHARS

    block = recall.recall(user, message, max_notes=5, token_budget=2000)

    assert block is not None and block.paths == ("early.md",)


# --------------------------------------------------------------------------- the memo


def revision(services: Services, caller: Caller) -> int:
    account = services.store.get_account(caller.account_id)
    assert account is not None
    return account.revision


def test_the_vault_revision_moves_with_every_change_and_only_then(
    services: Services, user: Caller
) -> None:
    seen = [revision(services, user)]

    def moved() -> bool:
        seen.append(revision(services, user))
        return seen[-1] > seen[-2]

    services.vault.write(user, "a.md", "fig")
    assert moved()
    services.vault.read(user, "a.md")
    services.vault.search(user, "fig", charge=False)
    services.vault.list_notes(user)
    services.vault.versions(user, "a.md")
    assert not moved()
    services.vault.append(user, "a.md", "more fig")
    assert moved()
    services.vault.restore(user, "a.md", 1)
    assert moved()
    services.vault.move(user, "a.md", "b.md")
    assert moved()
    services.vault.delete(user, "b.md")
    assert moved()
    with pytest.raises(MemvaultError):
        services.vault.write(user, "../outside.md", "refused")
    assert not moved()
    import_notes(services, user, {"c.md": "imported fig"})
    assert moved()


def test_the_same_message_at_the_same_revision_reuses_the_block(
    services: Services, user: Caller, recall: RecallService, monkeypatch: pytest.MonkeyPatch
) -> None:
    services.vault.write(user, "plan.md", "The walnut harvest starts in October.")
    at = revision(services, user)
    first = recall.recall(user, "walnut harvest", max_notes=5, token_budget=2000, vault_revision=at)
    assert first is not None and first.paths == ("plan.md",)

    with search_down(services, monkeypatch):  # a search would raise: none is made
        again = recall.recall(
            user, "walnut harvest", max_notes=5, token_budget=2000, vault_revision=at
        )
        assert again == first
        with pytest.raises(ServiceUnavailable):  # another message, or other settings, search
            recall.recall(user, "walnut trees", max_notes=5, token_budget=2000, vault_revision=at)
        with pytest.raises(ServiceUnavailable):
            recall.recall(user, "walnut harvest", max_notes=4, token_budget=2000, vault_revision=at)
        with pytest.raises(ServiceUnavailable):  # no revision given: no memo
            recall.recall(user, "walnut harvest", max_notes=5, token_budget=2000)

    services.vault.write(user, "update.md", "Walnut harvest moved: walnut harvest in November.")
    later = revision(services, user)
    assert later != at
    changed = recall.recall(
        user, "walnut harvest", max_notes=5, token_budget=2000, vault_revision=later
    )
    assert changed is not None and set(changed.paths) == {"plan.md", "update.md"}


def test_remembered_blocks_are_per_account(
    services: Services, user: Caller, recall: RecallService
) -> None:
    services.accounts.create_account("other", account_id="other")
    other = Caller(account_id="other")
    services.vault.write(user, "mine.md", "olive oil from my grove")
    services.vault.write(other, "theirs.md", "olive oil from their grove")
    assert revision(services, user) == revision(services, other)  # same number, other vault

    mine = recall.recall(user, "olive oil", max_notes=5, token_budget=2000, vault_revision=1)
    theirs = recall.recall(other, "olive oil", max_notes=5, token_budget=2000, vault_revision=1)
    assert mine is not None and mine.paths == ("mine.md",)
    assert theirs is not None and theirs.paths == ("theirs.md",)


def test_remembered_blocks_expire(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [0.0]
    recall = RecallService(services.vault, memo=new_recall_memo(clock=lambda: now[0]))
    services.vault.write(user, "n.md", "hazelnut spread")
    at = revision(services, user)
    assert recall.recall(user, "hazelnut", max_notes=5, token_budget=2000, vault_revision=at)
    with search_down(services, monkeypatch):
        now[0] = MEMO_MAX_AGE_SECONDS - 0.1
        assert recall.recall(user, "hazelnut", max_notes=5, token_budget=2000, vault_revision=at)
        now[0] = MEMO_MAX_AGE_SECONDS
        with pytest.raises(ServiceUnavailable):
            recall.recall(user, "hazelnut", max_notes=5, token_budget=2000, vault_revision=at)
