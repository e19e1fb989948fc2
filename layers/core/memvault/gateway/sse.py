"""Server-sent events: one parser for upstream streams, one writer for client streams.

Both API formats speak SSE (OpenAI: ``data:`` lines ending with ``data: [DONE]``;
Anthropic: ``event:`` + ``data:`` pairs). Everything the gateway streams to a client goes
through ``encode_event``/``encode_comment``, so framing is right in one place.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass, field
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
    # The data as JSON, parsed once (the meter and the format both read it).
    _parsed: list[Any] = field(default_factory=list, compare=False, repr=False)

    def json(self) -> Any:
        if self._parsed:
            return self._parsed[0]
        try:
            value = json.loads(self.data)
        except (ValueError, RecursionError) as exc:
            raise MalformedStream("an upstream stream event is not JSON") from exc
        self._parsed.append(value)
        return value


class SseParser:
    """Bytes in, events out, in pieces (comments and ``id``/``retry`` fields skipped).

    What it holds between two ``feed`` calls (a line not yet ended) stays readable: a
    stream cut short is still metered to its last whole event.
    """

    def __init__(self) -> None:
        self.buffer = b""
        self.event: str | None = None
        self.data: list[str] = []

    def feed(self, chunk: bytes) -> list[SseEvent]:
        self.buffer += chunk
        if len(self.buffer) > MAX_EVENT_BYTES:
            raise MalformedStream("an upstream stream event is too large")
        out: list[SseEvent] = []
        while True:
            cut = _line_end(self.buffer)
            if cut is None:
                return out
            raw, self.buffer = self.buffer[: cut[0]], self.buffer[cut[1] :]
            line = raw.decode("utf-8", "replace")
            if not line:
                if self.data or self.event is not None:
                    out.append(SseEvent(self.event, "\n".join(self.data)))
                self.event, self.data = None, []
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                self.data.append(value)
            elif name == "event":
                self.event = value

    def close(self) -> list[SseEvent]:
        """The events still held once the bytes end."""
        out = self.feed(b"\n") if self.buffer else []  # a last line without its line end
        if self.data:
            # A final event without its blank line: still an event (some servers end so).
            out.append(SseEvent(self.event, "\n".join(self.data)))
        self.buffer, self.event, self.data = b"", None, []
        return out


async def parse_events(
    chunks: AsyncIterable[bytes], parser: SseParser | None = None
) -> AsyncIterator[SseEvent]:
    """Yield events from a byte stream (comments and ``id``/``retry`` fields skipped)."""
    parser = parser or SseParser()
    async for chunk in chunks:
        for event in parser.feed(chunk):
            yield event
    for event in parser.close():
        yield event


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
