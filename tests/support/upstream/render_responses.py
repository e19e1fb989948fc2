"""OpenAI Responses wire format (openai/types/responses/response.py, response_*_event.py).

Output items in the order a reasoning model emits them: a reasoning item (``Reply.reasoning``),
any scripted built-in tool items (``Reply.output_items``, e.g. a web_search_call), the
message (``Reply.text``), then one ``function_call`` per tool call. Streams are the
semantic events, each with its ``sequence_number``. Responses are stored as OpenAI stores
them (unless ``store`` is false): continuing one needs an output for each of its calls.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from typing import Any

from . import resolved
from .resolved import ResolvedReply, chunks
from .steps import Reply

# What the provider stores (``store`` not false): each response's function calls, which a
# request continuing it (``previous_response_id``) must answer, every one, as the
# Responses API insists. Ids are random, so the session-wide store needs no reset.
_STORED_CALLS: OrderedDict[str, tuple[str, ...]] = OrderedDict()
_STORED_LOCK = threading.Lock()
_STORED_MAX = 100_000


def _store(r: ResolvedReply, rid: str, items: list[dict[str, Any]]) -> None:
    request = r.request if isinstance(r.request, dict) else {}
    if request.get("store") is False:
        return
    calls = tuple(str(i["call_id"]) for i in items if i.get("type") == "function_call")
    with _STORED_LOCK:
        _STORED_CALLS[rid] = calls
        while len(_STORED_CALLS) > _STORED_MAX:
            _STORED_CALLS.popitem(last=False)


def stored_calls(response_id: str) -> tuple[str, ...] | None:
    """The function calls a stored response ends in (None: not stored here)."""
    with _STORED_LOCK:
        return _STORED_CALLS.get(response_id)


def resolve(reply: Reply, request_json: Any, body_size: int) -> ResolvedReply:
    return resolved.resolve(
        reply,
        request_json,
        body_size,
        id_prefix="call_",
        tool_stop="completed",
        plain_stop="completed",
    )


def _usage(r: ResolvedReply) -> dict[str, Any]:
    return {
        "input_tokens": r.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": r.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": r.input_tokens + r.output_tokens,
    }


def _response(
    r: ResolvedReply, rid: str, output: list[dict[str, Any]], status: str
) -> dict[str, Any]:
    request = r.request if isinstance(r.request, dict) else {}
    return {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "model": r.model,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": request.get("previous_response_id"),
        "store": request.get("store", True),
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools", []),
        "usage": _usage(r) if status != "in_progress" else None,
    }


def _items(r: ResolvedReply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if r.reply.reasoning:
        items.append(
            {
                "id": resolved.new_id("rs_"),
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": r.reply.reasoning}],
            }
        )
    items += [dict(item) for item in r.reply.output_items]
    if r.text:
        items.append(
            {
                "id": resolved.new_id("msg_"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": r.text, "annotations": []}],
            }
        )
    for c in r.calls:
        items.append(
            {
                "id": resolved.new_id("fc_"),
                "type": "function_call",
                "status": "completed",
                "call_id": c.id,
                "name": c.name,
                "arguments": c.arguments_json,
            }
        )
    return items


def completion(r: ResolvedReply) -> dict[str, Any]:
    rid, items = resolved.new_id("resp_"), _items(r)
    _store(r, rid, items)
    return _response(r, rid, items, r.reply.stop_reason or "completed")


class _Events:
    def __init__(self) -> None:
        self.out: list[bytes] = []

    def add(self, payload: dict[str, Any]) -> None:
        payload = {**payload, "sequence_number": len(self.out)}
        self.out.append(f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode())


def stream_events(r: ResolvedReply) -> list[bytes]:
    rid = resolved.new_id("resp_")
    events = _Events()
    events.add({"type": "response.created", "response": _response(r, rid, [], "in_progress")})
    events.add({"type": "response.in_progress", "response": _response(r, rid, [], "in_progress")})
    items = _items(r)
    for index, item in enumerate(items):
        head = {"output_index": index, "item_id": item["id"]}
        kind = item["type"]
        if kind == "message":
            events.add(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                }
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            events.add(
                {"type": "response.content_part.added", **head, "content_index": 0, "part": part}
            )
            for piece in chunks(r.text, r.reply.text_chunk_chars):
                events.add(
                    {
                        "type": "response.output_text.delta",
                        **head,
                        "content_index": 0,
                        "delta": piece,
                        "logprobs": [],
                    }
                )
            events.add(
                {
                    "type": "response.output_text.done",
                    **head,
                    "content_index": 0,
                    "text": r.text,
                    "logprobs": [],
                }
            )
            done_part = {**part, "text": r.text}
            events.add(
                {
                    "type": "response.content_part.done",
                    **head,
                    "content_index": 0,
                    "part": done_part,
                }
            )
        elif kind == "function_call":
            events.add(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "arguments": ""},
                }
            )
            for piece in chunks(item["arguments"], r.reply.args_chunk_chars):
                events.add(
                    {"type": "response.function_call_arguments.delta", **head, "delta": piece}
                )
            events.add(
                {
                    "type": "response.function_call_arguments.done",
                    **head,
                    "name": item["name"],
                    "arguments": item["arguments"],
                }
            )
        elif kind == "reasoning":
            text = item["summary"][0]["text"]
            events.add(
                {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "summary": []},
                }
            )
            summary = {**head, "summary_index": 0}
            events.add(
                {
                    "type": "response.reasoning_summary_part.added",
                    **summary,
                    "part": {"type": "summary_text", "text": ""},
                }
            )
            events.add({"type": "response.reasoning_summary_text.delta", **summary, "delta": text})
            events.add({"type": "response.reasoning_summary_text.done", **summary, "text": text})
            events.add(
                {
                    "type": "response.reasoning_summary_part.done",
                    **summary,
                    "part": {"type": "summary_text", "text": text},
                }
            )
        else:
            # A built-in tool's item (web_search_call...): its own progress event.
            events.add({"type": "response.output_item.added", "output_index": index, "item": item})
            events.add({"type": f"response.{kind}.completed", **head})
        events.add({"type": "response.output_item.done", "output_index": index, "item": item})
    _store(r, rid, items)
    status = r.reply.stop_reason or "completed"
    ending = "response.incomplete" if status == "incomplete" else "response.completed"
    events.add({"type": ending, "response": _response(r, rid, items, status)})
    return events.out


def error_body(status: int, message: str) -> dict[str, Any]:
    from .render_openai import error_body as openai_error_body

    return openai_error_body(status, message)


def error_event(message: str) -> bytes:
    payload = {
        "type": "error",
        "code": "server_error",
        "message": message,
        "param": None,
        "sequence_number": 99,
    }
    return f"event: error\ndata: {json.dumps(payload)}\n\n".encode()


def failed_event(message: str) -> bytes:
    response = {
        "id": resolved.new_id("resp_"),
        "object": "response",
        "status": "failed",
        "error": {"code": "server_error", "message": message},
        "output": [],
        "usage": None,
    }
    payload = {"type": "response.failed", "response": response, "sequence_number": 99}
    return f"event: response.failed\ndata: {json.dumps(payload)}\n\n".encode()


def garbage_event() -> bytes:
    return b"event: response.output_text.delta\ndata: {this is not json\n\n"


def request_problem(request_json: Any) -> str | None:
    """The 400s the Responses API gives a conversation whose function calls and outputs do
    not pair up: continuing a stored response (``previous_response_id``) without an output
    for each of its function calls; a function_call_output whose call is not in the
    conversation (checked when the request carries it all). A previous id this upstream
    never stored passes (tests name made-up ones)."""
    if not isinstance(request_json, dict):
        return None
    items = request_json.get("input")
    previous = request_json.get("previous_response_id")
    if previous:
        answered = {
            str(item.get("call_id"))
            for item in (items if isinstance(items, list) else [])
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        }
        for call_id in stored_calls(str(previous)) or ():
            if call_id not in answered:
                return f"No tool output found for function call {call_id}."
        return None
    if not isinstance(items, list):
        return None
    calls: set[str] = set()
    for item in items:
        if not isinstance(item, dict):
            return None
        if item.get("type") == "function_call":
            calls.add(str(item.get("call_id")))
        elif item.get("type") == "function_call_output" and item.get("call_id") not in calls:
            return (
                f"No tool call found for function call output with call_id {item.get('call_id')}."
            )
    return None
