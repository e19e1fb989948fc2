"""The scheduled retention sweep: what the vault must forget or settle on its own.

On AWS an EventBridge schedule runs it (functions/retention, nightly by default); on
the embedded install nothing needs it urgently (usage records are filtered by date, and
purges can be asked for), but the same service runs there too. Each sweep is a named
callable ``now -> count``; adding one is one entry in ``sweeps``. A failing sweep does
not stop the others; the report names it, and the Lambda handler then fails the run so
it is retried and alarmed on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from memvault.ports import RetentionSweep
from memvault.services.attachments import AttachmentService
from memvault.services.audit import AuditService
from memvault.services.billing import BillingService
from memvault.services.members import MemberService
from memvault.services.profiles import ProfileService
from memvault.services.sessions import SessionService

log = logging.getLogger("memvault.retention")

DAY_SECONDS = 86_400.0
# Notes purged per store call, and calls per run: a run stays well inside a Lambda
# timeout, and what is left over is picked up by the next run.
PURGE_BATCH = 200
PURGE_MAX_BATCHES = 50

Sweep = Callable[[float], int]


@dataclass(frozen=True, slots=True)
class RetentionReport:
    counts: Mapping[str, int] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)
    # Sweeps that stopped (or never started) because the run's time was up: the next
    # run continues them. Each sweep's unit of work (a note purged with its history, a
    # hold settled) is whole, so stopping between units leaves nothing half done.
    unfinished: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.errors


class RetentionService:
    def __init__(
        self,
        billing: BillingService,
        store: RetentionSweep,
        *,
        deleted_note_keep_days: int,
        sessions: SessionService | None = None,
        members: MemberService | None = None,
        audit: AuditService | None = None,
        profiles: ProfileService | None = None,
        files: AttachmentService | None = None,
    ) -> None:
        self.billing = billing
        self.store = store
        self.keep_seconds = deleted_note_keep_days * DAY_SECONDS
        self._stop: Callable[[], bool] = _never
        self._stopped_early: set[str] = set()
        self.sweeps: dict[str, Sweep] = {
            # Holds whose request crashed before settling: settled at the held amount.
            "holds_released": lambda _now: self.billing.release_expired(),
            # Usage records past usage_retention_days (DynamoDB's TTL also removes them,
            # within days; this makes the sweep exact and covers SQLite).
            "usage_expired": lambda _now: self.billing.expire_usage(),
            "deleted_notes_purged": lambda now: self.purge_deleted_notes(now, self._stop),
        }
        # Expired sessions and invitations, and audit events past the usage records'
        # retention (on DynamoDB their TTL does it, and these count 0).
        if sessions is not None:
            self.sweeps["sessions_expired"] = lambda _now: sessions.expire()
        if members is not None:
            self.sweeps["invitations_expired"] = lambda _now: members.expire_invitations()
        if audit is not None:
            self.sweeps["audit_events_expired"] = lambda _now: audit.expire()
        # Memory profiles' preferences and facts past their memory's retention_days
        # (they stopped being sent when they expired; guardrails never expire).
        if profiles is not None:
            self.sweeps["memory_items_expired"] = profiles.sweep_expired
        # Attachment bytes no file references any more (ADR 0043).
        if files is not None:
            self.sweeps["orphan_files_dropped"] = files.sweep_orphans

    def purge_deleted_notes(self, now: float, stop: Callable[[], bool] = lambda: False) -> int:
        """Forget notes deleted more than the keep period ago, with their history, batch
        by batch until none is due or ``stop`` says the time is up."""
        cutoff = now - self.keep_seconds
        total = 0
        for _ in range(PURGE_MAX_BATCHES):
            if stop():
                self._stopped_early.add("deleted_notes_purged")
                break
            purged = self.store.purge_deleted_before(cutoff, PURGE_BATCH)
            total += purged
            if purged < PURGE_BATCH:
                break
        return total

    def run(self, now: float, stop: Callable[[], bool] = lambda: False) -> RetentionReport:
        """Every sweep, in order; ``stop`` (the Lambda's remaining time, say) is asked
        before each sweep and between batches: once it says the time is up, no more work
        starts, and the report names what is ``unfinished``."""
        counts: dict[str, int] = {}
        errors: dict[str, str] = {}
        self._stop, self._stopped_early = stop, set()
        unfinished: list[str] = []
        try:
            for name, sweep in self.sweeps.items():
                if stop():
                    unfinished.append(name)
                    continue
                try:
                    counts[name] = sweep(now)
                except Exception as exc:  # one sweep's failure must not starve the others
                    log.exception("retention sweep failed", extra={"sweep": name})
                    errors[name] = f"{type(exc).__name__}: {exc}"
                if name in self._stopped_early:
                    unfinished.append(name)
        finally:
            self._stop = _never
        log.info(
            "retention sweep done",
            extra={"counts": counts, "failed": sorted(errors), "unfinished": unfinished},
        )
        return RetentionReport(counts=counts, errors=errors, unfinished=tuple(unfinished))


def _never() -> bool:
    return False
