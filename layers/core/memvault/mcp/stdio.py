"""MCP over stdio: the memory tools on the local embedded vault, for desktop clients.

``memvault mcp`` runs this. The client launches the process and speaks JSON-RPC on
its stdin and stdout (the SDK keeps stray output off stdout while serving); every
call acts for the embedded install's local account, as an MCP caller, so writes are
screened and budgets are the ones REST and HTTP MCP spend.

A client may write its requests and close stdin at once (``memvault mcp < calls``):
every request read is answered before the process exits. The SDK's server stops at the
end of its input and cancels what is still running, so the server's input is closed
only once stdin has ended and every request has its answer (``_Ledger``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

from memvault.container import Services
from memvault.mcp.server import build_server
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller, Surface


def local_caller() -> Caller:
    return Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.MCP)


def _key(request_id: object) -> str:
    return str(request_id)  # 7 and "7" are one id, as the SDK correlates them


class _Ledger:
    """The client's requests still unanswered; ``settled`` once stdin has ended and no
    answer is still to come.

    A request the client cancels is never answered (MCP forbids it), so it is crossed
    off. A handler waiting on the client itself (a request from the server) can get no
    answer once stdin has ended: then waiting is over, and the SDK answers what is left
    with "Connection closed" errors rather than leaving the client to hang.
    """

    def __init__(self) -> None:
        self.unanswered: Counter[str] = Counter()
        self.asked_client: set[str] = set()
        self.ended = False
        self.settled = anyio.Event()

    def _cross_off(self, request_id: object) -> None:
        key = _key(request_id)
        if self.unanswered[key] > 1:
            self.unanswered[key] -= 1
        else:
            self.unanswered.pop(key, None)

    def _check(self) -> None:
        if self.ended and (not self.unanswered or self.asked_client):
            self.settled.set()

    def from_client(self, item: SessionMessage | Exception) -> None:
        if not isinstance(item, SessionMessage):
            return  # an unreadable line: nothing to answer
        message = item.message
        if isinstance(message, JSONRPCRequest):
            self.unanswered[_key(message.id)] += 1
        elif isinstance(message, JSONRPCNotification):
            if message.method == "notifications/cancelled" and message.params:
                self._cross_off(message.params.get("requestId"))
        elif isinstance(message, JSONRPCResponse | JSONRPCError):
            self.asked_client.discard(_key(message.id))
        self._check()

    def from_server(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError):
            self._cross_off(message.id)
        elif isinstance(message, JSONRPCRequest):
            self.asked_client.add(_key(message.id))
        self._check()

    def stdin_ended(self) -> None:
        self.ended = True
        self._check()


async def serve_answering_all(
    server: Server[Any],
    stdin: ObjectReceiveStream[SessionMessage | Exception],
    stdout: ObjectSendStream[SessionMessage],
) -> None:
    """``server.run`` on the stdio streams, answering every request read before it
    sees the end of its input."""
    ledger = _Ledger()
    to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](0)

    async def relay_in() -> None:
        async with to_server:
            try:
                async for item in stdin:
                    ledger.from_client(item)
                    await to_server.send(item)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return  # the server has stopped reading
            ledger.stdin_ended()
            await ledger.settled.wait()

    async def relay_out() -> None:
        async with stdout, from_server:
            async for item in from_server:
                await stdout.send(item)
                ledger.from_server(item)

    async with anyio.create_task_group() as tg:
        tg.start_soon(relay_in)
        async with anyio.create_task_group() as serving:
            serving.start_soon(relay_out)
            await server.run(server_in, server_out, server.create_initialization_options())
        # The server has stopped and all it said is written: stop reading stdin.
        tg.cancel_scope.cancel()


async def serve_stdio_async(services: Services, caller: Caller) -> None:
    server = build_server(services, lambda _ctx: caller)
    async with stdio_server() as (read_stream, write_stream):
        await serve_answering_all(server, read_stream, write_stream)


def serve_stdio(services: Services, caller: Caller | None = None) -> None:
    """Serve until the client closes stdin."""
    args: tuple[Any, ...] = (services, caller or local_caller())
    anyio.run(serve_stdio_async, *args)
