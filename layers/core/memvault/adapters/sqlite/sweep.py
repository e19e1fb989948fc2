"""The retention sweep's storage side on SQLite (RetentionSweep)."""

from __future__ import annotations

from memvault.adapters.sqlite.base import SqliteParts
from memvault.adapters.sqlite.versions import forget_notes


class SqliteRetentionSweep(SqliteParts):
    def purge_deleted_before(self, cutoff: float, limit: int = 500) -> int:
        with self.db.transaction() as conn:
            # A partial index holds only deleted rows, so the nightly sweep reads what is
            # due and never the live notes (created here: the sweep is its only reader).
            conn.execute(
                "CREATE INDEX IF NOT EXISTS notes_by_deleted ON notes(deleted_at)"
                " WHERE deleted_at IS NOT NULL"
            )
            ids = [
                r["id"]
                for r in conn.execute(
                    "SELECT id FROM notes WHERE deleted_at IS NOT NULL AND deleted_at < ?"
                    " ORDER BY deleted_at LIMIT ?",
                    (cutoff, limit),
                ).fetchall()
            ]
            forget_notes(conn, ids)
        return len(ids)
