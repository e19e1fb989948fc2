"""Bulk puts on SQLite.

A commit of many puts (an import) applies them with one statement per table, not
~15 per note. It reads what the per-note path reads, decides every change in order
before writing anything (so it raises the error the first failing change would), and
leaves the same rows and returns the same notes as applying the puts one by one.
"""

from __future__ import annotations

import sqlite3

from memvault.adapters.sqlite.rows import chunks, select_note
from memvault.adapters.sqlite.writes import LIVE_COLUMNS, NoteRows, latest_deleted, live_note
from memvault.domain import paths, write_plan
from memvault.domain.models import LinkRef, Note, NoteChange, PutNote
from memvault.ports import PriorState

BULK_MIN_CHANGES = 2


def distinct_puts(changes: list[NoteChange]) -> list[PutNote] | None:
    """The changes, when they are enough puts to distinct notes to apply in bulk."""
    if len(changes) < BULK_MIN_CHANGES:
        return None
    puts = [c for c in changes if isinstance(c, PutNote)]
    if len(puts) != len(changes):
        return None
    # Two puts to one note depend on each other's outcome: those go one by one.
    if len({paths.path_key(p.path) for p in puts}) != len(puts):
        return None
    return puts


class BulkPut:
    def __init__(self, conn: sqlite3.Connection, account_id: str, now: float) -> None:
        self.conn = conn
        self.account_id = account_id
        self.now = now

    def apply(
        self, puts: list[PutNote]
    ) -> tuple[list[Note | None], list[PriorState | None], write_plan.Cost]:
        conn, account_id, now = self.conn, self.account_id, self.now
        live = self._live([paths.path_key(p.path) for p in puts])
        prior_links = self._links_of([note.id for note in live.values()])
        revivable = self._has_deleted()
        rows = NoteRows(account_id, now)
        results: list[Note | None] = []
        previous: list[PriorState | None] = []
        cost = write_plan.FREE
        for put in puts:
            note = live.get(paths.path_key(put.path))
            deleted = latest_deleted(conn, account_id, put.path) if revivable and not note else None
            decision = write_plan.plan_put(put, note, deleted, now=now)
            previous.append(
                None if note is None else PriorState(note.path, note.version, prior_links[note.id])
            )
            cost += decision.cost
            if decision.writes:
                rows.add(put, decision)
                results.append(decision.note(put, now=now))
            else:
                results.append(select_note(conn, "n.id = ?", (decision.note_id,)))
        rows.write(conn)
        return results, previous, cost

    def _live(self, path_keys: list[str]) -> dict[str, write_plan.LiveNote]:
        found: dict[str, write_plan.LiveNote] = {}
        for chunk in chunks(path_keys):
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                f"SELECT {LIVE_COLUMNS}, path_key FROM notes"
                f" WHERE account_id = ? AND path_key IN ({marks}) AND deleted_at IS NULL",
                [self.account_id, *chunk],
            ).fetchall()
            found.update((r["path_key"], live_note(r)) for r in rows)
        return found

    def _links_of(self, note_ids: list[str]) -> dict[str, tuple[LinkRef, ...]]:
        found: dict[str, list[LinkRef]] = {note_id: [] for note_id in note_ids}
        for chunk in chunks(note_ids):
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                "SELECT note_id, target_key, has_folder FROM links"
                f" WHERE note_id IN ({marks}) ORDER BY note_id, target_key",
                chunk,
            ).fetchall()
            for r in rows:
                found[r["note_id"]].append(LinkRef(r["target_key"], bool(r["has_folder"])))
        return {note_id: tuple(refs) for note_id, refs in found.items()}

    def _has_deleted(self) -> bool:
        row = self.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM notes WHERE account_id = ? AND deleted_at IS NOT NULL)",
            (self.account_id,),
        ).fetchone()
        return bool(row[0])
