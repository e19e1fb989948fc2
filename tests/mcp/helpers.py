"""Talking to memvault's MCP endpoint the way clients do: the official SDK client, or raw
JSON-RPC over HTTP where a test needs to see the wire."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import httpx
import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent
from mcp_types.version import LATEST_HANDSHAKE_VERSION, LATEST_PROTOCOL_VERSION

T = TypeVar("T")

# The SDK client's two ways in: the initialize handshake (2025-11-25), and the
# 2026-07-28 per-request envelope it probes for with server/discover ("auto").
MODES = ["legacy", "auto"]
NEGOTIATED = {"legacy": LATEST_HANDSHAKE_VERSION, "auto": LATEST_PROTOCOL_VERSION}

ACCEPT = "application/json, text/event-stream"


@asynccontextmanager
async def connect(
    url: str, key: str | None, *, mode: str = "legacy", path: str = "/mcp"
) -> AsyncIterator[Client]:
    """An SDK client session against ``url + path``, sending ``key`` as a Bearer token."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60.0) as http,
        Client(streamable_http_client(url + path, http_client=http), mode=mode) as client,
    ):
        yield client


def run(fn: Callable[[], Awaitable[T]]) -> T:
    return anyio.run(fn)


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def rpc(
    method: str, params: dict[str, Any] | None = None, *, id: int | str | None = 1
) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if id is not None:
        message["id"] = id
    return message


def post(
    url: str,
    body: Any,
    *,
    key: str | None,
    version: str | None = None,
    path: str = "/mcp",
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    """One raw POST of a JSON body (or raw bytes) to the MCP endpoint."""
    sent = {"Accept": ACCEPT, "Content-Type": "application/json"}
    if key:
        sent["Authorization"] = f"Bearer {key}"
    if version:
        sent["MCP-Protocol-Version"] = version
    sent.update(headers or {})
    content = body if isinstance(body, bytes) else httpx.Request("POST", "/", json=body).content
    return httpx.post(url + path, content=content, headers=sent, timeout=60.0)


INIT_PARAMS = {
    "capabilities": {},
    "clientInfo": {"name": "raw-test", "version": "1.0"},
}


def initialize(url: str, key: str, version: str) -> httpx.Response:
    return post(url, rpc("initialize", {**INIT_PARAMS, "protocolVersion": version}), key=key)


async def connect_error(url: str, key: str | None, *, mode: str) -> str:
    """The message of the MCP error a client meets connecting (the SDK may wrap it)."""
    try:
        async with connect(url, key, mode=mode):
            pass
    except BaseException as exc:  # an MCPError, possibly inside exception groups
        found = _find_mcp_error(exc)
        if found is None:
            raise
        return found
    raise AssertionError("the client connected")


def _find_mcp_error(exc: BaseException) -> str | None:
    if isinstance(exc, MCPError):
        return str(exc)
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _find_mcp_error(inner)
            if found is not None:
                return found
    return None
