"""Memory profiles on SQLite (MemoryProfileStore): two tables in the one database file.

``memory_profiles`` holds a memory per row (unique per account, owner and slug);
``memory_items`` its items, a fact's vector in the row (float32 bytes) so deleting the
memory deletes every trace of it in one transaction (the items go by foreign key).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence

from memvault.adapters.sqlite.base import SqliteParts
from memvault.adapters.sqlite.db import Database
from memvault.domain.profiles import (
    DAY_SECONDS,
    ItemType,
    MemoryProfile,
    ProfileItem,
    ProfilePatch,
    count_current,
)
from memvault.errors import Conflict, NotFound, QuotaExceeded

SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_profiles (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    owner_member_id TEXT NOT NULL,
    slug TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    retention_days INTEGER,
    active INTEGER NOT NULL DEFAULT 1,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    revision INTEGER NOT NULL DEFAULT 1,
    item_count INTEGER NOT NULL DEFAULT 0,
    UNIQUE (account_id, owner_member_id, slug)
);
CREATE INDEX IF NOT EXISTS memory_profiles_by_slug ON memory_profiles(account_id, slug);
CREATE INDEX IF NOT EXISTS memory_profiles_retained ON memory_profiles(retention_days)
    WHERE retention_days IS NOT NULL;
CREATE TABLE IF NOT EXISTS memory_items (
    id TEXT NOT NULL,
    account_id TEXT NOT NULL,
    memory_id TEXT NOT NULL REFERENCES memory_profiles(id) ON DELETE CASCADE,
    item_type TEXT NOT NULL,
    key TEXT,
    text TEXT NOT NULL,
    vector BLOB,
    model TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (memory_id, id)
);
CREATE INDEX IF NOT EXISTS memory_items_by_account ON memory_items(account_id, memory_id);
"""


