"""Anthropic Messages wire format (anthropic/types/message.py, raw_*_event.py)."""

from __future__ import annotations

import json
from typing import Any

from . import resolved
from .resolved import ResolvedReply, chunks
from .steps import Reply

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def resolve(reply: Reply, request_json: Any, body_size: int) -> ResolvedReply:
    return resolved.resolve(
        reply,
        request_json,
        body_size,
        id_prefix="toolu_",
        tool_stop="tool_use",
        plain_stop="end_turn",
    )


def _message(r: ResolvedReply, content: list[dict[str, Any]], output_tokens: int) -> dict[str, Any]:
    return {
        "id": resolved.new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": r.model,
        "content": content,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": r.input_tokens, "output_tokens": output_tokens},
    }


def completion(r: ResolvedReply) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if r.text:
        content.append({"type": "text", "text": r.text})
    for index, c in enumerate(r.calls):
        # Too deep for json.dumps: a placeholder, spliced with the raw text after (app.py).
        given = (
            resolved.raw_placeholder(index) if isinstance(c.input, resolved.RawInput) else c.input
        )
        content.append({"type": "tool_use", "id": c.id, "name": c.name, "input": given})
    message = _message(r, content, r.output_tokens)
    message["stop_reason"] = r.stop_reason
    return message


def _sse(event: str, payload: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(payload)}\n\n".encode()


def _block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> list[bytes]:
    events = [
        _sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
    ]
    for delta in deltas:
        events.append(
            _sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        )
    events.append(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def stream_events(r: ResolvedReply) -> list[bytes]:
    """Every SSE message of the stream, in order, ending with message_stop."""
    # Anthropic reports a placeholder output count of 1 at the start, the real one at the end.
    start = _message(r, [], 1)
    events = [_sse("message_start", {"type": "message_start", "message": start})]
    events.append(_sse("ping", {"type": "ping"}))
    index = 0
    if r.text:
        pieces = chunks(r.text, r.reply.text_chunk_chars)
        deltas = [{"type": "text_delta", "text": p} for p in pieces]
        events += _block(index, {"type": "text", "text": ""}, deltas)
        index += 1
    for c in r.calls:
        # Raw invalid argument text still goes out as fragments: the client must cope.
        pieces = chunks(c.arguments_json, r.reply.args_chunk_chars)
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
        events += _block(
            index, {"type": "tool_use", "id": c.id, "name": c.name, "input": {}}, deltas
        )
        index += 1
    delta = {"stop_reason": r.stop_reason, "stop_sequence": None}
    usage = {"output_tokens": r.output_tokens}
    events.append(_sse("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(_sse("message_stop", {"type": "message_stop"}))
    return events


def error_type(status: int) -> str:
    return _ERROR_TYPES.get(status, "api_error")


def error_body(status: int, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type(status), "message": message}}


def error_event(message: str) -> bytes:
    return _sse("error", error_body(529, message))


def garbage_event() -> bytes:
    # Named like a real event: the SDK skips data without an event name, which would
    # turn the fault into a silently truncated stream.
    return b"event: content_block_delta\ndata: {this is not json\n\n"


def request_problem(request_json: Any) -> str | None:
    """The 400 the Messages API gives a request whose tool turns are out of shape, or
    None: a message that follows tool_use blocks must begin with one tool_result per
    call (the API refuses a block placed ahead of them)."""
    messages = request_json.get("messages") if isinstance(request_json, dict) else None
    if not isinstance(messages, list):
        return None
    for index, message in enumerate(messages[:-1]):
        content = message.get("content") if isinstance(message, dict) else None
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        calls = [
            b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        if not calls:
            continue
        after = messages[index + 1]
        parts = after.get("content") if isinstance(after, dict) else None
        leading = parts[: len(calls)] if isinstance(parts, list) else []
        answered = [
            p.get("tool_use_id")
            for p in leading
            if isinstance(p, dict) and p.get("type") == "tool_result"
        ]
        if len(answered) < len(calls):
            return (
                f"messages.{index + 1}: Did not find {len(calls)} `tool_result` block(s) at the"
                " beginning of this message. Messages following `tool_use` blocks must begin"
                " with a matching number of `tool_result` blocks."
            )
        missing = [call for call in calls if call not in answered]
        if missing:
            return (
                f"messages.{index}: `tool_use` ids were found without `tool_result` blocks"
                f" immediately after: {', '.join(map(str, missing))}. Each `tool_use` block"
                " must have a corresponding `tool_result` block in the next message."
            )
    return None
