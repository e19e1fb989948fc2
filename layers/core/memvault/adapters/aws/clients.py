"""boto3 clients with the retry policy memvault wants, and AWS error translation.

Throttling is retried by botocore's adaptive mode with backoff; what is still throttled
after that becomes a clear 503 (``ServiceUnavailable``), never a 500.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from memvault.errors import ServiceUnavailable

RETRY_CONFIG = Config(
    retries={"max_attempts": 8, "mode": "adaptive"},
    connect_timeout=5,
    read_timeout=30,
)

THROTTLING_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "SlowDown",
        "TransactionInProgressException",
        "InternalServerError",
        "ServiceUnavailable",
    }
)


def make_client(service: str, region: str | None, endpoint_url: str | None = None) -> Any:
    config = RETRY_CONFIG
    if service == "s3" and endpoint_url:
        # Local endpoints (tests, MinIO-likes) need path-style bucket addressing.
        config = config.merge(Config(s3={"addressing_style": "path"}))
    return boto3.client(
        service, region_name=region, endpoint_url=endpoint_url or None, config=config
    )


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


@contextmanager
def aws_errors(what: str) -> Iterator[None]:
    """Turn throttling and transport failures into ServiceUnavailable; re-raise the rest."""
    try:
        yield
    except ClientError as exc:
        if error_code(exc) in THROTTLING_CODES:
            raise ServiceUnavailable(
                f"{what} is throttled or unavailable right now; retry shortly",
                code="storage_throttled",
            ) from exc
        raise
    except BotoCoreError as exc:
        raise ServiceUnavailable(
            f"{what} could not be reached ({exc.__class__.__name__})",
            code="storage_unavailable",
        ) from exc
