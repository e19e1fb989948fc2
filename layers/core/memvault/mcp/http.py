"""MCP over streamable HTTP at ``/mcp``: stateless, one JSON-RPC request per POST, JSON out.

Every POST stands alone: nothing is kept between requests (no ``Mcp-Session-Id``, no
event stream), so any process or Lambda instance can answer any request, and a warm
process answers any number of them. The official SDK's ``StreamableHTTPSessionManager``
is deliberately not used: it needs a task group started once per process from an ASGI
lifespan (``run()`` may be entered only once per instance), and an adapter such as
Mangum runs the lifespan around every invocation, so its second invocation fails.
Instead each POST is validated here and handed to the SDK's single-request kernel
(``mcp.server.runner.serve_one``) with a fresh, born-ready ``Connection``: the SDK's
own ``Server`` still does method dispatch, params validation, ``initialize``
negotiation and result shaping, with nothing started and nothing to tear down.

Protocol versions: the handshake era (``initialize``; 2024-11-05 to 2025-11-25, so
2025-06-18 and 2025-11-25 included) and the per-request envelope era (2026-07-28, the
SDK's ``LATEST_PROTOCOL_VERSION``, via ``server/discover``), routed by the
``MCP-Protocol-Version`` header as the SDK routes them.

Order of checks: Host and Origin (DNS rebinding), the method (POST only; anything else
is 405), the key (401 with ``WWW-Authenticate``, or 403 when its ``mcp`` toggle is
off), then the body. Every refusal is a JSON-RPC error object; envelope problems are
answered 400 with a message that says what is wrong.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.to_thread
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.runner import modern_error_data, serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PROTOCOL_VERSION_HEADER,
    InboundLadderRejection,
    classify_inbound_request,
    find_duplicated_routing_header,
    unsupported_protocol_version_rejection,
)
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCRequest,
    RequestId,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from starlette.types import Receive, Scope, Send

from memvault.container import Services
from memvault.domain.models import ApiKey
from memvault.errors import (
    MemvaultError,
    PermissionDenied,
    TooLarge,
    Unauthenticated,
    status_for,
)
from memvault.http_edge import MAX_REQUEST_BYTES, authenticate, read_body
from memvault.mcp.server import RequestIdentity, build_server, caller_of_request
from memvault.services.context import Caller, Surface

log = logging.getLogger("memvault.mcp")

JSON: Final = "application/json"
WWW_AUTHENTICATE: Final = 'Bearer realm="memvault"'


# ---------------------------------------------------------------------- Host and Origin
@dataclass(frozen=True, slots=True)
class HostPolicy:
    """Which Host and Origin headers /mcp answers (DNS rebinding protection).

    A host entry without a port matches that host on any port; with a port, exactly.
    An Origin passes when it is listed, or when its host is an allowed host; a request
    without an Origin (not from a browser) passes.
    """

    hosts: tuple[str, ...]
    origins: tuple[str, ...] = ()

    @classmethod
    def parse(cls, hosts: str | Sequence[str], origins: str | Sequence[str] = "") -> HostPolicy:
        return cls(hosts=_entries(hosts), origins=tuple(o.rstrip("/") for o in _entries(origins)))

    def host_allowed(self, host: str | None) -> bool:
        if not host:
            return False
        host = host.strip().lower()
        for entry in self.hosts:
            if host == entry:
                return True
            has_port = ":" in entry.rsplit("]", 1)[-1]
            if not has_port and host.startswith(entry + ":") and host[len(entry) + 1 :].isdigit():
                return True
        return False

    def origin_allowed(self, origin: str | None) -> bool:
        if origin is None:
            return True
        origin = origin.strip().lower().rstrip("/")
        if origin in self.origins:
            return True
        scheme, sep, rest = origin.partition("://")
        return bool(sep) and scheme in ("http", "https") and self.host_allowed(rest)


def _entries(value: str | Sequence[str]) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else value
    return tuple(item.strip().lower() for item in items if item.strip())


# ---------------------------------------------------------------------- responses
def _json(
    status: int, body: Mapping[str, Any], headers: Mapping[str, str] | None = None
) -> Response:
    # Lone surrogates cannot be UTF-8; "backslashreplace" keeps them valid JSON escapes.
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return Response(
        content.encode("utf-8", "backslashreplace"),
        status_code=status,
        media_type=JSON,
        headers=dict(headers or {}),
    )


def _error(
    status: int,
    code: int,
    message: str,
    *,
    request_id: RequestId | None = None,
    data: Any = None,
    headers: Mapping[str, str] | None = None,
) -> Response:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return _json(status, {"jsonrpc": "2.0", "id": request_id, "error": error}, headers)


def _refusal(status: int, type_: str, code: str, message: str, **headers: str) -> Response:
    """An HTTP-level refusal (before any JSON-RPC is read), as a JSON-RPC error object."""
    data = {"type": type_, "code": code, "status": status}
    return _error(status, INVALID_REQUEST, message, data=data, headers=headers)


def _domain_refusal(exc: MemvaultError) -> Response:
    status = status_for(exc)
    headers = {"WWW-Authenticate": WWW_AUTHENTICATE} if isinstance(exc, Unauthenticated) else {}
    return _refusal(status, exc.type, exc.code, exc.message, **headers)


# ---------------------------------------------------------------------- the envelope
def _is_request_id(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _envelope_problem(message: dict[str, Any]) -> str | None:
    """What is wrong with a JSON-RPC 2.0 message object, in words, or None."""
    if message.get("jsonrpc") != "2.0":
        return "'jsonrpc' must be \"2.0\""
    if "method" not in message:
        if "id" in message and ("result" in message or "error" in message):
            return None  # a response from the client
        return "'method' is missing"
    if not isinstance(message["method"], str) or not message["method"]:
        return "'method' must be a non-empty string"
    if "params" in message and not isinstance(message["params"], dict):
        return "'params' must be an object"
    if "id" in message and not _is_request_id(message["id"]):
        return "'id' must be a string or an integer"
    return None


def _validation_summary(exc: ValidationError, *, within: str | None = None) -> str:
    """Pydantic's complaints as "where: what" (at most five); ``within`` drops a prefix."""
    parts = []
    for problem in exc.errors(include_url=False)[:5]:
        loc = [str(part) for part in problem.get("loc", ())]
        if within is not None and loc[:1] == [within]:
            loc = loc[1:]
        parts.append(f"{'.'.join(loc) or within or 'body'}: {problem.get('msg', 'invalid')}")
    return "; ".join(parts)


