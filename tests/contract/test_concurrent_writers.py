"""Writers of one organisation at the same time: none refuses another, the quota and the
ledger stay exact.

On AWS the table runs with DynamoDB's transaction conflicts (``TransactionConflicts`` in
tests/support/aws.py): a transaction holds its items for a moment while other requests
run, and a write that touches a held item meanwhile is refused as DynamoDB refuses it.
moto alone answers one request at a time, so on it no two writers could ever conflict.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from memvault.container import Services, build_services
from memvault.domain.models import Limits
from memvault.errors import Conflict, MemvaultError, PaymentRequired, QuotaExceeded
from memvault.services.context import Caller
from tests.support.aws import TransactionConflicts
from tests.support.backends import aws_settings, backend_settings
from tests.support.clock import FakeClock

T = TypeVar("T")
ACCOUNT = "local"
WRITERS = 16


@pytest.fixture
def conflicts(backend: str) -> TransactionConflicts | None:
    return TransactionConflicts() if backend == "aws" else None


@pytest.fixture
def services(
    tmp_path: Path, backend: str, clock: FakeClock, conflicts: TransactionConflicts | None
) -> Iterator[Services]:
    # Budgets out of the way: 16 writes at once is what this is about, not a 429.
    lifted = {"budget_per_minute": 100_000, "budget_burst": 100_000}
    if conflicts is not None:
        settings_cm = aws_settings(tmp_path, conflicts=conflicts, **lifted)
    else:
        settings_cm = backend_settings(tmp_path, backend, **lifted)
    with settings_cm as settings:
        svc = build_services(settings, clock=clock)
        svc.accounts.create_account("local", account_id=ACCOUNT)
        yield svc


def race(n: int, work: Callable[[int], T]) -> list[T | MemvaultError]:
    """``work(i)`` on n threads released together; each one's result or domain error."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except MemvaultError as exc:
            results[i] = exc
        except BaseException as exc:  # reported by the assert below
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    unexpected = [r for r in results if isinstance(r, BaseException)]
    unexpected = [r for r in unexpected if not isinstance(r, MemvaultError)]
    assert not unexpected, unexpected
    return results


def test_sixteen_writers_of_distinct_notes_all_succeed(
    services: Services, user: Caller, conflicts: TransactionConflicts | None
) -> None:
    results = race(WRITERS, lambda i: services.vault.write(user, f"w/{i:02d}.md", f"note {i}"))
    refused = [r for r in results if isinstance(r, MemvaultError)]
    assert refused == []
    paths = sorted(n.path for n in services.vault.list_notes(user, limit=100).items)
    assert paths == [f"w/{i:02d}.md" for i in range(WRITERS)]
    account = services.accounts.get_account(ACCOUNT)
    assert account.note_count == WRITERS
    assert account.total_bytes == sum(len(f"note {i}".encode()) for i in range(WRITERS))
    assert account.revision == WRITERS
    if conflicts is not None:
        # The writers overlapped: DynamoDB would have refused some of these requests.
        assert sum(conflicts.refused.values()) > 0 or conflicts.overlapped > 1


def test_writers_racing_for_the_last_note_slots_exactly_fill_them(
    services: Services, user: Caller
) -> None:
    services.accounts.set_limits(ACCOUNT, Limits(max_notes=5, max_bytes=1_000_000))
    services.vault.write(user, "a.md", "a")
    services.vault.write(user, "b.md", "b")
    results = race(12, lambda i: services.vault.write(user, f"r/{i:02d}.md", "x"))
    written = [r for r in results if not isinstance(r, MemvaultError)]
    refused = [r for r in results if isinstance(r, MemvaultError)]
    assert len(written) == 3
    assert all(isinstance(r, QuotaExceeded) and r.code == "vault_note_limit" for r in refused)
    assert services.accounts.get_account(ACCOUNT).note_count == 5
    assert len(services.vault.list_notes(user, limit=100).items) == 5
    # Freeing a slot lets exactly one more in.
    services.vault.delete(user, "a.md")
    again = race(4, lambda i: services.vault.write(user, f"s/{i}.md", "y"))
    assert len([r for r in again if not isinstance(r, MemvaultError)]) == 1


