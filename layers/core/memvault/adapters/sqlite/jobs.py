"""Import and export jobs on the embedded backend (JobStore, TransferBlobs).

A job is one row (its stored form, ``domain.jobs.to_record``, as JSON, beside the columns
the queries need); each organisation's import lease is one row of ``job_leases``. Staged
archives are files under ``<data dir>/jobs/<account>/``: the upload arrives through
memvault itself (``write_upload``, behind the job's token) and an export's zip is served
from there, so ``direct`` is False.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from memvault.adapters.sqlite.db import Database
from memvault.domain.jobs import Job, JobStatus, from_record, new_signing_key, to_record
from memvault.errors import TooLarge
from memvault.ports import BlobLink

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    account_id TEXT NOT NULL,
    id TEXT NOT NULL,
    created_at REAL NOT NULL,
    status TEXT NOT NULL,
    revision INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (account_id, id)
);
CREATE INDEX IF NOT EXISTS jobs_recent ON jobs(account_id, created_at);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs(status);
CREATE TABLE IF NOT EXISTS job_leases (
    account_id TEXT PRIMARY KEY,
    job_id TEXT NOT NULL,
    until REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS job_signing_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    key BLOB NOT NULL
);
"""


class SqliteJobStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._key: bytes | None = None
        db.add_schema(SCHEMA)

    def create(self, job: Job) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO jobs (account_id, id, created_at, status, revision, data)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    job.account_id,
                    job.id,
                    job.created_at,
                    job.status.value,
                    job.revision,
                    json.dumps(to_record(job)),
                ),
            )

    def get(self, account_id: str, job_id: str) -> Job | None:
        row = (
            self.db.connection()
            .execute("SELECT data FROM jobs WHERE account_id = ? AND id = ?", (account_id, job_id))
            .fetchone()
        )
        return None if row is None else from_record(json.loads(row["data"]))

    def save(self, job: Job) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE jobs SET status = ?, revision = ?, data = ?"
                " WHERE account_id = ? AND id = ? AND revision = ?",
                (
                    job.status.value,
                    job.revision,
                    json.dumps(to_record(job)),
                    job.account_id,
                    job.id,
                    job.revision - 1,
                ),
            )
            return cur.rowcount == 1

    def recent(self, account_id: str, limit: int) -> list[Job]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT data FROM jobs WHERE account_id = ? ORDER BY created_at DESC, id LIMIT ?",
                (account_id, limit),
            )
            .fetchall()
        )
        return [from_record(json.loads(r["data"])) for r in rows]

    def delete(self, account_id: str, job_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM jobs WHERE account_id = ? AND id = ?", (account_id, job_id))

    def unfinished(self) -> list[Job]:
        """Every organisation's queued and running jobs (what a start-up finds left)."""
        rows = (
            self.db.connection()
            .execute(
                "SELECT data FROM jobs WHERE status IN (?, ?) ORDER BY created_at",
                (JobStatus.QUEUED.value, JobStatus.RUNNING.value),
            )
            .fetchall()
        )
        return [from_record(json.loads(r["data"])) for r in rows]

    def acquire_lease(self, account_id: str, job_id: str, *, until: float, now: float) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO job_leases (account_id, job_id, until) VALUES (?, ?, ?)"
                " ON CONFLICT(account_id) DO UPDATE SET job_id = excluded.job_id,"
                " until = excluded.until"
                " WHERE job_leases.until <= ? OR job_leases.job_id = excluded.job_id",
                (account_id, job_id, until, now),
            )
            return cur.rowcount == 1

    def renew_lease(self, account_id: str, job_id: str, *, until: float) -> bool:
        with self.db.transaction() as conn:
            cur = conn.execute(
                "UPDATE job_leases SET until = ? WHERE account_id = ? AND job_id = ?",
                (until, account_id, job_id),
            )
            return cur.rowcount == 1

    def release_lease(self, account_id: str, job_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "DELETE FROM job_leases WHERE account_id = ? AND job_id = ?", (account_id, job_id)
            )

    def lease_holder(self, account_id: str, *, now: float) -> str | None:
        row = (
            self.db.connection()
            .execute(
                "SELECT job_id FROM job_leases WHERE account_id = ? AND until > ?",
                (account_id, now),
            )
            .fetchone()
        )
        return None if row is None else str(row["job_id"])

    def signing_key(self) -> bytes:
        if self._key is None:
            with self.db.transaction() as conn:
                conn.execute(
                    "INSERT OR IGNORE INTO job_signing_key (id, key) VALUES (1, ?)",
                    (new_signing_key(),),
                )
                row = conn.execute("SELECT key FROM job_signing_key WHERE id = 1").fetchone()
            self._key = bytes(row["key"])
        return self._key

    def recover_vault(self, account_id: str, *, now: float) -> bool | None:
        # A commit on SQLite is one transaction: a killed process leaves nothing behind.
        return False


