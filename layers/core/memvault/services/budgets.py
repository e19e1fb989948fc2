"""Charging the account's vault budgets; one place, so every surface shares them."""

from __future__ import annotations

import math
from collections.abc import Callable

from memvault.domain.budgets import Bucket
from memvault.errors import RateLimited
from memvault.ports import RateLimiter


class BudgetGuard:
    def __init__(self, limiter: RateLimiter, clock: Callable[[], float]) -> None:
        self.limiter = limiter
        self.clock = clock

    def charge(self, account_id: str, bucket: Bucket, cost: float = 1.0) -> None:
        decision = self.limiter.take(account_id, bucket.value, now=self.clock(), cost=cost)
        if not decision.allowed:
            wait = max(1, math.ceil(decision.retry_after))
            raise RateLimited(
                f"the vault's {bucket.value} budget is used up for now; retry in {wait} s",
                retry_after=wait,
                code=f"{bucket.value}_budget_exhausted",
            )