def test_writers_racing_for_the_last_bytes_exactly_fill_them(
    services: Services, user: Caller
) -> None:
    services.accounts.set_limits(ACCOUNT, Limits(max_notes=1_000, max_bytes=350))
    results = race(8, lambda i: services.vault.write(user, f"b/{i}.md", "x" * 100))
    refused = [r for r in results if isinstance(r, MemvaultError)]
    assert len(refused) == 5
    assert all(isinstance(r, QuotaExceeded) and r.code == "vault_byte_limit" for r in refused)
    account = services.accounts.get_account(ACCOUNT)
    assert (account.note_count, account.total_bytes) == (3, 300)


def test_limits_lowered_below_usage_refuse_growth_until_deletes_make_room(
    services: Services, user: Caller
) -> None:
    for i in range(6):
        services.vault.write(user, f"d/{i}.md", "x")
    services.accounts.set_limits(ACCOUNT, Limits(max_notes=3, max_bytes=1_000_000))
    with pytest.raises(QuotaExceeded):
        services.vault.write(user, "d/new.md", "x")
    services.vault.write(user, "d/0.md", "edits still work")
    # Deletes at once, then writers at once: the vault never holds more than 3.
    race(3, lambda i: services.vault.delete(user, f"d/{i}.md"))
    with pytest.raises(QuotaExceeded):
        services.vault.write(user, "d/new.md", "x")  # 3 notes of 3
    services.vault.delete(user, "d/3.md")
    results = race(6, lambda i: services.vault.write(user, f"e/{i}.md", "x"))
    assert len([r for r in results if not isinstance(r, MemvaultError)]) == 1
    assert services.accounts.get_account(ACCOUNT).note_count == 3
    services.accounts.set_limits(ACCOUNT, Limits(max_notes=10, max_bytes=1_000_000))
    results = race(10, lambda i: services.vault.write(user, f"f/{i}.md", "x"))
    assert len([r for r in results if not isinstance(r, MemvaultError)]) == 7
    assert services.accounts.get_account(ACCOUNT).note_count == 10


def test_writers_of_one_note_from_one_base_version_get_one_win_and_conflicts(
    services: Services, user: Caller
) -> None:
    services.vault.write(user, "same.md", "base")
    results = race(
        8, lambda i: services.vault.write(user, "same.md", f"writer {i}", expected_version=1)
    )
    won = [i for i, r in enumerate(results) if not isinstance(r, MemvaultError)]
    lost = [r for r in results if isinstance(r, MemvaultError)]
    assert len(won) == 1
    assert all(isinstance(r, Conflict) and r.code == "version_conflict" for r in lost)
    note = services.vault.read(user, "same.md")
    assert (note.markdown, note.version) == (f"writer {won[0]}", 2)


def test_holds_racing_for_the_last_of_a_balance_never_overspend(services: Services) -> None:
    services.ledger.set_balance(ACCOUNT, 5_000)
    ledger = services.ledger
    clock = 1_780_000_000.0

    def hold(i: int) -> Any:
        return ledger.reserve(
            ACCOUNT, f"k{i % 3}", 1_000, spend_cap_micros=None, now=clock, expires_at=clock + 60
        )

    results = race(12, hold)
    holds = [r for r in results if not isinstance(r, MemvaultError)]
    refused = [r for r in results if isinstance(r, MemvaultError)]
    assert len(holds) == 5
    assert all(isinstance(r, PaymentRequired) for r in refused)
    balance = ledger.get_balance(ACCOUNT)
    assert (balance.balance_micros, balance.held_micros) == (0, 5_000)
    # Each hold settled twice at once: one settlement counts, the other changes nothing.
    settled = race(10, lambda i: ledger.settle(holds[i // 2], 400))
    assert sorted(settled) == [False] * 5 + [True] * 5
    balance = ledger.get_balance(ACCOUNT)
    assert (balance.balance_micros, balance.held_micros) == (5_000 - 5 * 400, 0)
    spent = sum(ledger.key_spent(ACCOUNT, f"k{k}") for k in range(3))
    assert spent == 5 * 400


def test_takers_racing_for_the_last_tokens_of_a_budget_get_exactly_them(
    services: Services, clock: FakeClock
) -> None:
    tight = services.settings.model_copy(update={"budget_per_minute": 0.001, "budget_burst": 5})
    limiter = build_services(tight, clock=clock).limiter
    decisions = race(16, lambda i: limiter.take(ACCOUNT, "writes", now=clock()))
    assert not [d for d in decisions if isinstance(d, MemvaultError)]  # no 503: all decided
    assert sum(1 for d in decisions if d.allowed) == 5  # type: ignore[union-attr]
