"""Accounts and their API keys on SQLite (AccountStore, KeyStore)."""

from __future__ import annotations

import sqlite3

from memvault.adapters.sqlite.base import SqliteParts
from memvault.domain.models import Account, ApiKey, KeySettings, Limits, SearchDefaults, Toggles
from memvault.errors import NotFound

_DEFAULT_LIMITS = Limits()


def _limits(row: sqlite3.Row) -> Limits:
    return Limits(
        max_notes=row["max_notes"],
        max_bytes=row["max_bytes"],
        max_files=row["max_files"] or _DEFAULT_LIMITS.max_files,
        max_file_bytes=row["max_file_bytes"] or _DEFAULT_LIMITS.max_file_bytes,
    )


def account_from(row: sqlite3.Row) -> Account:
    return Account(
        id=row["id"],
        name=row["name"],
        created_at=row["created_at"],
        limits=_limits(row),
        note_count=row["note_count"],
        total_bytes=row["total_bytes"],
        revision=row["revision"],
        search=SearchDefaults(mode=row["search_mode"], min_score=row["min_score"]),
    )


def _key(row: sqlite3.Row) -> ApiKey:
    return ApiKey(
        id=row["id"],
        account_id=row["account_id"],
        name=row["name"],
        prefix=row["prefix"],
        toggles=Toggles(recall=bool(row["recall"]), tools=bool(row["tools"]), mcp=bool(row["mcp"])),
        admin=bool(row["admin"]),
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
        recall_notes=row["recall_notes"],
        recall_tokens=row["recall_tokens"],
        spend_cap_micros=row["spend_cap_micros"],
        memory_tokens=row["memory_tokens"],
        recall_mode=row["recall_mode"],
        cache_ttl_seconds=row["cache_ttl_seconds"],
        member_id=row["member_id"],
        vault=bool(row["vault"]),
        owner_active=bool(row["owner_active"]),
    )


# A key with its owner's state: active unless the owner is disabled or gone (a key of no
# member yet, stored before members existed, stays usable until the upgrade gives it one).
_KEYS = (
    "SELECT k.*, (k.member_id IS NULL OR (m.id IS NOT NULL AND m.disabled_at IS NULL))"
    " AS owner_active FROM api_keys k LEFT JOIN members m"
    " ON m.account_id = k.account_id AND m.id = k.member_id"
)


class SqliteAccountStore(SqliteParts):
    def create_account(self, account: Account) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO accounts (id, name, created_at, max_notes, max_bytes, max_files,"
                " max_file_bytes) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    account.id,
                    account.name,
                    account.created_at,
                    account.limits.max_notes,
                    account.limits.max_bytes,
                    account.limits.max_files,
                    account.limits.max_file_bytes,
                ),
            )

    def get_account(self, account_id: str) -> Account | None:
        row = (
            self.db.connection()
            .execute("SELECT * FROM accounts WHERE id = ?", (account_id,))
            .fetchone()
        )
        return account_from(row) if row else None

    def set_limits(self, account_id: str, limits: Limits) -> Account:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE accounts SET max_notes = ?, max_bytes = ?, max_files = ?,"
                " max_file_bytes = ? WHERE id = ?",
                (
                    limits.max_notes,
                    limits.max_bytes,
                    limits.max_files,
                    limits.max_file_bytes,
                    account_id,
                ),
            )
            if cur.rowcount == 0:
                raise NotFound(f"no account {account_id!r}", code="account_not_found")
        account = self.get_account(account_id)
        assert account is not None
        return account


class SqliteKeyStore(SqliteParts):
    def put_key(self, key: ApiKey, key_hash: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO api_keys (id, account_id, name, prefix, key_hash, recall, tools, mcp,"
                " admin, created_at, revoked_at, recall_notes, recall_tokens, spend_cap_micros,"
                " member_id, vault, memory_tokens, recall_mode, cache_ttl_seconds)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key.id,
                    key.account_id,
                    key.name,
                    key.prefix,
                    key_hash,
                    int(key.toggles.recall),
                    int(key.toggles.tools),
                    int(key.toggles.mcp),
                    int(key.admin),
                    key.created_at,
                    key.revoked_at,
                    key.recall_notes,
                    key.recall_tokens,
                    key.spend_cap_micros,
                    key.member_id,
                    int(key.vault),
                    key.memory_tokens,
                    key.recall_mode,
                    key.cache_ttl_seconds,
                ),
            )

    def key_by_hash(self, key_hash: str) -> ApiKey | None:
        row = self.db.connection().execute(f"{_KEYS} WHERE k.key_hash = ?", (key_hash,)).fetchone()
        return _key(row) if row else None

    def get_key(self, account_id: str, key_id: str) -> ApiKey | None:
        row = (
            self.db.connection()
            .execute(f"{_KEYS} WHERE k.account_id = ? AND k.id = ?", (account_id, key_id))
            .fetchone()
        )
        return _key(row) if row else None

    def list_keys(self, account_id: str) -> list[ApiKey]:
        rows = (
            self.db.connection()
            .execute(f"{_KEYS} WHERE k.account_id = ? ORDER BY k.created_at, k.id", (account_id,))
            .fetchall()
        )
        return [_key(r) for r in rows]

    def update_key(
        self,
        account_id: str,
        key_id: str,
        *,
        toggles: Toggles | None,
        revoked_at: float | None,
        settings: KeySettings | None = None,
    ) -> ApiKey:
        with self.db.transaction() as conn:
            if settings is not None:
                conn.execute(
                    "UPDATE api_keys SET recall_notes = ?, recall_tokens = ?, spend_cap_micros = ?,"
                    " memory_tokens = ?, recall_mode = ?, cache_ttl_seconds = ?"
                    " WHERE account_id = ? AND id = ?",
                    (
                        settings.recall_notes,
                        settings.recall_tokens,
                        settings.spend_cap_micros,
                        settings.memory_tokens,
                        settings.recall_mode,
                        settings.cache_ttl_seconds,
                        account_id,
                        key_id,
                    ),
                )
            if toggles is not None:
                conn.execute(
                    "UPDATE api_keys SET recall = ?, tools = ?, mcp = ?"
                    " WHERE account_id = ? AND id = ?",
                    (int(toggles.recall), int(toggles.tools), int(toggles.mcp), account_id, key_id),
                )
            if revoked_at is not None:
                conn.execute(
                    "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?)"
                    " WHERE account_id = ? AND id = ?",
                    (revoked_at, account_id, key_id),
                )
        key = self.get_key(account_id, key_id)
        if key is None:
            raise NotFound(f"no key {key_id!r} in this account", code="key_not_found")
        return key
