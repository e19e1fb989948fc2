"""Anthropic Messages: POST /v1/messages."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Mapping
from typing import Final

from memvault.errors import InvalidInput
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
from memvault.gateway.sse import MalformedStream, SseEvent, encode_event
from memvault.tools import TOOLS, VAULT_INSTRUCTIONS

MEMORY_TOOLS: Final[tuple[Json, ...]] = tuple(
    {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}
    for spec in TOOLS
)
SYSTEM_NOTE_BLOCK: Final[Json] = {"type": "text", "text": VAULT_INSTRUCTIONS}
FORWARDED_HEADERS: Final = ("anthropic-version", "anthropic-beta")
DEFAULT_VERSION: Final = "2023-06-01"
# memvault's error kinds as Anthropic's error types (docs "Errors"; the SDK's ErrorType):
# a 4xx it does not list is invalid_request_error, as Anthropic's own are.
ERROR_TYPES: Final = {
    "invalid_request": "invalid_request_error",
    "conflict": "invalid_request_error",
    "unprocessable": "invalid_request_error",
    "authentication_error": "authentication_error",
    "payment_required": "billing_error",
    "permission_error": "permission_error",
    "not_found": "not_found_error",
    "payload_too_large": "request_too_large",
    "quota_exceeded": "request_too_large",
    "rate_limited": "rate_limit_error",
    "service_unavailable": "overloaded_error",
}


def _usage(raw: object) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    # Cached prompt tokens are input too: billed (at provider rates) like any other.
    input_tokens = (
        as_int(raw.get("input_tokens"))
        + as_int(raw.get("cache_creation_input_tokens"))
        + as_int(raw.get("cache_read_input_tokens"))
    )
    return Usage(input_tokens, as_int(raw.get("output_tokens")))


class AnthropicMessages(ApiFormat):
    name = "anthropic"
    provider = "anthropic"
    upstream_path = "/v1/messages"
    models_path = "/v1/models"
    error_types = ERROR_TYPES
    # Claude's tokenizer yields roughly 10-20% more tokens than o200k for English text.
    token_margin = 1.25

    # ------------------------------------------------------------------ requests
    def validate_format(self, body: Json) -> None:
        system = body.get("system")
        if system is not None and not isinstance(system, str | list):
            raise InvalidInput(
                "'system' must be a string or a list of blocks", code="invalid_system"
            )

    def client_tool_names(self, body: Json) -> set[str]:
        return {
            tool["name"]
            for tool in body.get("tools") or []
            if isinstance(tool, dict) and isinstance(tool.get("name"), str)
        }

    def with_system_prefix(self, body: Json, block: str) -> Json:
        out = dict(body)
        system = body.get("system")
        if system is None or system == "":
            out["system"] = block
        elif isinstance(system, str):
            out["system"] = [{"type": "text", "text": block}, {"type": "text", "text": system}]
        else:
            out["system"] = [{"type": "text", "text": block}, *system]
        return out

    def with_memory_tools(self, body: Json) -> Json:
        out = dict(body)
        out["tools"] = [*(body.get("tools") or []), *MEMORY_TOOLS]
        system = body.get("system")
        # After the client's system prompt, so its prefix (and cache) stays the same.
        if system is None or system == "":
            out["system"] = VAULT_INSTRUCTIONS
        elif isinstance(system, str):
            out["system"] = [{"type": "text", "text": system}, SYSTEM_NOTE_BLOCK]
        else:
            out["system"] = [*system, SYSTEM_NOTE_BLOCK]
        return out

    def output_allowance(self, body: Json, default: int) -> int:
        return as_int(body.get("max_tokens")) or default

    def prepare_stream(self, body: Json) -> tuple[Json, bool]:
        return body, True  # Anthropic streams always carry usage

    def without_memory_tools(self, body: Json) -> Json:
        out = dict(body)
        tools = body.get("tools") or []
        own = [t for t in tools if not (isinstance(t, dict) and t.get("name") in MEMORY_TOOL_NAMES)]
        if own:
            out["tools"] = own
        else:
            out["tool_choice"] = {"type": "none"}
        return out

    def continued(
        self, body: Json, turn: Turn, outcomes: list[ToolOutcome], *, memory_tools: bool = True
    ) -> Json:
        results = []
        for outcome in outcomes:
            result: Json = {
                "type": "tool_result",
                "tool_use_id": outcome.call.id,
                "content": outcome.result.text,
            }
            if outcome.result.is_error:
                result["is_error"] = True
            results.append(result)
        out = dict(body)
        out["messages"] = [
            *body["messages"],
            {"role": "assistant", "content": turn.blocks},
            {"role": "user", "content": results},
        ]
        return out if memory_tools else self.without_memory_tools(out)

    # ------------------------------------------------------------------ responses
    def parse_response(self, payload: object) -> Turn:
        body = require_object(payload, "the upstream answer")
        content = body.get("content")
        if body.get("type") != "message" or not isinstance(content, list):
            raise MalformedResponse("the upstream answer is not a message")
        turn = Turn(usage=_usage(body.get("usage")), stop_reason=body.get("stop_reason"), raw=body)
        for block in content:
            if not isinstance(block, dict):
                raise MalformedResponse("an upstream content block is not an object")
            turn.blocks.append(block)
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                turn.text += block["text"]
            elif block.get("type") == "tool_use":
                if not isinstance(block.get("name"), str):
                    raise MalformedResponse("an upstream tool_use block has no name")
                given = block.get("input", {})
                try:
                    arguments_json = json.dumps(given)
                except RecursionError:
                    arguments_json = ""  # too deep to write: the round is refused for it
                turn.tool_calls.append(
                    ToolCall(
                        id=str(block.get("id") or ""),
                        name=block["name"],
                        arguments_json=arguments_json,
                        parsed=given,
                    )
                )
        return turn

    def parse_usage(self, payload: object) -> Usage:
        return _usage(payload.get("usage") if isinstance(payload, dict) else None)

    def final_response(self, turns: list[Turn], usage: Usage) -> Json:
        last = turns[-1]
        assert last.raw is not None
        out = copy.deepcopy(last.raw)
        if turns[0].raw is not None and "id" in turns[0].raw:
            out["id"] = turns[0].raw["id"]
        blocks: list[Json] = []
        text_before = False  # text in an earlier round: the next round's text is separated
        for turn in turns:
            first_text = True
            for block in turn.blocks:
                if block.get("type") == "tool_use" and block.get("name") in MEMORY_TOOL_NAMES:
                    continue
                if block.get("type") == "text":
                    if first_text and text_before:
                        block = {**block, "text": ROUND_TEXT_SEPARATOR + block.get("text", "")}
                    first_text = False
                blocks.append(copy.deepcopy(block))
            text_before = text_before or bool(turn.text)
        out["content"] = blocks
        if out.get("stop_reason") == "tool_use" and not last.client_calls:
            out["stop_reason"] = "end_turn"
        raw_usage = out.get("usage") if isinstance(out.get("usage"), dict) else {}
        assert isinstance(raw_usage, dict)
        out["usage"] = {
            **raw_usage,
            "input_tokens": usage.input_tokens
            - as_int(raw_usage.get("cache_creation_input_tokens"))
            - as_int(raw_usage.get("cache_read_input_tokens")),
            "output_tokens": usage.output_tokens,
        }
        return out

    def translator(self, *, client_wants_usage: bool) -> StreamTranslator:
        return _AnthropicStream()

    def meter(self) -> StreamMeter:
        return _AnthropicMeter()

    def ends_stream(self, event: SseEvent) -> bool:
        return event.event == "message_stop" or '"message_stop"' in event.data

    def passthrough_event(self, event: SseEvent, *, client_wants_usage: bool) -> bytes | None:
        payload = event.json()
        if not isinstance(payload, dict):
            raise MalformedStream("an upstream event is not a JSON object")
        kind = payload.get("type")
        if kind == "error":
            raise stream_failure(payload)
        return encode_event(payload, event.event or (kind if isinstance(kind, str) else None))

    # ------------------------------------------------------------------ errors
    def error_type(self, type_: str, code: str) -> str:
        if code == "upstream_timeout":
            return "timeout_error"
        return super().error_type(type_, code)

    def error_body(self, type_: str, code: str, message: str) -> Json:
        return {
            "type": "error",
            "error": {"type": self.error_type(type_, code), "code": code, "message": message},
        }

    def stream_error(self, type_: str, code: str, message: str) -> bytes:
        return encode_event(self.error_body(type_, code, message), event="error")

    def upstream_headers(self, client: Mapping[str, str], credential: str | None) -> dict[str, str]:
        headers = {
            "content-type": "application/json",
            "anthropic-version": client.get("anthropic-version", DEFAULT_VERSION),
        }
        if credential:
            headers["x-api-key"] = credential
        if "anthropic-beta" in client:
            headers["anthropic-beta"] = client["anthropic-beta"]
        return headers


class _AnthropicMeter(StreamMeter):
    """Input from message_start (cached prompt tokens included), output from
    message_delta (message_start's is a placeholder); the output received from text,
    tool input and thinking deltas."""

    def _observe(self, payload: Json) -> None:
        kind = payload.get("type")
        if kind == "message_start":
            message = payload.get("message")
            self.reported = _usage(message.get("usage") if isinstance(message, dict) else None)
        elif kind == "content_block_start":
            block = payload.get("content_block")
            if isinstance(block, dict):
                self.add_text(block.get("name"))
                self.add_text(block.get("text"))
        elif kind == "content_block_delta":
            delta = payload.get("delta")
            if isinstance(delta, dict):
                for key in ("text", "partial_json", "thinking"):
                    self.add_text(delta.get(key))
        elif kind == "message_delta":
            found = _usage(payload.get("usage"))
            if found.input_tokens:
                self.reported.input_tokens = found.input_tokens
            self.reported.output_tokens = found.output_tokens
            self.complete = True


class _Block:
    """One upstream content block being streamed: forwarded, or held (a memory call)."""

    __slots__ = ("client_index", "content", "partial_json")

    def __init__(self, content: Json, client_index: int | None) -> None:
        self.content = content
        self.client_index = client_index  # None: a memory tool call, never forwarded
        self.partial_json = ""


class _AnthropicStream(StreamTranslator):
    """Several upstream message streams as one: one message_start, one message_stop,
    content block indices counted across every round."""

    def __init__(self) -> None:
        self.started = False
        self.next_index = 0
        self.any_text = False
        self._reset_round()

    def _reset_round(self) -> None:
        self.turn = Turn()
        self.blocks: dict[int, _Block] = {}
        self.round_text_started = False
        self.stop_sequence: object = None
        self.finished = False  # message_stop arrived: the round's answer is whole

    def begin_round(self) -> None:
        self._reset_round()

    def feed(self, event: SseEvent) -> list[bytes]:
        payload = event.json()
        if not isinstance(payload, dict):
            raise MalformedStream("an upstream event is not a JSON object")
        kind = payload.get("type") or event.event
        if kind == "error":
            raise stream_failure(payload)
        if kind == "message_start":
            if self.started:
                return []
            self.started = True
            return [encode_event(payload, "message_start")]
        if kind == "ping":
            return [encode_event(payload, "ping")]
        if kind == "content_block_start":
            return self._block_start(payload)
        if kind == "content_block_delta":
            return self._block_delta(payload)
        if kind == "content_block_stop":
            return self._block_stop(payload)
        if kind == "message_delta":
            delta = payload.get("delta")
            if isinstance(delta, dict):
                self.turn.stop_reason = delta.get("stop_reason")
                self.stop_sequence = delta.get("stop_sequence")
            return []
        if kind == "message_stop":
            self.finished = True
            return []
        return [encode_event(payload, event.event)]  # an event type newer than this code

    def _index(self, payload: Json) -> int:
        index = payload.get("index")
        if not isinstance(index, int):
            raise MalformedStream("an upstream content block event has no index")
        return index

    def _block_start(self, payload: Json) -> list[bytes]:
        index = self._index(payload)
        block = payload.get("content_block")
        if not isinstance(block, dict):
            raise MalformedStream("content_block_start without a block")
        content = copy.deepcopy(block)
        if block.get("type") == "tool_use" and block.get("name") in MEMORY_TOOL_NAMES:
            self.blocks[index] = _Block(content, None)
            return []
        state = _Block(content, self.next_index)
        self.next_index += 1
        self.blocks[index] = state
        out = [encode_event({**payload, "index": state.client_index}, "content_block_start")]
        if block.get("type") == "text" and self.any_text and not self.round_text_started:
            # The first text of a later round: a separator, as in whole responses.
            self.round_text_started = True
            out.append(self._text_delta(state, ROUND_TEXT_SEPARATOR))
        return out

    def _text_delta(self, state: _Block, text: str) -> bytes:
        state.content["text"] = state.content.get("text", "") + text
        self.turn.text += text
        return encode_event(
            {
                "type": "content_block_delta",
                "index": state.client_index,
                "delta": {"type": "text_delta", "text": text},
            },
            "content_block_delta",
        )

    def _block_delta(self, payload: Json) -> list[bytes]:
        state = self.blocks.get(self._index(payload))
        delta = payload.get("delta")
        if state is None or not isinstance(delta, dict):
            raise MalformedStream("content_block_delta for a block that never started")
        kind = delta.get("type")
        if kind == "text_delta" and isinstance(delta.get("text"), str):
            state.content["text"] = state.content.get("text", "") + delta["text"]
            self.turn.text += delta["text"]
            self.any_text = True
            self.round_text_started = True
        elif kind == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            state.partial_json += delta["partial_json"]
        elif kind == "thinking_delta" and isinstance(delta.get("thinking"), str):
            state.content["thinking"] = state.content.get("thinking", "") + delta["thinking"]
        elif kind == "signature_delta" and isinstance(delta.get("signature"), str):
            state.content["signature"] = delta["signature"]
        elif kind == "citations_delta":
            state.content.setdefault("citations", []).append(delta.get("citation"))
        if state.client_index is None:
            return []
        return [encode_event({**payload, "index": state.client_index}, "content_block_delta")]

    def _block_stop(self, payload: Json) -> list[bytes]:
        state = self.blocks.get(self._index(payload))
        if state is None:
            raise MalformedStream("content_block_stop for a block that never started")
        if state.content.get("type") in ("tool_use", "server_tool_use"):
            text = state.partial_json.strip()
            try:
                state.content["input"] = json.loads(text) if text else {}
            except (ValueError, RecursionError):
                # Kept as sent: a memory call's round is refused for arguments not JSON
                # or nested too deeply (rounds.check_round).
                state.content["input"] = {}
                state.content["_raw_arguments"] = state.partial_json
        if state.client_index is None:
            return []
        return [encode_event({**payload, "index": state.client_index}, "content_block_stop")]

    def end_round(self) -> Turn:
        if not self.finished:
            # Cut short without a transport error: not an answer to end cleanly on.
            raise MalformedStream("the upstream stream ended before message_stop")
        for _, state in sorted(self.blocks.items()):
            content = state.content
            raw_arguments = content.pop("_raw_arguments", None)
            if content.get("type") == "tool_use":
                name = content.get("name")
                if not isinstance(name, str):
                    raise MalformedStream("an upstream tool_use block has no name")
                call = ToolCall(id=str(content.get("id") or ""), name=name, arguments_json="")
                if isinstance(raw_arguments, str):
                    call.arguments_json = raw_arguments  # parsed (and refused) later
                else:
                    call.parsed = content.get("input", {})
                    # Too deep to write: left blank, and the round is refused for it.
                    with contextlib.suppress(RecursionError):
                        call.arguments_json = json.dumps(call.parsed)
                self.turn.tool_calls.append(call)
            self.turn.blocks.append(content)
        return self.turn

    def finish(self, usage: Usage, *, dropped_memory_calls: bool) -> list[bytes]:
        reason = self.turn.stop_reason or "end_turn"
        if reason == "tool_use" and not self.turn.client_calls:
            reason = "end_turn"
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": self.stop_sequence},
            "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
        }
        return [
            encode_event(delta, "message_delta"),
            encode_event({"type": "message_stop"}, "message_stop"),
        ]
