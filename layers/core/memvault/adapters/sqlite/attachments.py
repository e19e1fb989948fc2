"""Attachments and configuration files on the embedded backend (AttachmentStore).

Metadata lives in the ``files`` table of the one database, its bytes in content-addressed
files beside it, ``<data dir>/files/<account>/<aa>/<sha256>`` (ADR 0044: a blob table
would put every image through SQLite's WAL and grow the file that every note read
shares). A blob is written to a temporary name, flushed and renamed, so a blob that
exists is whole; it is staged before the transaction that references it, so a row never
points at missing bytes. The commit keeps the account's ``total_bytes`` (the byte quota
notes share) and checks the file limit in the same ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import IO

from memvault.adapters.sqlite.base import SqliteParts
from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.rows import chunks
from memvault.domain import attachments as files
from memvault.domain import paths
from memvault.domain.attachments import (
    ATTACHMENTS_ONLY,
    FileChange,
    FileKind,
    FileUsage,
    PutFile,
    StoredFile,
)
from memvault.domain.models import Limits, NoteChange
from memvault.errors import NotFound, ServiceUnavailable
from memvault.ports import CommitResult, FileCommit, NoteStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    path_key TEXT NOT NULL,
    path TEXT NOT NULL,
    name_key TEXT NOT NULL,
    kind TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    content_type TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (account_id, path_key)
);
CREATE INDEX IF NOT EXISTS files_by_path ON files(account_id, path);
CREATE INDEX IF NOT EXISTS files_by_name ON files(account_id, name_key);
CREATE INDEX IF NOT EXISTS files_by_sha ON files(account_id, sha256);
"""

_COLUMNS = "path, kind, size, sha256, content_type, created_at, updated_at"
_SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_SHA = re.compile(r"[0-9a-f]{64}")


