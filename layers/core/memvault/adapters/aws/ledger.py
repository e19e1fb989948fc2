"""Ledger on DynamoDB: balances, holds, key spend and usage records in the single table.

Items (see adapters/aws/keys.py for the rest of the layout):

    A#<account> / BALANCE                   ``balance`` (absent: unmetered), ``held``
    A#<account> / S#<key id>                a key's ``committed`` (spent + held) and ``held``
    A#<account> / U#<day>␟<start>␟<id>      one usage record; ``expires_at`` is its TTL
    HOLD#<shard> / <expiry>␟<reservation>   one hold in flight (16 shards)

A reservation is one TransactWriteItems: the balance loses the amount on the condition
that it has it, the key's committed spend grows on the condition that it stays within
the cap (DynamoDB conditions cannot add, so the test is ``committed <= cap - amount``),
and the hold item is created. Settlement deletes the hold on the condition that it
still exists, in the same transaction as the refund, so settling twice is a no-op.
A transaction another one held an item of is sent again by ``Table`` (``backoff``); a
lost race (the balance moved since it was read) is read again after a jittered pause.

Holds live outside account partitions, sorted by expiry, so the sweep finds expired
ones with a bounded Query per shard (never a Scan). They never carry ``expires_at``: a
TTL deletion would drop the hold without settling it, locking its money for good.
Usage records are day-prefixed in the account partition, so a report is one Query on a
sort-key range; their TTL removes them after the retention period.
"""

from __future__ import annotations

import uuid
import zlib
from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import keys
from memvault.adapters.aws.backoff import Backoff
from memvault.adapters.aws.clients import aws_errors, error_code
from memvault.adapters.aws.dynamo import Item, Table, deserialize, key, serialize, values
from memvault.domain.models import ATTRIBUTION_FIELDS, Balance, Reservation, UsageRecord
from memvault.domain.pricing import (
    balance_would_go_negative,
    capped,
    check_amount,
    insufficient_balance,
    spend_cap_exceeded,
)
from memvault.errors import ServiceUnavailable

BALANCE_SK = "BALANCE"
SPEND_PREFIX = "S#"
USAGE_PREFIX = "U#"
HOLD_SHARDS = 16
MAX_RACES = 20


def spend_sk(key_id: str) -> str:
    return f"{SPEND_PREFIX}{key_id}"


def usage_sk(record: UsageRecord) -> str:
    return f"{USAGE_PREFIX}{record.day}{keys.SEP}{record.started_at:017.6f}{keys.SEP}{record.id}"


def hold_pk(reservation_id: str) -> str:
    return f"HOLD#{zlib.crc32(reservation_id.encode()) % HOLD_SHARDS:02d}"


def hold_sk(expires_at: float, reservation_id: str) -> str:
    return f"{expires_at:017.6f}{keys.SEP}{reservation_id}"


def _reasons(exc: ClientError) -> list[str]:
    raw: list[dict[str, Any]] = exc.response.get("CancellationReasons", [])
    return [str(r.get("Code", "None")) for r in raw]


def _usage(item: Item) -> UsageRecord:
    return UsageRecord(
        id=item["usage_id"],
        account_id=item["account_id"],
        key_id=item["key_id"],
        model=item["model"],
        api_format=item["api_format"],
        input_tokens=item["input_tokens"],
        output_tokens=item["output_tokens"],
        rounds=item["rounds"],
        memory_calls={str(k): int(v) for k, v in (item.get("memory_calls") or {}).items()},
        recalled_notes=item["recalled_notes"],
        injected_tokens=item["injected_tokens"],
        cost_micros=item["cost_micros"],
        status=item["status"],
        outcome=item["outcome"],
        started_at=float(item["started_at"]),
        duration_ms=item["duration_ms"],
        overhead_ms=item["overhead_ms"],
        estimated=bool(item.get("estimated", False)),  # absent on records made before it
        **{name: int((item.get("attribution") or {}).get(name, 0)) for name in ATTRIBUTION_FIELDS},
    )


