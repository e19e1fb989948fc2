"""Jittered backoff for DynamoDB races: transaction conflicts and lost conditional races.

Two kinds of race reach memvault's code as errors rather than being retried by botocore:

- a *transaction conflict*: another transaction was in flight on one of the items
  (``TransactionCanceledException`` whose reasons are only ``TransactionConflict`` and
  ``None``, or ``TransactionConflictException`` on a single-item write). Nothing was
  written and no condition was evaluated, so the very same request is safe to send again;
  ``Table`` does so (``is_conflict``).
- a *lost conditional race*: a condition failed because another writer got there first
  (a token bucket, a balance). The caller re-reads and tries again, pausing between tries
  with ``Backoff`` so that a crowd of racers spreads out instead of retrying in lockstep.

Delays are "full jitter" (a uniform draw below an exponentially growing ceiling, AWS's
recommendation for contended retries). Reusable by any adapter on the table (profiles
too): ``Backoff(attempts=...)`` is an iterator of attempt numbers that sleeps between them.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import Any

from botocore.exceptions import ClientError

# A DynamoDB transaction holds its items for tens of milliseconds: start below that.
BASE_SECONDS = 0.005
CAP_SECONDS = 0.4
CONFLICT_ATTEMPTS = 12


class Backoff:
    """``for attempt in Backoff(n):`` runs the body up to n times, sleeping a jittered,
    growing delay before each try after the first."""

    def __init__(
        self,
        attempts: int,
        *,
        base: float = BASE_SECONDS,
        cap: float = CAP_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.attempts = attempts
        self.base = base
        self.cap = cap
        self.sleep = sleep

    def delay(self, attempt: int) -> float:
        """The pause before try ``attempt`` (0 is the first: no pause)."""
        if attempt <= 0:
            return 0.0
        return random.uniform(0, min(self.cap, self.base * (2 ** (attempt - 1))))

    def __iter__(self) -> Iterator[int]:
        for attempt in range(self.attempts):
            if attempt:
                self.sleep(self.delay(attempt))
            yield attempt


def cancellation_codes(exc: ClientError) -> list[str]:
    raw: list[dict[str, Any]] = exc.response.get("CancellationReasons", [])
    return [str(r.get("Code") or "None") for r in raw]


def is_conflict(exc: ClientError) -> bool:
    """True when the request failed only because another transaction held an item: no
    condition failed, nothing was written, the same request may be sent again."""
    code = str(exc.response.get("Error", {}).get("Code", ""))
    if code == "TransactionConflictException":
        return True
    if code != "TransactionCanceledException":
        return False
    codes = cancellation_codes(exc)
    return "TransactionConflict" in codes and all(
        c in ("TransactionConflict", "None") for c in codes
    )