@dataclass
class _RequestChannel:
    """The SDK's per-request ``DispatchContext`` for a stateless JSON exchange.

    There is no back-channel: the one answer is this POST's JSON response, so the
    server can neither send requests to the client nor stream notifications.
    """

    transport: TransportContext
    request_id: RequestId | None
    message_metadata: ServerMessageMetadata
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> None:
        return None

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        return None


# ---------------------------------------------------------------------- the endpoint
class McpHttpApp:
    """The ASGI endpoint for /mcp: stateless streamable HTTP with JSON responses."""

    def __init__(
        self,
        services: Services,
        *,
        allowed_hosts: str | Sequence[str] | None = None,
        allowed_origins: str | Sequence[str] | None = None,
    ) -> None:
        settings = services.settings
        self.services = services
        self.server: Server[Any] = build_server(services, caller_of_request)
        self.hosts = HostPolicy.parse(
            settings.mcp_allowed_hosts if allowed_hosts is None else allowed_hosts,
            settings.mcp_allowed_origins if allowed_origins is None else allowed_origins,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # no WebSocket on /mcp; closing without accepting refuses it
        request = Request(scope, receive)
        response = await self.respond(request)
        await response(scope, receive, send)

    async def respond(self, request: Request) -> Response:
        host = request.headers.get("host")
        if not self.hosts.host_allowed(host):
            log.warning("mcp: refused host", extra={"host": host})
            return _refusal(
                421,
                "invalid_request",
                "invalid_host",
                f"the Host header {host!r} is not one this server answers for MCP"
                " (MEMVAULT_MCP_ALLOWED_HOSTS)",
            )
        origin = request.headers.get("origin")
        if not self.hosts.origin_allowed(origin):
            log.warning("mcp: refused origin", extra={"origin": origin})
            return _refusal(
                403,
                "permission_error",
                "invalid_origin",
                f"the Origin {origin!r} may not use this MCP endpoint"
                " (MEMVAULT_MCP_ALLOWED_ORIGINS)",
            )
        if request.method != "POST":
            return _refusal(
                405,
                "invalid_request",
                "method_not_allowed",
                f"{request.method} is not supported on {request.url.path}: this MCP server is"
                " stateless and opens no event stream; send each JSON-RPC message with POST",
                Allow="POST",
            )
        try:
            key: ApiKey = await anyio.to_thread.run_sync(authenticate, self.services, request)
            if not key.toggles.mcp:
                raise PermissionDenied(
                    "MCP is turned off for this key; turn on its mcp toggle"
                    ' (PATCH /v1/keys/{id} with {"mcp": true}, or'
                    " `memvault keys toggle <id> --mcp on`)",
                    code="mcp_disabled",
                )
            if not key.vault:
                raise PermissionDenied(
                    "memory unavailable: no vault is bound to this key", code="vault_not_bound"
                )
        except MemvaultError as exc:
            return _domain_refusal(exc)
        caller = Caller(account_id=key.account_id, surface=Surface.MCP, key_id=key.id)
        return await self.handle_post(request, caller)

    async def handle_post(self, request: Request, caller: Caller) -> Response:
        """One authenticated POST: a JSON-RPC request answered with JSON, or 202."""
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != JSON:
            return _refusal(
                415,
                "invalid_request",
                "unsupported_media_type",
                f"send JSON-RPC as {JSON} (the Content-Type was {content_type or 'missing'})",
            )
        accept = request.headers.get("accept", "").strip()
        if accept and not check_accept_headers(request)[0]:
            return _refusal(
                406,
                "invalid_request",
                "not_acceptable",
                f"this server answers with {JSON}; the Accept header must allow it",
            )
        try:
            body = await read_body(request, MAX_REQUEST_BYTES)
        except TooLarge as exc:
            return _domain_refusal(exc)
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError):
            return _error(400, PARSE_ERROR, "Parse error: the request body is not valid JSON")
        if isinstance(decoded, list):
            return _error(
                400,
                INVALID_REQUEST,
                "Invalid Request: batches are not supported; send one JSON-RPC message per POST",
            )
        if not isinstance(decoded, dict):
            return _error(400, INVALID_REQUEST, "Invalid Request: the body must be a JSON object")
        raw_id = decoded.get("id")
        echo_id = raw_id if _is_request_id(raw_id) else None
        problem = _envelope_problem(decoded)
        if problem is not None:
            return _error(400, INVALID_REQUEST, f"Invalid Request: {problem}", request_id=echo_id)
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        modern = version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS
        if "method" not in decoded or "id" not in decoded:
            # A notification, or a response to a request this server never sends:
            # accepted and dropped, as the SDK's stateless transport does.
            if modern and version is not None:
                rejection = unsupported_protocol_version_rejection(version)
                if rejection is not None:
                    return _error(400, rejection.code, rejection.message, data=rejection.data)
            return Response(status_code=202)
        try:
            message = JSONRPCRequest.model_validate(decoded)
        except ValidationError as exc:
            return _error(
                400,
                INVALID_REQUEST,
                f"Invalid Request: {_validation_summary(exc)}",
                request_id=echo_id,
            )
        if modern:
            duplicated = find_duplicated_routing_header(request.headers.items())
            if duplicated is not None:
                return _error(
                    400,
                    HEADER_MISMATCH,
                    f"the {duplicated} header appears more than once",
                    request_id=message.id,
                )
            verdict = classify_inbound_request(decoded, headers=dict(request.headers))
            if isinstance(verdict, InboundLadderRejection):
                status = ERROR_CODE_HTTP_STATUS.get(verdict.code, 400)
                return _error(
                    status, verdict.code, verdict.message, request_id=message.id, data=verdict.data
                )
            connection = Connection.from_envelope(
                verdict.protocol_version, verdict.client_info, verdict.client_capabilities
            )
        else:
            # Handshake era: born ready, like the SDK's stateless transport; the header
            # (or the spec's default when absent) is the negotiated version.
            connection = Connection.from_envelope(version or DEFAULT_NEGOTIATED_VERSION, None, None)
        channel = _RequestChannel(
            transport=TransportContext(
                kind="streamable-http", can_send_request=False, headers=request.headers
            ),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=RequestIdentity(caller)),
        )
        try:
            result = await serve_one(
                self.server,
                channel,
                message.method,
                message.params,
                connection=connection,
                lifespan_state={},
            )
        except Exception as exc:
            error = self._error_data(message.method, exc)
            status = ERROR_CODE_HTTP_STATUS.get(error.code, 200) if modern else 200
            return _json(
                status,
                {
                    "jsonrpc": "2.0",
                    "id": message.id,
                    "error": error.model_dump(mode="json", by_alias=True, exclude_none=True),
                },
            )
        return _json(200, {"jsonrpc": "2.0", "id": message.id, "result": result})

    @staticmethod
    def _error_data(method: str, exc: Exception) -> ErrorData:
        if isinstance(exc, ValidationError):
            # The SDK's own mapping says only "Invalid request parameters"; say which.
            return ErrorData(
                code=INVALID_PARAMS,
                message=f"Invalid params for {method}: {_validation_summary(exc, within='params')}",
            )
        return modern_error_data(exc)


class _McpRoute(Route):
    """A route that names itself in the scope, as FastAPI's routes do (access logs)."""

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["route"] = self
        await super().handle(scope, receive, send)


def mcp_routes(services: Services) -> list[BaseRoute]:
    """/mcp and /mcp/, both answered directly (a redirect is a request clients drop)."""
    endpoint = McpHttpApp(services)
    return [
        _McpRoute("/mcp", endpoint=endpoint, name="mcp", include_in_schema=False),
        _McpRoute("/mcp/", endpoint=endpoint, name="mcp_slash", include_in_schema=False),
    ]


def create_mcp_app(services: Services) -> Starlette:
    """/mcp alone, for a function of its own (e.g. ``Mangum(create_mcp_app(get_services()))``)."""
    return Starlette(routes=mcp_routes(services))
