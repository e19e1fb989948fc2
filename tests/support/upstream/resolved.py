"""A Reply with every default filled in for one request, shared by both renderers."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from .steps import Reply

_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def new_id(prefix: str, length: int = 24) -> str:
    """Random ids in the providers' style, e.g. "call_..." or "msg_..."."""
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(length))


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass(frozen=True)
class ResolvedCall:
    id: str
    name: str
    arguments_json: str  # exactly the text the wire carries
    input: Any  # parsed arguments, {} when the raw text is not JSON


@dataclass(frozen=True)
class ResolvedReply:
    reply: Reply
    model: str
    text: str
    calls: list[ResolvedCall]
    input_tokens: int
    output_tokens: int
    stop_reason: str
    include_usage: bool  # OpenAI stream_options.include_usage
    request: Any = None  # the request's JSON (the Responses renderer echoes some fields)


class RawInput(str):
    """Arguments that are JSON, but nested too deeply for the json module to parse or
    write (a model can emit that): the Anthropic renderer writes them as raw JSON text
    into the answer (``splice_raw``), where a real provider's answer would carry them."""


def _arguments(raw: dict[str, Any] | str) -> tuple[str, Any]:
    if isinstance(raw, dict):
        # Compact separators: what OpenAI and Anthropic actually emit.
        return json.dumps(raw, separators=(",", ":")), raw
    try:
        return raw, json.loads(raw)
    except RecursionError:
        return raw, RawInput(raw)
    except ValueError:
        return raw, {}


def raw_placeholder(index: int) -> str:
    return f"\u0000raw-input-{index}\u0000"


def splice_raw(body: bytes, r: ResolvedReply) -> bytes:
    """A rendered answer with each RawInput placeholder replaced by its JSON text."""
    for index, call in enumerate(r.calls):
        if isinstance(call.input, RawInput):
            body = body.replace(json.dumps(raw_placeholder(index)).encode(), call.input.encode())
    return body


def resolve(
    reply: Reply,
    request_json: Any,
    body_size: int,
    *,
    id_prefix: str,
    tool_stop: str,
    plain_stop: str,
) -> ResolvedReply:
    request = request_json if isinstance(request_json, dict) else {}
    calls = []
    for call in reply.tool_calls:
        text, parsed = _arguments(call.arguments)
        calls.append(ResolvedCall(call.id or new_id(id_prefix), call.name, text, parsed))
    generated = len(reply.text) + sum(len(c.arguments_json) for c in calls)
    stream_options = request.get("stream_options")
    return ResolvedReply(
        reply=reply,
        model=reply.model or str(request.get("model") or "scripted-model"),
        text=reply.text,
        calls=calls,
        input_tokens=reply.input_tokens if reply.input_tokens is not None else body_size // 4,
        output_tokens=(
            reply.output_tokens if reply.output_tokens is not None else max(1, generated // 4)
        ),
        stop_reason=reply.stop_reason or (tool_stop if calls else plain_stop),
        include_usage=isinstance(stream_options, dict)
        and stream_options.get("include_usage") is True,
        request=request,
    )
