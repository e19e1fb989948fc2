"""What both SQLite write paths share: the state a put is decided on, read as
``domain.write_plan`` values, and the rows its decision writes (``NoteRows``)."""

from __future__ import annotations

import json
import sqlite3

from memvault.domain import paths, write_plan
from memvault.domain.models import PutNote
from memvault.domain.tags import distinct_tags

# The columns a write reads of a live note: write_plan.LiveNote's fields, in its order.
LIVE_COLUMNS = "id, path, version, size, sha256, created_at"


def live_note(row: sqlite3.Row) -> write_plan.LiveNote:
    """The live note in a row selected with LIVE_COLUMNS first."""
    return write_plan.LiveNote(*tuple(row)[:6])


def latest_deleted(
    conn: sqlite3.Connection, account_id: str, path: str
) -> write_plan.DeletedNote | None:
    """The note deleted last under ``path``'s key, whatever its spelling."""
    row = conn.execute(
        "SELECT id, version, created_at FROM notes WHERE account_id = ? AND path_key = ?"
        " AND deleted_at IS NOT NULL ORDER BY deleted_at DESC LIMIT 1",
        (account_id, paths.path_key(path)),
    ).fetchone()
    return write_plan.DeletedNote(row["id"], row["version"], row["created_at"]) if row else None


class NoteRows:
    """The rows planned puts write (a note row, a version, its tags and links), with one
    statement per table however many puts there are."""

    def __init__(self, account_id: str, now: float) -> None:
        self.account_id = account_id
        self.now = now
        self.inserts: list[tuple[object, ...]] = []
        self.updates: list[tuple[object, ...]] = []
        self.rewritten: list[str] = []  # existing note rows whose tags and links are replaced
        self.written: list[tuple[PutNote, write_plan.PutDecision]] = []

    def add(self, put: PutNote, decision: write_plan.PutDecision) -> None:
        note_id, now = decision.note_id, self.now
        updated_at = write_plan.content_time(put, now)
        tags_json = json.dumps(put.tags)
        if decision.kind is write_plan.PutKind.CREATE:
            self.inserts.append(
                (
                    note_id,
                    self.account_id,
                    put.path,
                    paths.path_key(put.path),
                    paths.link_key(put.path),
                    paths.name_key(put.path),
                    put.title,
                    tags_json,
                    decision.version,
                    put.size,
                    put.sha256,
                    decision.created_at,
                    updated_at,
                )
            )
        else:  # a new version of the live note, or of the deleted one it revives
            self.updates.append(
                (
                    # A revive takes the put's spelling of the path (a replace has it).
                    put.path,
                    paths.link_key(put.path),
                    paths.name_key(put.path),
                    put.title,
                    tags_json,
                    decision.version,
                    put.size,
                    put.sha256,
                    updated_at,
                    note_id,
                )
            )
            self.rewritten.append(note_id)
        self.written.append((put, decision))

    def write(self, conn: sqlite3.Connection) -> None:
        account_id, now = self.account_id, self.now
        conn.executemany(
            "INSERT INTO notes (id, account_id, path, path_key, link_key, name_key, title, tags,"
            " version, size, sha256, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.inserts,
        )
        conn.executemany(
            "UPDATE notes SET path = ?, link_key = ?, name_key = ?, title = ?, tags = ?,"
            " version = ?, size = ?, sha256 = ?, updated_at = ?, deleted_at = NULL WHERE id = ?",
            self.updates,
        )
        conn.executemany(
            "INSERT INTO versions (note_id, version, account_id, path, size, sha256, markdown,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    d.note_id,
                    d.version,
                    account_id,
                    put.path,
                    put.size,
                    put.sha256,
                    put.markdown,
                    now,
                )
                for put, d in self.written
            ],
        )
        conn.executemany(
            "DELETE FROM versions WHERE note_id = ? AND version <= ?",
            [(d.note_id, d.trim_version) for _, d in self.written if d.trim_version is not None],
        )
        conn.executemany("DELETE FROM note_tags WHERE note_id = ?", [(i,) for i in self.rewritten])
        conn.executemany("DELETE FROM links WHERE note_id = ?", [(i,) for i in self.rewritten])
        conn.executemany(
            "INSERT INTO note_tags (note_id, account_id, tag_key, tag) VALUES (?, ?, ?, ?)",
            [
                (d.note_id, account_id, key, tag)
                for put, d in self.written
                for key, tag in distinct_tags(put.tags).items()
            ],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO links (note_id, account_id, target_key, has_folder)"
            " VALUES (?, ?, ?, ?)",
            [
                (d.note_id, account_id, link.target_key, int(link.has_folder))
                for put, d in self.written
                for link in put.links
            ],
        )
