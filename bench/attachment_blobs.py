"""Embedded attachments: content-addressed files beside the database vs a blob table in it
(ADR 0044). Prints write and read times per MiB and what each does to the database file.

    .venv/bin/python bench/attachment_blobs.py [--files 40] [--mib 1]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=40)
    parser.add_argument("--mib", type=int, default=1)
    args = parser.parse_args()
    blobs = [os.urandom(args.mib * 1024 * 1024) for _ in range(args.files)]
    total_mib = args.files * args.mib
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # Files: temp name, fsync, rename (what adapters/sqlite/attachments.py does).
        t0 = time.perf_counter()
        for data in blobs:
            sha = hashlib.sha256(data).hexdigest()
            target = root / "files" / sha[:2] / sha
            target.parent.mkdir(parents=True, exist_ok=True)
            tmpname = target.with_suffix(".tmp")
            with open(tmpname, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmpname, target)
        files_write = time.perf_counter() - t0
        t0 = time.perf_counter()
        for data in blobs:
            sha = hashlib.sha256(data).hexdigest()
            (root / "files" / sha[:2] / sha).read_bytes()
        files_read = time.perf_counter() - t0
        # A blob table in a WAL database (synchronous=NORMAL, as memvault's).
        conn = sqlite3.connect(root / "db.sqlite", isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("CREATE TABLE blobs (sha TEXT PRIMARY KEY, data BLOB)")
        t0 = time.perf_counter()
        for data in blobs:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "INSERT INTO blobs VALUES (?, ?)", (hashlib.sha256(data).hexdigest(), data)
            )
            conn.execute("COMMIT")
        table_write = time.perf_counter() - t0
        wal = (root / "db.sqlite-wal").stat().st_size if (root / "db.sqlite-wal").exists() else 0
        t0 = time.perf_counter()
        for data in blobs:
            conn.execute(
                "SELECT data FROM blobs WHERE sha = ?", (hashlib.sha256(data).hexdigest(),)
            ).fetchone()
        table_read = time.perf_counter() - t0
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db_size = (root / "db.sqlite").stat().st_size
        conn.close()
    per = 1000 / total_mib
    print(f"{args.files} files of {args.mib} MiB ({total_mib} MiB)")
    print(
        f"files : write {files_write * per:7.1f} ms/MiB, read {files_read * per:6.1f} ms/MiB,"
        " database grows 0 MiB"
    )
    print(
        f"table : write {table_write * per:7.1f} ms/MiB, read {table_read * per:6.1f} ms/MiB,"
        f" WAL peak {wal / 2**20:.0f} MiB, database {db_size / 2**20:.0f} MiB"
    )
    ratios = f"{table_write / files_write:.2f}; read ratio: {table_read / files_read:.2f}"
    print(f"write ratio table/files: {ratios}")


if __name__ == "__main__":
    main()