def _profile(row: sqlite3.Row) -> MemoryProfile:
    return MemoryProfile(
        id=row["id"],
        account_id=row["account_id"],
        owner_member_id=row["owner_member_id"],
        slug=row["slug"],
        name=row["name"],
        description=row["description"],
        retention_days=row["retention_days"],
        active=bool(row["active"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        revision=row["revision"],
        item_count=row["item_count"],
    )


def _item(row: sqlite3.Row) -> ProfileItem:
    return ProfileItem(
        id=row["id"],
        memory_id=row["memory_id"],
        item_type=ItemType(row["item_type"]),
        text=row["text"],
        key=row["key"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        vector=bytes(row["vector"]) if row["vector"] is not None else None,
        model=row["model"],
    )


def _not_found() -> NotFound:
    return NotFound("no such memory", code="memory_not_found")


class SqliteProfileStore(SqliteParts):
    def __init__(self, db: Database) -> None:
        super().__init__(db)
        db.add_schema(SCHEMA)

    def create_profile(self, profile: MemoryProfile) -> None:
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO memory_profiles (id, account_id, owner_member_id, slug, name,"
                    " description, retention_days, active, created_at, updated_at, revision,"
                    " item_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
                    (
                        profile.id,
                        profile.account_id,
                        profile.owner_member_id,
                        profile.slug,
                        profile.name,
                        profile.description,
                        profile.retention_days,
                        int(profile.active),
                        profile.created_at,
                        profile.updated_at,
                        profile.revision,
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise Conflict(
                f"you already have a memory with the slug '{profile.slug}'", code="memory_exists"
            ) from exc

    def get_profile(self, account_id: str, memory_id: str) -> MemoryProfile | None:
        row = (
            self.db.connection()
            .execute(
                "SELECT * FROM memory_profiles WHERE account_id = ? AND id = ?",
                (account_id, memory_id),
            )
            .fetchone()
        )
        return _profile(row) if row else None

    def profiles_by_slug(self, account_id: str, slug: str) -> list[MemoryProfile]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT * FROM memory_profiles WHERE account_id = ? AND slug = ?"
                " ORDER BY created_at, id",
                (account_id, slug),
            )
            .fetchall()
        )
        return [_profile(r) for r in rows]

    def owned_profiles(
        self, account_id: str, owner_member_id: str, slugs: Collection[str]
    ) -> dict[str, MemoryProfile]:
        wanted = list(dict.fromkeys(slugs))
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = (
            self.db.connection()
            .execute(
                "SELECT * FROM memory_profiles WHERE account_id = ? AND owner_member_id = ?"
                f" AND slug IN ({marks})",
                (account_id, owner_member_id, *wanted),
            )
            .fetchall()
        )
        return {r["slug"]: _profile(r) for r in rows}

    def list_profiles(
        self, account_id: str, *, owner_member_id: str | None = None
    ) -> list[MemoryProfile]:
        sql = "SELECT * FROM memory_profiles WHERE account_id = ?"
        params: list[object] = [account_id]
        if owner_member_id is not None:
            sql += " AND owner_member_id = ?"
            params.append(owner_member_id)
        rows = self.db.connection().execute(sql + " ORDER BY slug, id", params).fetchall()
        return [_profile(r) for r in rows]

    def update_profile(
        self, account_id: str, memory_id: str, patch: ProfilePatch, *, now: float
    ) -> MemoryProfile:
        sets = ["updated_at = ?", "revision = revision + 1"]
        params: list[object] = [now]
        if patch.name is not None:
            sets.append("name = ?")
            params.append(patch.name)
        if patch.description is not None:
            sets.append("description = ?")
            params.append(patch.description)
        if patch.active is not None:
            sets.append("active = ?")
            params.append(int(patch.active))
        if patch.set_retention:
            sets.append("retention_days = ?")
            params.append(patch.retention_days)
        with self.db.transaction() as conn:
            cur = conn.execute(
                f"UPDATE memory_profiles SET {', '.join(sets)} WHERE account_id = ? AND id = ?",
                (*params, account_id, memory_id),
            )
            if cur.rowcount == 0:
                raise _not_found()
            row = conn.execute(
                "SELECT * FROM memory_profiles WHERE id = ?", (memory_id,)
            ).fetchone()
        return _profile(row)

    def delete_profile(self, account_id: str, memory_id: str) -> bool:
        with self.db.transaction() as conn:
            conn.execute(
                "DELETE FROM memory_items WHERE account_id = ? AND memory_id = ?",
                (account_id, memory_id),
            )
            cur = conn.execute(
                "DELETE FROM memory_profiles WHERE account_id = ? AND id = ?",
                (account_id, memory_id),
            )
        return cur.rowcount > 0

    def list_items(self, account_id: str, memory_id: str) -> list[ProfileItem]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT * FROM memory_items WHERE account_id = ? AND memory_id = ?"
                " ORDER BY created_at, id",
                (account_id, memory_id),
            )
            .fetchall()
        )
        return [_item(r) for r in rows]

    def count_items(
        self, account_id: str, profiles: Sequence[MemoryProfile], *, now: float
    ) -> dict[str, dict[str, int]]:
        counts = {p.id: count_current((), None, now) for p in profiles}
        if not counts:
            return counts
        marks = ",".join("?" * len(counts))
        # An item is current while created after now - retention (guardrails always):
        # domain.profiles.retention_cutoff, with the memory's retention joined in.
        rows = (
            self.db.connection()
            .execute(
                "SELECT i.memory_id, i.item_type, COUNT(*) AS n FROM memory_items i"
                " JOIN memory_profiles p ON p.id = i.memory_id"
                f" WHERE i.account_id = ? AND i.memory_id IN ({marks})"
                " AND (p.retention_days IS NULL OR i.item_type = ?"
                "      OR i.created_at > ? - p.retention_days * ?)"
                " GROUP BY i.memory_id, i.item_type",
                (account_id, *counts, ItemType.GUARDRAIL.value, now, DAY_SECONDS),
            )
            .fetchall()
        )
        for r in rows:
            counts[r["memory_id"]][r["item_type"]] = int(r["n"])
        return counts

    def get_item(self, account_id: str, memory_id: str, item_id: str) -> ProfileItem | None:
        row = (
            self.db.connection()
            .execute(
                "SELECT * FROM memory_items WHERE account_id = ? AND memory_id = ? AND id = ?",
                (account_id, memory_id, item_id),
            )
            .fetchone()
        )
        return _item(row) if row else None

    def _bump(self, conn: sqlite3.Connection, memory_id: str, now: float, delta: int) -> None:
        conn.execute(
            "UPDATE memory_profiles SET revision = revision + 1, updated_at = ?,"
            " item_count = item_count + ? WHERE id = ?",
            (now, delta, memory_id),
        )

    def _read(self, conn: sqlite3.Connection, memory_id: str) -> MemoryProfile:
        return _profile(
            conn.execute("SELECT * FROM memory_profiles WHERE id = ?", (memory_id,)).fetchone()
        )

    def add_item(
        self, account_id: str, item: ProfileItem, *, max_items: int, now: float
    ) -> MemoryProfile:
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT item_count FROM memory_profiles WHERE account_id = ? AND id = ?",
                (account_id, item.memory_id),
            ).fetchone()
            if row is None:
                raise _not_found()
            if row["item_count"] >= max_items:
                raise QuotaExceeded(
                    f"a memory holds at most {max_items:,} items; delete some first",
                    code="memory_item_limit",
                )
            conn.execute(
                "INSERT INTO memory_items (id, account_id, memory_id, item_type, key, text,"
                " vector, model, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    item.id,
                    account_id,
                    item.memory_id,
                    item.item_type.value,
                    item.key,
                    item.text,
                    item.vector,
                    item.model,
                    item.created_at,
                    item.updated_at,
                ),
            )
            self._bump(conn, item.memory_id, now, 1)
            return self._read(conn, item.memory_id)

    def update_item(self, account_id: str, item: ProfileItem, *, now: float) -> MemoryProfile:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE memory_items SET text = ?, key = ?, vector = ?, model = ?,"
                " updated_at = ? WHERE account_id = ? AND memory_id = ? AND id = ?",
                (
                    item.text,
                    item.key,
                    item.vector,
                    item.model,
                    item.updated_at,
                    account_id,
                    item.memory_id,
                    item.id,
                ),
            )
            if cur.rowcount == 0:
                raise NotFound("no such item in this memory", code="memory_item_not_found")
            self._bump(conn, item.memory_id, now, 0)
            return self._read(conn, item.memory_id)

    def delete_item(self, account_id: str, memory_id: str, item_id: str, *, now: float) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM memory_items WHERE account_id = ? AND memory_id = ? AND id = ?",
                (account_id, memory_id, item_id),
            )
            if cur.rowcount:
                self._bump(conn, memory_id, now, -1)
        return cur.rowcount > 0

    def profiles_with_retention(self, limit: int = 10_000) -> list[MemoryProfile]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT * FROM memory_profiles WHERE retention_days IS NOT NULL"
                " ORDER BY account_id, id LIMIT ?",
                (limit,),
            )
            .fetchall()
        )
        return [_profile(r) for r in rows]

    def delete_items_created_before(
        self, account_id: str, memory_id: str, cutoff: float, *, now: float
    ) -> int:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "DELETE FROM memory_items WHERE account_id = ? AND memory_id = ?"
                " AND item_type != ? AND created_at < ?",
                (account_id, memory_id, ItemType.GUARDRAIL.value, cutoff),
            )
            if cur.rowcount:
                self._bump(conn, memory_id, now, -cur.rowcount)
        return cur.rowcount
