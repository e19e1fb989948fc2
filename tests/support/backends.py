"""Settings for each storage backend the suite runs on, each test on fresh storage.

``sqlite`` is a new database file under the test's tmp_path. ``aws`` is a new DynamoDB
table and S3 bucket on moto, in process, and a new index on the real local OpenSearch
node (taken from a pool made ahead, see ``tests.support.opensearch.IndexPool``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memvault.settings import Settings
from tests.support.aws import REGION, TransactionConflicts, create_resources, serial_moto
from tests.support.opensearch import index_pool, opensearch_url, require_reason

# Every backend the contract suite runs against: embedded SQLite, and AWS as DynamoDB +
# S3 on moto plus a real local OpenSearch node (scripts/opensearch/start.sh).
BACKENDS = ["sqlite", "aws"]


def make_settings(tmp_path: Path, backend: str, **overrides: object) -> Settings:
    # Passwords hash at argon2id's cheapest cost: the suite hashes hundreds of them.
    overrides.setdefault("password_hash_cost", "low")
    return Settings(backend=backend, data_dir=tmp_path / "data", **overrides)  # type: ignore[arg-type]


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
