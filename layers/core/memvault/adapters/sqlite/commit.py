"""NoteStore.commit on SQLite: one transaction, each change decided by domain.write_plan.

A batch of puts to distinct notes (an import) goes through ``bulk``; any other batch is
applied change by change, each seeing the ones before it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from memvault.adapters.sqlite.base import SqliteParts
from memvault.adapters.sqlite.bulk import BulkPut, distinct_puts
from memvault.adapters.sqlite.rows import select_note
from memvault.adapters.sqlite.writes import LIVE_COLUMNS, NoteRows, latest_deleted, live_note
from memvault.domain import paths, write_plan
from memvault.domain.models import Limits, LinkRef, MoveNote, Note, NoteChange, PutNote
from memvault.errors import NotFound
from memvault.ports import CommitResult, PriorState


def _live_at(conn: sqlite3.Connection, account_id: str, path: str) -> write_plan.LiveNote | None:
    """The live note at ``path``'s key (which may spell the path differently)."""
    row = conn.execute(
        f"SELECT {LIVE_COLUMNS} FROM notes WHERE account_id = ? AND path_key = ?"
        " AND deleted_at IS NULL",
        (account_id, paths.path_key(path)),
    ).fetchone()
    return live_note(row) if row else None


def _prior(conn: sqlite3.Connection, live: write_plan.LiveNote | None) -> PriorState | None:
    if live is None:
        return None
    rows = conn.execute(
        "SELECT target_key, has_folder FROM links WHERE note_id = ? ORDER BY target_key",
        (live.id,),
    ).fetchall()
    return PriorState(
        path=live.path,
        version=live.version,
        links=tuple(LinkRef(r["target_key"], bool(r["has_folder"])) for r in rows),
    )


class SqliteNoteCommit(SqliteParts):
    def commit(self, account_id: str, changes: Sequence[NoteChange], *, now: float) -> CommitResult:
        with self.db.transaction() as conn:
            before = conn.execute(
                "SELECT note_count, total_bytes, max_notes, max_bytes FROM accounts WHERE id = ?",
                (account_id,),
            ).fetchone()
            if before is None:
                raise NotFound(f"no account {account_id!r}", code="account_not_found")
            batch = list(changes)
            puts = distinct_puts(batch)
            if puts is not None:
                results, previous, cost = BulkPut(conn, account_id, now).apply(puts)
            else:
                results, previous, cost = self._apply(conn, account_id, batch, now)
            write_plan.check_quota(
                write_plan.Usage(before["note_count"], before["total_bytes"]),
                Limits(max_notes=before["max_notes"], max_bytes=before["max_bytes"]),
                cost,
            )
            conn.execute(
                "UPDATE accounts SET note_count = note_count + ?, total_bytes = total_bytes + ?,"
                " revision = revision + 1 WHERE id = ?",
                (cost.notes, cost.bytes, account_id),
            )
        return CommitResult(notes=results, previous=previous)

    def _apply(
        self, conn: sqlite3.Connection, account_id: str, changes: list[NoteChange], now: float
    ) -> tuple[list[Note | None], list[PriorState | None], write_plan.Cost]:
        """Apply changes one by one, each seeing the ones before it."""
        results: list[Note | None] = []
        previous: list[PriorState | None] = []
        cost = write_plan.FREE
        for change in changes:
            live = _live_at(conn, account_id, change.path)
            if isinstance(change, PutNote):
                deleted = None if live else latest_deleted(conn, account_id, change.path)
                decision = write_plan.plan_put(change, live, deleted, now=now)
                previous.append(_prior(conn, live))
                results.append(self._put(conn, account_id, change, decision, now))
                cost += decision.cost
            elif isinstance(change, MoveNote):
                occupant = _live_at(conn, account_id, change.new_path)
                move = write_plan.plan_move(change, live, occupant)
                previous.append(_prior(conn, live))
                results.append(self._move(conn, account_id, change, move, now))
            else:
                delete = write_plan.plan_delete(change.path, change.expected_version, live)
                previous.append(_prior(conn, live))
                conn.execute("UPDATE notes SET deleted_at = ? WHERE id = ?", (now, delete.note_id))
                conn.execute("DELETE FROM links WHERE note_id = ?", (delete.note_id,))
                results.append(None)
                cost += delete.cost
        return results, previous, cost

    def _put(
        self,
        conn: sqlite3.Connection,
        account_id: str,
        change: PutNote,
        decision: write_plan.PutDecision,
        now: float,
    ) -> Note:
        if not decision.writes:
            note = select_note(conn, "n.id = ?", (decision.note_id,))
            assert note is not None
            return note
        rows = NoteRows(account_id, now)
        rows.add(change, decision)
        rows.write(conn)
        return decision.note(change, now=now)

    def _move(
        self,
        conn: sqlite3.Connection,
        account_id: str,
        change: MoveNote,
        move: write_plan.MoveDecision,
        now: float,
    ) -> Note:
        conn.execute(
            "UPDATE notes SET path = ?, path_key = ?, link_key = ?, name_key = ?, updated_at = ?"
            " WHERE id = ?",
            (
                change.new_path,
                move.new_key,
                paths.link_key(change.new_path),
                paths.name_key(change.new_path),
                now,
                move.note_id,
            ),
        )
        if change.links is not None:  # re-keyed from the new folder
            conn.execute("DELETE FROM links WHERE note_id = ?", (move.note_id,))
            conn.executemany(
                "INSERT OR IGNORE INTO links (note_id, account_id, target_key, has_folder)"
                " VALUES (?, ?, ?, ?)",
                [
                    (move.note_id, account_id, link.target_key, int(link.has_folder))
                    for link in change.links
                ],
            )
        note = select_note(conn, "n.id = ?", (move.note_id,))
        assert note is not None
        return note
