"""VaultStore on SQLite: the embedded backend's notes, versions, links, accounts and keys."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterator, Sequence

from memvault.adapters import cursors
from memvault.adapters.sqlite.db import Database
from memvault.domain import paths, write_plan
from memvault.domain.models import (
    Account,
    ApiKey,
    BacklinkSource,
    KeySettings,
    Limits,
    LinkRef,
    MoveNote,
    Note,
    NoteChange,
    NoteSummary,
    NoteVersion,
    PutNote,
    Toggles,
    VersionInfo,
)
from memvault.domain.tags import distinct_tags, tag_key
from memvault.errors import NotFound
from memvault.ports import CommitResult, NoteKey, Page, PriorState

_NOTE_COLUMNS = (
    "n.id, n.path, n.title, n.tags, n.version, n.size, n.sha256, n.created_at, n.updated_at,"
    " n.deleted_at"
)


def _summary(row: sqlite3.Row) -> NoteSummary:
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


def _note(row: sqlite3.Row) -> Note:
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


def _select_note(conn: sqlite3.Connection, where: str, params: Sequence[object]) -> Note | None:
    row = conn.execute(
        f"SELECT {_NOTE_COLUMNS}, v.markdown FROM notes n"
        " JOIN versions v ON v.note_id = n.id AND v.version = n.version"
        f" WHERE {where}",
        params,
    ).fetchone()
    return _note(row) if row else None


def _live_note(row: sqlite3.Row) -> write_plan.LiveNote:
    return write_plan.LiveNote(
        id=row["id"],
        path=row["path"],
        version=row["version"],
        size=row["size"],
        sha256=row["sha256"],
        created_at=row["created_at"],
    )


def _live_at(conn: sqlite3.Connection, account_id: str, path: str) -> write_plan.LiveNote | None:
    """The live note at ``path``'s key (which may spell the path differently)."""
    row = conn.execute(
        "SELECT id, path, version, size, sha256, created_at FROM notes WHERE account_id = ?"
        " AND path_key = ? AND deleted_at IS NULL",
        (account_id, paths.path_key(path)),
    ).fetchone()
    return _live_note(row) if row else None


def _latest_deleted(
    conn: sqlite3.Connection, account_id: str, path: str
) -> write_plan.DeletedNote | None:
    row = conn.execute(
        "SELECT id, version, created_at FROM notes WHERE account_id = ? AND path = ?"
        " AND deleted_at IS NOT NULL ORDER BY deleted_at DESC LIMIT 1",
        (account_id, path),
    ).fetchone()
    return write_plan.DeletedNote(row["id"], row["version"], row["created_at"]) if row else None


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


def _account(row: sqlite3.Row) -> Account:
    return Account(
        id=row["id"],
        name=row["name"],
        created_at=row["created_at"],
        limits=Limits(max_notes=row["max_notes"], max_bytes=row["max_bytes"]),
        note_count=row["note_count"],
        total_bytes=row["total_bytes"],
        revision=row["revision"],
    )


def _key(row: sqlite3.Row) -> ApiKey:
    return ApiKey(
        id=row["id"],
        account_id=row["account_id"],
        name=row["name"],
        prefix=row["prefix"],
        toggles=Toggles(recall=bool(row["recall"]), tools=bool(row["tools"]), mcp=bool(row["mcp"])),
        admin=bool(row["admin"]),
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
        recall_notes=row["recall_notes"],
        recall_tokens=row["recall_tokens"],
        spend_cap_micros=row["spend_cap_micros"],
    )


class SqliteVaultStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    # ------------------------------------------------------------------ accounts, keys
    def create_account(self, account: Account) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO accounts (id, name, created_at, max_notes, max_bytes)"
                " VALUES (?, ?, ?, ?, ?)",
                (
                    account.id,
                    account.name,
                    account.created_at,
                    account.limits.max_notes,
                    account.limits.max_bytes,
                ),
            )

    def get_account(self, account_id: str) -> Account | None:
        row = (
            self.db.connection()
            .execute("SELECT * FROM accounts WHERE id = ?", (account_id,))
            .fetchone()
        )
        return _account(row) if row else None

    def set_limits(self, account_id: str, limits: Limits) -> Account:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE accounts SET max_notes = ?, max_bytes = ? WHERE id = ?",
                (limits.max_notes, limits.max_bytes, account_id),
            )
            if cur.rowcount == 0:
                raise NotFound(f"no account {account_id!r}", code="account_not_found")
        account = self.get_account(account_id)
        assert account is not None
        return account

    def put_key(self, key: ApiKey, key_hash: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO api_keys (id, account_id, name, prefix, key_hash, recall, tools, mcp,"
                " admin, created_at, revoked_at, recall_notes, recall_tokens, spend_cap_micros)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key.id,
                    key.account_id,
                    key.name,
                    key.prefix,
                    key_hash,
                    int(key.toggles.recall),
                    int(key.toggles.tools),
                    int(key.toggles.mcp),
                    int(key.admin),
                    key.created_at,
                    key.revoked_at,
                    key.recall_notes,
                    key.recall_tokens,
                    key.spend_cap_micros,
                ),
            )

    def key_by_hash(self, key_hash: str) -> ApiKey | None:
        row = (
            self.db.connection()
            .execute("SELECT * FROM api_keys WHERE key_hash = ?", (key_hash,))
            .fetchone()
        )
        return _key(row) if row else None

    def get_key(self, account_id: str, key_id: str) -> ApiKey | None:
        row = (
            self.db.connection()
            .execute("SELECT * FROM api_keys WHERE account_id = ? AND id = ?", (account_id, key_id))
            .fetchone()
        )
        return _key(row) if row else None

    def list_keys(self, account_id: str) -> list[ApiKey]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id", (account_id,)
            )
            .fetchall()
        )
        return [_key(r) for r in rows]

    def update_key(
        self,
        account_id: str,
        key_id: str,
        *,
        toggles: Toggles | None,
        revoked_at: float | None,
        settings: KeySettings | None = None,
    ) -> ApiKey:
        with self.db.transaction() as conn:
            if settings is not None:
                conn.execute(
                    "UPDATE api_keys SET recall_notes = ?, recall_tokens = ?, spend_cap_micros = ?"
                    " WHERE account_id = ? AND id = ?",
                    (
                        settings.recall_notes,
                        settings.recall_tokens,
                        settings.spend_cap_micros,
                        account_id,
                        key_id,
                    ),
                )
            if toggles is not None:
                conn.execute(
                    "UPDATE api_keys SET recall = ?, tools = ?, mcp = ?"
                    " WHERE account_id = ? AND id = ?",
                    (int(toggles.recall), int(toggles.tools), int(toggles.mcp), account_id, key_id),
                )
            if revoked_at is not None:
                conn.execute(
                    "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?)"
                    " WHERE account_id = ? AND id = ?",
                    (revoked_at, account_id, key_id),
                )
        key = self.get_key(account_id, key_id)
        if key is None:
            raise NotFound(f"no key {key_id!r} in this account", code="key_not_found")
        return key

    # ------------------------------------------------------------------ notes: reads
    def _select_note(
        self, conn: sqlite3.Connection, where: str, params: Sequence[object]
    ) -> Note | None:
        return _select_note(conn, where, params)

    def get_note(self, account_id: str, path: str, *, include_deleted: bool = False) -> Note | None:
        conn = self.db.connection()
        note = self._select_note(
            conn, "n.account_id = ? AND n.path = ? AND n.deleted_at IS NULL", (account_id, path)
        )
        if note is None and include_deleted:
            note = self._select_note(
                conn,
                "n.account_id = ? AND n.path = ? ORDER BY n.deleted_at DESC LIMIT 1",
                (account_id, path),
            )
        return note

    def get_notes(self, account_id: str, note_paths: Collection[str]) -> dict[str, Note]:
        found: dict[str, Note] = {}
        conn = self.db.connection()
        for chunk in _chunks(list(dict.fromkeys(note_paths))):
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                f"SELECT {_NOTE_COLUMNS}, v.markdown FROM notes n"
                " JOIN versions v ON v.note_id = n.id AND v.version = n.version"
                f" WHERE n.account_id = ? AND n.deleted_at IS NULL AND n.path IN ({marks})",
                [account_id, *chunk],
            ).fetchall()
            found.update((row["path"], _note(row)) for row in rows)
        return found

    def live_paths(self, account_id: str, path_keys: Collection[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for chunk in _chunks(list(dict.fromkeys(path_keys))):
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
        for chunk in _chunks(list(dict.fromkeys(note_paths))):
            marks = ",".join("?" * len(chunk))
            rows = (
                self.db.connection()
                .execute(
                    f"SELECT {_NOTE_COLUMNS} FROM notes n WHERE n.account_id = ? AND"
                    f" n.deleted_at IS NULL AND n.path IN ({marks})",
                    [account_id, *chunk],
                )
                .fetchall()
            )
            out += [_summary(r) for r in rows]
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
                f"SELECT {_NOTE_COLUMNS} FROM notes n WHERE {' AND '.join(clauses)}"
                " ORDER BY n.path_key LIMIT ?",
                params,
            )
            .fetchall()
        )
        items = [_summary(r) for r in rows[:limit]]
        last = paths.path_key(items[-1].path) if items else ""
        next_cursor = cursors.encode(last) if len(rows) > limit and items else None
        return Page(items=items, next_cursor=next_cursor)

    def recent_notes(self, account_id: str, *, limit: int) -> list[NoteSummary]:
        rows = (
            self.db.connection()
            .execute(
                f"SELECT {_NOTE_COLUMNS} FROM notes n WHERE n.account_id = ? AND"
                " n.deleted_at IS NULL ORDER BY n.updated_at DESC, n.path_key DESC LIMIT ?",
                (account_id, limit),
            )
            .fetchall()
        )
        return [_summary(r) for r in rows]

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
                f"SELECT {_NOTE_COLUMNS}, v.markdown FROM notes n JOIN versions v"
                " ON v.note_id = n.id AND v.version = n.version"
                " WHERE n.account_id = ? AND n.deleted_at IS NULL ORDER BY n.path_key",
                (account_id,),
            )
            for row in cursor:
                yield _note(row)
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

    # ------------------------------------------------------------------ notes: commit
    # Each change's rules are decided by domain.write_plan; this applies the decisions.
    def commit(self, account_id: str, changes: Sequence[NoteChange], *, now: float) -> CommitResult:
        with self.db.transaction() as conn:
            before = conn.execute(
                "SELECT note_count, total_bytes, max_notes, max_bytes FROM accounts WHERE id = ?",
                (account_id,),
            ).fetchone()
            if before is None:
                raise NotFound(f"no account {account_id!r}", code="account_not_found")
            batch = list(changes)
            puts = _distinct_puts(batch)
            if puts is not None:
                results, previous, cost = _BulkPut(conn, account_id, now).apply(puts)
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
                deleted = None if live else _latest_deleted(conn, account_id, change.path)
                decision = write_plan.plan_put(change, live, deleted, now=now)
                previous.append(_prior(conn, live))
                results.append(self._put(conn, account_id, change, decision, now))
                cost += decision.cost
            elif isinstance(change, MoveNote):
                occupant = _live_at(conn, account_id, change.new_path)
                move = write_plan.plan_move(change, live, occupant)
                previous.append(_prior(conn, live))
                results.append(self._move(conn, change, move, now))
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
            note = _select_note(conn, "n.id = ?", (decision.note_id,))
            assert note is not None
            return note
        rows = _NoteRows(account_id, now)
        rows.add(change, decision)
        rows.write(conn)
        return decision.note(change, now=now)

    def _move(
        self, conn: sqlite3.Connection, change: MoveNote, move: write_plan.MoveDecision, now: float
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
        note = _select_note(conn, "n.id = ?", (move.note_id,))
        assert note is not None
        return note

    # ------------------------------------------------------------------ versions
    def _history_owner(self, account_id: str, path: str) -> str | None:
        """The note whose history ``path`` names: the live one, else the last deleted."""
        row = (
            self.db.connection()
            .execute(
                "SELECT id FROM notes WHERE account_id = ? AND path = ?"
                " ORDER BY deleted_at IS NOT NULL, deleted_at DESC LIMIT 1",
                (account_id, path),
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
                    "SELECT id FROM notes WHERE account_id = ? AND path = ?"
                    " AND deleted_at IS NOT NULL",
                    (account_id, path),
                ).fetchall()
            ]
            for note_id in ids:
                for table in ("versions", "note_tags", "links"):
                    conn.execute(f"DELETE FROM {table} WHERE note_id = ?", (note_id,))
                conn.execute("DELETE FROM notes WHERE id = ?", (note_id,))
        return bool(ids)

    # ------------------------------------------------------------------ links
    def links_to(self, account_id: str, target_keys: Collection[str]) -> list[BacklinkSource]:
        keys = list(dict.fromkeys(target_keys))
        if not keys:
            return []
        out: list[BacklinkSource] = []
        conn = self.db.connection()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT n.path, l.target_key, l.has_folder FROM links l JOIN notes n"
                f" ON n.id = l.note_id WHERE l.account_id = ? AND l.target_key IN ({marks})"
                " AND n.deleted_at IS NULL ORDER BY n.path",
                [account_id, *chunk],
            ).fetchall()
            out += [BacklinkSource(r["path"], r["target_key"], bool(r["has_folder"])) for r in rows]
        return out

    def paths_by_name(self, account_id: str, name_keys: Collection[str]) -> dict[str, list[str]]:
        keys = list(dict.fromkeys(name_keys))
        found: dict[str, list[str]] = {}
        conn = self.db.connection()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT name_key, path FROM notes WHERE account_id = ? AND deleted_at IS NULL"
                # "+path": sort the few rows found; a plain ORDER BY path makes SQLite walk
                # the whole account by the path index instead of using notes_by_name.
                f" AND name_key IN ({marks}) ORDER BY +path",
                [account_id, *chunk],
            ).fetchall()
            for r in rows:
                found.setdefault(r["name_key"], []).append(r["path"])
        return found

    def all_links(self, account_id: str) -> list[BacklinkSource]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT n.path, l.target_key, l.has_folder FROM links l JOIN notes n"
                " ON n.id = l.note_id WHERE l.account_id = ? AND n.deleted_at IS NULL",
                (account_id,),
            )
            .fetchall()
        )
        return [BacklinkSource(r["path"], r["target_key"], bool(r["has_folder"])) for r in rows]

    # ------------------------------------------------------------------ search outbox
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

    # ------------------------------------------------------------------ retention sweep
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
            for note_id in ids:
                for table in ("versions", "note_tags", "links"):
                    conn.execute(f"DELETE FROM {table} WHERE note_id = ?", (note_id,))
                conn.execute("DELETE FROM notes WHERE id = ?", (note_id,))
        return len(ids)


