"""OpenAI Chat Completions: POST /v1/chat/completions."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Final

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

# Byte-stable: built once from the shared tool definitions, appended after the client's.
MEMORY_TOOLS: Final[tuple[Json, ...]] = tuple(
    {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.input_schema,
        },
    }
    for spec in TOOLS
)
SYSTEM_NOTE: Final[Json] = {"role": "system", "content": VAULT_INSTRUCTIONS}
# Client headers that change what the upstream answers; the rest stay with memvault.
FORWARDED_HEADERS: Final = ("openai-beta",)
_LEADING_ROLES = frozenset({"system", "developer"})
# memvault's error kinds as OpenAI's error types (OpenAI answers a missing model or an
# over-long context with invalid_request_error too).
ERROR_TYPES: Final = {
    "invalid_request": "invalid_request_error",
    "not_found": "invalid_request_error",
    "conflict": "invalid_request_error",
    "payload_too_large": "invalid_request_error",
    "quota_exceeded": "invalid_request_error",
    "unprocessable": "invalid_request_error",
    "authentication_error": "authentication_error",
    "permission_error": "permission_error",
    "payment_required": "insufficient_quota",
    "rate_limited": "rate_limit_error",
}
# The request field an error is about (OpenAI's ``param``), by memvault's code.
PARAM_BY_CODE: Final = {
    "invalid_model": "model",
    "invalid_messages": "messages",
    "invalid_tools": "tools",
    "invalid_stream": "stream",
    "invalid_max_tokens": "max_tokens",
}


class OpenAIChat(ApiFormat):
    name = "openai"
    provider = "openai"
    upstream_path = "/chat/completions"
    models_path = "/models"
    output_fields = ("max_completion_tokens", "max_tokens")
    error_types = ERROR_TYPES

    # ------------------------------------------------------------------ requests
    def client_tool_names(self, body: Json) -> set[str]:
        names: set[str] = set()
        for tool in body.get("tools") or []:
            if isinstance(tool, dict):
                function = tool.get("function")
                if isinstance(function, dict) and isinstance(function.get("name"), str):
                    names.add(function["name"])
                elif isinstance(tool.get("name"), str):
                    names.add(tool["name"])
        return names

    def with_system_prefix(self, body: Json, block: str) -> Json:
        out = dict(body)
        messages = list(body["messages"])
        first = messages[0] if messages else None
        if isinstance(first, dict) and first.get("role") in _LEADING_ROLES:
            content = first.get("content")
            if isinstance(content, str):
                messages[0] = {**first, "content": f"{block}\n\n{content}" if content else block}
            elif isinstance(content, list):
                messages[0] = {**first, "content": [{"type": "text", "text": block}, *content]}
            else:
                messages.insert(0, {"role": "system", "content": block})
        else:
            messages.insert(0, {"role": "system", "content": block})
        out["messages"] = messages
        return out

    def with_memory_tools(self, body: Json) -> Json:
        out = dict(body)
        out["tools"] = [*(body.get("tools") or []), *MEMORY_TOOLS]
        messages = list(body["messages"])
        # After the client's own leading system/developer messages, so their prompt
        # prefix (and its cache) is unchanged.
        at = 0
        while at < len(messages) and messages[at].get("role") in _LEADING_ROLES:
            at += 1
        messages.insert(at, SYSTEM_NOTE)
        out["messages"] = messages
        return out

    def output_allowance(self, body: Json, default: int) -> int:
        for field_name in ("max_completion_tokens", "max_tokens"):
            value = as_int(body.get(field_name))
            if value:
                return value
        return default

    def prepare_stream(self, body: Json) -> tuple[Json, bool]:
        options = body.get("stream_options")
        wants = isinstance(options, dict) and options.get("include_usage") is True
        if wants:
            return body, True
        out = dict(body)
        out["stream_options"] = {
            **(options if isinstance(options, dict) else {}),
            "include_usage": True,
        }
        return out, False

    def without_memory_tools(self, body: Json) -> Json:
        out = dict(body)
        tools = body.get("tools") or []
        own = [t for t in tools if not _is_memory_tool(t)]
        if own:
            out["tools"] = own
        else:
            out["tool_choice"] = "none"
        return out

    def continued(
        self, body: Json, turn: Turn, outcomes: list[ToolOutcome], *, memory_tools: bool = True
    ) -> Json:
        assistant: Json = {
            "role": "assistant",
            "content": turn.text or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json},
                }
                for call in turn.tool_calls
            ],
        }
        results = [
            {"role": "tool", "tool_call_id": o.call.id, "content": o.result.text} for o in outcomes
        ]
        out = dict(body)
        out["messages"] = [*body["messages"], assistant, *results]
        return out if memory_tools else self.without_memory_tools(out)

    # ------------------------------------------------------------------ responses
    def parse_response(self, payload: object) -> Turn:
        body = require_object(payload, "the upstream answer")
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise MalformedResponse("the upstream answer has no choices")
        message = choices[0].get("message")
        if not isinstance(message, dict):
            raise MalformedResponse("the upstream answer's choice has no message")
        content = message.get("content")
        calls = []
        for raw in message.get("tool_calls") or []:
            function = raw.get("function") if isinstance(raw, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise MalformedResponse("an upstream tool call has no function name")
            arguments = function.get("arguments")
            calls.append(
                ToolCall(
                    id=str(raw.get("id") or ""),
                    name=function["name"],
                    arguments_json=arguments
                    if isinstance(arguments, str)
                    else json.dumps(arguments),
                )
            )
        return Turn(
            text=content if isinstance(content, str) else "",
            tool_calls=calls,
            usage=self.parse_usage(body),
            stop_reason=choices[0].get("finish_reason"),
            raw=body,
        )

    def parse_usage(self, payload: object) -> Usage:
        usage = payload.get("usage") if isinstance(payload, dict) else None
        if not isinstance(usage, dict):
            return Usage()
        return Usage(as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens")))

    def final_response(self, turns: list[Turn], usage: Usage) -> Json:
        last = turns[-1]
        assert last.raw is not None
        out = copy.deepcopy(last.raw)
        if turns[0].raw is not None and "id" in turns[0].raw:
            out["id"] = turns[0].raw["id"]
        choice = out["choices"][0]
        message = choice["message"]
        text = ROUND_TEXT_SEPARATOR.join(t.text for t in turns if t.text)
        message["content"] = text or None
        kept = [c for c in message.get("tool_calls") or [] if not _is_memory_raw(c)]
        if kept:
            message["tool_calls"] = kept
        else:
            message.pop("tool_calls", None)
            if choice.get("finish_reason") == "tool_calls":
                choice["finish_reason"] = "stop"
        out["usage"] = _usage_json(out.get("usage"), usage)
        return out

    def translator(self, *, client_wants_usage: bool) -> StreamTranslator:
        return _OpenAIStream(client_wants_usage)

    def meter(self) -> StreamMeter:
        return _OpenAIMeter()

    def ends_stream(self, event: SseEvent) -> bool:
        return event.data == "[DONE]"

    def passthrough_event(self, event: SseEvent, *, client_wants_usage: bool) -> bytes | None:
        if event.data == "[DONE]":
            return encode_event("[DONE]")
        payload = event.json()
        if not isinstance(payload, dict):
            raise MalformedStream("an upstream chunk is not a JSON object")
        if "error" in payload:
            raise stream_failure(payload)
        if not client_wants_usage:
            if payload.get("choices") == [] and "usage" in payload:
                return None  # the usage chunk memvault asked for, for billing
            payload = {k: v for k, v in payload.items() if k != "usage"}
        return encode_event(payload)

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
        return encode_event(self.error_body(type_, code, message))

    def upstream_headers(self, client: Mapping[str, str], credential: str | None) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if credential:
            headers["authorization"] = f"Bearer {credential}"
        for name in FORWARDED_HEADERS:
            if name in client:
                headers[name] = client[name]
        return headers


def _is_memory_tool(tool: object) -> bool:
    function = tool.get("function") if isinstance(tool, dict) else None
    return isinstance(function, dict) and function.get("name") in MEMORY_TOOL_NAMES


def _is_memory_raw(call: object) -> bool:
    function = call.get("function") if isinstance(call, dict) else None
    return isinstance(function, dict) and function.get("name") in MEMORY_TOOL_NAMES


def _usage_json(original: object, usage: Usage) -> Json:
    out: Json = dict(original) if isinstance(original, dict) else {}
    out["prompt_tokens"] = usage.input_tokens
    out["completion_tokens"] = usage.output_tokens
    out["total_tokens"] = usage.input_tokens + usage.output_tokens
    return out


class _OpenAIMeter(StreamMeter):
    """Usage from the last chunk (include_usage, which memvault always asks for); the
    output received from every delta's content, refusal, reasoning and tool calls."""

    def _observe(self, payload: Json) -> None:
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self.reported = Usage(
                as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens"))
            )
            self.complete = True
        for choice in payload.get("choices") or []:
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict):
                continue
            for key in ("content", "refusal", "reasoning_content", "reasoning"):
                self.add_text(delta.get(key))
            for call in delta.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    self.add_text(function.get("name"))
                    self.add_text(function.get("arguments"))


