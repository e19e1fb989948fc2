"""What every HTTP surface does first with a request: find its key, and read its body capped.

The REST API (``memvault.api``), the inference routes and MCP (``memvault.mcp``) all take
a key the same way (``Authorization: Bearer <key>``, sent once; the Anthropic route also
takes ``x-api-key``) and refuse a body over its limit with 413 as soon as it passes it. Both
live here, on Starlette's ``Request`` alone, so the surfaces share them without
importing each other. The management routes' second way in, a session cookie with its
CSRF token, is here too (``authenticate_caller``).
"""

from __future__ import annotations

from starlette.requests import Request

from memvault.container import Services
from memvault.domain.models import MAX_NOTE_BYTES, ApiKey
from memvault.errors import InvalidInput, TooLarge, Unauthenticated
from memvault.services.context import Caller, Surface

# The largest request body the JSON routes (REST and MCP) read. A note is at most 1 MiB
# of markdown, and JSON escaping can make that several times longer ("\u0001" is six
# bytes for one).
MAX_REQUEST_BYTES = 8 * MAX_NOTE_BYTES


def bearer_secret(authorization: str | None, x_api_key: str | None = None) -> str | None:
    """The key an Authorization header carries (``x_api_key`` when there is none)."""
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            return value.strip()
        return None
    return x_api_key


def _one_header(request: Request, name: str) -> str | None:
    """The header's one value. Sent twice it is refused, never "the first one wins": two
    keys in one request are a client's (or a proxy's) mistake, and picking one could act
    as an account the client did not mean."""
    values = request.headers.getlist(name)
    if len(values) > 1:
        raise InvalidInput(
            f"the request has {len(values)} {name} headers; send the key in exactly one",
            code="duplicate_authorization",
        )
    return values[0] if values else None


def presented_secret(request: Request, *, allow_x_api_key: bool = False) -> str | None:
    """The key the request carries; an Authorization header that is present but not
    Bearer is refused rather than taken for no key, and so is a repeated one."""
    header = _one_header(request, "Authorization")
    x_api_key = _one_header(request, "x-api-key") if allow_x_api_key else None
    if header is not None and header.strip() and bearer_secret(header) is None:
        raise Unauthenticated(
            "the Authorization header must be 'Bearer <key>'", code="malformed_authorization"
        )
    return bearer_secret(header, x_api_key)


def authenticate(svc: Services, request: Request) -> ApiKey:
    """The request's key, checked (blocking: it may read storage)."""
    return svc.accounts.authenticate(presented_secret(request))


# ---------------------------------------------------------------------- sessions
# The management routes also take a signed-in session: an HttpOnly cookie, and on an
# unsafe method the session's CSRF token echoed in a header (services.sessions). The
# inference routes and MCP take keys only and never look at the cookie.
SESSION_COOKIE = "memvault_session"
CSRF_HEADER = "x-csrf-token"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def client_address(request: Request) -> str:
    """The client's address as the server saw it (behind API Gateway, Mangum sets it from
    the event's source IP); never a header a client could write."""
    return request.client.host if request.client else ""


def over_https(request: Request) -> bool:
    """Did the request come over HTTPS (directly, or to a proxy that says so)?"""
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"


def authenticate_caller(svc: Services, request: Request) -> tuple[Caller, ApiKey | None]:
    """Who the request is: its Bearer key, else its session cookie (blocking). A key wins
    when both are sent; neither is 401 ``missing_api_key``."""
    client = client_address(request)
    secret = presented_secret(request)
    cookie = request.cookies.get(SESSION_COOKIE)
    if secret is None and cookie:
        caller = svc.callers.for_session(
            cookie,
            csrf_token=request.headers.get(CSRF_HEADER),
            unsafe=request.method.upper() in UNSAFE_METHODS,
            client=client,
        )
        return caller, None
    caller, key = svc.callers.for_key(secret, surface=Surface.REST, client=client)
    return caller, key


async def read_body(request: Request, limit: int) -> bytes:
    """The whole body, refused with 413 as soon as it passes ``limit`` bytes."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _body_too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _body_too_large(limit)
        chunks.append(chunk)
    body = b"".join(chunks)
    request._body = body  # later reads (FastAPI's own JSON parsing) reuse it
    return body


def _body_too_large(limit: int) -> TooLarge:
    return TooLarge(
        f"the request body may be at most {limit} bytes; a note may hold at most"
        f" {MAX_NOTE_BYTES} bytes (1 MB) of markdown",
        code="request_too_large",
    )
