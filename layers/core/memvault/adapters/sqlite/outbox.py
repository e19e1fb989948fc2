"""The search outbox on SQLite: notes whose indexing failed, to retry (SearchOutbox)."""

from __future__ import annotations

from collections.abc import Collection

from memvault.adapters.sqlite.base import SqliteParts

# queued_at is SQLite's julianday('now'); this is the Julian day of 1970-01-01T00:00Z.
_UNIX_EPOCH_JULIAN_DAY = 2_440_587.5


class SqliteSearchOutbox(SqliteParts):
    def queue_reindex(self, account_id: str, note_paths: Collection[str]) -> None:
        with self.db.transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO index_queue (account_id, path, queued_at)"
                " VALUES (?, ?, julianday('now'))",
                [(account_id, p) for p in note_paths],
            )

    def queued_reindex(self, account_id: str, limit: int = 1000) -> list[str]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT path FROM index_queue WHERE account_id = ? ORDER BY queued_at, path"
                " LIMIT ?",
                (account_id, limit),
            )
            .fetchall()
        )
        return [r["path"] for r in rows]

    def is_queued_reindex(self, account_id: str, path: str) -> bool:
        row = (
            self.db.connection()
            .execute(
                "SELECT 1 FROM index_queue WHERE account_id = ? AND path = ?", (account_id, path)
            )
            .fetchone()
        )
        return row is not None

    def unqueue_reindex(self, account_id: str, note_paths: Collection[str]) -> None:
        with self.db.transaction() as conn:
            conn.executemany(
                "DELETE FROM index_queue WHERE account_id = ? AND path = ?",
                [(account_id, p) for p in note_paths],
            )

    def accounts_with_queued_reindex(self) -> list[str]:
        rows = (
            self.db.connection()
            .execute("SELECT DISTINCT account_id FROM index_queue ORDER BY account_id")
            .fetchall()
        )
        return [r["account_id"] for r in rows]

    def oldest_queued_at(self) -> float | None:
        row = (
            self.db.connection()
            .execute("SELECT MIN(queued_at) AS oldest FROM index_queue")
            .fetchone()
        )
        if row is None or row["oldest"] is None:
            return None
        return (float(row["oldest"]) - _UNIX_EPOCH_JULIAN_DAY) * 86_400.0
