"""boto3 clients with the retry policy memvault wants, and AWS error translation.

Throttling and transient errors are retried by botocore's standard mode with jittered
backoff; what still fails after that becomes a clear 503 (``ServiceUnavailable``), never
a 500. The timeouts and attempts are sized so one call that hangs gives up inside a
buffered function's 25 s (template.yaml), itself inside API Gateway's 29 s:
``worst_case_seconds`` is what tests/sam compares with the template.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from memvault.errors import ServiceUnavailable

CONNECT_TIMEOUT = 2.0
READ_TIMEOUT = 5.0
TOTAL_ATTEMPTS = 3
# botocore's standard mode sleeps up to 2**(n-1) s (jittered) before retry n.
RETRY_CONFIG = Config(
    retries={"total_max_attempts": TOTAL_ATTEMPTS, "mode": "standard"},
    connect_timeout=CONNECT_TIMEOUT,
    read_timeout=READ_TIMEOUT,
)


def worst_case_seconds() -> float:
    """The longest one AWS call can take before it raises: every attempt connecting and
    waiting out its read timeout, with the largest backoff between attempts."""
    backoff = sum(2.0 ** (n - 1) for n in range(1, TOTAL_ATTEMPTS))
    return TOTAL_ATTEMPTS * (CONNECT_TIMEOUT + READ_TIMEOUT) + backoff


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


def make_client(
    service: str, region: str | None, endpoint_url: str | None = None, *, sigv4: bool = False
) -> Any:
    config = RETRY_CONFIG
    if sigv4:
        # Presigned S3 URLs signed with SigV4 (botocore's default for S3 presigning is
        # SigV2, which signs no Content-Length and newer regions refuse).
        config = config.merge(Config(signature_version="s3v4"))
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
