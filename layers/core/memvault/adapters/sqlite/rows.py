"""Note rows read back as domain values, shared by the SQLite store's parts."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from memvault.domain.models import Note, NoteSummary

NOTE_COLUMNS = (
    "n.id, n.path, n.title, n.tags, n.version, n.size, n.sha256, n.created_at, n.updated_at,"
    " n.deleted_at"
)


def summary(row: sqlite3.Row) -> NoteSummary:
    return NoteSummary(
        id=row["id"],
        path=row["path"],
        title=row["title"],
        tags=tuple(json.loads(row["tags"])),
        version=row["version"],
        size=row["size"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def note_from_row(row: sqlite3.Row) -> Note:
    return Note(
        id=row["id"],
        path=row["path"],
        title=row["title"],
        tags=tuple(json.loads(row["tags"])),
        version=row["version"],
        size=row["size"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        markdown=row["markdown"],
        sha256=row["sha256"],
        deleted_at=row["deleted_at"],
    )


def select_note(conn: sqlite3.Connection, where: str, params: Sequence[object]) -> Note | None:
    row = conn.execute(
        f"SELECT {NOTE_COLUMNS}, v.markdown FROM notes n"
        " JOIN versions v ON v.note_id = n.id AND v.version = n.version"
        f" WHERE {where}",
        params,
    ).fetchone()
    return note_from_row(row) if row else None


def chunks(items: list[str], size: int = 500) -> list[list[str]]:
    return [items[start : start + size] for start in range(0, len(items), size)]
