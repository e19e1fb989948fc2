"""Billing: prices, holds before dispatch, settlement, usage records and reports.

The gateway asks for a price, reserves before it dispatches, settles when the request
ends, and records what the request used. Holds that were never settled (the process
crashed mid-request) are settled by ``release_expired`` at the amount held: releasing
them at zero would make a crash free, and keeping them would lock the money forever.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

from memvault.domain.models import ApiKey, Balance, Reservation, UsageDay, UsageRecord, UsageReport
from memvault.domain.pricing import (
    MAX_MICROS,
    ModelPrice,
    PriceTable,
    capped,
    check_amount,
)
from memvault.errors import InvalidInput
from memvault.ports import Ledger

log = logging.getLogger("memvault.billing")

DAY_SECONDS = 86_400
MAX_REPORT_DAYS = 366


def _check_micros(value: int, what: str) -> None:
    if not -MAX_MICROS <= value <= MAX_MICROS:
        raise InvalidInput(f"{what} must be within ±{MAX_MICROS} micros", code="invalid_amount")


def aggregate(records: Iterable[UsageRecord]) -> tuple[list[UsageDay], UsageDay]:
    """Sum records per (UTC day, key), and over everything."""
    rows: dict[tuple[str, str], UsageDay] = {}
    totals = UsageDay(day="", key_id="")
    for record in records:
        slot = (record.day, record.key_id)
        rows[slot] = _add(rows.get(slot) or UsageDay(day=slot[0], key_id=slot[1]), record)
        totals = _add(totals, record)
    return [rows[slot] for slot in sorted(rows)], totals


def _add(row: UsageDay, record: UsageRecord) -> UsageDay:
    calls: defaultdict[str, int] = defaultdict(int, row.memory_calls)
    for tool, count in record.memory_calls.items():
        calls[tool] += count
    return replace(
        row,
        requests=row.requests + 1,
        input_tokens=row.input_tokens + record.input_tokens,
        output_tokens=row.output_tokens + record.output_tokens,
        rounds=row.rounds + record.rounds,
        memory_calls=dict(sorted(calls.items())),
        recalled_notes=row.recalled_notes + record.recalled_notes,
        injected_tokens=row.injected_tokens + record.injected_tokens,
        cost_micros=row.cost_micros + record.cost_micros,
        injected_recall_tokens=row.injected_recall_tokens + record.injected_recall_tokens,
        injected_profile_tokens=row.injected_profile_tokens + record.injected_profile_tokens,
        search_embed_calls=row.search_embed_calls + record.search_embed_calls,
        search_embed_micros=row.search_embed_micros + record.search_embed_micros,
        cache_hits=row.cache_hits + record.cache_hits,
        cache_saved_tokens=row.cache_saved_tokens + record.cache_saved_tokens,
        embedding_calls=row.embedding_calls + (record.api_format == "embeddings"),
        embedding_micros=row.embedding_micros
        + (record.cost_micros if record.api_format == "embeddings" else 0),
    )


def capped_record(record: UsageRecord) -> UsageRecord:
    """``record`` with every count and cost within what the ledgers store (a provider
    may report anything)."""
    return replace(
        record,
        input_tokens=capped(record.input_tokens),
        output_tokens=capped(record.output_tokens),
        injected_tokens=capped(record.injected_tokens),
        cost_micros=capped(record.cost_micros),
    )


class BillingService:
    def __init__(
        self,
        ledger: Ledger,
        prices: PriceTable,
        clock: Callable[[], float],
        *,
        reservation_ttl_seconds: float = 900,
        usage_retention_days: int = 90,
    ) -> None:
        self.ledger = ledger
        self.prices = prices
        self.clock = clock
        self.reservation_ttl_seconds = reservation_ttl_seconds
        self.usage_retention_days = usage_retention_days

    # ------------------------------------------------------------------ the gateway's calls
    def price(self, model: str) -> ModelPrice:
        return self.prices.price(model)

    def reserve(self, key: ApiKey, amount_micros: int) -> Reservation:
        """Hold money for one request. Raises PaymentRequired (insufficient_balance or
        spend_cap_exceeded) when the balance or the key's cap cannot cover it, and
        InvalidInput (amount_too_large) for an amount past MAX_MICROS."""
        check_amount(amount_micros)
        now = self.clock()
        return self.ledger.reserve(
            key.account_id,
            key.id,
            max(amount_micros, 0),
            spend_cap_micros=key.spend_cap_micros,
            now=now,
            expires_at=now + self.reservation_ttl_seconds,
        )

    def settle(self, reservation: Reservation, cost_micros: int) -> None:
        """Charge the actual cost and release the rest of the hold. Idempotent.

        Never raises: the answer has already been delivered. If storage fails here the
        hold stays, and the sweep settles it at the held amount after it expires.
        """
        try:
            self.ledger.settle(reservation, capped(cost_micros))
        except Exception:
            log.exception(
                "settle failed; the sweep will settle the hold at its amount",
                extra={"reservation_id": reservation.id, "account_id": reservation.account_id},
            )

    def record_usage(self, record: UsageRecord) -> None:
        """Store one request's usage. Never raises: the answer was already delivered, so
        a storage failure is logged (ids only, never content) and swallowed."""
        try:
            expires_at = record.started_at + self.usage_retention_days * DAY_SECONDS
            self.ledger.record_usage(capped_record(record), expires_at=expires_at)
        except Exception:
            log.exception(
                "usage record lost",
                extra={
                    "usage_id": record.id,
                    "account_id": record.account_id,
                    "key_id": record.key_id,
                },
            )

    # ------------------------------------------------------------------ reports
    def usage_report(
        self, account_id: str, *, from_day: date, to_day: date, key_id: str | None
    ) -> UsageReport:
        if to_day < from_day:
            raise InvalidInput(
                f"'to' ({to_day}) is before 'from' ({from_day})", code="invalid_date_range"
            )
        if (to_day - from_day).days + 1 > MAX_REPORT_DAYS:
            raise InvalidInput(
                f"a usage report covers at most {MAX_REPORT_DAYS} days", code="invalid_date_range"
            )
        records = self.ledger.usage_between(
            account_id, from_day.isoformat(), to_day.isoformat(), key_id
        )
        days, totals = aggregate(records)
        return UsageReport(
            from_day=from_day.isoformat(),
            to_day=to_day.isoformat(),
            days=days,
            totals=totals,
            tracked_since=self.tracked_since(),
        )

    def tracked_since(self) -> str:
        """The first UTC day whose usage records (and their attribution) are still kept:
        older ones have passed ``usage_retention_days`` and are gone."""
        return self.default_range(self.usage_retention_days)[0].isoformat()

    def default_range(self, days: int = 30) -> tuple[date, date]:
        """The last ``days`` UTC days, today included."""
        today = datetime.fromtimestamp(self.clock(), tz=UTC).date()
        return today - timedelta(days=days - 1), today

    # ------------------------------------------------------------------ balances and spend
    def balance(self, account_id: str) -> Balance:
        return self.ledger.get_balance(account_id)

    def set_balance(self, account_id: str, balance_micros: int | None) -> Balance:
        if balance_micros is not None:
            _check_micros(balance_micros, "a balance")
            if balance_micros < 0:
                # A negative balance would be debt the gateway never asked for: 0 stops
                # every metered request already.
                raise InvalidInput(
                    f"a balance cannot be negative (got {balance_micros} micros); set 0 to"
                    " stop metered requests",
                    code="invalid_amount",
                )
        return self.ledger.set_balance(account_id, balance_micros)

    def add_balance(self, account_id: str, delta_micros: int) -> Balance:
        _check_micros(delta_micros, "a credit")
        return self.ledger.add_balance(account_id, delta_micros)

    def key_spent(self, account_id: str, key_id: str) -> int:
        return self.ledger.key_spent(account_id, key_id)

    # ------------------------------------------------------------------ retention
    def release_expired(self) -> int:
        """Settle holds past their expiry at the held amount (see the module doc)."""
        return self.ledger.release_expired(self.clock())

    def expire_usage(self) -> int:
        return self.ledger.expire_usage(self.clock())
