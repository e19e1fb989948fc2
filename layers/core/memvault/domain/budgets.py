"""Token-bucket arithmetic for the account's vault budgets (pure; storage is an adapter's).

Each account has one bucket per kind of operation (writes, searches), shared by every
surface (REST, CLI through the server, gateway tools, MCP) so that switching surface
never multiplies the budget. A bucket holds at most BURST units and refills at
RATE_PER_MINUTE / 60 units a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

RATE_PER_MINUTE = 120.0
BURST = 60.0


class Bucket(StrEnum):
    WRITES = "writes"
    SEARCHES = "searches"


@dataclass(frozen=True, slots=True)
class BucketState:
    tokens: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class BucketPolicy:
    rate_per_minute: float = RATE_PER_MINUTE
    burst: float = BURST

    @property
    def rate_per_second(self) -> float:
        return self.rate_per_minute / 60.0


def refill(state: BucketState | None, now: float, policy: BucketPolicy) -> BucketState:
    """The bucket as it stands at ``now``; a new bucket starts full."""
    if state is None:
        return BucketState(tokens=policy.burst, updated_at=now)
    elapsed = max(0.0, now - state.updated_at)
    tokens = min(policy.burst, state.tokens + elapsed * policy.rate_per_second)
    return BucketState(tokens=tokens, updated_at=max(now, state.updated_at))


def take(
    state: BucketState | None, now: float, policy: BucketPolicy, cost: float = 1.0
) -> tuple[bool, BucketState, float]:
    """Try to take ``cost`` units. Returns (allowed, new state, seconds to wait if refused)."""
    current = refill(state, now, policy)
    if current.tokens >= cost:
        return True, BucketState(current.tokens - cost, current.updated_at), 0.0
    missing = cost - current.tokens
    return False, current, missing / policy.rate_per_second
