"""One SQLite database file shared by the embedded store, search index and budgets.

Connections are per thread (FastAPI runs sync handlers in a thread pool); WAL lets
readers proceed while one writer holds the lock, and writes open with BEGIN IMMEDIATE
so check-then-write sequences (If-Match, quotas, budgets) are atomic.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at REAL NOT NULL,
    max_notes INTEGER NOT NULL,
    max_bytes INTEGER NOT NULL,
    note_count INTEGER NOT NULL DEFAULT 0,
    total_bytes INTEGER NOT NULL DEFAULT 0,
    revision INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    recall INTEGER NOT NULL,
    tools INTEGER NOT NULL,
    mcp INTEGER NOT NULL,
    admin INTEGER NOT NULL,
    created_at REAL NOT NULL,
    revoked_at REAL,
    recall_notes INTEGER NOT NULL DEFAULT 5,
    recall_tokens INTEGER NOT NULL DEFAULT 2000,
    spend_cap_micros INTEGER
);
CREATE INDEX IF NOT EXISTS api_keys_by_account ON api_keys(account_id, created_at);

-- A note row is the note's identity; its markdown lives in versions (the current one
-- is (id, version)). Soft-deleted notes keep their row so their history stays readable.
CREATE TABLE IF NOT EXISTS notes (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    path TEXT NOT NULL,
    path_key TEXT NOT NULL,
    link_key TEXT NOT NULL,
    name_key TEXT NOT NULL,
    title TEXT NOT NULL,
    tags TEXT NOT NULL,
    version INTEGER NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    deleted_at REAL
);
-- Paths are unique among live notes, case-insensitively (exports must unpack anywhere).
CREATE UNIQUE INDEX IF NOT EXISTS notes_live_path_key
    ON notes(account_id, path_key) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS notes_live_path
    ON notes(account_id, path) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS notes_by_path ON notes(account_id, path, deleted_at);
-- Reads, history and purges look a note up by path key, deleted ones included.
CREATE INDEX IF NOT EXISTS notes_by_path_key ON notes(account_id, path_key, deleted_at);
CREATE INDEX IF NOT EXISTS notes_by_updated ON notes(account_id, updated_at)
    WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS notes_by_name ON notes(account_id, name_key) WHERE deleted_at IS NULL;
CREATE INDEX IF NOT EXISTS notes_by_link_key ON notes(account_id, link_key)
    WHERE deleted_at IS NULL;

CREATE TABLE IF NOT EXISTS versions (
    note_id TEXT NOT NULL REFERENCES notes(id),
    version INTEGER NOT NULL,
    account_id TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    markdown TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (note_id, version)
);

CREATE TABLE IF NOT EXISTS note_tags (
    note_id TEXT NOT NULL REFERENCES notes(id),
    account_id TEXT NOT NULL,
    tag_key TEXT NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (note_id, tag_key)
);
CREATE INDEX IF NOT EXISTS note_tags_by_tag ON note_tags(account_id, tag_key);

CREATE TABLE IF NOT EXISTS links (
    note_id TEXT NOT NULL REFERENCES notes(id),
    account_id TEXT NOT NULL,
    target_key TEXT NOT NULL,
    has_folder INTEGER NOT NULL,
    PRIMARY KEY (note_id, target_key)
);
CREATE INDEX IF NOT EXISTS links_by_target ON links(account_id, target_key);

-- Notes whose search indexing failed, retried later (the search outbox).
CREATE TABLE IF NOT EXISTS index_queue (
    account_id TEXT NOT NULL,
    path TEXT NOT NULL,
    queued_at REAL NOT NULL,
    PRIMARY KEY (account_id, path)
);

CREATE TABLE IF NOT EXISTS budgets (
    account_id TEXT NOT NULL,
    bucket TEXT NOT NULL,
    tokens REAL NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (account_id, bucket)
);
"""


# Columns added after the first release: a database made before them gets them (with
# their defaults) when it is opened, so existing embedded installs keep working.
# (table, column, declaration)
ADDED_COLUMNS: list[tuple[str, str, str]] = [
    ("api_keys", "recall_notes", "INTEGER NOT NULL DEFAULT 5"),
    ("api_keys", "recall_tokens", "INTEGER NOT NULL DEFAULT 2000"),
    ("api_keys", "spend_cap_micros", "INTEGER"),
    ("accounts", "revision", "INTEGER NOT NULL DEFAULT 0"),
]


def migrate_columns(conn: sqlite3.Connection) -> None:
    for table, column, declaration in ADDED_COLUMNS:
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column in present:
            continue
        try:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        except sqlite3.OperationalError as exc:
            # Another process opening the same file added it first.
            if "duplicate column" not in str(exc):
                raise


class Database:
    """Thread-local connections to one SQLite file, schema created on first use."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._schema_lock = threading.Lock()
        self._schema_scripts: list[str] = [SCHEMA]
        self._applied: set[int] = set()
        with self._schema_lock:
            self._apply_schemas(self.connection())
            migrate_columns(self.connection())

    def add_schema(self, script: str) -> None:
        """Adapters sharing the file (search, budgets) bring their own tables."""
        with self._schema_lock:
            self._schema_scripts.append(script)
            self._apply_schemas(self.connection())

    def _apply_schemas(self, conn: sqlite3.Connection) -> None:
        for index, script in enumerate(self._schema_scripts):
            if index not in self._applied:
                conn.executescript(script)
                self._applied.add(index)

    def connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            # Autocommit mode: transactions are explicit (see ``transaction``).
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction holding the write lock from its start; rolled back on error."""
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
