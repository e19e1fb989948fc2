"""What a test scripts the upstream to do, one step per model request, and what it saw."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass
class ToolCall:
    name: str
    # A str is raw JSON text sent as-is, so tests can script invalid arguments.
    arguments: dict[str, Any] | str
    # Generated ("call_..." / "toolu_...") when None, unique per reply.
    id: str | None = None


@dataclass
class Reply:
    """A successful model reply, rendered in whichever format the endpoint speaks."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    # None: len(request body bytes) // 4, a rough count that still scales with the prompt.
    input_tokens: int | None = None
    # None: (len(text) + len(arguments JSON)) // 4, at least 1.
    output_tokens: int | None = None
    # None: "tool_calls"/"tool_use" with tool calls, else "stop"/"end_turn". Sent verbatim.
    stop_reason: str | None = None
    # None: echo the request's model.
    model: str | None = None
    text_chunk_chars: int = 4
    args_chunk_chars: int = 7
    chunk_delay: float = 0.0
    # Streaming only: after this many SSE events have been sent, do fail_mode instead of
    # the rest. At or beyond the event count, every event is sent and then the fault.
    fail_after_events: int | None = None
    # "response_failed": Responses only, a response.failed event.
    fail_mode: Literal["disconnect", "error_event", "garbage", "response_failed"] = "disconnect"
    # Streaming only: after this many SSE events, send nothing more until the client
    # goes away (or pause_seconds pass, then the rest): a provider still generating.
    # ScriptedUpstream.wait_for_pause() returns once the events before it are sent.
    pause_after_events: int | None = None
    pause_seconds: float = 30.0
    # OpenAI streaming only: False plays a provider that ignores
    # stream_options.include_usage and never sends the usage chunk.
    usage_chunk: bool = True
    # Responses only: a reasoning item (its summary text) ahead of the answer, and
    # output items sent as they are (a web_search_call...), after it and before the text.
    reasoning: str = ""
    output_items: list[dict[str, Any]] = field(default_factory=list)
    # Response headers, on a whole answer and on a stream (rate limits, request ids...).
    headers: dict[str, str] = field(default_factory=dict)
    # Whole answers only: gzip the body and say so in content-encoding, as providers do
    # for clients that accept it.
    gzip: bool = False

    def __post_init__(self) -> None:
        # A zero chunk size would loop forever when splitting; fail at scripting time.
        if self.text_chunk_chars < 1 or self.args_chunk_chars < 1:
            raise ValueError("chunk sizes must be at least 1")
        if self.fail_after_events is not None and self.fail_after_events < 0:
            raise ValueError("fail_after_events must be >= 0")
        if self.pause_after_events is not None and self.pause_after_events < 1:
            raise ValueError("pause_after_events must be >= 1")


@dataclass
class Fault:
    """An HTTP error response."""

    status: int = 500
    # None: the endpoint format's own error shape with a message naming the status.
    body: dict[str, Any] | bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hang:
    """Accept the request and send nothing for `seconds`.

    Ends early when the client disconnects or the server stops. If it runs its full
    course, the server answers 504 (format's error shape) with `connection: close`:
    ASGI has no way to drop a connection before a response has started.
    """

    seconds: float = 30.0


@dataclass
class Malformed:
    """A 200 whose body is not a valid response (sent as-is, even to streaming requests)."""

    body: bytes = b"this is not json"
    content_type: str = "application/json"


Step = Reply | Fault | Hang | Malformed


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names; repeated headers joined with ", "
    body: bytes
    json: Any  # parsed body, or None when empty or not JSON
