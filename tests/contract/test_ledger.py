"""The gateway's ledger on every backend: holds, settlement, caps, races and usage records."""

from __future__ import annotations

import sqlite3
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.ledger import SqliteLedger
from memvault.container import Services
from memvault.domain.models import ApiKey, KeySettings, Toggles, UsageRecord
from memvault.domain.pricing import MAX_MICROS
from memvault.errors import InvalidInput, PaymentRequired
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from tests.support.clock import FakeClock

DAY = 86_400


def issue(services: Services, *, cap: int | None = None, account: str = LOCAL_ACCOUNT_ID) -> ApiKey:
    return services.accounts.issue_key(
        account, name="gw", toggles=Toggles(), settings=KeySettings(spend_cap_micros=cap)
    ).key


def usage(key: ApiKey, started_at: float, **fields: object) -> UsageRecord:
    base = UsageRecord(
        id=uuid.uuid4().hex,
        account_id=key.account_id,
        key_id=key.id,
        model="gpt-4o-mini",
        api_format="openai",
        input_tokens=100,
        output_tokens=20,
        rounds=1,
        memory_calls={},
        recalled_notes=0,
        injected_tokens=0,
        cost_micros=27,
        status=200,
        outcome="ok",
        started_at=started_at,
        duration_ms=120,
        overhead_ms=4,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


def day_of(epoch: float) -> date:
    return datetime.fromtimestamp(epoch, tz=UTC).date()


# ---------------------------------------------------------------------- balances and holds
def test_new_accounts_are_unmetered_but_holds_and_spend_still_count(services: Services) -> None:
    key = issue(services)
    balance = services.billing.balance(LOCAL_ACCOUNT_ID)
    assert balance.balance_micros is None and balance.held_micros == 0

    hold = services.billing.reserve(key, 10_000_000)  # far more than any balance
    assert services.billing.balance(LOCAL_ACCOUNT_ID).held_micros == 10_000_000
    assert services.billing.balance(LOCAL_ACCOUNT_ID).balance_micros is None
    services.billing.settle(hold, 1_234)
    after = services.billing.balance(LOCAL_ACCOUNT_ID)
    assert after.balance_micros is None and after.held_micros == 0
    assert services.billing.key_spent(LOCAL_ACCOUNT_ID, key.id) == 1_234


def test_reserve_deducts_and_settle_refunds_the_difference(services: Services) -> None:
    key = issue(services)
    services.billing.set_balance(LOCAL_ACCOUNT_ID, 1_000_000)
    hold = services.billing.reserve(key, 300_000)
    balance = services.billing.balance(LOCAL_ACCOUNT_ID)
    assert (balance.balance_micros, balance.held_micros) == (700_000, 300_000)

    services.billing.settle(hold, 120_000)
    balance = services.billing.balance(LOCAL_ACCOUNT_ID)
    assert (balance.balance_micros, balance.held_micros) == (880_000, 0)
    assert services.billing.key_spent(LOCAL_ACCOUNT_ID, key.id) == 120_000


def test_settling_twice_changes_nothing(services: Services) -> None:
    key = issue(services)
    services.billing.set_balance(LOCAL_ACCOUNT_ID, 1_000)
    hold = services.billing.reserve(key, 400)
    assert services.ledger.settle(hold, 100) is True
    assert services.ledger.settle(hold, 100) is False
    services.billing.settle(hold, 999)  # the service's settle never raises either
    assert services.billing.balance(LOCAL_ACCOUNT_ID).balance_micros == 900
    assert services.billing.key_spent(LOCAL_ACCOUNT_ID, key.id) == 100


def test_a_cost_past_the_hold_may_take_the_balance_negative(services: Services) -> None:
    key = issue(services)
    services.billing.set_balance(LOCAL_ACCOUNT_ID, 500)
    hold = services.billing.reserve(key, 500)
    services.billing.settle(hold, 650)
    assert services.billing.balance(LOCAL_ACCOUNT_ID).balance_micros == -150
    with pytest.raises(PaymentRequired) as refused:
        services.billing.reserve(key, 1)
    assert refused.value.code == "insufficient_balance"


def test_insufficient_balance_says_available_and_needed_in_usd(services: Services) -> None:
    key = issue(services)
    services.billing.set_balance(LOCAL_ACCOUNT_ID, 1_500_000)
    with pytest.raises(PaymentRequired) as refused:
        services.billing.reserve(key, 2_250_000)
    assert refused.value.code == "insufficient_balance"
    assert "$1.500000 available" in refused.value.message
    assert "$2.250000 needed" in refused.value.message
    # Nothing was held by the refused request.
    balance = services.billing.balance(LOCAL_ACCOUNT_ID)
    assert (balance.balance_micros, balance.held_micros) == (1_500_000, 0)


def test_the_spend_cap_counts_spent_and_held(services: Services) -> None:
    key = issue(services, cap=1_000)
    first = services.billing.reserve(key, 600)
    with pytest.raises(PaymentRequired) as refused:
        services.billing.reserve(key, 500)  # 600 held + 500 > 1000
    assert refused.value.code == "spend_cap_exceeded"
    assert "$0.001000" in refused.value.message  # the cap
    assert "$0.000600 held" in refused.value.message
    services.billing.settle(first, 300)
    second = services.billing.reserve(key, 700)  # 300 spent + 700 = the cap exactly
    with pytest.raises(PaymentRequired) as again:
        services.billing.reserve(key, 1)
    assert again.value.code == "spend_cap_exceeded"
    assert "$0.000300 spent" in again.value.message
    services.billing.settle(second, 700)
    assert services.billing.key_spent(LOCAL_ACCOUNT_ID, key.id) == 1_000


def test_a_single_request_over_the_cap_is_refused(services: Services) -> None:
    key = issue(services, cap=100)
    with pytest.raises(PaymentRequired) as refused:
        services.billing.reserve(key, 101)
    assert refused.value.code == "spend_cap_exceeded"
    assert services.billing.key_spent(LOCAL_ACCOUNT_ID, key.id) == 0


def test_a_zero_cap_refuses_everything_but_free_requests(services: Services) -> None:
    key = issue(services, cap=0)
    with pytest.raises(PaymentRequired):
        services.billing.reserve(key, 1)
    services.billing.settle(services.billing.reserve(key, 0), 0)


def test_caps_are_per_key(services: Services) -> None:
    capped, free = issue(services, cap=100), issue(services)
    services.billing.reserve(capped, 100)
    services.billing.reserve(free, 5_000)  # the other key's cap is not this one's
    with pytest.raises(PaymentRequired):
        services.billing.reserve(capped, 1)


def test_add_and_set_balance(services: Services) -> None:
    assert services.billing.add_balance(LOCAL_ACCOUNT_ID, 250).balance_micros == 250
    assert services.billing.add_balance(LOCAL_ACCOUNT_ID, -50).balance_micros == 200
    assert services.billing.set_balance(LOCAL_ACCOUNT_ID, 7).balance_micros == 7
    assert services.billing.set_balance(LOCAL_ACCOUNT_ID, None).balance_micros is None
    with pytest.raises(InvalidInput):
        services.billing.add_balance(LOCAL_ACCOUNT_ID, 2**60)


def test_a_correction_never_takes_a_balance_below_zero(services: Services) -> None:
    # set_balance refuses a negative balance; a negative add must not reach one either
    services.billing.set_balance(LOCAL_ACCOUNT_ID, 300)
    with pytest.raises(InvalidInput) as refused:
        services.billing.add_balance(LOCAL_ACCOUNT_ID, -301)
    assert refused.value.code == "balance_would_go_negative"
    assert "$0.000300" in str(refused.value)
    assert services.billing.balance(LOCAL_ACCOUNT_ID).balance_micros == 300  # unchanged
    assert services.billing.add_balance(LOCAL_ACCOUNT_ID, -300).balance_micros == 0
    with pytest.raises(InvalidInput):
        services.billing.add_balance(LOCAL_ACCOUNT_ID, -1)
    assert services.billing.add_balance(LOCAL_ACCOUNT_ID, 5).balance_micros == 5


def test_a_correction_of_an_unmetered_account_is_refused(services: Services) -> None:
    # unmetered: a credit meters it from zero, a correction would start it in debt
    with pytest.raises(InvalidInput) as refused:
        services.billing.add_balance(LOCAL_ACCOUNT_ID, -1)
    assert refused.value.code == "balance_would_go_negative"
    assert services.billing.balance(LOCAL_ACCOUNT_ID).balance_micros is None


def test_holds_in_flight_survive_a_switch_to_unmetered(services: Services) -> None:
    key = issue(services)
    services.billing.set_balance(LOCAL_ACCOUNT_ID, 1_000)
    hold = services.billing.reserve(key, 400)
    services.billing.set_balance(LOCAL_ACCOUNT_ID, None)
    services.billing.settle(hold, 100)
    balance = services.billing.balance(LOCAL_ACCOUNT_ID)
    assert (balance.balance_micros, balance.held_micros) == (None, 0)
    assert services.billing.key_spent(LOCAL_ACCOUNT_ID, key.id) == 100


def test_racing_reservations_never_both_take_the_last_of_a_balance(services: Services) -> None:
    key = issue(services)
    services.billing.set_balance(LOCAL_ACCOUNT_ID, 5_000)

    def attempt(_: int) -> bool:
        try:
            services.billing.reserve(key, 1_000)
            return True
        except PaymentRequired:
            return False

    with ThreadPoolExecutor(max_workers=8) as pool:
        passed = sum(pool.map(attempt, range(16)))
    assert passed == 5
    balance = services.billing.balance(LOCAL_ACCOUNT_ID)
    assert (balance.balance_micros, balance.held_micros) == (0, 5_000)


def test_racing_reservations_never_pass_a_spend_cap(services: Services) -> None:
    key = issue(services, cap=3_000)

    def attempt(_: int) -> bool:
        try:
            services.billing.reserve(key, 1_000)
            return True
        except PaymentRequired:
            return False

    with ThreadPoolExecutor(max_workers=8) as pool:
        passed = sum(pool.map(attempt, range(12)))
    assert passed == 3
    assert services.ledger.key_held(LOCAL_ACCOUNT_ID, key.id) == 3_000


def test_expired_holds_are_settled_at_the_held_amount(services: Services, clock: FakeClock) -> None:
    key = issue(services)
    services.billing.set_balance(LOCAL_ACCOUNT_ID, 10_000)
    crashed = services.billing.reserve(key, 3_000)  # never settled: the process died
    clock.advance(60)
    live = services.billing.reserve(key, 1_000)
    ttl = services.billing.reservation_ttl_seconds

    clock.advance(ttl - 30)  # the first is past its expiry, the second not yet
    assert services.billing.release_expired() == 1
    balance = services.billing.balance(LOCAL_ACCOUNT_ID)
    assert (balance.balance_micros, balance.held_micros) == (6_000, 1_000)
    assert services.billing.key_spent(LOCAL_ACCOUNT_ID, key.id) == 3_000
    assert services.ledger.settle(crashed, 10) is False  # a late settle changes nothing
    assert services.billing.release_expired() == 0

    services.billing.settle(live, 200)
    assert services.billing.balance(LOCAL_ACCOUNT_ID).balance_micros == 6_800


# ---------------------------------------------------------------------- usage records
def test_usage_record_round_trip(services: Services, clock: FakeClock) -> None:
    key = issue(services)
    record = usage(
        key,
        clock(),
        model="claude-sonnet-4-5",
        api_format="anthropic",
        rounds=3,
        memory_calls={"memory_search": 2, "memory_write": 1},
        recalled_notes=4,
        injected_tokens=900,
        status=502,
        outcome="upstream_error",
    )
    services.billing.record_usage(record)
    day = record.day
    assert services.ledger.usage_between(LOCAL_ACCOUNT_ID, day, day) == [record]


def test_usage_report_sums_by_day_and_key(services: Services, clock: FakeClock) -> None:
    a, b = issue(services), issue(services)
    t0 = clock()
    services.billing.record_usage(usage(a, t0, memory_calls={"memory_search": 1}))
    services.billing.record_usage(usage(a, t0 + 5, memory_calls={"memory_search": 2}, rounds=2))
    services.billing.record_usage(usage(b, t0 + 10, cost_micros=1_000))
    services.billing.record_usage(usage(a, t0 + DAY, input_tokens=1))

    report = services.billing.usage_report(
        LOCAL_ACCOUNT_ID, from_day=day_of(t0), to_day=day_of(t0 + DAY), key_id=None
    )
    rows = {(r.day, r.key_id): r for r in report.days}
    first = rows[(day_of(t0).isoformat(), a.id)]
    assert (first.requests, first.input_tokens, first.rounds) == (2, 200, 3)
    assert first.memory_calls == {"memory_search": 3}
    assert rows[(day_of(t0).isoformat(), b.id)].cost_micros == 1_000
    assert rows[(day_of(t0 + DAY).isoformat(), a.id)].input_tokens == 1
    assert len(report.days) == 3
    assert report.totals.requests == 4
    assert report.totals.cost_micros == 27 * 3 + 1_000

    only_b = services.billing.usage_report(
        LOCAL_ACCOUNT_ID, from_day=day_of(t0), to_day=day_of(t0 + DAY), key_id=b.id
    )
    assert [r.key_id for r in only_b.days] == [b.id]
    one_day = services.billing.usage_report(
        LOCAL_ACCOUNT_ID, from_day=day_of(t0 + DAY), to_day=day_of(t0 + DAY), key_id=None
    )
    assert one_day.totals.requests == 1


def test_usage_report_ranges_are_checked(services: Services, clock: FakeClock) -> None:
    today = day_of(clock())
    with pytest.raises(InvalidInput):
        services.billing.usage_report(
            LOCAL_ACCOUNT_ID, from_day=today, to_day=date(2000, 1, 1), key_id=None
        )
    with pytest.raises(InvalidInput):
        services.billing.usage_report(
            LOCAL_ACCOUNT_ID, from_day=date(2020, 1, 1), to_day=date(2021, 1, 1), key_id=None
        )  # 367 days
    services.billing.usage_report(
        LOCAL_ACCOUNT_ID, from_day=date(2020, 1, 1), to_day=date(2020, 12, 31), key_id=None
    )  # 366 days: allowed


def test_other_accounts_never_see_usage_balance_or_spend(
    services: Services, clock: FakeClock
) -> None:
    services.accounts.create_account("other", account_id="other")
    mine, theirs = issue(services), issue(services, account="other")
    services.billing.set_balance("other", 5_000)
    services.billing.record_usage(usage(theirs, clock()))
    services.billing.settle(services.billing.reserve(theirs, 700), 700)

    today = day_of(clock())
    assert services.ledger.usage_between(LOCAL_ACCOUNT_ID, "2000-01-01", "2100-01-01") == []
    report = services.billing.usage_report(
        LOCAL_ACCOUNT_ID, from_day=today, to_day=today, key_id=theirs.id
    )
    assert report.days == [] and report.totals.requests == 0
    assert services.billing.balance(LOCAL_ACCOUNT_ID).balance_micros is None
    assert services.billing.key_spent(LOCAL_ACCOUNT_ID, theirs.id) == 0
    assert services.billing.key_spent(LOCAL_ACCOUNT_ID, mine.id) == 0
    assert services.billing.balance("other").balance_micros == 4_300


def test_expire_usage_drops_records_past_retention(services: Services, clock: FakeClock) -> None:
    key = issue(services)
    old = usage(key, clock())
    services.billing.record_usage(old)
    clock.advance(services.billing.usage_retention_days * DAY + 1)
    recent = usage(key, clock())
    services.billing.record_usage(recent)

    removed = services.billing.expire_usage()
    kept = services.ledger.usage_between(LOCAL_ACCOUNT_ID, "2000-01-01", "2100-01-01")
    if services.settings.backend == "sqlite":
        assert removed == 1 and kept == [recent]
    else:
        # DynamoDB's TTL deletes them; the sweep has nothing to do. The TTL is set right.
        assert removed == 0
        item = services.ledger.table.get(  # type: ignore[attr-defined]
            f"A#{LOCAL_ACCOUNT_ID}",
            next(
                i["sk"]
                for i in services.ledger.table.query(f"A#{LOCAL_ACCOUNT_ID}", "U#")  # type: ignore[attr-defined]
                if i["usage_id"] == old.id
            ),
        )
        assert item["expires_at"] == int(old.started_at + 90 * DAY)


def test_record_usage_never_raises(services: Services, clock: FakeClock) -> None:
    key = issue(services)
    broken = usage(key, clock(), memory_calls={"memory_search": object()})  # not storable
    services.billing.record_usage(broken)  # logged and swallowed
    assert services.ledger.usage_between(LOCAL_ACCOUNT_ID, broken.day, broken.day) == []


def test_usage_records_keep_whether_they_were_estimated(
    services: Services, clock: FakeClock
) -> None:
    key = issue(services)
    exact = usage(key, clock())
    estimated = usage(key, clock() + 1, estimated=True, outcome="client_disconnected")
    services.billing.record_usage(exact)
    services.billing.record_usage(estimated)
    day = exact.day
    found = services.ledger.usage_between(LOCAL_ACCOUNT_ID, day, day)
    assert found == [exact, estimated]
    assert [r.estimated for r in found] == [False, True]


# ---------------------------------------------------------------------- numbers the ledger holds
def test_amounts_past_what_the_ledger_holds_are_refused_not_overflowed(
    services: Services,
) -> None:
    key = issue(services)  # unmetered: no balance check stands in the way
    for amount in (MAX_MICROS + 1, 10**30):
        with pytest.raises(InvalidInput) as refused:
            services.billing.reserve(key, amount)
        assert refused.value.code == "amount_too_large"
        with pytest.raises(InvalidInput):
            services.ledger.reserve(
                LOCAL_ACCOUNT_ID, key.id, amount, spend_cap_micros=None, now=0.0, expires_at=1.0
            )
    assert services.billing.balance(LOCAL_ACCOUNT_ID).held_micros == 0
    hold = services.billing.reserve(key, MAX_MICROS)  # the largest amount is held
    assert services.billing.balance(LOCAL_ACCOUNT_ID).held_micros == MAX_MICROS
    services.billing.settle(hold, 10**30)  # a cost past it is capped, not lost
    assert services.billing.key_spent(LOCAL_ACCOUNT_ID, key.id) == MAX_MICROS
    assert services.billing.balance(LOCAL_ACCOUNT_ID).held_micros == 0


def test_usage_counts_past_what_the_ledger_holds_are_capped(
    services: Services, clock: FakeClock
) -> None:
    key = issue(services)
    huge = usage(key, clock(), input_tokens=10**30, output_tokens=2**70, cost_micros=10**40)
    services.billing.record_usage(huge)
    [stored] = services.ledger.usage_between(LOCAL_ACCOUNT_ID, huge.day, huge.day)
    assert (stored.input_tokens, stored.output_tokens, stored.cost_micros) == (
        MAX_MICROS,
        MAX_MICROS,
        MAX_MICROS,
    )
    assert stored.id == huge.id


# The usage table as it was before records said whether they were estimated.
OLD_USAGE_SCHEMA = """
CREATE TABLE usage_records (
    id TEXT PRIMARY KEY, account_id TEXT NOT NULL, key_id TEXT NOT NULL, day TEXT NOT NULL,
    model TEXT NOT NULL, api_format TEXT NOT NULL, input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL, rounds INTEGER NOT NULL, memory_calls TEXT NOT NULL,
    recalled_notes INTEGER NOT NULL, injected_tokens INTEGER NOT NULL,
    cost_micros INTEGER NOT NULL, status INTEGER NOT NULL, outcome TEXT NOT NULL,
    started_at REAL NOT NULL, duration_ms INTEGER NOT NULL, overhead_ms INTEGER NOT NULL,
    expires_at REAL NOT NULL
);
"""


def test_usage_records_stored_before_the_estimated_flag_read_as_exact(
    services: Services, clock: FakeClock, tmp_path: Path
) -> None:
    key = issue(services)
    old = usage(key, clock())
    if services.settings.backend == "sqlite":
        path = tmp_path / "old-usage.sqlite3"
        with sqlite3.connect(path) as conn:
            conn.executescript(OLD_USAGE_SCHEMA)
            conn.execute(
                "INSERT INTO usage_records VALUES"
                " (?, ?, ?, ?, 'gpt-4o-mini', 'openai', 100, 20, 1, '{}', 0, 0, 27, 200, 'ok',"
                " ?, 120, 4, ?)",
                (old.id, LOCAL_ACCOUNT_ID, key.id, old.day, old.started_at, old.started_at + DAY),
            )
        conn.close()
        ledger = SqliteLedger(Database(path))
        assert ledger.usage_between(LOCAL_ACCOUNT_ID, old.day, old.day) == [old]
        newer = usage(key, clock() + 1, estimated=True)
        ledger.record_usage(newer, expires_at=clock() + DAY)
        # Opened again (a restart): nothing migrates twice, both records read back.
        again = SqliteLedger(Database(path)).usage_between(LOCAL_ACCOUNT_ID, old.day, old.day)
        assert again == [old, newer]
        return
    services.billing.record_usage(old)
    table = services.ledger.table  # type: ignore[attr-defined]
    [item] = table.query(f"A#{LOCAL_ACCOUNT_ID}", "U#")
    table.update(
        Key={"pk": {"S": item["pk"]}, "sk": {"S": item["sk"]}},
        UpdateExpression="REMOVE estimated",
    )
    assert "estimated" not in table.get(item["pk"], item["sk"])
    assert services.ledger.usage_between(LOCAL_ACCOUNT_ID, old.day, old.day) == [old]
