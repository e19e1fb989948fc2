"""The gateway's response cache on SQLite (ResponseCache): one row per organisation and
request digest, evicted oldest first past the organisation's byte bound."""

from __future__ import annotations

from memvault.adapters.sqlite.db import Database
from memvault.domain.response_cache import CachedAnswer

SCHEMA = """
CREATE TABLE IF NOT EXISTS response_cache (
    account_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    status INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    model TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cost_micros INTEGER NOT NULL,
    size INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (account_id, digest)
);
CREATE INDEX IF NOT EXISTS response_cache_age ON response_cache(account_id, created_at);
"""

_COLUMNS = "created_at, status, content_type, model, input_tokens, output_tokens, cost_micros, body"


class SqliteResponseCache:
    def __init__(self, db: Database, *, max_bytes: int) -> None:
        self.db = db
        self.max_bytes = max_bytes
        db.add_schema(SCHEMA)

    def get(self, account_id: str, digest: str, *, now: float) -> CachedAnswer | None:
        row = (
            self.db.connection()
            .execute(
                f"SELECT {_COLUMNS} FROM response_cache"
                " WHERE account_id = ? AND digest = ? AND expires_at > ?",
                (account_id, digest, now),
            )
            .fetchone()
        )
        if row is None:
            return None
        return CachedAnswer(
            status=row["status"],
            content_type=row["content_type"],
            body=bytes(row["body"]),
            model=row["model"],
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
            cost_micros=row["cost_micros"],
            created_at=row["created_at"],
        )

    def put(self, account_id: str, digest: str, answer: CachedAnswer, *, expires_at: float) -> None:
        if answer.size > self.max_bytes:
            return
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO response_cache (account_id, digest, expires_at, size,"
                f" {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    account_id,
                    digest,
                    expires_at,
                    answer.size,
                    answer.created_at,
                    answer.status,
                    answer.content_type,
                    answer.model,
                    answer.input_tokens,
                    answer.output_tokens,
                    answer.cost_micros,
                    answer.body,
                ),
            )
            # Expired entries go first, then the oldest until the organisation fits.
            conn.execute(
                "DELETE FROM response_cache WHERE account_id = ? AND expires_at <= ?",
                (account_id, answer.created_at),
            )
            total = conn.execute(
                "SELECT COALESCE(SUM(size), 0) FROM response_cache WHERE account_id = ?",
                (account_id,),
            ).fetchone()[0]
            if total <= self.max_bytes:
                return
            rows = conn.execute(
                "SELECT digest, size FROM response_cache WHERE account_id = ?"
                " ORDER BY created_at, digest",
                (account_id,),
            ).fetchall()
            evict: list[tuple[str, str]] = []
            for row in rows:
                if total <= self.max_bytes:
                    break
                if row["digest"] == digest:
                    continue  # the answer just stored stays
                evict.append((account_id, row["digest"]))
                total -= row["size"]
            conn.executemany(
                "DELETE FROM response_cache WHERE account_id = ? AND digest = ?", evict
            )

    def clear(self, account_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute(
                "DELETE FROM response_cache WHERE account_id = ?", (account_id,)
            ).rowcount
