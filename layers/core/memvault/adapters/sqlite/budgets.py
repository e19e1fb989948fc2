"""RateLimiter on SQLite: token buckets updated inside a write transaction."""

from __future__ import annotations

from memvault.adapters.sqlite.db import Database
from memvault.domain import budgets
from memvault.ports import BudgetDecision


class SqliteRateLimiter:
    def __init__(self, db: Database, policy: budgets.BucketPolicy) -> None:
        self.db = db
        self.policy = policy

    def take(
        self, account_id: str, bucket: str, *, now: float, cost: float = 1.0
    ) -> BudgetDecision:
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT tokens, updated_at FROM budgets WHERE account_id = ? AND bucket = ?",
                (account_id, bucket),
            ).fetchone()
            state = budgets.BucketState(row["tokens"], row["updated_at"]) if row else None
            allowed, new_state, wait = budgets.take(state, now, self.policy, cost)
            conn.execute(
                "INSERT INTO budgets (account_id, bucket, tokens, updated_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (account_id, bucket) DO UPDATE SET tokens = excluded.tokens,"
                " updated_at = excluded.updated_at",
                (account_id, bucket, new_state.tokens, new_state.updated_at),
            )
        return BudgetDecision(allowed=allowed, remaining=new_state.tokens, retry_after=wait)
