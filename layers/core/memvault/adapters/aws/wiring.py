"""Builds the AWS backend's adapters from settings, and checks its resources exist.

A missing table or bucket is reported at startup with its name, rather than as an
obscure error on the first request. The search index is not touched at startup: a
search outage must not stop a function from starting (ADR 0031); it is checked (or
created) by the first operation that needs it. The search adapter is not even built at
startup: ``build`` hands out a ``DeferredSearchIndex`` that builds it on first use, so a
function that never searches (the retention sweep) never imports opensearch-py and the
requests stack under it (a few hundred ms of a cold start, ADR 0035); nor does a function
that searches until its first search (``deferred_vector_index``, ADR 0052).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, cast

from botocore.exceptions import ClientError

from memvault.adapters.aws.bodies import BodyStore
from memvault.adapters.aws.budgets import DynamoRateLimiter
from memvault.adapters.aws.clients import error_code, make_client
from memvault.adapters.aws.deferred import DeferredSearchIndex
from memvault.adapters.aws.dynamo import Table
from memvault.adapters.aws.key_cache import KeyCachingStore
from memvault.adapters.aws.store import DynamoVaultStore
from memvault.domain.budgets import BucketPolicy
from memvault.errors import ServiceUnavailable
from memvault.settings import Settings

if TYPE_CHECKING:  # imported where used: importing them imports opensearch-py
    from opensearchpy import OpenSearch

    from memvault.adapters.aws.search import OpenSearchIndex
    from memvault.adapters.aws.vectors import OpenSearchVectorIndex


class SearchClient:
    """The process's one OpenSearch client, built on first use (building it imports
    opensearch-py). The notes index and the vector index both take it from here, so they
    share one connection pool and each holds the client as built: neither depends on
    which of them is used first, nor on what the other's ``client`` attribute holds then
    (a vector index built from ``search.client`` on its first use kept whatever that was,
    a swapped-out client included, for the life of the process)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._client: OpenSearch | None = None

    def __call__(self) -> OpenSearch:
        with self._lock:
            if self._client is None:
                from memvault.adapters.aws.search import make_client as make_search_client

                settings = self._settings
                self._client = make_search_client(
                    _require_search_url(settings),
                    auth=settings.opensearch_auth,
                    region=settings.aws_region,
                    timeout=settings.opensearch_timeout,
                )
            return self._client


def build(
    settings: Settings,
    policy: BucketPolicy,
    *,
    check: bool = True,
    client: SearchClient | None = None,
) -> tuple[DynamoVaultStore, OpenSearchIndex, DynamoRateLimiter]:
    ddb = make_client("dynamodb", settings.aws_region, settings.dynamodb_endpoint)
    s3 = make_client("s3", settings.aws_region, settings.s3_endpoint)
    table = Table(ddb, settings.table)
    bodies = BodyStore(s3, settings.bucket)
    _require_search_url(settings)
    shared = client or SearchClient(settings)
    index = cast("OpenSearchIndex", DeferredSearchIndex(lambda: search_index(settings, shared())))
    if check:
        check_resources(ddb, s3, settings)
    # Keys by hash are cached for 30 s (key_cache.py): a revocation made elsewhere takes
    # up to that long to reach this process.
    return KeyCachingStore(table, bodies), index, DynamoRateLimiter(table, policy)


def _require_search_url(settings: Settings) -> str:
    if not settings.opensearch_url:
        raise ServiceUnavailable(
            "MEMVAULT_OPENSEARCH_URL is not set; the AWS backend needs a search domain",
            code="search_not_configured",
        )
    return settings.opensearch_url


def search_index(settings: Settings, client: OpenSearch | None = None) -> OpenSearchIndex:
    """The configured OpenSearch index on ``client`` (a ``SearchClient``'s) or a new one
    (nothing is sent until it is used)."""
    from memvault.adapters.aws.search import OpenSearchIndex

    if client is None:
        client = SearchClient(settings)()
    return OpenSearchIndex(
        client,
        settings.opensearch_index,
        refresh=settings.opensearch_refresh,
        create_missing=settings.opensearch_create_index,
        shards=settings.opensearch_shards,
        replicas=settings.opensearch_replicas,
    )


def vector_index(settings: Settings, client: OpenSearch | None = None) -> OpenSearchVectorIndex:
    """The chunk indices for vector search (ADR 0026), on ``client`` (the search index's,
    so both share one connection pool) or a new one. Nothing is sent until used."""
    from memvault.adapters.aws.vectors import OpenSearchVectorIndex

    if client is None:
        client = search_index(settings).client
    return OpenSearchVectorIndex(
        client,
        settings.opensearch_vector_index or f"{settings.opensearch_index}-vectors",
        refresh=settings.opensearch_refresh,
        create_missing=settings.opensearch_create_index,
        shards=settings.opensearch_shards,
        replicas=settings.opensearch_replicas,
    )


def deferred_vector_index(settings: Settings, client: SearchClient) -> OpenSearchVectorIndex:
    """``vector_index`` on ``client`` (the one ``build`` gave the notes index), built on
    first use like the notes index itself (building either imports opensearch-py)."""
    return cast(
        "OpenSearchVectorIndex",
        DeferredSearchIndex(lambda: vector_index(settings, client())),
    )


def check_resources(ddb: object, s3: object, settings: Settings) -> None:
    try:
        ddb.describe_table(TableName=settings.table)  # type: ignore[attr-defined]
    except ClientError as exc:
        if error_code(exc) == "ResourceNotFoundException":
            raise ServiceUnavailable(
                f"the DynamoDB table {settings.table!r} does not exist (MEMVAULT_TABLE)",
                code="table_missing",
            ) from exc
        raise
    try:
        s3.head_bucket(Bucket=settings.bucket)  # type: ignore[attr-defined]
    except ClientError as exc:
        if error_code(exc) in ("404", "NoSuchBucket", "NotFound"):
            raise ServiceUnavailable(
                f"the S3 bucket {settings.bucket!r} does not exist (MEMVAULT_BUCKET)",
                code="bucket_missing",
            ) from exc
        raise
