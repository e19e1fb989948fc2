"""OpenAI Chat Completions wire format (openai/types/chat/chat_completion*.py)."""

from __future__ import annotations

import json
import time
from typing import Any

from . import resolved
from .resolved import ResolvedReply, chunks
from .steps import Reply


def resolve(reply: Reply, request_json: Any, body_size: int) -> ResolvedReply:
    return resolved.resolve(
        reply, request_json, body_size, id_prefix="call_", tool_stop="tool_calls", plain_stop="stop"
    )


def _usage(r: ResolvedReply) -> dict[str, int]:
    return {
        "prompt_tokens": r.input_tokens,
        "completion_tokens": r.output_tokens,
        "total_tokens": r.input_tokens + r.output_tokens,
    }


def completion(r: ResolvedReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": r.text or None}
    if r.calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json},
            }
            for c in r.calls
        ]
    message["refusal"] = None
    return {
        "id": resolved.new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": r.model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": r.stop_reason, "logprobs": None}
        ],
        "usage": _usage(r),
    }


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def stream_events(r: ResolvedReply) -> list[bytes]:
    """Every SSE message of the stream, in order, ending with `data: [DONE]`."""
    base: dict[str, Any] = {
        "id": resolved.new_id("chatcmpl-"),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": r.model,
    }

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        payload = {**base, "choices": [choice]}
        # OpenAI only adds the key when usage was asked for, then null until the last chunk.
        if r.include_usage:
            payload["usage"] = None
        return _sse(payload)

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({"content": piece}) for piece in chunks(r.text, r.reply.text_chunk_chars)]
    for index, call in enumerate(r.calls):
        head = {"name": call.name, "arguments": ""}
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {"index": index, "id": call.id, "type": "function", "function": head}
                    ]
                }
            )
        )
        for piece in chunks(call.arguments_json, r.reply.args_chunk_chars):
            events.append(
                chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            )
    events.append(chunk({}, r.stop_reason))
    if r.include_usage and r.reply.usage_chunk:
        events.append(_sse({**base, "choices": [], "usage": _usage(r)}))
    events.append(b"data: [DONE]\n\n")
    return events


def error_type(status: int) -> tuple[str, str | None]:
    """(type, code) as OpenAI sends them for a status."""
    if status == 401:
        return "invalid_request_error", "invalid_api_key"
    if status == 429:
        return "requests", "rate_limit_exceeded"
    if status >= 500:
        return "server_error", None
    return "invalid_request_error", None


def error_body(status: int, message: str) -> dict[str, Any]:
    kind, code = error_type(status)
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def error_event(message: str) -> bytes:
    # The SDK raises APIError for any data event carrying an "error" key.
    return _sse(error_body(500, message))


def garbage_event() -> bytes:
    return b"data: {this is not json\n\n"


def request_problem(request_json: Any) -> str | None:
    """The 400 Chat Completions gives a request whose tool turns are out of shape, or
    None: an assistant message's tool calls must each be answered by a ``tool`` message
    right after it, and a ``tool`` message must answer such a call."""
    messages = request_json.get("messages") if isinstance(request_json, dict) else None
    if not isinstance(messages, list):
        return None
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            return None
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                return (
                    f"Invalid parameter: messages[{index}]: messages with role 'tool' must be"
                    " a response to a preceeding message with 'tool_calls'."
                )
            open_calls.discard(message["tool_call_id"])
            continue
        if open_calls:
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages"
                " responding to each 'tool_call_id'. The following tool_call_ids did not have"
                f" response messages: {', '.join(sorted(open_calls))}"
            )
        calls = message.get("tool_calls") if role == "assistant" else None
        if isinstance(calls, list):
            open_calls = {c.get("id") for c in calls if isinstance(c, dict)}
    return None
