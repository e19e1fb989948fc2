"""A note's kept versions on SQLite (VersionStore), and forgetting notes with them."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from memvault.adapters.sqlite.base import SqliteParts
from memvault.domain import paths
from memvault.domain.models import NoteVersion, VersionInfo


def forget_notes(conn: sqlite3.Connection, note_ids: Sequence[str]) -> None:
    """Delete note rows with their versions, tags and links."""
    for note_id in note_ids:
        for table in ("versions", "note_tags", "links"):
            conn.execute(f"DELETE FROM {table} WHERE note_id = ?", (note_id,))
        conn.execute("DELETE FROM notes WHERE id = ?", (note_id,))


class SqliteVersionStore(SqliteParts):
    def _history_owner(self, account_id: str, path: str) -> str | None:
        """The note whose history ``path`` names (by path key, so under any case): the
        live one, else the last deleted."""
        row = (
            self.db.connection()
            .execute(
                "SELECT id FROM notes WHERE account_id = ? AND path_key = ?"
                " ORDER BY deleted_at IS NOT NULL, deleted_at DESC LIMIT 1",
                (account_id, paths.path_key(path)),
            )
            .fetchone()
        )
        return row["id"] if row else None

    def list_versions(self, account_id: str, path: str) -> list[VersionInfo]:
        note_id = self._history_owner(account_id, path)
        if note_id is None:
            return []
        rows = (
            self.db.connection()
            .execute(
                "SELECT version, path, size, sha256, created_at FROM versions"
                " WHERE account_id = ? AND note_id = ? ORDER BY version DESC",
                (account_id, note_id),
            )
            .fetchall()
        )
        return [VersionInfo(**dict(r)) for r in rows]

    def get_version(self, account_id: str, path: str, version: int) -> NoteVersion | None:
        note_id = self._history_owner(account_id, path)
        if note_id is None:
            return None
        row = (
            self.db.connection()
            .execute(
                "SELECT version, path, size, sha256, created_at, markdown FROM versions"
                " WHERE account_id = ? AND note_id = ? AND version = ?",
                (account_id, note_id, version),
            )
            .fetchone()
        )
        if row is None:
            return None
        info = VersionInfo(
            version=row["version"],
            path=row["path"],
            size=row["size"],
            sha256=row["sha256"],
            created_at=row["created_at"],
        )
        return NoteVersion(info=info, markdown=row["markdown"])

    def purge_note(self, account_id: str, path: str) -> bool:
        with self.db.transaction() as conn:
            ids = [
                r["id"]
                for r in conn.execute(
                    "SELECT id FROM notes WHERE account_id = ? AND path_key = ?"
                    " AND deleted_at IS NOT NULL",
                    (account_id, paths.path_key(path)),
                ).fetchall()
            ]
            forget_notes(conn, ids)
        return bool(ids)
