"""The identity audit log: who signed in, invited, changed a role, removed, made or
revoked a key, and when. Never a secret, a password or note content.

Recording never fails the action it records (an unreachable store is logged, as usage
records are); reading is for owners and admins (``domain.policy``). Events are kept as
long as usage records (``usage_retention_days``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from memvault.domain.identity import AuditEvent, AuditKind
from memvault.domain.policy import Action, require
from memvault.errors import InvalidInput
from memvault.ports import AuditLog
from memvault.services.context import Caller

log = logging.getLogger("memvault.audit")

DAY_SECONDS = 86_400.0
MAX_PAGE = 500


@dataclass(frozen=True, slots=True)
class AuditPage:
    events: list[AuditEvent]
    next_cursor: str | None


def _cursor(event: AuditEvent) -> str:
    return f"{event.at:.6f}_{event.id}"


def _parse_cursor(cursor: str) -> tuple[float, str]:
    at, sep, event_id = cursor.partition("_")
    try:
        if not sep or not event_id:
            raise ValueError(cursor)
        return float(at), event_id
    except ValueError:
        raise InvalidInput(
            "that cursor is not one this listing gave", code="invalid_cursor"
        ) from None


class AuditService:
    def __init__(self, log_store: AuditLog, clock: Callable[[], float], *, retention_days: int):
        self.store = log_store
        self.clock = clock
        self.keep_seconds = retention_days * DAY_SECONDS

    def record(
        self,
        account_id: str,
        kind: AuditKind,
        *,
        actor: Caller | None = None,
        member_id: str | None = None,
        target_id: str | None = None,
        detail: Mapping[str, str] | None = None,
        client: str = "",
    ) -> None:
        """Record one event (``member_id``: who acted, when there is no actor yet, as at
        a sign-in)."""
        now = self.clock()
        event = AuditEvent(
            id=uuid.uuid4().hex,
            account_id=account_id,
            at=now,
            kind=kind,
            actor_member_id=actor.member_id if actor is not None else member_id,
            actor_key_id=actor.key_id if actor is not None else None,
            target_id=target_id,
            detail=dict(detail or {}),
            client=(actor.client if actor is not None and not client else client)[:64],
        )
        try:
            self.store.record_event(event, expires_at=now + self.keep_seconds)
        except Exception:
            log.warning(
                "audit event not recorded",
                extra={"account": account_id, "kind": kind.value},
                exc_info=True,
            )

    def events(self, actor: Caller, *, limit: int = 100, cursor: str | None = None) -> AuditPage:
        require(actor, Action.READ_AUDIT)
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}", code="invalid_limit")
        before = _parse_cursor(cursor) if cursor else None
        now = self.clock()
        found = self.store.events(actor.account_id, limit=limit + 1, before=before)
        # Past retention but not yet swept (DynamoDB's TTL lags): not shown.
        live = [e for e in found if e.at + self.keep_seconds > now]
        page = live[:limit]
        more = len(found) > limit
        return AuditPage(events=page, next_cursor=_cursor(page[-1]) if more and page else None)

    def expire(self) -> int:
        return self.store.expire_events(self.clock())
