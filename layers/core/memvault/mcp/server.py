"""The MCP server: the memory tools and the vault's notes, on the official SDK's ``Server``.

Transport-free: ``memvault.mcp.http`` drives it one HTTP request at a time and
``memvault.mcp.stdio`` over stdin/stdout. Who is calling is resolved per request by
the ``caller_for`` the transport passes (the key's account over HTTP, the local account
over stdio), and every call goes through ``memvault.tools`` and ``VaultService``.

Tools: the six memory tools of ``memvault.tools``, same names, schemas and behaviour
as everywhere else; a refused or failed call is a tool result with ``isError`` and a
message the model can read, never a protocol error. Resources: every note, at
``memvault://notes/<percent-encoded path>``, listed in path order and read as
``text/markdown``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Final
from urllib.parse import quote, unquote

import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from memvault import __version__
from memvault.container import Services
from memvault.errors import InvalidInput, MemvaultError, NotFound
from memvault.services.context import Caller
from memvault.tools import TOOLS, TOOLS_BY_NAME, VAULT_INSTRUCTIONS, run_tool

SERVER_NAME: Final = "memvault"
NOTE_URI_PREFIX: Final = "memvault://notes/"
NOTE_URI_TEMPLATE: Final = NOTE_URI_PREFIX + "{+path}"
MARKDOWN: Final = "text/markdown"
RESOURCE_PAGE: Final = 100
# "Resource not found" in the handshake-era specs (2025-06-18, 2025-11-25); the
# 2026-07-28 revision retired the code, and INVALID_PARAMS is used there instead.
RESOURCE_NOT_FOUND: Final = -32002

Context = ServerRequestContext[Any, Any]
CallerFor = Callable[[Context], Caller]


@dataclass(frozen=True, slots=True)
class RequestIdentity:
    """What an HTTP transport attaches to each request it hands to the server."""

    caller: Caller


def note_uri(path: str) -> str:
    return NOTE_URI_PREFIX + quote(path, safe="/")


def path_of_uri(uri: str) -> str:
    if not uri.startswith(NOTE_URI_PREFIX) or len(uri) == len(NOTE_URI_PREFIX):
        raise InvalidInput(
            f"{uri!r} is not a note; note URIs look like {NOTE_URI_PREFIX}folder/Note.md",
            code="invalid_uri",
        )
    return unquote(uri[len(NOTE_URI_PREFIX) :], errors="strict")


def _tool(spec_name: str) -> types.Tool:
    spec = TOOLS_BY_NAME[spec_name]
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema,
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=False,
        ),
    )


MCP_TOOLS: Final[tuple[types.Tool, ...]] = tuple(_tool(spec.name) for spec in TOOLS)

_TEMPLATE = types.ResourceTemplate(
    name="note",
    title="A note of the memory vault",
    uri_template=NOTE_URI_TEMPLATE,
    description="A markdown note, by its path in the vault (folders, a file name ending in .md).",
    mime_type=MARKDOWN,
)


def _protocol_error(ctx: Context, exc: MemvaultError, uri: str | None = None) -> MCPError:
    """A domain error met outside a tool call (resources): a JSON-RPC error."""
    data: dict[str, Any] = {"type": exc.type, "code": exc.code}
    if uri is not None:
        data["uri"] = uri
    if isinstance(exc, NotFound) and uri is not None:
        legacy = ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
        code = RESOURCE_NOT_FOUND if legacy else INVALID_PARAMS
        return MCPError(code=code, message=f"Resource not found: {exc.message}", data=data)
    if isinstance(exc, InvalidInput | NotFound):
        return MCPError(code=INVALID_PARAMS, message=exc.message, data=data)
    return MCPError(code=INTERNAL_ERROR, message=f"{exc.code}: {exc.message}", data=data)


def build_server(services: Services, caller_for: CallerFor) -> Server[Any]:
    """The MCP server for ``services``; ``caller_for`` says who each request acts for."""

    async def list_tools(
        _ctx: Context, _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(MCP_TOOLS))

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in TOOLS_BY_NAME:
            # The spec's protocol error for a tool the server does not have.
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"Unknown tool: {params.name!r}; the tools are {', '.join(TOOLS_BY_NAME)}",
            )
        caller = caller_for(ctx)
        result = await anyio.to_thread.run_sync(
            partial(run_tool, services, caller, params.name, params.arguments)
        )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)], is_error=result.is_error
        )

    async def list_resources(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        caller = caller_for(ctx)
        cursor = params.cursor if params is not None else None
        try:
            page = await anyio.to_thread.run_sync(
                partial(services.vault.list_notes, caller, cursor=cursor, limit=RESOURCE_PAGE)
            )
        except MemvaultError as exc:
            raise _protocol_error(ctx, exc) from exc
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=note_uri(note.path),
                    name=note.path,
                    title=note.title,
                    mime_type=MARKDOWN,
                    size=note.size,
                )
                for note in page.items
            ],
            next_cursor=page.next_cursor,
        )

    async def list_templates(
        _ctx: Context, _params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[_TEMPLATE])

    async def read_resource(
        ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        caller = caller_for(ctx)
        try:
            path = path_of_uri(params.uri)
            note = await anyio.to_thread.run_sync(services.vault.read, caller, path)
        except UnicodeDecodeError as exc:
            bad = InvalidInput("the note URI is not UTF-8 once percent-decoded", code="invalid_uri")
            raise _protocol_error(ctx, bad, params.uri) from exc
        except MemvaultError as exc:
            raise _protocol_error(ctx, exc, params.uri) from exc
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=note_uri(note.path), mime_type=MARKDOWN, text=note.markdown
                )
            ]
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        title="memvault",
        description="A memory vault of markdown notes: search, read, write and link them.",
        instructions=VAULT_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


def caller_of_request(ctx: Context) -> Caller:
    """The caller an HTTP transport authenticated (it attaches a ``RequestIdentity``)."""
    identity = ctx.request
    if not isinstance(identity, RequestIdentity):
        # Never act for anyone by default: a request without an identity is a bug.
        raise MCPError(code=INTERNAL_ERROR, message="the request carries no authenticated caller")
    return identity.caller
