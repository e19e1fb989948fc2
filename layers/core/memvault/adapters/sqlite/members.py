"""Members of organisations on SQLite (MemberStore).

The last-owner rule is checked inside the write's transaction (BEGIN IMMEDIATE holds
the write lock), so two owners demoting each other at once cannot leave none.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection

from memvault.adapters.sqlite.base import SqliteParts
from memvault.domain.identity import Member, Role, email_key
from memvault.errors import Conflict, NotFound


def member_from(row: sqlite3.Row) -> Member:
    return Member(
        id=row["id"],
        account_id=row["account_id"],
        email=row["email"],
        name=row["name"],
        role=Role(row["role"]),
        created_at=row["created_at"],
        disabled_at=row["disabled_at"],
        has_password=row["password_hash"] is not None,
    )


def member_not_found(member_id: str) -> NotFound:
    return NotFound(f"no member {member_id!r} in this organisation", code="member_not_found")


def email_taken() -> Conflict:
    return Conflict("a member already signs in with that address", code="email_taken")


def last_owner() -> Conflict:
    return Conflict(
        "the organisation must keep an active owner; make another member owner first",
        code="last_owner",
    )


def insert_member(conn: sqlite3.Connection, member: Member, password_hash: str | None) -> None:
    try:
        conn.execute(
            "INSERT INTO members (id, account_id, email, email_key, name, role, created_at,"
            " disabled_at, password_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                member.id,
                member.account_id,
                member.email,
                email_key(member.email) if member.email else None,
                member.name,
                member.role.value,
                member.created_at,
                member.disabled_at,
                password_hash,
            ),
        )
    except sqlite3.IntegrityError as exc:
        text = str(exc)
        if "email_key" in text:
            raise email_taken() from exc
        if "FOREIGN KEY" in text:
            raise NotFound(
                f"no organisation {member.account_id!r}", code="account_not_found"
            ) from exc
        raise Conflict(f"member {member.id!r} exists", code="member_exists") from exc


def _is_active_owner(role: str, disabled_at: float | None) -> bool:
    return role == Role.OWNER.value and disabled_at is None


class SqliteMemberStore(SqliteParts):
    def create_member(self, member: Member, *, password_hash: str | None = None) -> None:
        with self.db.transaction() as conn:
            insert_member(conn, member, password_hash)

    def get_member(self, account_id: str, member_id: str) -> Member | None:
        row = (
            self.db.connection()
            .execute(
                "SELECT * FROM members WHERE account_id = ? AND id = ?", (account_id, member_id)
            )
            .fetchone()
        )
        return member_from(row) if row else None

    def member_by_email(self, email: str) -> Member | None:
        row = (
            self.db.connection()
            .execute("SELECT * FROM members WHERE email_key = ?", (email_key(email),))
            .fetchone()
        )
        return member_from(row) if row else None

    def list_members(self, account_id: str) -> list[Member]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT * FROM members WHERE account_id = ? ORDER BY created_at, id", (account_id,)
            )
            .fetchall()
        )
        return [member_from(r) for r in rows]

    def _check_owner_left(self, conn: sqlite3.Connection, account_id: str, member_id: str) -> None:
        others = conn.execute(
            "SELECT COUNT(*) FROM members WHERE account_id = ? AND id != ? AND role = 'owner'"
            " AND disabled_at IS NULL",
            (account_id, member_id),
        ).fetchone()[0]
        if others == 0:
            raise last_owner()

    def update_member(
        self,
        account_id: str,
        member_id: str,
        *,
        role: Role | None = None,
        disabled_at: float | None = None,
        enable: bool = False,
        name: str | None = None,
        email: str | None = None,
    ) -> Member:
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT * FROM members WHERE account_id = ? AND id = ?", (account_id, member_id)
            ).fetchone()
            if row is None:
                raise member_not_found(member_id)
            new_role = role.value if role is not None else row["role"]
            new_disabled = None if enable else (disabled_at or row["disabled_at"])
            was = _is_active_owner(row["role"], row["disabled_at"])
            if was and not _is_active_owner(new_role, new_disabled):
                self._check_owner_left(conn, account_id, member_id)
            try:
                conn.execute(
                    "UPDATE members SET role = ?, disabled_at = ?, name = ?, email = ?,"
                    " email_key = ? WHERE account_id = ? AND id = ?",
                    (
                        new_role,
                        new_disabled,
                        name if name is not None else row["name"],
                        email if email is not None else row["email"],
                        email_key(email) if email is not None else row["email_key"],
                        account_id,
                        member_id,
                    ),
                )
            except sqlite3.IntegrityError as exc:
                raise email_taken() from exc
            updated = conn.execute(
                "SELECT * FROM members WHERE account_id = ? AND id = ?", (account_id, member_id)
            ).fetchone()
        return member_from(updated)

    def remove_member(self, account_id: str, member_id: str) -> Member:
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT * FROM members WHERE account_id = ? AND id = ?", (account_id, member_id)
            ).fetchone()
            if row is None:
                raise member_not_found(member_id)
            if _is_active_owner(row["role"], row["disabled_at"]):
                self._check_owner_left(conn, account_id, member_id)
            conn.execute(
                "DELETE FROM members WHERE account_id = ? AND id = ?", (account_id, member_id)
            )
        return member_from(row)

    def password_hash(self, account_id: str, member_id: str) -> str | None:
        row = (
            self.db.connection()
            .execute(
                "SELECT password_hash FROM members WHERE account_id = ? AND id = ?",
                (account_id, member_id),
            )
            .fetchone()
        )
        return row[0] if row else None

    def set_password_hash(self, account_id: str, member_id: str, password_hash: str) -> None:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE members SET password_hash = ? WHERE account_id = ? AND id = ?",
                (password_hash, account_id, member_id),
            )
            if cur.rowcount == 0:
                raise member_not_found(member_id)

    def give_keys(self, account_id: str, member_id: str, key_ids: Collection[str]) -> None:
        ids = list(key_ids)
        if not ids:
            return
        marks = ",".join("?" * len(ids))
        with self.db.transaction() as conn:
            conn.execute(
                f"UPDATE api_keys SET member_id = ? WHERE account_id = ? AND id IN ({marks})",
                (member_id, account_id, *ids),
            )