_SAFE = re.compile(r"[A-Za-z0-9_-]{1,128}")
CHUNK = 1024 * 1024


class FileTransferBlobs:
    """Staged archives as files under ``root`` (``<data dir>/jobs``)."""

    direct = False

    def __init__(self, root: Path) -> None:
        self.root = root

    def _dir(self, account_id: str, job_id: str) -> Path:
        return staged_dir(self.root, account_id, job_id)

    def upload_link(
        self, account_id: str, job_id: str, *, size: int, expires_at: float, now: float
    ) -> BlobLink | None:
        return None

    def download_link(
        self, account_id: str, job_id: str, *, filename: str, expires_at: float, now: float
    ) -> BlobLink | None:
        return None

    def write_upload(
        self, account_id: str, job_id: str, chunks: Iterator[bytes], *, max_bytes: int
    ) -> int:
        folder = self._dir(account_id, job_id)
        folder.mkdir(parents=True, exist_ok=True)
        too_large = TooLarge(
            f"the upload is larger than the {max_bytes} bytes declared",
            code="archive_too_large",
            limit=max_bytes,
        )
        return write_capped(folder / "upload.zip", chunks, max_bytes, too_large)

    def upload_size(self, account_id: str, job_id: str) -> int | None:
        path = self._dir(account_id, job_id) / "upload.zip"
        try:
            return path.stat().st_size
        except FileNotFoundError:
            return None

    def open_upload(self, account_id: str, job_id: str) -> IO[bytes]:
        return (self._dir(account_id, job_id) / "upload.zip").open("rb")

    def store_export(self, account_id: str, job_id: str, archive: IO[bytes]) -> int:
        folder = self._dir(account_id, job_id)
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / "export.zip.part"
        archive.seek(0)
        with partial.open("wb") as fh:
            shutil.copyfileobj(archive, fh, CHUNK)
        os.replace(partial, folder / "export.zip")
        return (folder / "export.zip").stat().st_size

    def open_export(self, account_id: str, job_id: str) -> IO[bytes] | None:
        try:
            return (self._dir(account_id, job_id) / "export.zip").open("rb")
        except FileNotFoundError:
            return None

    def request_run(self, account_id: str, job_id: str) -> bool:
        return False  # the serving process's worker runs it

    def redeliver(self, account_id: str, job_id: str) -> bool:
        return False  # no signal: resume() runs queued jobs at a server's start

    def delete(self, account_id: str, job_id: str) -> None:
        shutil.rmtree(self._dir(account_id, job_id), ignore_errors=True)


def is_staged_id(name: str) -> bool:
    return _SAFE.fullmatch(name) is not None


def staged_dir(root: Path, account_id: str, item_id: str) -> Path:
    """The folder of one staged job or upload under ``root``. Ids are ours (hex and a
    prefix) and account ids are checked when made; anything else is refused rather than
    made into a path."""
    if not is_staged_id(item_id) or "/" in account_id or account_id in ("", ".", ".."):
        raise ValueError("not a staged item's id")
    return root / account_id / item_id


def write_capped(target: Path, chunks: Iterator[bytes], max_bytes: int, too_large: TooLarge) -> int:
    """A body arriving through memvault, written beside ``target`` and moved into place
    whole; refused with ``too_large`` (nothing left behind) once it passes ``max_bytes``."""
    partial = target.with_name(target.name + ".part")
    size = 0
    try:
        with partial.open("wb") as fh:
            for chunk in chunks:
                size += len(chunk)
                if size > max_bytes:
                    raise too_large
                fh.write(chunk)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return size