# ---------------------------------------------------------------------- bulk puts
# A commit of many puts (an import) applies them with one statement per table, not
# ~15 per note. It reads what the per-note path reads, decides every change in order
# before writing anything (so it raises the error the first failing change would), and
# leaves the same rows and returns the same notes as applying the puts one by one.
BULK_MIN_CHANGES = 2


def _distinct_puts(changes: list[NoteChange]) -> list[PutNote] | None:
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


class _BulkPut:
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
        rows = _NoteRows(account_id, now)
        results: list[Note | None] = []
        previous: list[PriorState | None] = []
        cost = write_plan.FREE
        for put in puts:
            note = live.get(paths.path_key(put.path))
            deleted = (
                _latest_deleted(conn, account_id, put.path) if revivable and not note else None
            )
            decision = write_plan.plan_put(put, note, deleted, now=now)
            previous.append(
                None if note is None else PriorState(note.path, note.version, prior_links[note.id])
            )
            cost += decision.cost
            if decision.writes:
                rows.add(put, decision)
                results.append(decision.note(put, now=now))
            else:
                results.append(_select_note(conn, "n.id = ?", (decision.note_id,)))
        rows.write(conn)
        return results, previous, cost

    def _live(self, path_keys: list[str]) -> dict[str, write_plan.LiveNote]:
        found: dict[str, write_plan.LiveNote] = {}
        for chunk in _chunks(path_keys):
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                "SELECT id, path, path_key, version, size, sha256, created_at FROM notes"
                f" WHERE account_id = ? AND path_key IN ({marks}) AND deleted_at IS NULL",
                [self.account_id, *chunk],
            ).fetchall()
            found.update((r["path_key"], _live_note(r)) for r in rows)
        return found

    def _links_of(self, note_ids: list[str]) -> dict[str, tuple[LinkRef, ...]]:
        found: dict[str, list[LinkRef]] = {note_id: [] for note_id in note_ids}
        for chunk in _chunks(note_ids):
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


class _NoteRows:
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
                    now,
                    now,
                )
            )
        else:  # a new version of the live note, or of the deleted one it revives
            self.updates.append(
                (put.title, tags_json, decision.version, put.size, put.sha256, now, note_id)
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
            "UPDATE notes SET title = ?, tags = ?, version = ?, size = ?, sha256 = ?,"
            " updated_at = ?, deleted_at = NULL WHERE id = ?",
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


def _chunks(items: list[str], size: int = 500) -> list[list[str]]:
    return [items[start : start + size] for start in range(0, len(items), size)]