class _PendingCall:
    __slots__ = ("arguments", "forwarded_index", "fragments", "id", "name")

    def __init__(self) -> None:
        self.id = ""
        self.name: str | None = None
        self.arguments = ""
        self.forwarded_index: int | None = None  # the index the client sees, if forwarded
        self.fragments: list[Json] = []  # held until the name says whose call it is


class _OpenAIStream(StreamTranslator):
    """Several upstream chunk streams as one ``chat.completion.chunk`` stream."""

    def __init__(self, client_wants_usage: bool) -> None:
        self.client_wants_usage = client_wants_usage
        self.identity: Json | None = None  # id, created, model of the first round
        self.role_sent = False
        self.rounds_with_text = 0
        self.client_calls = 0
        self._reset_round()

    def _reset_round(self) -> None:
        self.turn = Turn()
        self.calls: dict[int, _PendingCall] = {}
        self.finish_chunk: Json | None = None
        self.round_text_started = False
        self.finished = False  # a finish_reason arrived: the round's answer is whole

    def begin_round(self) -> None:
        if self.turn.text:
            self.rounds_with_text += 1
        self._reset_round()

    def _chunk(self, template: Json, delta: Json, finish_reason: object = None) -> Json:
        chunk = {k: v for k, v in template.items() if k not in ("choices", "usage")}
        assert self.identity is not None
        chunk.update(self.identity)
        choice: Json = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        chunk["choices"] = [choice]
        if self.client_wants_usage:
            chunk["usage"] = None
        return chunk

    def feed(self, event: SseEvent) -> list[bytes]:
        if event.data == "[DONE]":
            return []
        payload = event.json()
        if not isinstance(payload, dict):
            raise MalformedStream("an upstream chunk is not a JSON object")
        if "error" in payload:
            raise stream_failure(payload)
        if self.identity is None:
            self.identity = {
                key: payload[key] for key in ("id", "created", "model") if key in payload
            }
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices:
            return []  # the usage chunk: summed and sent once, at the end
        choice = choices[0]
        if not isinstance(choice, dict):
            raise MalformedStream("an upstream chunk's choice is not an object")
        out: list[bytes] = []
        delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
        assert isinstance(delta, dict)
        forward: Json = {}
        for key, value in delta.items():
            if key == "role":
                if not self.role_sent:
                    forward["role"] = value
                    self.role_sent = True
            elif key == "content":
                if isinstance(value, str) and value:
                    if not self.round_text_started and self.rounds_with_text:
                        value = ROUND_TEXT_SEPARATOR + value
                    self.round_text_started = True
                    self.turn.text += value
                    forward["content"] = value
                elif "content" not in forward and not self.role_sent:
                    forward["content"] = value
            elif key == "tool_calls":
                out.extend(self._tool_fragments(payload, value))
            else:
                forward[key] = value
        if forward:
            out.insert(0, encode_event(self._chunk(payload, forward)))
        if choice.get("finish_reason") is not None:
            self.turn.stop_reason = str(choice["finish_reason"])
            self.finish_chunk = payload
            self.finished = True
        return out

    def _tool_fragments(self, template: Json, fragments: object) -> list[bytes]:
        if not isinstance(fragments, list):
            raise MalformedStream("an upstream chunk's tool_calls is not a list")
        out: list[bytes] = []
        for fragment in fragments:
            if not isinstance(fragment, dict) or not isinstance(fragment.get("index"), int):
                raise MalformedStream("an upstream tool call fragment has no index")
            call = self.calls.setdefault(fragment["index"], _PendingCall())
            if fragment.get("id"):
                call.id = str(fragment["id"])
            function = fragment.get("function")
            if isinstance(function, dict):
                if isinstance(function.get("name"), str) and function["name"]:
                    call.name = (call.name or "") + function["name"]
                if isinstance(function.get("arguments"), str):
                    call.arguments += function["arguments"]
            if call.forwarded_index is not None:
                out.append(self._forward_fragment(template, call, fragment))
                continue
            call.fragments.append(fragment)
            if call.name is not None and call.name not in MEMORY_TOOL_NAMES:
                # The client's own tool: it streams, renumbered among the client's calls.
                call.forwarded_index = self.client_calls
                self.client_calls += 1
                held, call.fragments = call.fragments, []
                out.extend(self._forward_fragment(template, call, f) for f in held)
        return out

    def _forward_fragment(self, template: Json, call: _PendingCall, fragment: Json) -> bytes:
        renumbered = dict(fragment)
        renumbered["index"] = call.forwarded_index
        return encode_event(self._chunk(template, {"tool_calls": [renumbered]}))

    def end_round(self) -> Turn:
        if not self.finished:
            # Cut short without a transport error: not an answer to end cleanly on.
            raise MalformedStream("the upstream stream ended before its finish_reason")
        for _, call in sorted(self.calls.items()):
            if call.name is None:
                raise MalformedStream("an upstream tool call never said its name")
            self.turn.tool_calls.append(
                ToolCall(id=call.id, name=call.name, arguments_json=call.arguments)
            )
        return self.turn

    def finish(self, usage: Usage, *, dropped_memory_calls: bool) -> list[bytes]:
        template = self.finish_chunk or {}
        if self.identity is None:
            self.identity = {}
        reason: object = self.turn.stop_reason or "stop"
        if reason == "tool_calls" and not self.turn.client_calls:
            reason = "stop"
        out = [encode_event(self._chunk(template, {}, reason))]
        if self.client_wants_usage:
            chunk = {k: v for k, v in template.items() if k not in ("choices", "usage")}
            chunk.update(self.identity)
            chunk["choices"] = []
            chunk["usage"] = _usage_json(None, usage)
            out.append(encode_event(chunk))
        out.append(encode_event("[DONE]"))
        return out
