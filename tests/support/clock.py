"""A clock the test controls: budgets refill and recency decays only when it says so."""

from __future__ import annotations


class FakeClock:
    """Wall-clock time the test controls (budgets refill, recency decays)."""

    def __init__(self, start: float = 1_780_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