def _file(row: sqlite3.Row) -> StoredFile:
    return StoredFile(
        path=row["path"],
        kind=row["kind"],
        size=row["size"],
        sha256=row["sha256"],
        content_type=row["content_type"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


class SqliteAttachmentStore(SqliteParts):
    def __init__(
        self, db: Database, root: Path | None = None, *, notes: NoteStore | None = None
    ) -> None:
        super().__init__(db)
        self.notes = notes  # whose commit an import's files share a transaction with
        db.add_schema(SCHEMA)
        self.root = root if root is not None else Path(db.path).parent / "files"

    # ------------------------------------------------------------------ blobs
    def _blob_path(self, account_id: str, sha256: str) -> Path:
        if not _SHA.fullmatch(sha256):
            raise ValueError("not a sha256 digest")
        folder = (
            account_id
            if _SAFE_ID.fullmatch(account_id)
            else hashlib.sha256(account_id.encode()).hexdigest()
        )
        return self.root / folder / sha256[:2] / sha256

    def stage_blob(self, account_id: str, sha256: str, data: bytes | IO[bytes]) -> bool:
        target = self._blob_path(account_id, sha256)
        if target.exists():
            os.utime(target)  # staged again: the sweep's grace period starts over
            return False
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".staging-")
            with os.fdopen(fd, "wb") as fh:
                if isinstance(data, bytes):
                    fh.write(data)
                else:
                    shutil.copyfileobj(data, fh, 1024 * 1024)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except OSError as exc:
            raise ServiceUnavailable(
                "the file could not be stored (the data folder refused the write)",
                code="storage_unavailable",
            ) from exc
        return True

    def read_blob(self, account_id: str, sha256: str) -> bytes:
        try:
            return self._blob_path(account_id, sha256).read_bytes()
        except FileNotFoundError as exc:
            raise NotFound("the file's bytes are missing", code="file_not_found") from exc

    def open_blob(self, account_id: str, sha256: str) -> IO[bytes]:
        try:
            return self._blob_path(account_id, sha256).open("rb")
        except FileNotFoundError as exc:
            raise NotFound("the file's bytes are missing", code="file_not_found") from exc

    def drop_blobs(self, account_id: str, sha256s: Collection[str], *, older_than: float) -> int:
        dropped = 0
        for sha in dict.fromkeys(sha256s):
            with self.db.transaction() as tx:  # no commit can reference it meanwhile
                used = tx.execute(
                    "SELECT 1 FROM files WHERE account_id = ? AND sha256 = ? LIMIT 1",
                    (account_id, sha),
                ).fetchone()
                if used:
                    continue
                blob = self._blob_path(account_id, sha)
                try:
                    if blob.stat().st_mtime >= older_than:
                        continue
                    blob.unlink()
                    dropped += 1
                except FileNotFoundError:
                    continue
        return dropped

    def orphan_blobs(self, account_id: str, *, older_than: float, limit: int = 1000) -> int:
        folder = self._blob_path(account_id, "0" * 64).parent.parent
        if not folder.is_dir():
            return 0
        found: list[str] = []
        for blob in folder.glob("*/*"):
            try:
                if blob.stat().st_mtime >= older_than:
                    continue
            except FileNotFoundError:
                continue
            if blob.name.startswith(".staging-"):  # a write that died before its rename
                blob.unlink(missing_ok=True)
            elif _SHA.fullmatch(blob.name):
                found.append(blob.name)
            if len(found) >= limit:
                break
        return self.drop_blobs(account_id, found, older_than=older_than)

    # ------------------------------------------------------------------ reads
    def get_file(self, account_id: str, path: str) -> StoredFile | None:
        row = (
            self.db.connection()
            .execute(
                f"SELECT {_COLUMNS} FROM files WHERE account_id = ? AND path_key = ?",
                (account_id, paths.path_key(path)),
            )
            .fetchone()
        )
        return _file(row) if row else None

    def list_files(
        self,
        account_id: str,
        *,
        prefix: str = "",
        kinds: Collection[FileKind] = ATTACHMENTS_ONLY,
        after: str | None = None,
        limit: int = 100,
    ) -> list[StoredFile]:
        wanted = list(kinds)
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        sql = f"SELECT {_COLUMNS} FROM files WHERE account_id = ? AND kind IN ({marks})"
        args: list[object] = [account_id, *wanted]
        if prefix:
            sql += " AND substr(path, 1, ?) = ?"
            args += [len(prefix), prefix]
        if after is not None:
            sql += " AND path > ?"
            args.append(after)
        sql += " ORDER BY path LIMIT ?"
        args.append(limit)
        return [_file(r) for r in self.db.connection().execute(sql, args).fetchall()]

    def file_keys(self, account_id: str) -> dict[str, StoredFile]:
        rows = (
            self.db.connection()
            .execute(f"SELECT path_key, {_COLUMNS} FROM files WHERE account_id = ?", (account_id,))
            .fetchall()
        )
        return {r["path_key"]: _file(r) for r in rows}

    def file_usage(self, account_id: str) -> FileUsage:
        return _usage(self.db.connection(), account_id)

    def files_by_link_key(self, account_id: str, link_keys: Collection[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        conn = self.db.connection()
        for chunk in chunks(list(dict.fromkeys(link_keys))):
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT path_key, path FROM files WHERE account_id = ? AND kind = 'attachment'"
                f" AND path_key IN ({marks})",
                [account_id, *chunk],
            ).fetchall()
            found.update({r["path_key"]: r["path"] for r in rows})
        return found

    def files_by_name(self, account_id: str, name_keys: Collection[str]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        conn = self.db.connection()
        for chunk in chunks(list(dict.fromkeys(name_keys))):
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT name_key, path FROM files WHERE account_id = ? AND kind = 'attachment'"
                f" AND name_key IN ({marks}) ORDER BY path",
                [account_id, *chunk],
            ).fetchall()
            for r in rows:
                found.setdefault(r["name_key"], []).append(r["path"])
        return found

    # ------------------------------------------------------------------ commit
    def commit_import(
        self,
        account_id: str,
        files: Sequence[FileChange],
        notes: Sequence[NoteChange],
        *,
        now: float,
    ) -> tuple[FileCommit, CommitResult | None]:
        # One transaction: the note commit inside is a savepoint of this one (db.py).
        with self.db.transaction():
            done = self.commit_files(account_id, files, now=now)
            if not notes:
                return done, None
            if self.notes is None:
                raise RuntimeError("an import commit needs the note store")
            return done, self.notes.commit(account_id, notes, now=now)

    def commit_files(
        self, account_id: str, changes: Sequence[FileChange], *, now: float
    ) -> FileCommit:
        before: list[StoredFile | None] = []
        after: list[StoredFile | None] = []
        with self.db.transaction() as conn:
            account = conn.execute(
                "SELECT total_bytes, max_notes, max_bytes, max_files, max_file_bytes"
                " FROM accounts WHERE id = ?",
                (account_id,),
            ).fetchone()
            if account is None:
                raise NotFound(f"no account {account_id!r}", code="account_not_found")
            defaults = Limits()
            limits = Limits(
                max_notes=account["max_notes"],
                max_bytes=account["max_bytes"],
                max_files=account["max_files"] or defaults.max_files,
                max_file_bytes=account["max_file_bytes"] or defaults.max_file_bytes,
            )
            usage = _usage(conn, account_id)
            file_delta = byte_delta = 0
            for change in changes:
                key = paths.path_key(change.path)
                row = conn.execute(
                    f"SELECT {_COLUMNS} FROM files WHERE account_id = ? AND path_key = ?",
                    (account_id, key),
                ).fetchone()
                old = _file(row) if row else None
                before.append(old)
                if isinstance(change, PutFile):
                    files.check_file_size(change.path, change.size, limits)
                    stored = StoredFile(
                        path=change.path,
                        kind=change.kind,
                        size=change.size,
                        sha256=change.sha256,
                        content_type=change.content_type,
                        created_at=old.created_at if old else now,
                        updated_at=now if change.updated_at is None else change.updated_at,
                    )
                    conn.execute(
                        "INSERT OR REPLACE INTO files (account_id, path_key, path, name_key, kind,"
                        " size, sha256, content_type, created_at, updated_at)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            account_id,
                            key,
                            stored.path,
                            paths.name_key(stored.path),
                            stored.kind,
                            stored.size,
                            stored.sha256,
                            stored.content_type,
                            stored.created_at,
                            stored.updated_at,
                        ),
                    )
                    after.append(stored)
                    file_delta += 0 if old else 1
                    byte_delta += stored.size - (old.size if old else 0)
                else:
                    if old is None:
                        raise NotFound(f"no file at {change.path!r}", code="file_not_found")
                    conn.execute(
                        "DELETE FROM files WHERE account_id = ? AND path_key = ?",
                        (account_id, key),
                    )
                    after.append(None)
                    file_delta -= 1
                    byte_delta -= old.size
            files.check_file_quota(
                files_before=usage.files,
                files_after=usage.files + file_delta,
                bytes_before=account["total_bytes"],
                bytes_after=account["total_bytes"] + byte_delta,
                limits=limits,
            )
            conn.execute(
                "UPDATE accounts SET total_bytes = total_bytes + ?, revision = revision + 1"
                " WHERE id = ?",
                (byte_delta, account_id),
            )
        return FileCommit(before=before, after=after)


def _usage(conn: sqlite3.Connection, account_id: str) -> FileUsage:
    row = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM files WHERE account_id = ?", (account_id,)
    ).fetchone()
    return FileUsage(files=row[0], bytes=row[1])
