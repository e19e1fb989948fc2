"""MCP over stdio: the memory tools on the local embedded vault, for desktop clients.

``memvault mcp`` runs this. The client launches the process and speaks JSON-RPC on
its stdin and stdout (the SDK keeps stray output off stdout while serving); every
call acts for the embedded install's local account, as an MCP caller, so writes are
screened and budgets are the ones REST and HTTP MCP spend.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.stdio import stdio_server

from memvault.container import Services
from memvault.mcp.server import build_server
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller, Surface


def local_caller() -> Caller:
    return Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.MCP)


async def serve_stdio_async(services: Services, caller: Caller) -> None:
    server = build_server(services, lambda _ctx: caller)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_stdio(services: Services, caller: Caller | None = None) -> None:
    """Serve until the client closes stdin."""
    args: tuple[Any, ...] = (services, caller or local_caller())
    anyio.run(serve_stdio_async, *args)
