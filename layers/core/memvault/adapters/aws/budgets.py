"""RateLimiter on DynamoDB: token buckets updated with optimistic conditional writes.

Each take reads the bucket item, computes the refill with domain.budgets, and writes
the new state on the condition that the item is still the one it read. Two takers
racing for the last token cannot both succeed: the loser's condition fails and it
reads again.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from memvault.adapters.aws import keys
from memvault.adapters.aws.clients import error_code
from memvault.adapters.aws.dynamo import Table, values
from memvault.domain import budgets
from memvault.errors import ServiceUnavailable
from memvault.ports import BudgetDecision

MAX_RACES = 50
# Idle buckets refill to full; their items expire (TTL) a day after their last use.
BUCKET_TTL_SECONDS = 86_400


class DynamoRateLimiter:
    def __init__(self, table: Table, policy: budgets.BucketPolicy) -> None:
        self.table = table
        self.policy = policy

    def take(
        self, account_id: str, bucket: str, *, now: float, cost: float = 1.0
    ) -> BudgetDecision:
        pk, sk = keys.account_pk(account_id), keys.budget_sk(bucket)
        for _ in range(MAX_RACES):
            item = self.table.get(pk, sk)
            state = budgets.BucketState(item["tokens"], item["updated_at"]) if item else None
            allowed, new_state, wait = budgets.take(state, now, self.policy, cost)
            attr = {
                ":tokens": new_state.tokens,
                ":at": new_state.updated_at,
                ":ttl": int(now) + BUCKET_TTL_SECONDS,
            }
            if item is None:
                condition = "attribute_not_exists(pk)"
            else:
                # Unchanged since read: same time *and* tokens (a burst can share a tick).
                condition = "updated_at = :seen AND tokens = :seen_tokens"
                attr.update({":seen": item["updated_at"], ":seen_tokens": item["tokens"]})
            try:
                self.table.update(
                    Key={keys.TABLE_PK: {"S": pk}, keys.TABLE_SK: {"S": sk}},
                    UpdateExpression="SET tokens = :tokens, updated_at = :at, #ttl = :ttl",
                    ConditionExpression=condition,
                    ExpressionAttributeNames={"#ttl": keys.TTL_ATTRIBUTE},
                    ExpressionAttributeValues=values(attr),
                )
            except ClientError as exc:
                if error_code(exc) == "ConditionalCheckFailedException":
                    continue
                raise
            return BudgetDecision(allowed=allowed, remaining=new_state.tokens, retry_after=wait)
        raise ServiceUnavailable(
            "the vault budget is under heavy contention; retry shortly", code="budget_contended"
        )