class DynamoLedger:
    def __init__(self, table: Table) -> None:
        self.table = table

    def _update(self, pk: str, sk: str, expression: str, **kwargs: Any) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self.table.name,
                "Key": key(pk, sk),
                "UpdateExpression": expression,
                **kwargs,
            }
        }

    # ------------------------------------------------------------------ balances
    def get_balance(self, account_id: str) -> Balance:
        item = self.table.get(keys.account_pk(account_id), BALANCE_SK) or {}
        return Balance(account_id, item.get("balance"), int(item.get("held", 0)))

    def set_balance(self, account_id: str, balance_micros: int | None) -> Balance:
        if balance_micros is None:
            expression, attrs = "REMOVE balance", None
        else:
            expression, attrs = "SET balance = :b", values({":b": balance_micros})
        kwargs: dict[str, Any] = {"ReturnValues": "ALL_NEW"}
        if attrs:
            kwargs["ExpressionAttributeValues"] = attrs
        item = self.table.update(
            Key=key(keys.account_pk(account_id), BALANCE_SK), UpdateExpression=expression, **kwargs
        )
        return Balance(account_id, item.get("balance"), int(item.get("held", 0)))

    def add_balance(self, account_id: str, delta_micros: int) -> Balance:
        # ADD on an absent attribute starts from zero: an unmetered account becomes metered.
        kwargs: dict[str, Any] = {}
        attrs: dict[str, Any] = {":d": delta_micros}
        if delta_micros < 0:
            # a correction never crosses zero: the condition is checked with the write
            kwargs["ConditionExpression"] = "balance >= :floor"
            attrs[":floor"] = -delta_micros
        try:
            item = self.table.update(
                Key=key(keys.account_pk(account_id), BALANCE_SK),
                UpdateExpression="ADD balance :d",
                ExpressionAttributeValues=values(attrs),
                ReturnValues="ALL_NEW",
                **kwargs,
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise
            raise balance_would_go_negative(
                self.get_balance(account_id).balance_micros, delta_micros
            ) from None
        return Balance(account_id, item.get("balance"), int(item.get("held", 0)))

    # ------------------------------------------------------------------ holds
    def _spend(self, account_id: str, key_id: str) -> tuple[int, int]:
        """(committed, held) of a key: committed is settled spend plus holds."""
        item = self.table.get(keys.account_pk(account_id), spend_sk(key_id)) or {}
        return int(item.get("committed", 0)), int(item.get("held", 0))

    def reserve(
        self,
        account_id: str,
        key_id: str,
        amount_micros: int,
        *,
        spend_cap_micros: int | None,
        now: float,
        expires_at: float,
    ) -> Reservation:
        check_amount(amount_micros)
        pk = keys.account_pk(account_id)
        reservation = Reservation(
            id=uuid.uuid4().hex,
            account_id=account_id,
            key_id=key_id,
            amount_micros=amount_micros,
            created_at=now,
            expires_at=expires_at,
        )
        if spend_cap_micros is not None and amount_micros > spend_cap_micros:
            committed, held = self._spend(account_id, key_id)
            raise spend_cap_exceeded(spend_cap_micros, committed - held, held, amount_micros)
        amount = values({":a": amount_micros})
        for _ in Backoff(MAX_RACES):  # a lost race: read again after a jittered pause
            balance = self.get_balance(account_id)
            metered = balance.balance_micros is not None
            if balance.balance_micros is not None and balance.balance_micros < amount_micros:
                raise insufficient_balance(balance.balance_micros, amount_micros)
            if metered:
                # The condition re-checks what was read: a racing hold that took the money
                # first makes this one fail and read again.
                balance_action = self._update(
                    pk,
                    BALANCE_SK,
                    "SET balance = balance - :a ADD held :a",
                    ConditionExpression="balance >= :a",
                    ExpressionAttributeValues=amount,
                )
            else:
                balance_action = self._update(
                    pk,
                    BALANCE_SK,
                    "ADD held :a",
                    ConditionExpression="attribute_not_exists(balance)",
                    ExpressionAttributeValues=amount,
                )
            spend_kwargs: dict[str, Any] = {"ExpressionAttributeValues": amount}
            if spend_cap_micros is not None:
                spend_kwargs["ConditionExpression"] = (
                    "attribute_not_exists(committed) OR committed <= :limit"
                )
                spend_kwargs["ExpressionAttributeValues"] = values(
                    {":a": amount_micros, ":limit": spend_cap_micros - amount_micros}
                )
            hold = {
                keys.TABLE_PK: hold_pk(reservation.id),
                keys.TABLE_SK: hold_sk(expires_at, reservation.id),
                "reservation_id": reservation.id,
                "account_id": account_id,
                "key_id": key_id,
                "amount": amount_micros,
                "metered": metered,
                "created_at": now,
                "hold_expires_at": expires_at,  # not the TTL attribute: see the module doc
            }
            try:
                self.table.transact(
                    [
                        balance_action,
                        self._update(
                            pk, spend_sk(key_id), "ADD committed :a, held :a", **spend_kwargs
                        ),
                        {
                            "Put": {
                                "TableName": self.table.name,
                                "Item": serialize(hold),
                                "ConditionExpression": "attribute_not_exists(pk)",
                            }
                        },
                    ]
                )
            except ClientError as exc:
                if error_code(exc) != "TransactionCanceledException":
                    raise
                reasons = _reasons(exc)
                if len(reasons) > 1 and reasons[1] == "ConditionalCheckFailed":
                    assert spend_cap_micros is not None
                    committed, held = self._spend(account_id, key_id)
                    raise spend_cap_exceeded(
                        spend_cap_micros, committed - held, held, amount_micros
                    ) from exc
                continue  # the balance changed under us (or a race): read it again
            return reservation
        raise ServiceUnavailable(
            "the account's balance is under heavy contention; retry shortly",
            code="balance_contended",
        )

    def settle(self, reservation: Reservation, cost_micros: int) -> bool:
        hold = self.table.get(
            hold_pk(reservation.id), hold_sk(reservation.expires_at, reservation.id)
        )
        if hold is None:
            return False  # settled before (or swept): settling is idempotent
        return self._settle(hold, capped(cost_micros))

    def _settle(self, hold: Item, cost: int | None) -> bool:
        """Replace a hold by ``cost`` (None: the held amount). False if already settled."""
        account_id, key_id = hold["account_id"], hold["key_id"]
        amount = int(hold["amount"])
        actual = amount if cost is None else cost
        taken = amount if hold["metered"] else 0
        pk = keys.account_pk(account_id)
        for _ in Backoff(MAX_RACES):  # a lost race: read again after a jittered pause
            metered_now = self.get_balance(account_id).balance_micros is not None
            if metered_now:
                # Give back what was taken at reserve time, pay the actual cost; the balance
                # may go slightly negative when the cost passed the hold.
                balance_action = self._update(
                    pk,
                    BALANCE_SK,
                    "ADD balance :refund, held :release",
                    ConditionExpression="attribute_exists(balance)",
                    ExpressionAttributeValues=values(
                        {":refund": taken - actual, ":release": -amount}
                    ),
                )
            else:
                balance_action = self._update(
                    pk,
                    BALANCE_SK,
                    "ADD held :release",
                    ConditionExpression="attribute_not_exists(balance)",
                    ExpressionAttributeValues=values({":release": -amount}),
                )
            try:
                self.table.transact(
                    [
                        {
                            "Delete": {
                                "TableName": self.table.name,
                                "Key": key(hold[keys.TABLE_PK], hold[keys.TABLE_SK]),
                                "ConditionExpression": "attribute_exists(pk)",
                            }
                        },
                        balance_action,
                        self._update(
                            pk,
                            spend_sk(key_id),
                            "ADD committed :delta, held :release",
                            ExpressionAttributeValues=values(
                                {":delta": actual - amount, ":release": -amount}
                            ),
                        ),
                    ]
                )
            except ClientError as exc:
                if error_code(exc) != "TransactionCanceledException":
                    raise
                reasons = _reasons(exc)
                if reasons and reasons[0] == "ConditionalCheckFailed":
                    return False  # a concurrent settle (or the sweep) got there first
                continue  # the account was made (un)metered in between: read again
            return True
        raise ServiceUnavailable(
            "the account's balance is under heavy contention; retry shortly",
            code="balance_contended",
        )

    def release_expired(self, now: float, limit: int = 1000) -> int:
        settled = 0
        for shard in range(HOLD_SHARDS):
            for hold in self._range(
                f"HOLD#{shard:02d}", None, hold_sk(now, "\U0010ffff"), limit=limit - settled
            ):
                settled += self._settle(hold, None)
                if settled >= limit:
                    return settled
        return settled

    def key_spent(self, account_id: str, key_id: str) -> int:
        committed, held = self._spend(account_id, key_id)
        return committed - held

    def key_held(self, account_id: str, key_id: str) -> int:
        return self._spend(account_id, key_id)[1]

    # ------------------------------------------------------------------ usage
    def record_usage(self, record: UsageRecord, *, expires_at: float) -> None:
        self.table.put(
            {
                keys.TABLE_PK: keys.account_pk(record.account_id),
                keys.TABLE_SK: usage_sk(record),
                "usage_id": record.id,
                "account_id": record.account_id,
                "key_id": record.key_id,
                "model": record.model,
                "api_format": record.api_format,
                "input_tokens": capped(record.input_tokens),
                "output_tokens": capped(record.output_tokens),
                "rounds": capped(record.rounds),
                "memory_calls": dict(record.memory_calls),
                "recalled_notes": capped(record.recalled_notes),
                "injected_tokens": capped(record.injected_tokens),
                "cost_micros": capped(record.cost_micros),
                "status": record.status,
                "outcome": record.outcome,
                "started_at": record.started_at,
                "duration_ms": capped(record.duration_ms),
                "overhead_ms": capped(record.overhead_ms),
                "estimated": record.estimated,
                "attribution": {k: capped(v) for k, v in record.attribution.items()},
                keys.TTL_ATTRIBUTE: int(expires_at),  # TTL wants whole epoch seconds
            }
        )

    def usage_between(
        self, account_id: str, from_day: str, to_day: str, key_id: str | None = None
    ) -> list[UsageRecord]:
        # The sort key starts with the day, so [U#from, U#to␟…] is exactly those days.
        items = self._range(
            keys.account_pk(account_id),
            f"{USAGE_PREFIX}{from_day}",
            f"{USAGE_PREFIX}{to_day}{keys.SEP}\U0010ffff",
            key_id=key_id,
        )
        return [_usage(i) for i in items]

    def expire_usage(self, now: float, limit: int = 10_000) -> int:
        """DynamoDB's TTL deletes expired usage records by itself (within about two days);
        there is nothing to do here, and no account index to walk without a Scan."""
        return 0

    # ------------------------------------------------------------------ queries
    def _range(
        self,
        pk: str,
        low: str | None,
        high: str,
        *,
        key_id: str | None = None,
        limit: int | None = None,
    ) -> Iterator[Item]:
        """Items of one partition with low <= sort key <= high (low None: from the start)."""
        names = {"#pk": keys.TABLE_PK, "#sk": keys.TABLE_SK}
        attrs: dict[str, Any] = {":pk": pk, ":high": high}
        if low is None:
            condition = "#pk = :pk AND #sk <= :high"
        else:
            condition = "#pk = :pk AND #sk BETWEEN :low AND :high"
            attrs[":low"] = low
        kwargs: dict[str, Any] = {
            "TableName": self.table.name,
            "KeyConditionExpression": condition,
            "ConsistentRead": True,
        }
        if key_id is not None:
            kwargs["FilterExpression"] = "key_id = :key"
            attrs[":key"] = key_id
        kwargs["ExpressionAttributeNames"] = names
        kwargs["ExpressionAttributeValues"] = values(attrs)
        if limit is not None and limit <= 0:
            return
        yielded = 0
        while True:
            with aws_errors("the notes table"):
                self.table.requests += 1
                out = self.table.client.query(**kwargs)
            for raw in out.get("Items", []):
                yield deserialize(raw)
                yielded += 1
                if limit is not None and yielded >= limit:
                    return
            last = out.get("LastEvaluatedKey")
            if not last:
                return
            kwargs["ExclusiveStartKey"] = last
