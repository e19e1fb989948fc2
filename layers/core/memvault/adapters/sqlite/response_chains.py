"""Responses chain links on SQLite (ResponseChainStore): one row per organisation and
client-visible response id. The bound is a ring, as on DynamoDB: each link takes the
organisation's next sequence number and the slot ``seq % max_links``, whose older link
it replaces, so a put costs the same at any size (a COUNT and a scan for the oldest cost
about a millisecond at 10,000 links). A bound lowered between runs leaves the links in
slots past it until they expire."""

from __future__ import annotations

import json

from memvault.adapters.sqlite.db import Database
from memvault.domain.response_chains import ChainLink, decode_owed, encode_owed

SCHEMA = """
CREATE TABLE IF NOT EXISTS response_chain_links (
    account_id TEXT NOT NULL,
    response_id TEXT NOT NULL,
    upstream_id TEXT NOT NULL,
    owed TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    seq INTEGER NOT NULL,
    slot INTEGER NOT NULL,
    PRIMARY KEY (account_id, response_id)
);
CREATE INDEX IF NOT EXISTS response_chain_links_seq ON response_chain_links(account_id, seq);
CREATE INDEX IF NOT EXISTS response_chain_links_slot ON response_chain_links(account_id, slot);
CREATE INDEX IF NOT EXISTS response_chain_links_expiry
    ON response_chain_links(account_id, expires_at);
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
                "SELECT upstream_id, owed, created_at FROM response_chain_links"
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
        """One transaction, every step an index lookup: the organisation's next sequence
        number, its ring slot (``seq % max_links``) emptied, the link stored there, expired
        links deleted."""
        if self.max_links <= 0:
            return
        with self.db.transaction() as conn:
            seq = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM response_chain_links WHERE account_id = ?",
                (account_id,),
            ).fetchone()[0]
            slot = seq % self.max_links
            conn.execute(
                "DELETE FROM response_chain_links WHERE account_id = ? AND slot = ?",
                (account_id, slot),
            )
            conn.execute(
                "INSERT OR REPLACE INTO response_chain_links (account_id, response_id,"
                " upstream_id, owed, created_at, expires_at, seq, slot)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    account_id,
                    response_id,
                    link.upstream_id,
                    json.dumps(encode_owed(link.owed)),
                    link.created_at,
                    expires_at,
                    seq,
                    slot,
                ),
            )
            conn.execute(
                "DELETE FROM response_chain_links WHERE account_id = ? AND expires_at <= ?",
                (account_id, link.created_at),
            )

    def clear(self, account_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute(
                "DELETE FROM response_chain_links WHERE account_id = ?", (account_id,)
            ).rowcount
