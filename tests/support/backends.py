"""Settings for each storage backend the suite runs on, each test on fresh storage.

``sqlite`` is a new database file under the test's tmp_path. ``aws`` is a new DynamoDB
table and S3 bucket on moto, in process, and a new index on the real local OpenSearch
node (taken from a pool made ahead, see ``tests.support.opensearch.IndexPool``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from memvault.settings import Settings
from tests.support.aws import REGION, TransactionConflicts, create_resources, serial_moto
from tests.support.opensearch import index_pool, opensearch_url, require_reason

# Every backend the contract suite runs against: embedded SQLite, and AWS as DynamoDB +
# S3 on moto plus a real local OpenSearch node (scripts/opensearch/start.sh).
BACKENDS = ["sqlite", "aws"]


# Settings made, by everything they were made from but the data directory (see below).
_settings_made: dict[str, Settings] = {}
_settings_lock = threading.Lock()


def _settings_key(backend: str, overrides: dict[str, object]) -> str | None:
    """What a Settings is made from besides its data directory: the backend, the
    overrides, every MEMVAULT_* variable of the environment, the working directory and
    its .env file (pydantic-settings reads both); None when that cannot be told."""
    try:
        dotenv = Path(".env")
        env_file = dotenv.read_bytes() if dotenv.is_file() else b""
        environment = sorted(
            (k, v) for k, v in os.environ.items() if k.upper().startswith("MEMVAULT_")
        )
        return repr((backend, sorted(overrides.items()), environment, os.getcwd(), env_file))
    except Exception:
        return None


def make_settings(tmp_path: Path, backend: str, **overrides: object) -> Settings:
    """Settings for a test's storage under ``tmp_path``.

    Making a Settings reads its ~140 fields from the environment and the .env file: 3.8 ms
    of CPU, for every services and live-server setup (thousands in a run). Settings has no
    validator, so one made from the same backend, overrides and environment with another
    data directory is the same but for that field: the first is made and kept, and each
    later one is a deep copy of it with the test's own data directory.
    """
    # Passwords hash at argon2id's cheapest cost: the suite hashes hundreds of them.
    overrides.setdefault("password_hash_cost", "low")
    data_dir = tmp_path / "data"
    # Each AWS test's own table, bucket and indices are plain strings, which the
    # constructor keeps as they are: they are copied in like the data directory, so a
    # Settings is made once per run for the AWS tier too, not once per test (~3 ms).
    names = {k: v for k, v in overrides.items() if k in _NAMES and isinstance(v, str)}
    rest = {k: v for k, v in overrides.items() if k not in names}
    key = _settings_key(backend, {**rest, **dict.fromkeys(names, "")})
    with _settings_lock:
        made = _settings_made.get(key) if key is not None else None
    if made is None:
        made = Settings(backend=backend, data_dir=data_dir, **overrides)  # type: ignore[arg-type]
        if key is not None:
            with _settings_lock:
                _settings_made[key] = made.model_copy(deep=True)
        return made
    return made.model_copy(update={"data_dir": data_dir, **names}, deep=True)


# Settings fields of type str (no validator) that name a test's own resources.
_NAMES = frozenset({"table", "bucket", "opensearch_index", "opensearch_vector_index"})


def require_opensearch() -> str:
    """The local node's URL; without one the AWS tier is skipped, or fails under CI."""
    url = opensearch_url()
    if url is None:
        reason = f"the AWS tier needs the local OpenSearch node: {require_reason()}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return url


@contextmanager
def aws_settings(
    tmp_path: Path, *, conflicts: TransactionConflicts | None = None, **overrides: object
) -> Iterator[Settings]:
    """A fresh table and bucket on moto and a fresh index on the real node; with
    ``conflicts``, DynamoDB's transaction conflicts too (``TransactionConflicts``)."""
    url = require_opensearch()
    pool = index_pool(url)
    with serial_moto(conflicts=conflicts):
        table, bucket = create_resources()
        index = pool.take()
        # Vector indices are reused, emptied between tests (IndexPool.take_vectors).
        vectors = pool.take_vectors()
        overrides.setdefault("opensearch_vector_index", vectors)
        try:
            yield make_settings(
                tmp_path,
                "aws",
                aws_region=REGION,
                table=table,
                bucket=bucket,
                opensearch_url=url,
                opensearch_auth="none",
                opensearch_index=index,
                opensearch_refresh="true",
                **overrides,
            )
        finally:
            pool.give_back(index)
            pool.give_back_vectors(vectors)


@contextmanager
def backend_settings(tmp_path: Path, backend: str, **overrides: object) -> Iterator[Settings]:
    if backend == "aws":
        with aws_settings(tmp_path, **overrides) as settings:
            yield settings
    else:
        yield make_settings(tmp_path, backend, **overrides)


# ----------------------------------------------------------------- SQLite from a template
_templates: dict[str, Path | None] = {}
_templates_lock = threading.Lock()
_template_root: list[Path] = []


def _template_key(settings: Settings) -> str:
    return repr(sorted(settings.model_dump(exclude={"data_dir"}).items()))


def _make_template(settings: Settings) -> Path | None:
    """An empty database at memvault's schema for ``settings``, made by memvault itself;
    None when making one left any row in it (then tests start from no file, as before)."""
    from memvault.container import build_services
    from tests.support.clock import FakeClock

    if not _template_root:
        _template_root.append(Path(tempfile.mkdtemp(prefix="memvault-sqlite-templates-")))
        atexit.register(shutil.rmtree, _template_root[0], True)
    place = Path(tempfile.mkdtemp(dir=_template_root[0]))
    made = settings.model_copy(update={"data_dir": place / "data"})
    build_services(made, clock=FakeClock())
    with closing(sqlite3.connect(made.sqlite_path)) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        # Virtual tables' shadow tables count too: any row at all and no template.
        if any(conn.execute(f'SELECT 1 FROM "{t}" LIMIT 1').fetchone() for t in tables):
            return None
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    template = place / "template.sqlite3"
    shutil.copyfile(made.sqlite_path, template)
    return template


def seed_sqlite(settings: Settings) -> None:
    """Start ``settings``' SQLite database as a copy of an empty one at memvault's schema.

    Each SQLite test's services created memvault's schema in a new file: some 40 tables,
    indices and triggers, 15-30 ms of wall time and ~5 ms of CPU a test, over a thousand
    tests. A database made by memvault with the same settings once per process, with no
    row in it, is copied instead; memvault then opens it as it opens any existing
    database (its schema scripts and column checks run, finding everything in place).
    Only where no database exists yet, and only for the fixtures that build services at
    once (``services``, ``live_server``): tests that make their own files are untouched.
    """
    if settings.backend != "sqlite" or settings.sqlite_path.exists():
        return
    key = _template_key(settings)
    with _templates_lock:
        if key not in _templates:
            _templates[key] = _make_template(settings)
        template = _templates[key]
    if template is not None:
        settings.sqlite_path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template, settings.sqlite_path)
