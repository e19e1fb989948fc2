"""Signed-in sessions on SQLite (SessionStore), found by the hash of their secret."""

from __future__ import annotations

import sqlite3

from memvault.adapters.sqlite.base import SqliteParts
from memvault.domain.identity import Session


def _session(row: sqlite3.Row) -> Session:
    return Session(
        id=row["id"],
        account_id=row["account_id"],
        member_id=row["member_id"],
        created_at=row["created_at"],
        last_seen_at=row["last_seen_at"],
        expires_at=row["expires_at"],
        method=row["method"],
        client=row["client"],
        user_agent=row["user_agent"],
    )


class SqliteSessionStore(SqliteParts):
    def put_session(self, session: Session, secret_hash: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sessions (id, account_id, member_id, secret_hash, created_at,"
                " last_seen_at, expires_at, method, client, user_agent)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session.id,
                    session.account_id,
                    session.member_id,
                    secret_hash,
                    session.created_at,
                    session.last_seen_at,
                    session.expires_at,
                    session.method,
                    session.client,
                    session.user_agent,
                ),
            )

    def session_by_hash(self, secret_hash: str) -> Session | None:
        row = (
            self.db.connection()
            .execute("SELECT * FROM sessions WHERE secret_hash = ?", (secret_hash,))
            .fetchone()
        )
        return _session(row) if row else None

    def list_sessions(self, account_id: str, member_id: str) -> list[Session]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT * FROM sessions WHERE account_id = ? AND member_id = ?"
                " ORDER BY created_at, id",
                (account_id, member_id),
            )
            .fetchall()
        )
        return [_session(r) for r in rows]

    def touch_session(self, secret_hash: str, now: float) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE sessions SET last_seen_at = MAX(last_seen_at, ?) WHERE secret_hash = ?",
                (now, secret_hash),
            )

    def delete_session(self, account_id: str, session_id: str) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM sessions WHERE account_id = ? AND id = ?", (account_id, session_id)
            )
        return cur.rowcount > 0

    def delete_member_sessions(
        self, account_id: str, member_id: str, *, keep: str | None = None
    ) -> int:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM sessions WHERE account_id = ? AND member_id = ? AND id IS NOT ?",
                (account_id, member_id, keep),
            )
        return cur.rowcount

    def expire_sessions(self, now: float, limit: int = 1000) -> int:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM sessions WHERE id IN"
                " (SELECT id FROM sessions WHERE expires_at <= ? LIMIT ?)",
                (now, limit),
            )
        return cur.rowcount
