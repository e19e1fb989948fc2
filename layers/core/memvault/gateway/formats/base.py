"""What every API format adapter provides, and the shapes the tool-round engine works on.

The engine (``memvault.gateway.engine``) never looks inside a request or response: it
asks the format. Each format (OpenAI Chat Completions and Responses, Anthropic Messages)
implements ``ApiFormat`` once, for both directions:

- requests: find the last user message, put the recall block ahead of it, add the memory
  tools and the system note, continue a conversation with tool results;
- responses: read a turn (text, tool calls, usage), build the one answer the client gets
  after several rounds;
- streams: a ``StreamTranslator`` turns several upstream streams (one per round) into one
  continuous, valid client stream, buffering memory tool calls so they never reach it.

Requests are plain JSON dicts on purpose: everything memvault does not change passes
through untouched (unknown fields, images, other tools, tool_choice, metadata...).
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from memvault.domain.response_chains import ChainLink
from memvault.errors import InvalidInput, UpstreamFailed
from memvault.gateway.sse import MalformedStream, SseEvent
from memvault.tokens import count_tokens
from memvault.tools import TOOL_NAMES, ToolResult

Json = dict[str, Any]
MEMORY_TOOL_NAMES = frozenset(TOOL_NAMES)
# Tools that only read: in a turn that does not continue (mixed, or out of rounds) their
# results could never reach the model, so they are dropped instead of run.
READ_ONLY_TOOLS = frozenset({"memory_search", "memory_read", "memory_list"})
# Between the texts of two rounds, so "Let me check." and "It is Tuesday." do not run
# together; the same separator in streams and in whole responses.
ROUND_TEXT_SEPARATOR = "\n\n"
# Client strings that are stored (the usage record) or logged have a length limit.
# Provider model ids are far shorter (a Bedrock inference-profile ARN is about 100).
MAX_MODEL_CHARS = 256
# The most output a request may ask for: any provider's limit is far below, and the
# reservation made from it stays a number every ledger holds (domain.pricing.MAX_MICROS).
MAX_OUTPUT_TOKENS = 2**31 - 1
_UNPARSED: Any = object()


class MalformedResponse(Exception):
    """An upstream answer that is not the format's response (garbage, wrong shape)."""


@dataclass(slots=True)
class ToolCall:
    id: str
    name: str
    arguments_json: str  # exactly what the model sent (Anthropic: its input, as JSON)
    # The arguments already parsed (Anthropic's input arrives as JSON), else parsed once
    # on first use.
    parsed: object = _UNPARSED

    @property
    def is_memory(self) -> bool:
        return self.name in MEMORY_TOOL_NAMES

    def arguments(self) -> object:
        """The parsed arguments; ``None`` when the model sent nothing. Raises ValueError
        for text that is not JSON and RecursionError for JSON nested too deeply to parse
        (``rounds.check_round`` refuses those before any call of the round runs)."""
        if self.parsed is _UNPARSED:
            text = self.arguments_json
            self.parsed = json.loads(text) if text.strip() else None
        return self.parsed


