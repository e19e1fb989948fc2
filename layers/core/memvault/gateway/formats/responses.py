"""OpenAI Responses: POST /v1/responses.

The request is ``instructions`` (the system prompt, a string) and ``input`` (a string, or
a list of items: messages with a role, ``function_call`` and ``function_call_output``
items, reasoning items, built-in tool calls...). The answer is a ``response`` whose
``output`` is a list of items. Only ``function_call`` items naming a memory tool are
memvault's; every other item (reasoning, web_search_call, file_search_call,
code_interpreter_call, an item type newer than this code) passes through untouched.

Rounds continue a response with the turn's ``function_call_output`` items. When the
request stores its responses (``store`` is not false, OpenAI's default), the next round
sends only those outputs with ``previous_response_id`` set to the round's own response,
so the stored chain holds the whole conversation; with ``store: false`` the round is
sent whole (the input, the turn's output items, the outputs), as the chat formats do.
A whole answer carries the last round's response id (the one a client can continue
from); a stream keeps the first round's id from ``response.created`` to the one
``response.completed`` (clients check that it never changes; ADR 0036). Such an id, and
one whose last round still holds unanswered memory calls, is linked to the last round
and the outputs owed (``chain_link``); a request continuing it is ``resumed`` (ADR 0045).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Final

from memvault.domain.response_chains import ChainLink, needed, owed_output
from memvault.errors import InvalidInput, UpstreamFailed
from memvault.gateway.formats.base import (
    MEMORY_TOOL_NAMES,
    ROUND_TEXT_SEPARATOR,
    ApiFormat,
    Json,
    MalformedResponse,
    StreamMeter,
    StreamTranslator,
    ToolCall,
    ToolOutcome,
    Turn,
    Usage,
    as_int,
    require_object,
    stream_failure,
)
from memvault.gateway.formats.openai import ERROR_TYPES, FORWARDED_HEADERS
from memvault.gateway.sse import MalformedStream, SseEvent, encode_event
from memvault.tools import TOOLS, VAULT_INSTRUCTIONS

# Byte-stable: built once from the shared tool definitions, appended after the client's.
MEMORY_TOOLS: Final[tuple[Json, ...]] = tuple(
    {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.input_schema,
    }
    for spec in TOOLS
)
PARAM_BY_CODE: Final = {
    "invalid_model": "model",
    "invalid_input_items": "input",
    "invalid_instructions": "instructions",
    "invalid_tools": "tools",
    "invalid_stream": "stream",
    "invalid_max_tokens": "max_output_tokens",
}
# Lifecycle events: the first round's reach the client, later rounds' are the gateway's.
_OPENING: Final = frozenset({"response.created", "response.in_progress", "response.queued"})
_ENDING: Final = frozenset({"response.completed", "response.incomplete"})


def _is_memory_call(item: object) -> bool:
    return (
        isinstance(item, dict)
        and item.get("type") == "function_call"
        and item.get("name") in MEMORY_TOOL_NAMES
    )


def _is_memory_tool(tool: object) -> bool:
    return (
        isinstance(tool, dict)
        and tool.get("type") == "function"
        and tool.get("name") in MEMORY_TOOL_NAMES
    )


def _client_view(response: object) -> object:
    """A response object as the client sees it: the memory tools left out of the
    ``tools`` it echoes."""
    if not isinstance(response, dict) or not isinstance(response.get("tools"), list):
        return response
    return {**response, "tools": [t for t in response["tools"] if not _is_memory_tool(t)]}


def _input_text(content: object) -> str | None:
    """A user message's text: its string content, or its input_text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type") in ("input_text", "text")
            and isinstance(part.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


def _message_text(item: Json) -> str:
    content = item.get("content")
    if not isinstance(content, list):
        return ""
    return "".join(
        part["text"]
        for part in content
        if isinstance(part, dict)
        and part.get("type") == "output_text"
        and isinstance(part.get("text"), str)
    )


def _with_text_prefix(item: Json, prefix: str) -> Json:
    """A message item whose first output_text part starts with ``prefix``."""
    out = copy.deepcopy(item)
    for part in out.get("content") or []:
        if isinstance(part, dict) and part.get("type") == "output_text":
            part["text"] = prefix + str(part.get("text") or "")
            break
    return out


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    return Usage(as_int(raw.get("input_tokens")), as_int(raw.get("output_tokens")))


def _usage_json(original: object, usage: Usage) -> Json:
    out: Json = dict(original) if isinstance(original, dict) else {}
    out["input_tokens"] = usage.input_tokens
    out["output_tokens"] = usage.output_tokens
    out["total_tokens"] = usage.input_tokens + usage.output_tokens
    return out


def _call(item: Json) -> ToolCall:
    name = item.get("name")
    if not isinstance(name, str):
        raise MalformedResponse("an upstream function_call item has no name")
    arguments = item.get("arguments")
    return ToolCall(
        id=str(item.get("call_id") or item.get("id") or ""),
        name=name,
        arguments_json=arguments if isinstance(arguments, str) else "",
    )


def _shown(response: object, previous: str | None) -> object:
    """A response object naming ``previous`` as the one it continued (None: as it came)."""
    if previous is None or not isinstance(response, dict):
        return response
    if "previous_response_id" not in response:
        return response
    return {**response, "previous_response_id": previous}


def _failed(payload: Json) -> UpstreamFailed:
    """``response.failed``: the error is the response's."""
    response = payload.get("response")
    error = response.get("error") if isinstance(response, dict) else None
    return stream_failure({"error": error})


class OpenAIResponses(ApiFormat):
    name = "responses"
    provider = "openai"
    upstream_path = "/responses"
    models_path = "/models"
    output_fields = ("max_output_tokens",)
    error_types = ERROR_TYPES

    # ------------------------------------------------------------------ requests
    def validate_conversation(self, body: Json) -> None:
        given = body.get("input")
        if isinstance(given, list):
            if any(not isinstance(item, dict) for item in given):
                raise InvalidInput(
                    "every item of 'input' must be a JSON object", code="invalid_input_items"
                )
        elif given is not None and not isinstance(given, str):
            raise InvalidInput(
                "'input' must be a string or a list of items", code="invalid_input_items"
            )
        instructions = body.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            raise InvalidInput("'instructions' must be a string", code="invalid_instructions")

    def client_tool_names(self, body: Json) -> set[str]:
        return {
            tool["name"]
            for tool in body.get("tools") or []
            if isinstance(tool, dict) and isinstance(tool.get("name"), str)
        }

    def recall_target(self, body: Json) -> tuple[int, str] | None:
        """The last user message of ``input`` (a string input is that message, index 0);
        function_call_output items are not the user's, so an agent loop keeps recalling
        for its question."""
        given = body.get("input")
        if isinstance(given, str):
            return 0, given
        if not isinstance(given, list):
            return None
        for index in range(len(given) - 1, -1, -1):
            item = given[index]
            if item.get("role") != "user" or item.get("type", "message") != "message":
                continue
            text = _input_text(item.get("content"))
            return (index, text) if text is not None else None
        return None

    def with_recall(self, body: Json, block: str, index: int) -> Json:
        out = dict(body)
        given = body.get("input")
        if isinstance(given, str):
            out["input"] = f"{block}\n\n{given}"
            return out
        items = list(given or [])
        item = dict(items[index])
        content = item.get("content")
        if isinstance(content, list):
            item["content"] = [{"type": "input_text", "text": block}, *content]
        else:
            item["content"] = f"{block}\n\n{content}"
        items[index] = item
        out["input"] = items
        return out

    def with_system_prefix(self, body: Json, block: str) -> Json:
        out = dict(body)
        instructions = body.get("instructions")
        out["instructions"] = f"{block}\n\n{instructions}" if instructions else block
        return out

    def with_memory_tools(self, body: Json) -> Json:
        out = dict(body)
        out["tools"] = [*(body.get("tools") or []), *MEMORY_TOOLS]
        # After the client's instructions, which stay the prompt's unchanged prefix; the
        # input's items (and the recall target's index) are left where they are.
        instructions = body.get("instructions")
        out["instructions"] = (
            f"{instructions}\n\n{VAULT_INSTRUCTIONS}" if instructions else VAULT_INSTRUCTIONS
        )
        return out

    def output_allowance(self, body: Json, default: int) -> int:
        return as_int(body.get("max_output_tokens")) or default

    def prepare_stream(self, body: Json) -> tuple[Json, bool]:
        return body, True  # response.completed always carries usage

    def without_memory_tools(self, body: Json) -> Json:
        out = dict(body)
        own = [t for t in body.get("tools") or [] if not _is_memory_tool(t)]
        if own:
            out["tools"] = own
        else:
            out["tool_choice"] = "none"
        return out

    def continued(
        self, body: Json, turn: Turn, outcomes: list[ToolOutcome], *, memory_tools: bool = True
    ) -> Json:
        outputs: list[Json] = [
            {"type": "function_call_output", "call_id": o.call.id, "output": o.result.text}
            for o in outcomes
        ]
        out = dict(body)
        response_id = turn.raw.get("id") if turn.raw is not None else None
        if body.get("store") is not False and isinstance(response_id, str) and response_id:
            # The round's response is stored upstream with everything before it.
            out["previous_response_id"] = response_id
            out["input"] = outputs
        else:
            given = body.get("input")
            items = [{"role": "user", "content": given}] if isinstance(given, str) else given
            out["input"] = [*(items or []), *copy.deepcopy(turn.blocks), *outputs]
        return out if memory_tools else self.without_memory_tools(out)

    # ------------------------------------------------------------------ stored conversations
    def continues_from(self, body: Json) -> str | None:
        previous = body.get("previous_response_id")
        return previous if isinstance(previous, str) and previous else None

    def resumed(self, body: Json, link: ChainLink) -> Json:
        """The request continuing the last round's response: ``previous_response_id`` names
        it, and the memory calls it still holds are answered ahead of the client's input
        (a string input becomes its user message)."""
        out = dict(body)
        out["previous_response_id"] = link.upstream_id
        given = body.get("input")
        items: list[Json] = (
            [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
        )
        answered = {i.get("call_id") for i in items if i.get("type") == "function_call_output"}
        owed: list[Json] = [
            {"type": "function_call_output", "call_id": o.call_id, "output": o.output}
            for o in link.owed
            if o.call_id not in answered
        ]
        if owed:
            out["input"] = [*owed, *items]
        return out

    def shown_continuing(self, payload: Json, previous: str) -> Json:
        shown = _shown(payload, previous)
        assert isinstance(shown, dict)
        return shown

    def passthrough_continued(
        self, event: SseEvent, *, client_wants_usage: bool, previous: str
    ) -> bytes | None:
        return self._passthrough(event, previous)

    def chain_link(
        self, body: Json, client_id: str | None, last: Turn, owed: list[ToolOutcome], now: float
    ) -> ChainLink | None:
        if body.get("store") is False or not client_id or last.raw is None:
            return None  # nothing stored upstream: the client sends the conversation whole
        upstream_id = last.raw.get("id")
        if not isinstance(upstream_id, str) or not upstream_id:
            return None
        outputs = tuple(owed_output(o.call.id, o.result.text) for o in owed)
        link = ChainLink(upstream_id, outputs, now)
        return link if needed(client_id, link) else None

    # ------------------------------------------------------------------ responses
    def parse_response(self, payload: object) -> Turn:
        body = require_object(payload, "the upstream answer")
        output = body.get("output")
        if not isinstance(output, list):
            raise MalformedResponse("the upstream answer is not a response (no output list)")
        turn = Turn(usage=_usage(body.get("usage")), stop_reason=body.get("status"), raw=body)
        for item in output:
            if not isinstance(item, dict):
                raise MalformedResponse("an upstream output item is not an object")
            turn.blocks.append(item)
            kind = item.get("type")
            if kind == "message":
                turn.text += _message_text(item)
            elif kind == "function_call":
                turn.tool_calls.append(_call(item))
        return turn

    def parse_usage(self, payload: object) -> Usage:
        return _usage(payload.get("usage") if isinstance(payload, dict) else None)

    def final_response(self, turns: list[Turn], usage: Usage) -> Json:
        last = turns[-1]
        assert last.raw is not None
        out = copy.deepcopy(last.raw)
        first = turns[0].raw or {}
        if "previous_response_id" in first:
            out["previous_response_id"] = first["previous_response_id"]
        items: list[Json] = []
        text_before = False
        for turn in turns:
            prefix = ROUND_TEXT_SEPARATOR if text_before else ""
            for item in turn.blocks:
                if _is_memory_call(item):
                    continue
                if prefix and item.get("type") == "message" and _message_text(item):
                    items.append(_with_text_prefix(item, prefix))
                    prefix = ""
                else:
                    items.append(copy.deepcopy(item))
            text_before = text_before or bool(turn.text)
        out["output"] = items
        out["usage"] = _usage_json(out.get("usage"), usage)
        view = _client_view(out)
        assert isinstance(view, dict)
        return view

    def translator(self, *, client_wants_usage: bool) -> StreamTranslator:
        return _ResponsesStream()

    def meter(self) -> StreamMeter:
        return _ResponsesMeter()

    def ends_stream(self, event: SseEvent) -> bool:
        kind = event.event
        if kind is None:
            try:
                payload = event.json()
            except MalformedStream:
                return False
            kind = payload.get("type") if isinstance(payload, dict) else None
        return kind in _ENDING

    def passthrough_event(self, event: SseEvent, *, client_wants_usage: bool) -> bytes | None:
        return self._passthrough(event, None)

    def _passthrough(self, event: SseEvent, previous: str | None) -> bytes | None:
        payload = event.json()
        if not isinstance(payload, dict):
            raise MalformedStream("an upstream event is not a JSON object")
        kind = payload.get("type") or event.event
        if kind == "error":
            raise stream_failure({"error": payload})
        if kind == "response.failed":
            raise _failed(payload)
        if previous is not None and "response" in payload:
            payload = {**payload, "response": _shown(payload["response"], previous)}
        return encode_event(payload, event.event or (kind if isinstance(kind, str) else None))

    # ------------------------------------------------------------------ errors
    def error_body(self, type_: str, code: str, message: str) -> Json:
        return {
            "error": {
                "message": message,
                "type": self.error_type(type_, code),
                "param": PARAM_BY_CODE.get(code),
                "code": code,
            }
        }

    def stream_error(self, type_: str, code: str, message: str) -> bytes:
        return encode_event(_error_event(code, message, None), "error")

    def upstream_headers(self, client: Mapping[str, str], credential: str | None) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if credential:
            headers["authorization"] = f"Bearer {credential}"
        for name in FORWARDED_HEADERS:
            if name in client:
                headers[name] = client[name]
        return headers


def _error_event(code: str, message: str, sequence_number: int | None) -> Json:
    event: Json = {"type": "error", "code": code, "message": message, "param": None}
    if sequence_number is not None:
        event["sequence_number"] = sequence_number
    return event


class _ResponsesMeter(StreamMeter):
    """Usage from the ending event's response; the output received from text, refusal,
    reasoning and function call argument deltas, and the calls' names."""

    def _observe(self, payload: Json) -> None:
        kind = payload.get("type")
        if kind in _ENDING or kind == "response.failed":
            response = payload.get("response")
            found = _usage(response.get("usage") if isinstance(response, dict) else None)
            if found.reported:
                self.reported = found
                self.complete = True
        elif isinstance(kind, str) and kind.endswith(".delta"):
            self.add_text(payload.get("delta"))
        elif kind == "response.output_item.added":
            item = payload.get("item")
            if isinstance(item, dict):
                self.add_text(item.get("name"))


class _ResponsesStream(StreamTranslator):
    """Several upstream response streams as one: the first round's lifecycle events,
    output items numbered across every round, memory function calls held back, event
    sequence numbers counted anew, and one ``response.completed`` at the end."""

    def __init__(self) -> None:
        self.sequence = 0
        self.next_index = 0
        self.opening: Json | None = None  # the first round's response (id, created_at...)
        self.items: list[Json] = []  # the client's output items, done, in order
        self.any_text = False
        self.ending_kind = "response.completed"
        self.rounds = 0
        self._reset_round()

    def _reset_round(self) -> None:
        self.turn = Turn()
        self.indices: dict[int, int | None] = {}  # upstream output_index -> client's
        self.prefixes: dict[int, str] = {}  # client index -> text put ahead of the first part
        self.pending: set[int] = set()  # client indices whose prefix is not yet sent
        self.response: Json | None = None  # the round's ending response
        self.finished = False

    def begin_round(self) -> None:
        if self.turn.text:
            self.any_text = True
        self.rounds += 1
        self._reset_round()

    def _emit(self, payload: Json, event: str | None) -> bytes:
        payload = {**payload, "sequence_number": self.sequence}
        self.sequence += 1
        kind = payload.get("type")
        return encode_event(payload, event or (kind if isinstance(kind, str) else None))

    def feed(self, event: SseEvent) -> list[bytes]:
        payload = event.json()
        if not isinstance(payload, dict):
            raise MalformedStream("an upstream event is not a JSON object")
        kind = payload.get("type") or event.event
        if kind == "error":
            raise stream_failure({"error": payload})
        if kind == "response.failed":
            raise _failed(payload)
        if kind in _OPENING:
            if self.rounds > 1:
                return []  # a later round's: the client's response is already open
            if self.opening is None:
                response = payload.get("response")
                self.opening = copy.deepcopy(response) if isinstance(response, dict) else {}
            shown = _client_view(_shown(payload.get("response"), self.continuing))
            return [self._emit({**payload, "response": shown}, event.event)]
        if kind in _ENDING:
            response = payload.get("response")
            if not isinstance(response, dict):
                raise MalformedStream(f"{kind} without its response")
            self.response = response
            self.turn.raw = response
            self.turn.stop_reason = str(response.get("status") or "")
            self.ending_kind = str(kind)
            self.finished = True
            return []
        index = payload.get("output_index")
        if not isinstance(index, int):
            return [self._emit(payload, event.event)]  # an event type newer than this code
        if kind == "response.output_item.added":
            return self._item_added(payload, index, event.event)
        if index not in self.indices:
            raise MalformedStream(f"{kind} for an output item that was never added")
        client = self.indices[index]
        if kind == "response.output_item.done":
            return self._item_done(payload, client, event.event)
        if client is None:
            return []  # a memory call's arguments: held, never streamed
        out = dict(payload)
        out["output_index"] = client
        if kind == "response.output_text.delta" and isinstance(payload.get("delta"), str):
            delta = payload["delta"]
            if client in self.pending:
                self.pending.discard(client)
                delta = self.prefixes[client] + delta
            self.turn.text += delta
            out["delta"] = delta
        elif client in self.prefixes:
            out = self._prefixed(kind, out, client)
        return [self._emit(out, event.event)]

    def _prefixed(self, kind: object, out: Json, client: int) -> Json:
        """The done events of a later round's first text carry the separator too."""
        prefix = self.prefixes[client]
        if kind == "response.output_text.done" and isinstance(out.get("text"), str):
            out["text"] = prefix + out["text"]
        elif kind == "response.content_part.done" and isinstance(out.get("part"), dict):
            part = out["part"]
            if part.get("type") == "output_text":
                out["part"] = {**part, "text": prefix + str(part.get("text") or "")}
        return out

    def _item_added(self, payload: Json, index: int, name: str | None) -> list[bytes]:
        item = payload.get("item")
        if not isinstance(item, dict):
            raise MalformedStream("response.output_item.added without its item")
        if _is_memory_call(item):
            self.indices[index] = None
            return []
        client = self.next_index
        self.next_index += 1
        self.indices[index] = client
        if item.get("type") == "message" and self.any_text and not self.prefixes:
            # The first message of a later round: separated from the text before.
            self.prefixes[client] = ROUND_TEXT_SEPARATOR
            self.pending.add(client)
        return [self._emit({**payload, "output_index": client}, name)]

    def _item_done(self, payload: Json, client: int | None, name: str | None) -> list[bytes]:
        item = payload.get("item")
        if not isinstance(item, dict):
            raise MalformedStream("response.output_item.done without its item")
        self.turn.blocks.append(item)
        if item.get("type") == "message" and client is not None:
            if client in self.prefixes and _message_text(item):
                item = _with_text_prefix(item, self.prefixes[client])
        elif item.get("type") == "function_call":
            try:
                self.turn.tool_calls.append(_call(item))
            except MalformedResponse as exc:
                raise MalformedStream(str(exc)) from exc
        if client is None:
            return []
        self.items.append(item)
        return [self._emit({**payload, "output_index": client, "item": item}, name)]

    def end_round(self) -> Turn:
        if not self.finished:
            raise MalformedStream("the upstream stream ended before response.completed")
        return self.turn

    def finish(self, usage: Usage, *, dropped_memory_calls: bool) -> list[bytes]:
        response = copy.deepcopy(self.response or {})
        opening = self.opening or {}
        for key in ("id", "created_at", "previous_response_id"):
            if key in opening:
                response[key] = opening[key]
        response["output"] = self.items
        response["usage"] = _usage_json(response.get("usage"), usage)
        view = _client_view(_shown(response, self.continuing))
        return [self._emit({"type": self.ending_kind, "response": view}, None)]

    def response_id(self) -> str | None:
        found = (self.opening or {}).get("id")
        return found if isinstance(found, str) else None

    def error(self, api: ApiFormat, type_: str, code: str, message: str) -> list[bytes]:
        if self.opening is None:
            return [api.stream_error(type_, code, message)]
        out = [encode_event(_error_event(code, message, self.sequence), "error")]
        self.sequence += 1
        response = copy.deepcopy(self.opening)
        response.update(
            status="failed",
            output=self.items,
            error={"code": code, "message": message},
        )
        view = _client_view(_shown(response, self.continuing))
        out.append(self._emit({"type": "response.failed", "response": view}, None))
        return out
