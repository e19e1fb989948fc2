"""Helpers shared by the gateway's protocol and fault tests (test_protocol, test_faults).

Raw HTTP with httpx (what a client without an SDK sees), SSE parsing of memvault's
streams, error-shape checks, and a memvault server built with custom gateway settings
(e.g. an upstream base URL on a closed port).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memvault.container import build_services
from tests.gateway.conftest import anthropic_client, gateway_overrides, openai_client
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.servers import LiveServer, serve
from tests.support.upstream import ScriptedUpstream
from tests.support.upstream.app import UpstreamApp

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"
OPENAI_MODEL = "gpt-4o-mini"
ANTHROPIC_MODEL = "claude-haiku-4-5"

# A client tool in each format (never a memory tool's name).
OPENAI_WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
ANTHROPIC_WEATHER_TOOL: dict[str, Any] = {
    "name": "get_weather",
    "description": "Weather for a city",
    "input_schema": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def minimal_body(fmt: str, **extra: Any) -> dict[str, Any]:
    """The smallest valid request body of a format."""
    if fmt == "openai":
        return {"model": OPENAI_MODEL, "messages": [{"role": "user", "content": "hi"}], **extra}
    return {
        "model": ANTHROPIC_MODEL,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
        **extra,
    }


def path_of(fmt: str) -> str:
    return OPENAI_PATH if fmt == "openai" else ANTHROPIC_PATH


def auth_headers(fmt: str, key: str) -> dict[str, str]:
    """How each format's SDK sends the key."""
    if fmt == "openai":
        return {"authorization": f"Bearer {key}"}
    return {"x-api-key": key, "anthropic-version": "2023-06-01"}


def raw_post(
    server: LiveServer,
    fmt: str,
    key: str | None,
    body: Any,
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 20.0,
) -> httpx.Response:
    """POST a JSON body (or raw bytes) to a format's route and read the whole answer."""
    sent = auth_headers(fmt, key) if key is not None else {}
    sent.update(headers or {})
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent.setdefault("content-type", "application/json")
    return httpx.post(server.url + path_of(fmt), content=content, headers=sent, timeout=timeout)


@dataclass
class SseMessage:
    event: str | None
    data: str

    def json(self) -> Any:
        return json.loads(self.data)


@dataclass
class RawStream:
    status: int
    headers: httpx.Headers
    text: str
    messages: list[SseMessage]  # events in order, comments left out
    comments: list[str]
    elapsed: float


def parse_sse(text: str) -> tuple[list[SseMessage], list[str]]:
    messages: list[SseMessage] = []
    comments: list[str] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        event: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith(":"):
                comments.append(line[1:].strip())
            elif line.startswith("event:"):
                event = line[len("event:") :].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:") :].removeprefix(" "))
        if data or event is not None:
            messages.append(SseMessage(event, "\n".join(data)))
    return messages, comments


def raw_stream(
    server: LiveServer,
    fmt: str,
    key: str,
    body: dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    timeout: float = 20.0,
) -> RawStream:
    """A streamed request read to its end with httpx; never raises on a broken body."""
    sent = {**auth_headers(fmt, key), **(headers or {})}
    started = time.monotonic()
    chunks: list[bytes] = []
    with httpx.stream(
        "POST",
        server.url + path_of(fmt),
        json={**body, "stream": True},
        headers=sent,
        timeout=timeout,
    ) as response:
        with contextlib.suppress(httpx.RemoteProtocolError):
            for chunk in response.iter_bytes():
                chunks.append(chunk)
        status, response_headers = response.status_code, response.headers
    text = b"".join(chunks).decode()
    messages, comments = parse_sse(text)
    return RawStream(status, response_headers, text, messages, comments, time.monotonic() - started)


def openai_error(body: Any) -> dict[str, Any]:
    """The error of an OpenAI-shaped error body, checking the shape."""
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error, dict)
    assert {"type", "code", "message"} <= set(error), error
    assert all(isinstance(error[k], str) and error[k] for k in ("type", "code", "message"))
    return error


def anthropic_error(body: Any) -> dict[str, Any]:
    """The error of an Anthropic-shaped error body, checking the shape."""
    assert isinstance(body, dict) and body.get("type") == "error", body
    assert set(body) == {"type", "error"}, body
    error = body["error"]
    assert isinstance(error, dict)
    assert {"type", "code", "message"} <= set(error), error
    assert all(isinstance(error[k], str) and error[k] for k in ("type", "code", "message"))
    return error


def format_error(fmt: str, body: Any) -> dict[str, Any]:
    return openai_error(body) if fmt == "openai" else anthropic_error(body)


@contextlib.contextmanager
def custom_gateway(
    tmp_path: Path, clock: FakeClock, upstream: ScriptedUpstream, **overrides: object
) -> Iterator[LiveServer]:
    """memvault (SQLite) in front of the scripted upstream, with some settings changed."""
    with backend_settings(tmp_path, "sqlite", **gateway_overrides(upstream, **overrides)) as s:
        running = serve(build_services(s, clock=clock), clock)
        server = next(running)
        try:
            yield server
        finally:
            with contextlib.suppress(StopIteration):
                next(running)


def slow_upstream(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Make the scripted upstream wait ``seconds`` before it answers anything scripted
    (before its response headers), on its own event loop, so memvault waits on it."""
    original = UpstreamApp._play

    async def delayed(self: UpstreamApp, *args: Any, **kwargs: Any) -> None:
        await asyncio.sleep(seconds)
        await original(self, *args, **kwargs)

    monkeypatch.setattr(UpstreamApp, "_play", delayed)


def sdk_call(server: LiveServer, fmt: str, key: str, *, stream: bool) -> Any:
    """One SDK request, read to its end; returns the text the client saw."""
    if fmt == "openai":
        client = openai_client(server, key)
        answer = client.chat.completions.create(
            model=OPENAI_MODEL, messages=[{"role": "user", "content": "hi"}], stream=stream
        )
        if not stream:
            return answer.choices[0].message.content
        return "".join(c.choices[0].delta.content or "" for c in answer if c.choices)
    aclient = anthropic_client(server, key)
    params: dict[str, Any] = minimal_body("anthropic")
    if not stream:
        return aclient.messages.create(**params).content[0].text
    with aclient.messages.stream(**params) as events:
        return "".join(events.text_stream)