@dataclass(slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens

    @property
    def reported(self) -> bool:
        return bool(self.input_tokens or self.output_tokens)


@dataclass(slots=True)
class Turn:
    """One upstream answer, read: what the model said and asked for."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    # The answer's content blocks as the format keeps them (Anthropic: thinking blocks
    # must go back with the tool results), and the raw response (non-streaming).
    blocks: list[Json] = field(default_factory=list)
    raw: Json | None = None

    @property
    def memory_calls(self) -> list[ToolCall]:
        return [call for call in self.tool_calls if call.is_memory]

    @property
    def client_calls(self) -> list[ToolCall]:
        return [call for call in self.tool_calls if not call.is_memory]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    call: ToolCall
    result: ToolResult


def text_of(content: object) -> str | None:
    """A message's text: its string content, or its text parts joined (None: no text)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


def _is_tool_result(part: object) -> bool:
    return isinstance(part, dict) and part.get("type") == "tool_result"


def _only_tool_results(content: object) -> bool:
    """A message that only answers tool calls (Anthropic's tool_result blocks)."""
    return isinstance(content, list) and bool(content) and all(map(_is_tool_result, content))


def output_text(turn: Turn) -> str:
    """What the model wrote in a turn (its text and its tool calls), to count as output
    when the provider did not say."""
    return turn.text + "".join(call.name + call.arguments_json for call in turn.tool_calls)


def estimated_output(text: str, margin: float) -> int:
    return math.ceil(count_tokens(text) * margin)


def stream_failure(payload: Json) -> UpstreamFailed:
    """An error event in an upstream stream (both formats carry ``error.message``)."""
    error = payload.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return UpstreamFailed(
        f"the upstream stream failed: {message or 'an error event'}", code="upstream_stream_error"
    )


def require_object(body: object, what: str) -> Json:
    if not isinstance(body, dict):
        raise MalformedResponse(f"{what} is not a JSON object")
    return body


def as_int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class StreamMeter(ABC):
    """What one upstream stream (one round) has used, read from every event it sends.

    The usage the provider reports is the bill; it comes at the end (OpenAI's last
    chunk, Anthropic's message_delta). A stream that ends before it (the client hung
    up, the provider broke off, or it never sends one) is billed an estimate instead:
    the prompt as counted when the money was held (or as the provider reported it at
    the start) and the output received so far (text, tool call arguments, thinking),
    counted, memory tool calls the client never saw included.
    """

    def __init__(self) -> None:
        self.reported = Usage()
        self.complete = False  # the stream's final usage arrived
        self.received: list[str] = []  # output text, in pieces

    def observe(self, event: SseEvent) -> None:
        """Note one event. Never raises: a malformed event is the format's to refuse."""
        try:
            payload = event.json()
        except MalformedStream:
            return
        if isinstance(payload, dict):
            self._observe(payload)

    @abstractmethod
    def _observe(self, payload: Json) -> None: ...

    def usage(self, prompt_tokens: int, margin: float) -> tuple[Usage, bool]:
        """The round's usage and whether it is an estimate (``prompt_tokens``: the send's
        prompt as memvault counted it)."""
        if self.complete:
            return Usage(self.reported.input_tokens, self.reported.output_tokens), False
        counted = estimated_output("".join(self.received), margin)
        input_tokens = self.reported.input_tokens or prompt_tokens
        return Usage(input_tokens, max(self.reported.output_tokens, counted)), True

    def add_text(self, value: object) -> None:
        if isinstance(value, str) and value:
            self.received.append(value)


class StreamTranslator(ABC):
    """One client stream made of one or more upstream streams (one per round).

    ``feed`` takes each upstream event and returns the bytes to send the client now;
    ``end_round`` returns the round's turn once its upstream stream is over; ``finish``
    closes the client stream with the final stop reason and the usage of every round.
    Usage is the meter's (``StreamMeter``), not the translator's.
    """

    turn: Turn  # the round being read
    # The response id the client's request continued, when the gateway sent another one
    # upstream (ApiFormat.resumed): shown back in place of it.
    continuing: str | None = None

    @abstractmethod
    def begin_round(self) -> None: ...

    @abstractmethod
    def feed(self, event: SseEvent) -> list[bytes]: ...

    @abstractmethod
    def end_round(self) -> Turn: ...

    @abstractmethod
    def finish(self, usage: Usage, *, dropped_memory_calls: bool) -> list[bytes]: ...

    def error(self, api: ApiFormat, type_: str, code: str, message: str) -> list[bytes]:
        """The client stream's error events once rounds began (the format's by default;
        a format whose events are numbered numbers them on)."""
        return [api.stream_error(type_, code, message)]

    def response_id(self) -> str | None:
        """The id the client's stream names its response by (None: the format has none)."""
        return None


class ApiFormat(ABC):
    """One API format, both directions (see the module docstring)."""

    name: str
    # The upstream it is sent to (its base URL and credential): "openai" or "anthropic".
    provider: str
    upstream_path: str  # appended to the upstream base URL
    models_path: str
    # The body fields that bound the answer's output (the reservation's allowance).
    output_fields: tuple[str, ...] = ("max_tokens",)
    # Tokens are counted offline with OpenAI's o200k encoding; a provider whose tokenizer
    # yields more tokens for the same text has its estimates scaled up, so reservations
    # hold what the provider will bill.
    token_margin: float = 1.0

    # ------------------------------------------------------------------ requests
    # Both formats carry ``model``, a ``messages`` list whose items have a ``role`` and a
    # ``content`` (a string, or a list of typed parts with ``{"type": "text", "text"}``),
    # an optional ``tools`` list and ``stream`` flag: what is shared is written once here.
    def validate(self, body: Json) -> None:
        """Refuse (InvalidInput) a body the gateway cannot work on; the rest is upstream's."""
        if not isinstance(body.get("model"), str) or not body["model"]:
            raise InvalidInput("'model' is required (a model id string)", code="invalid_model")
        if len(body["model"]) > MAX_MODEL_CHARS:
            raise InvalidInput(
                f"'model' is at most {MAX_MODEL_CHARS} characters ({len(body['model'])} were sent)",
                code="invalid_model",
            )
        for name in self.output_fields:
            value = body.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value > MAX_OUTPUT_TOKENS:
                raise InvalidInput(
                    f"'{name}' is at most {MAX_OUTPUT_TOKENS} (no model writes more)",
                    code="invalid_max_tokens",
                )
        self.validate_conversation(body)
        tools = body.get("tools")
        if tools is not None and not isinstance(tools, list):
            raise InvalidInput("'tools' must be a list", code="invalid_tools")
        if "stream" in body and not isinstance(body["stream"], bool):
            raise InvalidInput("'stream' must be true or false", code="invalid_stream")
        self.validate_format(body)

    def validate_conversation(self, body: Json) -> None:
        """The conversation: a non-empty ``messages`` list of objects (both chat formats)."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise InvalidInput(
                "'messages' is required: a non-empty list of messages", code="invalid_messages"
            )
        if any(not isinstance(m, dict) for m in messages):
            raise InvalidInput("every message must be a JSON object", code="invalid_messages")

    def validate_format(self, body: Json) -> None:  # noqa: B027 - a hook, empty by default
        """Checks only one format needs (none by default)."""

    @abstractmethod
    def client_tool_names(self, body: Json) -> set[str]: ...

    def recall_target(self, body: Json) -> tuple[int, str] | None:
        """Where recall goes: the index and text of the last message the user wrote, or
        None when no user message carries text.

        That is the last message with the user's role that is not only tool results. In
        an agent loop the request ends in tool results (OpenAI ``tool`` messages,
        Anthropic ``user`` messages of ``tool_result`` blocks) while the question they
        serve is still that message; recalling for it on every step keeps the block
        where the first step put it, so the model keeps its notes through the loop and
        the provider's cached prefix still matches up to the last tool result.
        """
        messages = body["messages"]
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if _only_tool_results(content):
                continue
            text = text_of(content)
            return (index, text) if text is not None else None
        return None

    def with_recall(self, body: Json, block: str, index: int) -> Json:
        """A copy of ``body`` with ``block`` ahead of the text of message ``index``.

        In a list of parts the block goes after any leading tool results: Anthropic
        requires a message that answers tool calls to begin with their results.
        """
        out = dict(body)
        messages = list(body["messages"])
        message = dict(messages[index])
        content = message.get("content")
        if isinstance(content, list):
            at = 0
            while at < len(content) and _is_tool_result(content[at]):
                at += 1
            message["content"] = [*content[:at], {"type": "text", "text": block}, *content[at:]]
        else:
            message["content"] = f"{block}\n\n{content}"
        messages[index] = message
        out["messages"] = messages
        return out

    @abstractmethod
    def with_system_prefix(self, body: Json, block: str) -> Json:
        """A copy of ``body`` whose system prompt starts with ``block`` (a memory profile's
        stable block), made when the request has none; the client's own system text
        follows unchanged."""

    @abstractmethod
    def with_memory_tools(self, body: Json) -> Json:
        """A copy of ``body`` with the memory tools after the client's, and the system note."""

    @abstractmethod
    def output_allowance(self, body: Json, default: int) -> int: ...

    @abstractmethod
    def prepare_stream(self, body: Json) -> tuple[Json, bool]:
        """The upstream body for a stream (usage asked for) and whether the client asked."""

    @abstractmethod
    def continued(
        self, body: Json, turn: Turn, outcomes: list[ToolOutcome], *, memory_tools: bool = True
    ) -> Json:
        """The next round's body: the turn and its tool results appended. Without
        ``memory_tools`` it is the last round: the model answers from what it has (see
        ``without_memory_tools``)."""

    @abstractmethod
    def without_memory_tools(self, body: Json) -> Json:
        """``body`` for a last round: the client's own tools kept and the memory tools
        withheld; with no tool of the client's the definitions stay (earlier turns hold
        memory tool calls, and a request with tool calls must define tools) and the
        model is told to call none (tool_choice "none")."""

    # ------------------------------------------------------------------ responses
    @abstractmethod
    def parse_response(self, payload: object) -> Turn: ...

    @abstractmethod
    def parse_usage(self, payload: object) -> Usage:
        """Usage of a response that passes through untouched (no memory tools)."""

    @abstractmethod
    def final_response(self, turns: list[Turn], usage: Usage) -> Json:
        """The one answer for the client: every round's text, client tool calls only."""

    @abstractmethod
    def translator(self, *, client_wants_usage: bool) -> StreamTranslator: ...

    @abstractmethod
    def meter(self) -> StreamMeter:
        """A meter for one upstream stream (one round)."""

    @abstractmethod
    def ends_stream(self, event: SseEvent) -> bool:
        """Is this the format's last event? A stream that closes before it was cut short."""

    @abstractmethod
    def passthrough_event(self, event: SseEvent, *, client_wants_usage: bool) -> bytes | None:
        """A stream without memory tools: the bytes to forward for an event.

        Only what memvault added is taken out (usage the client did not ask for)."""

    # ------------------------------------------------------------------ stored conversations
    # A format whose provider keeps the conversation (Responses with ``store``) continues
    # it by id; the other formats send it whole and keep these defaults (ADR 0045).
    def continues_from(self, body: Json) -> str | None:
        """The stored response the request continues (None: it carries its conversation)."""
        return None

    def resumed(self, body: Json, link: ChainLink) -> Json:
        """``body`` continuing ``link``'s upstream response, the outputs it owes first."""
        return body

    def shown_continuing(self, payload: Json, previous: str) -> Json:
        """An answer as the client sees it when the request was ``resumed``: the response
        id it continued (``previous``) in place of the one sent upstream."""
        return payload

    def passthrough_continued(
        self, event: SseEvent, *, client_wants_usage: bool, previous: str
    ) -> bytes | None:
        """``passthrough_event`` for a ``resumed`` request (see ``shown_continuing``)."""
        return self.passthrough_event(event, client_wants_usage=client_wants_usage)

    def chain_link(
        self, body: Json, client_id: str | None, last: Turn, owed: list[ToolOutcome], now: float
    ) -> ChainLink | None:
        """What the id the client got (``client_id``) continues upstream, when that is not
        simply itself: the last round's response and the outputs owed for memory calls it
        holds that were never answered upstream (``owed``). None: nothing to remember."""
        return None

    # ------------------------------------------------------------------ errors
    # memvault's error kinds (``MemvaultError.type``) as the format's own error types;
    # memvault's code stays in ``code``.
    error_types: ClassVar[Mapping[str, str]] = {}
    default_error_type: ClassVar[str] = "api_error"

    def error_type(self, type_: str, code: str) -> str:
        return self.error_types.get(type_, self.default_error_type)

    @abstractmethod
    def error_body(self, type_: str, code: str, message: str) -> Json:
        """The format's error body for a memvault error (its kind, code and message)."""

    @abstractmethod
    def stream_error(self, type_: str, code: str, message: str) -> bytes: ...

    @abstractmethod
    def upstream_headers(self, client: Mapping[str, str], credential: str | None) -> dict[str, str]:
        """Headers for the upstream request: the provider credential, and the client's
        format headers (API version, betas) that change the answer's meaning."""
