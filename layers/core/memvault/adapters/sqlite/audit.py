"""The identity audit log on SQLite (AuditLog): newest first, swept at its retention."""

from __future__ import annotations

import json
import sqlite3

from memvault.adapters.sqlite.base import SqliteParts
from memvault.domain.identity import AuditEvent, AuditKind


def _event(row: sqlite3.Row) -> AuditEvent:
    return AuditEvent(
        id=row["id"],
        account_id=row["account_id"],
        at=row["at"],
        kind=AuditKind(row["kind"]),
        actor_member_id=row["actor_member_id"],
        actor_key_id=row["actor_key_id"],
        target_id=row["target_id"],
        detail={str(k): str(v) for k, v in json.loads(row["detail"]).items()},
        client=row["client"],
    )


class SqliteAuditLog(SqliteParts):
    def record_event(self, event: AuditEvent, *, expires_at: float) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO audit_events (id, account_id, at, kind, actor_member_id,"
                " actor_key_id, target_id, detail, client, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    event.id,
                    event.account_id,
                    event.at,
                    event.kind.value,
                    event.actor_member_id,
                    event.actor_key_id,
                    event.target_id,
                    json.dumps(event.detail, sort_keys=True),
                    event.client,
                    expires_at,
                ),
            )

    def events(
        self, account_id: str, *, limit: int, before: tuple[float, str] | None = None
    ) -> list[AuditEvent]:
        sql = "SELECT * FROM audit_events WHERE account_id = ?"
        params: list[object] = [account_id]
        if before is not None:
            sql += " AND (at < ? OR (at = ? AND id < ?))"
            params += [before[0], before[0], before[1]]
        sql += " ORDER BY at DESC, id DESC LIMIT ?"
        rows = self.db.connection().execute(sql, (*params, limit)).fetchall()
        return [_event(r) for r in rows]

    def expire_events(self, now: float, limit: int = 10_000) -> int:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM audit_events WHERE id IN"
                " (SELECT id FROM audit_events WHERE expires_at <= ? LIMIT ?)",
                (now, limit),
            )
        return cur.rowcount
