"""The raw ASGI app: records each request, routes it, and plays one scripted step.

Raw ASGI rather than a framework because the faults need control a framework hides:
breaking a chunked body halfway, or holding a request open without a response.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

from . import catalog, embeddings, render_anthropic, render_openai, render_responses
from .resolved import ResolvedReply, splice_raw
from .script import Script
from .steps import Fault, Hang, Malformed, RecordedRequest, Reply, Step

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Dialect(Protocol):
    """What each render_* module provides for its wire format."""

    def resolve(self, reply: Reply, request_json: Any, body_size: int) -> ResolvedReply: ...
    def completion(self, r: ResolvedReply) -> dict[str, Any]: ...
    def stream_events(self, r: ResolvedReply) -> list[bytes]: ...
    def error_body(self, status: int, message: str) -> dict[str, Any]: ...
    def error_event(self, message: str) -> bytes: ...
    def garbage_event(self) -> bytes: ...
    def request_problem(self, request_json: Any) -> str | None: ...


OPENAI: Dialect = render_openai
ANTHROPIC: Dialect = render_anthropic
RESPONSES: Dialect = render_responses
ROUTES: dict[str, Dialect] = {
    "/v1/chat/completions": OPENAI,
    "/v1/messages": ANTHROPIC,
    "/v1/responses": RESPONSES,
}


class ScriptedDisconnect(Exception):
    """Raised mid-body so uvicorn aborts the connection without the final chunk."""


class _DropScriptedDisconnects(logging.Filter):
    # uvicorn logs every app exception as an error; ours are on purpose, so keep the
    # log for real failures only.
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], ScriptedDisconnect))


_UVICORN_LOG = logging.getLogger("uvicorn.error")
if not any(isinstance(f, _DropScriptedDisconnects) for f in _UVICORN_LOG.filters):
    _UVICORN_LOG.addFilter(_DropScriptedDisconnects())


def _json(payload: Any) -> bytes:
    return json.dumps(payload).encode()


async def _respond(
    send: Send, status: int, body: bytes, headers: dict[str, str] | None = None
) -> None:
    merged = {"content-type": "application/json", **(headers or {})}
    raw = [(k.lower().encode(), v.encode()) for k, v in merged.items()]
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, or None when the client went away first."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body) if body else None
    except ValueError:
        return None


class UpstreamApp:
    def __init__(self, script: Script, stopping: Callable[[], asyncio.Event]) -> None:
        self._script = script
        # The event belongs to the server's loop, which exists only once it runs.
        self._stopping = stopping

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = await _read_body(receive)
        if body is None:
            return
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        method, path = scope["method"], scope["path"]
        request_json = _parse(body)
        self._script.record(RecordedRequest(method, path, headers, body, request_json))

        dialect = ROUTES.get(path)
        if method == "GET" and path == "/v1/models":
            models = (
                catalog.anthropic_models()
                if "anthropic-version" in headers
                else catalog.openai_models()
            )
            await _respond(send, 200, _json(models))
        elif method == "POST" and path == "/v1/embeddings":
            await self._embeddings(request_json, receive, send)
        elif method == "POST" and dialect is not None:
            # Refused as the provider would, without spending a scripted step: a test
            # that sends such a body sees the provider's 400, as it would in production.
            problem = dialect.request_problem(request_json)
            if problem is not None:
                await _respond(send, 400, _json(dialect.error_body(400, problem)))
                return
            step = self._script.next_step()
            await self._play(step, dialect, request_json, len(body), receive, send)
        else:
            message = f"Invalid URL ({method} {path})"
            await _respond(send, 404, _json(OPENAI.error_body(404, message)))

    async def _embeddings(self, request_json: Any, receive: Receive, send: Send) -> None:
        problem = embeddings.problem(request_json)
        if problem is not None:
            await _respond(send, 400, _json(OPENAI.error_body(400, problem)))
            return
        step = self._script.next_embedding_step()
        if isinstance(step, Fault):
            body = (
                step.body
                if isinstance(step.body, bytes)
                else _json(
                    step.body
                    or OPENAI.error_body(step.status, f"scripted fault: HTTP {step.status}")
                )
            )
            await _respond(send, step.status, body, step.headers)
        elif isinstance(step, Hang):
            if await self._hang(step.seconds, receive):
                await _respond(send, 504, _json(OPENAI.error_body(504, "scripted hang elapsed")))
        elif isinstance(step, Malformed):
            await _respond(send, 200, step.body, {"content-type": step.content_type})
        else:
            await _respond(send, 200, _json(embeddings.answer(request_json)))

    async def _play(
        self,
        step: Step,
        dialect: Dialect,
        request_json: Any,
        body_size: int,
        receive: Receive,
        send: Send,
    ) -> None:
        if isinstance(step, Reply):
            r = dialect.resolve(step, request_json, body_size)
            streaming = isinstance(request_json, dict) and request_json.get("stream") is True
            if streaming:
                await self._stream(r, dialect, receive, send)
            elif step.gzip:
                body = gzip.compress(splice_raw(_json(dialect.completion(r)), r))
                await _respond(send, 200, body, {"content-encoding": "gzip", **step.headers})
            else:
                body = splice_raw(_json(dialect.completion(r)), r)
                await _respond(send, 200, body, step.headers)
        elif isinstance(step, Fault):
            if step.body is None:
                body = _json(dialect.error_body(step.status, f"scripted fault: HTTP {step.status}"))
            else:
                body = step.body if isinstance(step.body, bytes) else _json(step.body)
            await _respond(send, step.status, body, step.headers)
        elif isinstance(step, Hang):
            if await self._hang(step.seconds, receive):
                body = _json(dialect.error_body(504, "scripted hang elapsed"))
                await _respond(send, 504, body, {"connection": "close"})
        else:
            assert isinstance(step, Malformed)
            await _respond(send, 200, step.body, {"content-type": step.content_type})

    async def _pause(self, seconds: float) -> None:
        """Sleep, but wake at once when the server stops so shutdown stays prompt."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping().wait(), timeout=seconds)

    async def _hang(self, seconds: float, receive: Receive) -> bool:
        """Wait out a Hang; False when the client left (then nobody needs an answer)."""
        pause = asyncio.ensure_future(self._pause(seconds))
        gone = asyncio.ensure_future(_until_disconnect(receive))
        done, _ = await asyncio.wait({pause, gone}, return_when=asyncio.FIRST_COMPLETED)
        for task in (pause, gone):
            task.cancel()
        return gone not in done

    async def _stream(
        self, r: ResolvedReply, dialect: Dialect, receive: Receive, send: Send
    ) -> None:
        headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-cache"),
            *((k.lower().encode(), v.encode()) for k, v in r.reply.headers.items()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        events = dialect.stream_events(r)
        fail_at = r.reply.fail_after_events
        for index, event in enumerate(events):
            if index == fail_at:
                break
            if index and index == r.reply.pause_after_events:
                self._script.paused()
                if not await self._hang(r.reply.pause_seconds, receive):
                    return  # the client left while the "model" was still generating
            if index and r.reply.chunk_delay:
                await self._pause(r.reply.chunk_delay)
            await send({"type": "http.response.body", "body": event, "more_body": True})
        if fail_at is not None:
            await self._fail(r, dialect, send)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _fail(self, r: ResolvedReply, dialect: Dialect, send: Send) -> None:
        mode = r.reply.fail_mode
        if mode == "disconnect":
            raise ScriptedDisconnect("scripted mid-stream disconnect")
        if mode == "response_failed":
            fault = render_responses.failed_event("scripted mid-stream failure")
        elif mode == "error_event":
            fault = dialect.error_event("scripted mid-stream error")
        else:
            fault = dialect.garbage_event()
        await send({"type": "http.response.body", "body": fault, "more_body": True})
