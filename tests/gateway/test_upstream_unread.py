"""UpstreamStream.unread: what a provider sent that a stream left early had not read yet.

A stream the client leaves is billed for what reached memvault (issue 17), so ``unread``
must return the bytes a provider sent in several writes, not just those the event loop
happened to have read, and must return within its limit when the provider keeps sending.
The provider here is a raw loopback HTTP server, so each write and pause is exact.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import aiohttp

from memvault.gateway.upstream import UpstreamStream

Writer = Callable[[asyncio.StreamWriter], Awaitable[None]]


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def _with_provider(body: Writer, client: Callable[[str], Awaitable[None]]) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        await writer.drain()
        try:
            await body(writer)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        await client(f"http://127.0.0.1:{port}/")
    finally:
        server.close()


def _event(n: int) -> bytes:
    return f'data: {{"n": {n}}}\n\n'.encode()


def test_unread_returns_what_the_provider_sent_in_two_writes_with_a_pause_between() -> None:
    first, second = _event(1) + _event(2), _event(3)
    got: dict[str, object] = {}

    async def body(writer: asyncio.StreamWriter) -> None:
        writer.write(_chunk(first))
        await writer.drain()
        await asyncio.sleep(0.005)  # shorter than the quiet spell unread waits for
        writer.write(_chunk(second))
        await writer.drain()
        await asyncio.sleep(2)  # then silence, the connection left open

    async def client(url: str) -> None:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            stream = UpstreamStream(response)
            started = time.perf_counter()
            got["bytes"] = await stream.unread()
            got["seconds"] = time.perf_counter() - started

    asyncio.run(_with_provider(body, client))
    assert got["bytes"] == first + second
    assert isinstance(got["seconds"], float) and got["seconds"] < 1.0  # not the 2 s silence


def test_unread_returns_within_its_limit_when_the_provider_never_stops() -> None:
    got: dict[str, object] = {}

    async def body(writer: asyncio.StreamWriter) -> None:
        n = 0
        while True:
            writer.write(_chunk(_event(n)))
            await writer.drain()
            n += 1
            await asyncio.sleep(0.002)

    async def client(url: str) -> None:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            stream = UpstreamStream(response)
            started = time.perf_counter()
            got["bytes"] = await stream.unread(quiet=0.02, limit=0.1)
            got["seconds"] = time.perf_counter() - started

    asyncio.run(_with_provider(body, client))
    received = got["bytes"]
    assert isinstance(received, bytes) and received.startswith(_event(0))
    assert received.count(b"data: ") > 3  # it kept reading while bytes came
    assert isinstance(got["seconds"], float) and got["seconds"] < 0.6  # limit 0.1 s, slack


def test_unread_keeps_what_came_before_the_provider_broke_the_connection() -> None:
    sent = _event(1)
    got: dict[str, object] = {}

    async def body(writer: asyncio.StreamWriter) -> None:
        writer.write(_chunk(sent))
        await writer.drain()
        await asyncio.sleep(0.02)
        writer.write(b"zz\r\nnot a chunk")  # the chunked body breaks
        await writer.drain()
        writer.transport.abort()

    async def client(url: str) -> None:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            await asyncio.sleep(0.1)  # the break has reached the client
            got["bytes"] = await UpstreamStream(response).unread()

    asyncio.run(_with_provider(body, client))
    received = got["bytes"]
    assert isinstance(received, bytes) and received.startswith(sent)


def test_unread_of_a_stream_read_to_its_end_is_empty_and_immediate() -> None:
    got: dict[str, object] = {}

    async def body(writer: asyncio.StreamWriter) -> None:
        writer.write(_chunk(_event(1)) + b"0\r\n\r\n")
        await writer.drain()

    async def client(url: str) -> None:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            stream = UpstreamStream(response)
            read = b"".join([chunk async for chunk in stream])
            started = time.perf_counter()
            got["rest"] = await stream.unread()
            got["seconds"] = time.perf_counter() - started
            got["read"] = read

    asyncio.run(_with_provider(body, client))
    assert got["read"] == _event(1)
    assert got["rest"] == b""
    assert isinstance(got["seconds"], float) and got["seconds"] < 0.05
