"""Domain errors.

Every failure a user can cause or meet is one of these classes. Each carries a
stable machine-readable ``code`` and a human message; the *kind* of error (its
class) decides the HTTP status in exactly one place, ``STATUS_BY_ERROR`` below. Every
HTTP edge asks it through ``status_for``: the REST API's handlers (``memvault.api.errors``
renders the body), MCP's refusals and the gateway's usage records. Domain and service
code raise these and never think about HTTP; the table is plain numbers, so this module
imports no web framework.
"""

from __future__ import annotations


class MemvaultError(Exception):
    """Base class: ``code`` is stable and documented, ``message`` is for people."""

    type: str = "internal_error"
    default_code: str = "internal_error"

    def __init__(self, message: str, *, code: str | None = None, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.details = details


class InvalidInput(MemvaultError):
    """The request is well-formed but a value breaks a rule (bad path, bad query...)."""

    type = "invalid_request"
    default_code = "invalid_input"


class InvalidPath(InvalidInput):
    default_code = "invalid_path"


class Unauthenticated(MemvaultError):
    type = "authentication_error"
    default_code = "invalid_api_key"


class PermissionDenied(MemvaultError):
    type = "permission_error"
    default_code = "forbidden"


class NotFound(MemvaultError):
    type = "not_found"
    default_code = "not_found"


class Conflict(MemvaultError):
    """The write was based on a state that is no longer current (If-Match mismatch...)."""

    type = "conflict"
    default_code = "version_conflict"


class TooLarge(MemvaultError):
    """A single payload is over its size limit (note over 1 MB, archive too big...)."""

    type = "payload_too_large"
    default_code = "too_large"


class QuotaExceeded(MemvaultError):
    """The vault cannot hold more (note count or byte quota)."""

    type = "quota_exceeded"
    default_code = "vault_quota_exceeded"


class Unprocessable(MemvaultError):
    """The content was understood but refused (a bad archive, screened text...)."""

    type = "unprocessable"
    default_code = "unprocessable"


class RateLimited(MemvaultError):
    type = "rate_limited"
    default_code = "budget_exhausted"

    def __init__(self, message: str, *, retry_after: float, code: str | None = None) -> None:
        super().__init__(message, code=code, retry_after=retry_after)
        self.retry_after = retry_after


class ServiceUnavailable(MemvaultError):
    """A dependency is down (search engine, storage throttling past retries)."""

    type = "service_unavailable"
    default_code = "dependency_unavailable"


class PaymentRequired(MemvaultError):
    """The account's balance or the key's spend cap cannot cover the request."""

    type = "payment_required"
    default_code = "insufficient_balance"


class UpstreamFailed(MemvaultError):
    """The model provider answered with a server error, garbage, or not at all."""

    type = "upstream_error"
    default_code = "upstream_error"


class UpstreamTimeout(UpstreamFailed):
    """The model provider did not answer in time."""

    default_code = "upstream_timeout"


# Most specific class first: the first isinstance match wins.
STATUS_BY_ERROR: list[tuple[type[MemvaultError], int]] = [
    (InvalidInput, 400),
    (Unauthenticated, 401),
    (PaymentRequired, 402),
    (PermissionDenied, 403),
    (NotFound, 404),
    (Conflict, 409),
    (TooLarge, 413),
    (QuotaExceeded, 413),
    (Unprocessable, 422),
    (RateLimited, 429),
    (ServiceUnavailable, 503),
    (UpstreamTimeout, 504),
    (UpstreamFailed, 502),
]


def status_for(exc: MemvaultError) -> int:
    """The HTTP status for an error of this kind; 500 for one the table does not name."""
    for cls, status in STATUS_BY_ERROR:
        if isinstance(exc, cls):
            return status
    return 500
