"""Responses chain links on SQLite (ResponseChainStore): one row per organisation and
client-visible response id; expired rows and, past ``max_links``, the organisation's
oldest are deleted when a link is stored."""

from __future__ import annotations

import json

from memvault.adapters.sqlite.db import Database
from memvault.domain.response_chains import ChainLink, decode_owed, encode_owed

SCHEMA = """
CREATE TABLE IF NOT EXISTS response_chains (
    account_id TEXT NOT NULL,
    response_id TEXT NOT NULL,
    upstream_id TEXT NOT NULL,
    owed TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (account_id, response_id)
);
CREATE INDEX IF NOT EXISTS response_chains_age ON response_chains(account_id, created_at);
"""


class SqliteResponseChains:
    def __init__(self, db: Database, *, max_links: int) -> None:
        self.db = db
        self.max_links = max_links
        db.add_schema(SCHEMA)

    def get(self, account_id: str, response_id: str, *, now: float) -> ChainLink | None:
        row = (
            self.db.connection()
            .execute(
                "SELECT upstream_id, owed, created_at FROM response_chains"
                " WHERE account_id = ? AND response_id = ? AND expires_at > ?",
                (account_id, response_id, now),
            )
            .fetchone()
        )
        if row is None:
            return None
        return ChainLink(
            row["upstream_id"], decode_owed(json.loads(row["owed"])), row["created_at"]
        )

    def put(self, account_id: str, response_id: str, link: ChainLink, *, expires_at: float) -> None:
        if self.max_links <= 0:
            return
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO response_chains (account_id, response_id, upstream_id,"
                " owed, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    account_id,
                    response_id,
                    link.upstream_id,
                    json.dumps(encode_owed(link.owed)),
                    link.created_at,
                    expires_at,
                ),
            )
            conn.execute(
                "DELETE FROM response_chains WHERE account_id = ? AND expires_at <= ?",
                (account_id, link.created_at),
            )
            count = conn.execute(
                "SELECT COUNT(*) FROM response_chains WHERE account_id = ?", (account_id,)
            ).fetchone()[0]
            if count > self.max_links:
                conn.execute(
                    "DELETE FROM response_chains WHERE rowid IN (SELECT rowid FROM"
                    " response_chains WHERE account_id = ? AND response_id != ?"
                    " ORDER BY created_at, response_id LIMIT ?)",
                    (account_id, response_id, count - self.max_links),
                )

    def clear(self, account_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute(
                "DELETE FROM response_chains WHERE account_id = ?", (account_id,)
            ).rowcount
