"""Live notes read from SQLite: NoteStore's reads.

Notes are looked up by path key (``notes.path_key``), so a path finds its note under any
case and the note comes back under its stored spelling.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator

from memvault.adapters import cursors
from memvault.adapters.sqlite.base import SqliteParts
from memvault.adapters.sqlite.rows import NOTE_COLUMNS, chunks, note_from_row, select_note, summary
from memvault.domain import paths
from memvault.domain.models import Note, NoteSummary
from memvault.domain.tags import tag_key
from memvault.ports import NoteKey, Page


class SqliteNoteReads(SqliteParts):
    def get_note(self, account_id: str, path: str, *, include_deleted: bool = False) -> Note | None:
        conn = self.db.connection()
        key = paths.path_key(path)
        note = select_note(
            conn, "n.account_id = ? AND n.path_key = ? AND n.deleted_at IS NULL", (account_id, key)
        )
        if note is None and include_deleted:
            note = select_note(
                conn,
                "n.account_id = ? AND n.path_key = ? AND n.deleted_at IS NOT NULL"
                " ORDER BY n.deleted_at DESC LIMIT 1",
                (account_id, key),
            )
        return note

    def get_notes(self, account_id: str, note_paths: Collection[str]) -> dict[str, Note]:
        found: dict[str, Note] = {}
        conn = self.db.connection()
        for chunk in chunks(list(dict.fromkeys(paths.path_key(p) for p in note_paths))):
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT {NOTE_COLUMNS}, v.markdown FROM notes n"
                " JOIN versions v ON v.note_id = n.id AND v.version = n.version"
                f" WHERE n.account_id = ? AND n.deleted_at IS NULL AND n.path_key IN ({marks})",
                [account_id, *chunk],
            ).fetchall()
            found.update((row["path"], note_from_row(row)) for row in rows)
        return found

    def live_paths(self, account_id: str, path_keys: Collection[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for chunk in chunks(list(dict.fromkeys(path_keys))):
            marks = ",".join("?" * len(chunk))
            rows = (
                self.db.connection()
                .execute(
                    "SELECT path_key, path FROM notes WHERE account_id = ? AND deleted_at IS NULL"
                    f" AND path_key IN ({marks})",
                    [account_id, *chunk],
                )
                .fetchall()
            )
            found.update({r["path_key"]: r["path"] for r in rows})
        return found

    def get_summaries(self, account_id: str, note_paths: Collection[str]) -> list[NoteSummary]:
        out: list[NoteSummary] = []
        for chunk in chunks(list(dict.fromkeys(paths.path_key(p) for p in note_paths))):
            marks = ",".join("?" * len(chunk))
            rows = (
                self.db.connection()
                .execute(
                    f"SELECT {NOTE_COLUMNS} FROM notes n WHERE n.account_id = ? AND"
                    f" n.deleted_at IS NULL AND n.path_key IN ({marks})",
                    [account_id, *chunk],
                )
                .fetchall()
            )
            out += [summary(r) for r in rows]
        return sorted(out, key=lambda n: paths.path_key(n.path))

    def list_notes(
        self, account_id: str, *, folder: str, tag: str | None, cursor: str | None, limit: int
    ) -> Page:
        clauses = ["n.account_id = ?", "n.deleted_at IS NULL"]
        params: list[object] = [account_id]
        if folder:
            # Prefix test without LIKE, so '%' and '_' in folder names stay literal.
            clauses.append("substr(n.path, 1, ?) = ?")
            params += [len(folder), folder]
        if tag:
            key = tag_key(tag)
            clauses.append(
                "EXISTS (SELECT 1 FROM note_tags t WHERE t.note_id = n.id AND"
                " (t.tag_key = ? OR substr(t.tag_key, 1, ?) = ?))"
            )
            params += [key, len(key) + 1, key + "/"]
        if cursor:
            clauses.append("n.path_key > ?")
            params.append(cursors.decode(cursor))
        params.append(limit + 1)
        rows = (
            self.db.connection()
            .execute(
                f"SELECT {NOTE_COLUMNS} FROM notes n WHERE {' AND '.join(clauses)}"
                " ORDER BY n.path_key LIMIT ?",
                params,
            )
            .fetchall()
        )
        items = [summary(r) for r in rows[:limit]]
        last = paths.path_key(items[-1].path) if items else ""
        next_cursor = cursors.encode(last) if len(rows) > limit and items else None
        return Page(items=items, next_cursor=next_cursor)

    def recent_notes(self, account_id: str, *, limit: int) -> list[NoteSummary]:
        rows = (
            self.db.connection()
            .execute(
                f"SELECT {NOTE_COLUMNS} FROM notes n WHERE n.account_id = ? AND"
                " n.deleted_at IS NULL ORDER BY n.updated_at DESC, n.path_key DESC LIMIT ?",
                (account_id, limit),
            )
            .fetchall()
        )
        return [summary(r) for r in rows]

    def tag_counts(self, account_id: str) -> dict[str, int]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT MIN(t.tag) AS tag, COUNT(*) AS n FROM note_tags t JOIN notes n"
                " ON n.id = t.note_id WHERE t.account_id = ? AND n.deleted_at IS NULL"
                " GROUP BY t.tag_key ORDER BY t.tag_key",
                (account_id,),
            )
            .fetchall()
        )
        return {r["tag"]: r["n"] for r in rows}

    def iter_notes(self, account_id: str) -> Iterator[Note]:
        # A dedicated connection: the caller may write (or stream) while we iterate.
        conn = sqlite3.connect(self.db.path, timeout=30.0)
        conn.row_factory = sqlite3.Row
        try:
            cursor = conn.execute(
                f"SELECT {NOTE_COLUMNS}, v.markdown FROM notes n JOIN versions v"
                " ON v.note_id = n.id AND v.version = n.version"
                " WHERE n.account_id = ? AND n.deleted_at IS NULL ORDER BY n.path_key",
                (account_id,),
            )
            for row in cursor:
                yield note_from_row(row)
        finally:
            conn.close()

    def note_keys(self, account_id: str) -> dict[str, NoteKey]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT path_key, path, version, sha256, size FROM notes WHERE account_id = ?"
                " AND deleted_at IS NULL",
                (account_id,),
            )
            .fetchall()
        )
        return {
            r["path_key"]: NoteKey(r["path"], r["version"], r["sha256"], r["size"]) for r in rows
        }
