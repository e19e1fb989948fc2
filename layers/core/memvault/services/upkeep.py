"""The frequent upkeep run: what must not wait for the nightly retention sweep (ADR 0031).

On AWS the ops function (functions/ops) runs it on an EventBridge schedule, every five
minutes by default:

- **the search outbox**: notes whose indexing failed (the search domain was down) are
  indexed for every account with queued work (``IndexSync.drain_all``), so they become
  searchable even when the process that queued them is gone;
- **holds of crashed requests**: gateway holds past their expiry are settled at the held
  amount (``BillingService.release_expired``, ADR 0016), within minutes, not nightly;
- **the queue's age**: how long the longest-waiting outbox has waited, for the alarm;
- **import and export jobs** (when given ``jobs``, ADR 0041): a job whose worker died is
  failed once its lease has run out, its vault rolled back, even if nobody looks at it.

Each part runs on its own: a search outage fails the drain (reported, the run counts
as failed) but holds are still settled. ``stop`` says when the time is up (the Lambda
context's remaining time); whatever is left waits for the next run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from memvault.ports import SearchOutbox
from memvault.services.billing import BillingService
from memvault.services.indexing import IndexSync

log = logging.getLogger("memvault.upkeep")


@dataclass(frozen=True, slots=True)
class UpkeepReport:
    counts: dict[str, int] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    # Seconds the longest-waiting search outbox has waited, after the drain; None: empty.
    queue_age_seconds: float | None = None

    @property
    def ok(self) -> bool:
        return not self.errors


class Upkeep:
    def __init__(
        self,
        indexing: IndexSync,
        billing: BillingService,
        outbox: SearchOutbox,
        clock: Callable[[], float],
        jobs: Callable[[], int] | None = None,
    ) -> None:
        self.jobs = jobs
        self.indexing = indexing
        self.billing = billing
        self.outbox = outbox
        self.clock = clock

    def run(self, stop: Callable[[], bool] = lambda: False) -> UpkeepReport:
        counts: dict[str, int] = {}
        errors: dict[str, str] = {}
        parts: dict[str, Callable[[], int]] = {
            "holds_released": self.billing.release_expired,
            "search_queue_drained": lambda: self.indexing.drain_all(stop),
        }
        if self.jobs is not None:
            parts["jobs_interrupted"] = self.jobs
        for name, part in parts.items():
            try:
                counts[name] = part()
            except Exception as exc:  # one part's failure must not starve the other
                log.warning("upkeep part failed", extra={"part": name}, exc_info=True)
                errors[name] = f"{type(exc).__name__}: {exc}"
        age: float | None = None
        try:
            oldest = self.outbox.oldest_queued_at()
            age = None if oldest is None else max(0.0, self.clock() - oldest)
        except Exception as exc:
            log.warning("could not measure the search queue", exc_info=True)
            errors["search_queue_age"] = f"{type(exc).__name__}: {exc}"
        log.info(
            "upkeep done",
            extra={"counts": counts, "failed": sorted(errors), "queue_age_s": age},
        )
        return UpkeepReport(counts=counts, errors=errors, queue_age_seconds=age)
