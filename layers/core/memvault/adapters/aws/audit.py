"""The identity audit log on DynamoDB (AuditLog): ``A#<account>/AU#<time>␟<id>`` items,
newest first by a reversed Query; their TTL is the usage records' retention."""

from __future__ import annotations

import itertools

from memvault.adapters.aws import keys
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.dynamo import Item
from memvault.domain.identity import AuditEvent, AuditKind


def _event(item: Item) -> AuditEvent:
    return AuditEvent(
        id=item["event_id"],
        account_id=item["account_id"],
        at=item["at"],
        kind=AuditKind(item["kind"]),
        actor_member_id=item.get("actor_member_id"),
        actor_key_id=item.get("actor_key_id"),
        target_id=item.get("target_id"),
        detail={str(k): str(v) for k, v in (item.get("detail") or {}).items()},
        client=item.get("client", ""),
    )


class DynamoAuditLog(DynamoParts):
    def record_event(self, event: AuditEvent, *, expires_at: float) -> None:
        self.table.put(
            {
                keys.TABLE_PK: keys.account_pk(event.account_id),
                keys.TABLE_SK: keys.audit_sk(event.at, event.id),
                "event_id": event.id,
                "account_id": event.account_id,
                "at": event.at,
                "kind": event.kind.value,
                "actor_member_id": event.actor_member_id,
                "actor_key_id": event.actor_key_id,
                "target_id": event.target_id,
                "detail": dict(event.detail) or None,
                "client": event.client or None,
                keys.TTL_ATTRIBUTE: int(expires_at),
            }
        )

    def events(
        self, account_id: str, *, limit: int, before: tuple[float, str] | None = None
    ) -> list[AuditEvent]:
        items = self.table.query(
            keys.account_pk(account_id),
            keys.AUDIT_PREFIX,
            forward=False,
            start_after=keys.audit_sk(*before) if before is not None else None,
            limit=limit,
        )
        return [_event(i) for i in itertools.islice(items, limit)]

    def expire_events(self, now: float, limit: int = 10_000) -> int:
        return 0  # DynamoDB's TTL removes them
