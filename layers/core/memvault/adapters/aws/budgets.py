"""RateLimiter on DynamoDB: token buckets updated with optimistic conditional writes.

A take computes the refill with domain.budgets from the bucket state it last saw and
writes the new state on the condition that the item still holds exactly that state.
Two takers racing for the last token cannot both succeed: the loser's condition fails,
DynamoDB hands back the current item with the failure, and the loser tries again from
it, after a jittered pause (``backoff``) so that a crowd of takers spreads out. A warm
process remembers the state it last wrote, so the common case costs one
request (an UpdateItem) and no read.
"""

from __future__ import annotations

import threading
from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import keys
from memvault.adapters.aws.backoff import Backoff
from memvault.adapters.aws.clients import error_code
from memvault.adapters.aws.dynamo import Table, deserialize, values
from memvault.domain import budgets
from memvault.errors import ServiceUnavailable
from memvault.ports import BudgetDecision

MAX_RACES = 30
MAX_REMEMBERED = 10_000
# Idle buckets refill to full; their items expire (TTL) a day after their last use.
BUCKET_TTL_SECONDS = 86_400

_UNKNOWN = object()  # no state remembered: the first attempt assumes the item is absent


class DynamoRateLimiter:
    def __init__(self, table: Table, policy: budgets.BucketPolicy) -> None:
        self.table = table
        self.policy = policy
        self._seen: dict[tuple[str, str], budgets.BucketState | None] = {}
        self._lock = threading.Lock()

    def take(
        self, account_id: str, bucket: str, *, now: float, cost: float = 1.0
    ) -> BudgetDecision:
        pk, sk = keys.account_pk(account_id), keys.budget_sk(bucket)
        with self._lock:
            state: Any = self._seen.get((pk, sk), _UNKNOWN)
        if state is _UNKNOWN:
            state = None
        for _ in Backoff(MAX_RACES):  # a lost race: go again after a jittered pause
            allowed, new_state, wait = budgets.take(state, now, self.policy, cost)
            attr = {
                ":tokens": new_state.tokens,
                ":at": new_state.updated_at,
                ":ttl": int(now) + BUCKET_TTL_SECONDS,
            }
            if state is None:
                condition = "attribute_not_exists(pk)"
            else:
                # Unchanged since seen: same time *and* tokens (a burst can share a tick).
                condition = "updated_at = :seen AND tokens = :seen_tokens"
                attr.update({":seen": state.updated_at, ":seen_tokens": state.tokens})
            try:
                self.table.update(
                    Key={keys.TABLE_PK: {"S": pk}, keys.TABLE_SK: {"S": sk}},
                    UpdateExpression="SET tokens = :tokens, updated_at = :at, #ttl = :ttl",
                    ConditionExpression=condition,
                    ExpressionAttributeNames={"#ttl": keys.TTL_ATTRIBUTE},
                    ExpressionAttributeValues=values(attr),
                    ReturnValuesOnConditionCheckFailure="ALL_OLD",
                )
            except ClientError as exc:
                if error_code(exc) != "ConditionalCheckFailedException":
                    raise
                state = _state_from(exc)  # someone else took in between: go again from it
                continue
            with self._lock:
                if len(self._seen) >= MAX_REMEMBERED:
                    self._seen.clear()  # only a hint: forgetting costs one extra request
                self._seen[(pk, sk)] = new_state
            return BudgetDecision(allowed=allowed, remaining=new_state.tokens, retry_after=wait)
        raise ServiceUnavailable(
            "the vault budget is under heavy contention; retry shortly", code="budget_contended"
        )


def _state_from(exc: ClientError) -> budgets.BucketState | None:
    raw = exc.response.get("Item")
    if not raw:
        return None
    item = deserialize(raw)
    return budgets.BucketState(tokens=float(item["tokens"]), updated_at=float(item["updated_at"]))
