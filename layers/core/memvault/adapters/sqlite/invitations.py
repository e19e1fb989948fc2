"""Invitations on SQLite (InvitationStore): found by token hash; accepted all or nothing."""

from __future__ import annotations

import sqlite3

from memvault.adapters.sqlite.base import SqliteParts
from memvault.adapters.sqlite.members import insert_member
from memvault.domain.identity import Invitation, Member, Role
from memvault.errors import Conflict


def _invitation(row: sqlite3.Row) -> Invitation:
    return Invitation(
        id=row["id"],
        account_id=row["account_id"],
        email=row["email"],
        role=Role(row["role"]),
        invited_by=row["invited_by"],
        created_at=row["created_at"],
        expires_at=row["expires_at"],
    )


class SqliteInvitationStore(SqliteParts):
    def put_invitation(self, invitation: Invitation, token_hash: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO invitations (id, account_id, token_hash, email, role, invited_by,"
                " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    invitation.id,
                    invitation.account_id,
                    token_hash,
                    invitation.email,
                    invitation.role.value,
                    invitation.invited_by,
                    invitation.created_at,
                    invitation.expires_at,
                ),
            )

    def invitation_by_token(self, token_hash: str) -> Invitation | None:
        row = (
            self.db.connection()
            .execute("SELECT * FROM invitations WHERE token_hash = ?", (token_hash,))
            .fetchone()
        )
        return _invitation(row) if row else None

    def get_invitation(self, account_id: str, invitation_id: str) -> Invitation | None:
        row = (
            self.db.connection()
            .execute(
                "SELECT * FROM invitations WHERE account_id = ? AND id = ?",
                (account_id, invitation_id),
            )
            .fetchone()
        )
        return _invitation(row) if row else None

    def list_invitations(self, account_id: str) -> list[Invitation]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT * FROM invitations WHERE account_id = ? ORDER BY created_at, id",
                (account_id,),
            )
            .fetchall()
        )
        return [_invitation(r) for r in rows]

    def delete_invitation(self, account_id: str, invitation_id: str) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM invitations WHERE account_id = ? AND id = ?",
                (account_id, invitation_id),
            )
        return cur.rowcount > 0

    def accept_invitation(
        self, invitation: Invitation, member: Member, *, password_hash: str
    ) -> None:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM invitations WHERE account_id = ? AND id = ?",
                (invitation.account_id, invitation.id),
            )
            if cur.rowcount == 0:
                raise Conflict("the invitation was already used", code="invitation_used")
            insert_member(conn, member, password_hash)

    def expire_invitations(self, now: float, limit: int = 1000) -> int:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM invitations WHERE id IN"
                " (SELECT id FROM invitations WHERE expires_at <= ? LIMIT ?)",
                (now, limit),
            )
        return cur.rowcount
