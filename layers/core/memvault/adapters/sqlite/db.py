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

from memvault.domain.identity import FOUNDER_NAME, founder_id

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
    memory_tokens INTEGER NOT NULL DEFAULT 1500,
    spend_cap_micros INTEGER,
    recall_mode TEXT,
    cache_ttl_seconds INTEGER
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

-- People: an organisation (an account) has members; every key belongs to one. A sign-in
-- address is unique across organisations, compared folded (email_key).
CREATE TABLE IF NOT EXISTS members (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    email TEXT,
    email_key TEXT UNIQUE,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at REAL NOT NULL,
    disabled_at REAL,
    password_hash TEXT
);
CREATE INDEX IF NOT EXISTS members_by_account ON members(account_id, created_at);

CREATE TABLE IF NOT EXISTS invitations (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    token_hash TEXT NOT NULL UNIQUE,
    email TEXT NOT NULL,
    role TEXT NOT NULL,
    invited_by TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS invitations_by_account ON invitations(account_id, created_at);
CREATE INDEX IF NOT EXISTS invitations_by_expiry ON invitations(expires_at);

CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    member_id TEXT NOT NULL,
    secret_hash TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL,
    last_seen_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    method TEXT NOT NULL,
    client TEXT NOT NULL DEFAULT '',
    user_agent TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS sessions_by_member ON sessions(account_id, member_id, created_at);
CREATE INDEX IF NOT EXISTS sessions_by_expiry ON sessions(expires_at);

CREATE TABLE IF NOT EXISTS audit_events (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    actor_member_id TEXT,
    actor_key_id TEXT,
    target_id TEXT,
    detail TEXT NOT NULL,
    client TEXT NOT NULL DEFAULT '',
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_by_account ON audit_events(account_id, at, id);
CREATE INDEX IF NOT EXISTS audit_by_expiry ON audit_events(expires_at);
"""


# Columns added after the first release: a database made before them gets them (with
# their defaults) when it is opened, so existing embedded installs keep working.
# (table, column, declaration)
ADDED_COLUMNS: list[tuple[str, str, str]] = [
    ("api_keys", "recall_notes", "INTEGER NOT NULL DEFAULT 5"),
    ("api_keys", "recall_tokens", "INTEGER NOT NULL DEFAULT 2000"),
    ("api_keys", "spend_cap_micros", "INTEGER"),
    ("accounts", "revision", "INTEGER NOT NULL DEFAULT 0"),
    # Organisations and members: every key has an owner (migrate_key_owners fills it in
    # for keys made before), and may be bound to no vault.
    ("api_keys", "member_id", "TEXT"),
    ("api_keys", "vault", "INTEGER NOT NULL DEFAULT 1"),
    # The ledger's table (adapters/sqlite/ledger.py): 1 when the tokens are memvault's
    # estimate, not upstream's report; records made before it read as exact.
    ("usage_records", "estimated", "INTEGER NOT NULL DEFAULT 0"),
    # Attribution of injected tokens and fact-search embeddings (memory profiles).
    ("usage_records", "attribution", "TEXT NOT NULL DEFAULT '{}'"),
    # A key's memory profile budget (memory profiles).
    ("api_keys", "memory_tokens", "INTEGER NOT NULL DEFAULT 1500"),
    # A key's recall search mode (NULL: the vault's default; ADR 0027).
    ("api_keys", "recall_mode", "TEXT"),
    # The key's response cache (None: off).
    ("api_keys", "cache_ttl_seconds", "INTEGER"),
    # The organisation's default search mode and min_score (NULL: the deployment's; ADR 0050).
    ("accounts", "search_mode", "TEXT"),
    ("accounts", "min_score", "REAL"),
    # Per-organisation file limits (domain.attachments; NULL: Limits' defaults).
    ("accounts", "max_files", "INTEGER"),
    ("accounts", "max_file_bytes", "INTEGER"),
]


def migrate_columns(conn: sqlite3.Connection, known: set[tuple[str, str]] | None = None) -> None:
    """Add the columns of ADDED_COLUMNS that a table made before them lacks.

    Each table's columns are read once per call; ``known`` (the database's, kept across
    calls) holds the columns found or added, which later calls skip: every adapter's
    schema calls this again as it opens, and reading every table's columns each time
    was ~0.4 ms a call, 3.8 ms of the ~10 ms an open of a vault took.
    """
    columns: dict[str, set[str]] = {}
    for table, column, declaration in ADDED_COLUMNS:
        if known is not None and (table, column) in known:
            continue
        if table not in columns:
            columns[table] = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        present = columns[table]
        if not present:
            # No such table yet: the adapter that owns it creates it with the column.
            continue
        if column not in present:
            try:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
            except sqlite3.OperationalError as exc:
                # Another process opening the same file added it first.
                if "duplicate column" not in str(exc):
                    raise
            present.add(column)
        if known is not None:
            known.add((table, column))


def migrate_key_owners(conn: sqlite3.Connection) -> None:
    """Every key gets an owner: an account made before members existed becomes an
    organisation whose first owner (made here when it has none, with no address: they
    sign in with a key) owns every key it had, admin or not, toggles kept. Idempotent,
    and a no-op once no key lacks an owner."""
    conn.execute("CREATE INDEX IF NOT EXISTS api_keys_by_member ON api_keys(account_id, member_id)")
    orphaned = conn.execute(
        "SELECT DISTINCT k.account_id, a.created_at FROM api_keys k"
        " JOIN accounts a ON a.id = k.account_id WHERE k.member_id IS NULL"
    ).fetchall()
    for account_id, created_at in orphaned:
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute(
                "SELECT id FROM members WHERE account_id = ? AND role = 'owner'"
                " AND disabled_at IS NULL ORDER BY created_at, id LIMIT 1",
                (account_id,),
            ).fetchone()
            owner = row[0] if row else founder_id(account_id)
            if row is None:
                conn.execute(
                    "INSERT OR IGNORE INTO members (id, account_id, name, role, created_at)"
                    " VALUES (?, ?, ?, 'owner', ?)",
                    (owner, account_id, FOUNDER_NAME, created_at),
                )
            conn.execute(
                "UPDATE api_keys SET member_id = ? WHERE account_id = ? AND member_id IS NULL",
                (owner, account_id),
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


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
        self._columns: set[tuple[str, str]] = set()  # ADDED_COLUMNS found in place
        with self._schema_lock:
            self._apply_schemas(self.connection())
            migrate_columns(self.connection(), self._columns)
            migrate_key_owners(self.connection())

    def add_schema(self, script: str) -> None:
        """Adapters sharing the file (search, budgets) bring their own tables."""
        with self._schema_lock:
            self._schema_scripts.append(script)
            self._apply_schemas(self.connection())
            migrate_columns(self.connection(), self._columns)

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
        """A write transaction holding the write lock from its start; rolled back on error.

        Opened inside another on the same thread, it is a savepoint of the outer one
        (rolled back to on error, committed with it): so two stores' writes can be one
        transaction (an import's files and notes, adapters/sqlite/attachments.py)."""
        conn = self.connection()
        depth: int = getattr(self._local, "depth", 0)
        if depth:
            name = f"nested_{depth}"
            conn.execute(f"SAVEPOINT {name}")
            self._local.depth = depth + 1
            try:
                yield conn
            except BaseException:
                conn.execute(f"ROLLBACK TO {name}")
                conn.execute(f"RELEASE {name}")
                raise
            finally:
                self._local.depth = depth
            conn.execute(f"RELEASE {name}")
            return
        conn.execute("BEGIN IMMEDIATE")
        self._local.depth = 1
        try:
            yield conn
        except BaseException:
            self._local.depth = 0
            conn.execute("ROLLBACK")
            raise
        self._local.depth = 0
        conn.execute("COMMIT")

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
