"""Server-sent events: one parser for upstream streams, one writer for client streams.

Both API formats speak SSE (OpenAI: ``data:`` lines ending with ``data: [DONE]``;
Anthropic: ``event:`` + ``data:`` pairs). Everything the gateway streams to a client goes
through ``encode_event``/``encode_comment``, so framing is right in one place.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

# An SSE line longer than this is not a model's event: refuse it rather than buffer
# without bound (a misbehaving upstream must not exhaust memory).
MAX_EVENT_BYTES = 8 * 1024 * 1024


class MalformedStream(Exception):
    """The upstream's stream is not valid SSE, or an event is not the JSON it should be."""


@dataclass(frozen=True, slots=True)
class SseEvent:
    event: str | None
    data: str

    def json(self) -> Any:
        try:
            return json.loads(self.data)
        except ValueError as exc:
            raise MalformedStream("an upstream stream event is not JSON") from exc


async def parse_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[SseEvent]:
    """Yield events from a byte stream (comments and ``id``/``retry`` fields skipped)."""
    buffer = b""
    event: str | None = None
    data: list[str] = []
    async for chunk in chunks:
        buffer += chunk
        if len(buffer) > MAX_EVENT_BYTES:
            raise MalformedStream("an upstream stream event is too large")
        while True:
            cut = _line_end(buffer)
            if cut is None:
                break
            raw, buffer = buffer[: cut[0]], buffer[cut[1] :]
            line = raw.decode("utf-8", "replace")
            if not line:
                if data or event is not None:
                    yield SseEvent(event, "\n".join(data))
                event, data = None, []
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                data.append(value)
            elif name == "event":
                event = value
    if data:
        # A final event without its blank line: still an event (some servers end so).
        yield SseEvent(event, "\n".join(data))


def _line_end(buffer: bytes) -> tuple[int, int] | None:
    """Where the first line ends and the next begins (CRLF, LF or CR line ends)."""
    lf = buffer.find(b"\n")
    cr = buffer.find(b"\r")
    if cr != -1 and (lf == -1 or cr < lf):
        if cr + 1 == len(buffer):
            return None  # a CR at the end may be the first half of CRLF
        return (cr, cr + 2) if buffer[cr + 1 : cr + 2] == b"\n" else (cr, cr + 1)
    if lf != -1:
        return (lf, lf + 1)
    return None


def _dumps(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def encode_event(payload: Any, event: str | None = None) -> bytes:
    """One SSE event carrying ``payload`` as JSON (``[DONE]`` passes as a str)."""
    data = payload if isinstance(payload, str) else _dumps(payload)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {data}\n\n".encode()


def encode_comment(text: str) -> bytes:
    """An SSE comment: ignored by clients, keeps proxies and idle timers from closing."""
    safe = " ".join(text.split())
    return f": {safe}\n\n".encode()
