"""The gateway's wire protocol, as SDK users and raw HTTP clients see it.

- requests pass through to the upstream of their format with everything memvault does
  not change intact (with recall/tools on, only the injected parts differ), with the
  provider credential memvault holds and never the memvault key;
- streaming and whole answers, sync and async SDKs, see exactly what the upstream said;
- OpenAI stream usage: only when the client asked for it;
- auth and bad input answer in the format's own error shape;
- GET /v1/models in both shapes; the x-memory-recalled and x-gateway-overhead-ms headers.
"""

from __future__ import annotations

import asyncio
import copy
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from memvault.api.routers.inference import READ_BEFORE_KEY_CHECK
from memvault.services.context import Caller, Surface
from memvault.tools import TOOL_NAMES
from tests.gateway.conftest import (
    UPSTREAM_ANTHROPIC_KEY,
    UPSTREAM_OPENAI_KEY,
    anthropic_client,
    async_anthropic_client,
    async_openai_client,
    issue_key,
    openai_client,
)
from tests.gateway.protocol_helpers import (
    ANTHROPIC_MODEL,
    ANTHROPIC_WEATHER_TOOL,
    OPENAI_MODEL,
    OPENAI_WEATHER_TOOL,
    anthropic_error,
    auth_headers,
    format_error,
    minimal_body,
    openai_error,
    path_of,
    raw_post,
    raw_stream,
    sdk_call,
    slow_upstream,
)
from tests.support.servers import LiveServer
from tests.support.upstream import Reply, ScriptedUpstream, ToolCall

FORMATS = ["openai", "anthropic"]
# A tiny valid PNG, as a client would attach it.
PNG_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)

OPENAI_REQUEST: dict[str, Any] = {
    "model": OPENAI_MODEL,
    "messages": [
        {"role": "system", "content": "You are terse. Ünïcödé ✓"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in this image?"},
                {
                    "type": "image_url",
                    "image_url": {"url": f"data:image/png;base64,{PNG_B64}", "detail": "low"},
                },
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_earlier",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_earlier", "content": "sunny, 21°C"},
        {"role": "user", "content": "What about the umbrella weather in Oslo?"},
    ],
    "tools": [OPENAI_WEATHER_TOOL],
    "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
    "response_format": {
        "type": "json_schema",
        "json_schema": {
            "name": "answer",
            "schema": {"type": "object", "properties": {"a": {"type": "string"}}},
        },
    },
    "metadata": {"trace": "abc-123", "team": "ßeta"},
    "temperature": 0.25,
    "seed": 7,
    "max_completion_tokens": 300,
    "user": "user-42",
    "x_vendor_extension": {"nested": [1, 2.5, "ü", None, True, {"deep": []}]},
}

ANTHROPIC_REQUEST: dict[str, Any] = {
    "model": ANTHROPIC_MODEL,
    "max_tokens": 300,
    "system": [
        {"type": "text", "text": "You are terse. Ünïcödé ✓", "cache_control": {"type": "ephemeral"}}
    ],
    "messages": [
        {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64},
                },
                {"type": "text", "text": "What is in this image?"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "toolu_earlier",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_earlier", "content": "sunny, 21°C"},
                {"type": "text", "text": "What about the umbrella weather in Oslo?"},
            ],
        },
    ],
    "tools": [ANTHROPIC_WEATHER_TOOL, {"type": "web_search_20250305", "name": "web_search"}],
    "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
    "metadata": {"user_id": "user-42"},
    "temperature": 0.25,
    "top_k": 5,
    "stop_sequences": ["\n\nHuman:"],
    "x_vendor_extension": {"nested": [1, 2.5, "ü", None, True, {"deep": []}]},
}

REQUESTS = {"openai": OPENAI_REQUEST, "anthropic": ANTHROPIC_REQUEST}
ANTHROPIC_BETA = "prompt-caching-2024-07-31,files-api-2025-04-14"


def request_of(fmt: str) -> dict[str, Any]:
    return copy.deepcopy(REQUESTS[fmt])


def assert_upstream_credential(seen_headers: dict[str, str], fmt: str, key: str) -> None:
    """The provider credential memvault holds went up; the client's memvault key did not."""
    if fmt == "openai":
        assert seen_headers["authorization"] == f"Bearer {UPSTREAM_OPENAI_KEY}"
        assert "x-api-key" not in seen_headers
    else:
        assert seen_headers["x-api-key"] == UPSTREAM_ANTHROPIC_KEY
        assert "authorization" not in seen_headers
    assert all(key not in value for value in seen_headers.values())


# -- pass-through ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_plain_key_sends_the_request_upstream_unchanged(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str
) -> None:
    key = issue_key(sqlite_gateway)
    sent = request_of(fmt)
    extra = {"anthropic-beta": ANTHROPIC_BETA} if fmt == "anthropic" else {}
    response = raw_post(sqlite_gateway, fmt, key, sent, headers=extra)

    assert response.status_code == 200, response.text
    [seen] = upstream.requests
    assert seen.path == ("/v1/chat/completions" if fmt == "openai" else "/v1/messages")
    assert seen.json == sent
    assert_upstream_credential(seen.headers, fmt, key)
    if fmt == "anthropic":
        assert seen.headers["anthropic-version"] == "2023-06-01"
        assert seen.headers["anthropic-beta"] == ANTHROPIC_BETA


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("memory", [False, True])
def test_numbers_and_odd_text_go_up_as_the_client_wrote_them(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, memory: bool
) -> None:
    # Integers past 64 bits, floats at the edges of a double, non-ASCII and an unpaired
    # surrogate (legal as a JSON escape) keep their values on the way up.
    key = issue_key(sqlite_gateway, recall=memory, tools=memory)
    raw = json.dumps(request_of(fmt))[:-1].encode() + (
        b', "x_numbers": [123456789012345678901234567890, -9223372036854775809,'
        b" 1.7976931348623157e308, 5e-324, 0.1, -0.0, 1e21],"
        b' "x_text": "\\u00fc \\u4e2d \\ud83d\\ude00 lone \\ud800 end"}'
    )
    response = raw_post(sqlite_gateway, fmt, key, raw)

    assert response.status_code == 200, response.text
    [seen] = upstream.requests
    sent = json.loads(raw)
    assert seen.json["x_numbers"] == sent["x_numbers"]
    assert [type(n) for n in seen.json["x_numbers"]] == [type(n) for n in sent["x_numbers"]]
    assert seen.json["x_text"] == sent["x_text"] == "ü 中 😀 lone \ud800 end"
    if not memory:
        assert seen.json == sent


@pytest.mark.parametrize("include_usage", [False, True])
def test_an_openai_stream_goes_up_unchanged_but_for_the_usage_it_asks_for(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, include_usage: bool
) -> None:
    key = issue_key(sqlite_gateway)
    sent = request_of("openai")
    if include_usage:
        sent["stream_options"] = {"include_usage": True}
    result = raw_stream(sqlite_gateway, "openai", key, sent)

    assert result.status == 200
    [seen] = upstream.requests
    # memvault always needs the usage to bill: that one option is the only change.
    assert seen.json == {**sent, "stream": True, "stream_options": {"include_usage": True}}
    assert_upstream_credential(seen.headers, "openai", key)


def test_an_anthropic_stream_goes_up_unchanged(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    sent = request_of("anthropic")
    result = raw_stream(
        sqlite_gateway,
        "anthropic",
        key,
        sent,
        headers={"anthropic-version": "2023-01-01", "anthropic-beta": ANTHROPIC_BETA},
    )

    assert result.status == 200
    [seen] = upstream.requests
    assert seen.json == {**sent, "stream": True}
    assert seen.headers["anthropic-version"] == "2023-01-01"
    assert seen.headers["anthropic-beta"] == ANTHROPIC_BETA
    assert_upstream_credential(seen.headers, "anthropic", key)


def test_the_anthropic_route_takes_the_key_as_bearer_too(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    response = httpx.post(
        sqlite_gateway.url + "/v1/messages",
        json=minimal_body("anthropic"),
        headers={"authorization": f"Bearer {key}", "anthropic-version": "2023-06-01"},
    )

    assert response.status_code == 200, response.text
    assert response.json()["content"] == [{"type": "text", "text": "ok"}]
    [seen] = upstream.requests
    assert_upstream_credential(seen.headers, "anthropic", key)


def _remember_oslo(server: LiveServer) -> None:
    caller = Caller(account_id="local", surface=Surface.REST)
    server.services.vault.write(
        caller,
        "travel/oslo.md",
        "# Oslo\n\nIn Oslo the umbrella weather is constant: always pack an umbrella.\n",
    )


@pytest.mark.parametrize("stream", [False, True])
def test_with_recall_and_tools_only_the_injected_parts_differ_openai(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, stream: bool
) -> None:
    _remember_oslo(sqlite_gateway)
    key = issue_key(sqlite_gateway, recall=True, tools=True)
    sent = request_of("openai")
    sent["stream_options"] = {"include_usage": True}
    upstream.enqueue(Reply(text="Pack an umbrella."))
    if stream:
        result = raw_stream(sqlite_gateway, "openai", key, sent)
        assert result.status == 200
        recalled = result.headers["x-memory-recalled"]
        sent["stream"] = True
    else:
        response = raw_post(sqlite_gateway, "openai", key, sent)
        assert response.status_code == 200, response.text
        assert response.json()["choices"][0]["message"]["content"] == "Pack an umbrella."
        recalled = response.headers["x-memory-recalled"]
    assert recalled == "1"

    [seen] = upstream.requests
    got = seen.json
    assert {k: v for k, v in got.items() if k not in ("messages", "tools")} == {
        k: v for k, v in sent.items() if k not in ("messages", "tools")
    }
    # The client's tools first, unchanged; then the memory tools.
    assert got["tools"][:1] == sent["tools"]
    assert [t["function"]["name"] for t in got["tools"][1:]] == list(TOOL_NAMES)
    # The client's system prompt first and unchanged, then memvault's note.
    system, note, *rest = got["messages"]
    assert system == sent["messages"][0]
    assert note["role"] == "system" and "memory" in note["content"].lower()
    # Earlier turns untouched; the recall block ahead of the last user message's text.
    assert rest[:-1] == sent["messages"][1:-1]
    last = rest[-1]
    original = sent["messages"][-1]["content"]
    assert last["role"] == "user"
    assert last["content"].startswith("<memory source=")
    assert last["content"].endswith("</memory>\n\n" + original)
    assert "always pack an umbrella" in last["content"]
    assert_upstream_credential(seen.headers, "openai", key)


@pytest.mark.parametrize("stream", [False, True])
def test_with_recall_and_tools_only_the_injected_parts_differ_anthropic(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, stream: bool
) -> None:
    _remember_oslo(sqlite_gateway)
    key = issue_key(sqlite_gateway, recall=True, tools=True)
    sent = request_of("anthropic")
    headers = {"anthropic-beta": ANTHROPIC_BETA}
    upstream.enqueue(Reply(text="Pack an umbrella."))
    if stream:
        result = raw_stream(sqlite_gateway, "anthropic", key, sent, headers=headers)
        assert result.status == 200
        recalled = result.headers["x-memory-recalled"]
        sent["stream"] = True
    else:
        response = raw_post(sqlite_gateway, "anthropic", key, sent, headers=headers)
        assert response.status_code == 200, response.text
        assert response.json()["content"] == [{"type": "text", "text": "Pack an umbrella."}]
        recalled = response.headers["x-memory-recalled"]
    assert recalled == "1"

    [seen] = upstream.requests
    got = seen.json
    changed = ("messages", "tools", "system")
    assert {k: v for k, v in got.items() if k not in changed} == {
        k: v for k, v in sent.items() if k not in changed
    }
    assert got["tools"][:2] == sent["tools"]
    assert [t["name"] for t in got["tools"][2:]] == list(TOOL_NAMES)
    assert got["system"][:1] == sent["system"]
    [note] = got["system"][1:]
    assert note["type"] == "text" and "memory" in note["text"].lower()
    assert got["messages"][:-1] == sent["messages"][:-1]
    last, original = got["messages"][-1], sent["messages"][-1]
    assert last["role"] == "user"
    # The message answers a tool call, so its tool result stays first (the API refuses
    # anything ahead of it); the block goes ahead of the user's text.
    result, block, *content = last["content"]
    assert result == original["content"][0] and result["type"] == "tool_result"
    assert content == original["content"][1:]
    assert block["type"] == "text"
    assert block["text"].startswith("<memory source=")
    assert block["text"].endswith("</memory>")
    assert "always pack an umbrella" in block["text"]
    assert seen.headers["anthropic-beta"] == ANTHROPIC_BETA
    assert_upstream_credential(seen.headers, "anthropic", key)


def test_a_string_system_prompt_stays_the_first_system_block(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    sent = minimal_body("anthropic", system="You are terse.")
    response = raw_post(sqlite_gateway, "anthropic", key, sent)

    assert response.status_code == 200, response.text
    assert response.headers["x-memory-recalled"] == "0"
    [seen] = upstream.requests
    first, note = seen.json["system"]
    assert first == {"type": "text", "text": "You are terse."}
    assert "memory" in note["text"].lower()
    assert seen.json["messages"] == sent["messages"]


# -- what the SDKs see ---------------------------------------------------------------

SCRIPTED_TEXT = "Hello from upstream, Ünïcödé ✓"
SCRIPTED_CALL = ToolCall("get_weather", {"city": "Oslo"}, id="call_scripted")
SCRIPTED_ANTHROPIC_CALL = ToolCall("get_weather", {"city": "Oslo"}, id="toolu_scripted")


def scripted_reply(fmt: str) -> Reply:
    call = SCRIPTED_CALL if fmt == "openai" else SCRIPTED_ANTHROPIC_CALL
    return Reply(
        text=SCRIPTED_TEXT,
        tool_calls=[call],
        input_tokens=11,
        output_tokens=22,
        text_chunk_chars=3,
        args_chunk_chars=4,
    )


def _openai_call(client: openai.OpenAI | openai.AsyncOpenAI, stream: bool) -> Any:
    return client.chat.completions.create(
        model=OPENAI_MODEL,
        messages=[{"role": "user", "content": "weather?"}],
        tools=[OPENAI_WEATHER_TOOL],  # type: ignore[list-item]
        stream=stream,
        **({"stream_options": {"include_usage": True}} if stream else {}),
    )


def _assemble_openai_chunks(chunks: list[Any]) -> tuple[str, list[tuple[str, str, str]], Any, Any]:
    """(text, [(id, name, arguments)], finish_reason, usage) rebuilt from stream chunks."""
    text = ""
    calls: dict[int, list[str]] = {}
    finish = None
    usages = [c.usage for c in chunks if c.usage is not None]
    for chunk in chunks:
        for choice in chunk.choices:
            delta = choice.delta
            text += delta.content or ""
            for call in delta.tool_calls or []:
                entry = calls.setdefault(call.index, ["", "", ""])
                entry[0] += call.id or ""
                if call.function is not None:
                    entry[1] += call.function.name or ""
                    entry[2] += call.function.arguments or ""
            if choice.finish_reason is not None:
                finish = choice.finish_reason
    assert len(usages) == 1, usages
    assert chunks[-1].usage is not None and chunks[-1].choices == []
    return text, [tuple(calls[i]) for i in sorted(calls)], finish, usages[0]  # type: ignore[misc]


@pytest.mark.parametrize("tools_on", [False, True], ids=["plain", "tools"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_openai_sdk_sees_exactly_the_scripted_answer(
    sqlite_gateway: LiveServer,
    upstream: ScriptedUpstream,
    tools_on: bool,
    stream: bool,
    use_async: bool,
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    upstream.enqueue(scripted_reply("openai"))

    if use_async:

        async def run() -> Any:
            client = async_openai_client(sqlite_gateway, key)
            answer = await _openai_call(client, stream)
            if stream:
                return [chunk async for chunk in answer]
            return answer

        answer = asyncio.run(run())
    else:
        answer = _openai_call(openai_client(sqlite_gateway, key), stream)
        if stream:
            answer = list(answer)

    if stream:
        text, calls, finish, usage = _assemble_openai_chunks(answer)
    else:
        message = answer.choices[0].message
        text = message.content
        calls = [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls]
        finish, usage = answer.choices[0].finish_reason, answer.usage
    assert text == SCRIPTED_TEXT
    assert calls == [("call_scripted", "get_weather", '{"city":"Oslo"}')]
    assert finish == "tool_calls"
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (11, 22, 33)


@pytest.mark.parametrize("tools_on", [False, True], ids=["plain", "tools"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_anthropic_sdk_sees_exactly_the_scripted_answer(
    sqlite_gateway: LiveServer,
    upstream: ScriptedUpstream,
    tools_on: bool,
    stream: bool,
    use_async: bool,
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    upstream.enqueue(scripted_reply("anthropic"))
    params: dict[str, Any] = {
        "model": ANTHROPIC_MODEL,
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "weather?"}],
        "tools": [ANTHROPIC_WEATHER_TOOL],
    }
    streamed_text: list[str] = []

    if use_async:

        async def run() -> Any:
            client = async_anthropic_client(sqlite_gateway, key)
            if not stream:
                return await client.messages.create(**params)
            async with client.messages.stream(**params) as events:
                streamed_text.extend([piece async for piece in events.text_stream])
                return await events.get_final_message()

        message = asyncio.run(run())
    else:
        client = anthropic_client(sqlite_gateway, key)
        if stream:
            with client.messages.stream(**params) as events:
                streamed_text.extend(events.text_stream)
                message = events.get_final_message()
        else:
            message = client.messages.create(**params)

    if stream:
        assert "".join(streamed_text) == SCRIPTED_TEXT
    text, call = message.content
    assert isinstance(text, anthropic.types.TextBlock) and text.text == SCRIPTED_TEXT
    assert isinstance(call, anthropic.types.ToolUseBlock)
    assert (call.id, call.name, call.input) == ("toolu_scripted", "get_weather", {"city": "Oslo"})
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (11, 22)


@pytest.mark.parametrize("options", [None, {"include_usage": False}], ids=["absent", "false"])
@pytest.mark.parametrize("tools_on", [False, True], ids=["plain", "tools"])
def test_openai_stream_without_include_usage_shows_no_usage(
    sqlite_gateway: LiveServer,
    upstream: ScriptedUpstream,
    tools_on: bool,
    options: dict[str, Any] | None,
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    upstream.enqueue(scripted_reply("openai"))
    body = minimal_body("openai")
    if options is not None:
        body["stream_options"] = options
    result = raw_stream(sqlite_gateway, "openai", key, body)

    assert result.status == 200
    assert result.messages[-1].data == "[DONE]"
    payloads = [m.json() for m in result.messages[:-1]]
    assert payloads, result.text
    assert all("usage" not in p for p in payloads), result.text
    assert all(p["choices"] for p in payloads)
    text = "".join(p["choices"][0]["delta"].get("content") or "" for p in payloads)
    assert text == SCRIPTED_TEXT
    # memvault still asked the upstream for usage, to bill the request.
    [seen] = upstream.requests
    assert seen.json["stream_options"] == {"include_usage": True}

    # The SDK agrees: no chunk carries usage.
    upstream.enqueue(scripted_reply("openai"))
    chunks = list(
        openai_client(sqlite_gateway, key).chat.completions.create(
            model=OPENAI_MODEL, messages=[{"role": "user", "content": "hi"}], stream=True
        )
    )
    assert chunks and all(c.usage is None and c.choices for c in chunks)


@pytest.mark.parametrize("tools_on", [False, True], ids=["plain", "tools"])
def test_openai_stream_with_include_usage_ends_with_one_usage_chunk(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, tools_on: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    upstream.enqueue(scripted_reply("openai"))
    body = minimal_body("openai", stream_options={"include_usage": True})
    result = raw_stream(sqlite_gateway, "openai", key, body)

    assert result.status == 200
    assert result.messages[-1].data == "[DONE]"
    payloads = [m.json() for m in result.messages[:-1]]
    with_usage = [p for p in payloads if p.get("usage") is not None]
    assert with_usage == [payloads[-1]]
    assert payloads[-1]["choices"] == []
    assert payloads[-1]["usage"] == {
        "prompt_tokens": 11,
        "completion_tokens": 22,
        "total_tokens": 33,
    }
    # As OpenAI sends them: every other chunk carries an explicit null.
    assert all("usage" in p and p["usage"] is None for p in payloads[:-1])


# -- auth and bad input --------------------------------------------------------------

AUTH_CASES = {
    "no key": ({}, "missing_api_key"),
    "wrong bearer key": ({"authorization": "Bearer mv_not_a_real_key"}, "invalid_api_key"),
    "basic scheme": ({"authorization": "Basic dXNlcjpwYXNz"}, "malformed_authorization"),
    "bearer without a key": ({"authorization": "Bearer"}, "malformed_authorization"),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_requests_without_a_valid_key_are_refused_in_the_format_shape(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str
) -> None:
    with httpx.Client(base_url=sqlite_gateway.url, timeout=20.0) as http:
        for case, (headers, code) in AUTH_CASES.items():
            response = http.post(
                path_of(fmt),
                json=minimal_body(fmt),
                headers={"anthropic-version": "2023-06-01", **headers},
            )
            assert response.status_code == 401, case
            assert format_error(fmt, response.json())["code"] == code, case
    assert upstream.requests == []


def test_a_wrong_x_api_key_is_refused_on_the_anthropic_route(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    client = anthropic.Anthropic(
        base_url=sqlite_gateway.url, api_key="mv_wrong", max_retries=0, timeout=10.0
    )
    with pytest.raises(anthropic.AuthenticationError) as err:
        client.messages.create(**minimal_body("anthropic"))
    assert anthropic_error(err.value.body)["code"] == "invalid_api_key"
    assert upstream.requests == []


def test_the_openai_route_does_not_take_x_api_key(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    response = httpx.post(
        sqlite_gateway.url + "/v1/chat/completions",
        json=minimal_body("openai"),
        headers={"x-api-key": key},
    )
    assert response.status_code == 401
    assert openai_error(response.json())["code"] == "missing_api_key"
    assert upstream.requests == []


def test_the_openai_sdk_sees_a_wrong_key_as_an_authentication_error(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    with pytest.raises(openai.AuthenticationError) as err:
        openai_client(sqlite_gateway, "mv_wrong").chat.completions.create(**minimal_body("openai"))
    assert err.value.status_code == 401
    assert err.value.code == "invalid_api_key"
    assert upstream.requests == []


def _head_only(
    server: LiveServer, fmt: str, key: str, declared: int, *, wait: float = 5.0
) -> bytes:
    """Send a POST's head declaring a ``declared``-byte body, never the body; what comes
    back within ``wait`` seconds (b"" if the server waits for the body)."""
    url = httpx.URL(server.url)
    head = [
        f"POST {path_of(fmt)} HTTP/1.1",
        f"host: {url.host}:{url.port}",
        "content-type: application/json",
        f"content-length: {declared}",
        *(f"{name}: {value}" for name, value in auth_headers(fmt, key).items()),
    ]
    with socket.create_connection((url.host, url.port), timeout=wait) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        answer = b""
        try:
            while not _whole_answer(answer):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except TimeoutError:
            pass
        return answer


def _whole_answer(raw: bytes) -> bool:
    head, found, body = raw.partition(b"\r\n\r\n")
    if not found:
        return False
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return True


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_large_body_is_not_waited_for_without_a_valid_key(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str
) -> None:
    # Past READ_BEFORE_KEY_CHECK the key is checked before any of the body is read: a
    # caller without a valid key cannot make memvault take in megabytes.
    answer = _head_only(sqlite_gateway, fmt, "mv_not_a_real_key", READ_BEFORE_KEY_CHECK + 1)
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    assert b"invalid_api_key" in answer
    # A small body is read first (one trip to a worker thread for the key and the
    # rest); the server waits for it.
    assert _head_only(sqlite_gateway, fmt, "mv_not_a_real_key", 100, wait=1.0) == b""
    assert upstream.requests == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_large_and_unsized_bodies_go_up_whole_with_a_valid_key(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str
) -> None:
    key = issue_key(sqlite_gateway)
    large = minimal_body(fmt)
    large["messages"] = [{"role": "user", "content": "x" * (READ_BEFORE_KEY_CHECK + 10)}]
    assert raw_post(sqlite_gateway, fmt, key, large).status_code == 200

    small = minimal_body(fmt)

    def post_unsized(secret: str) -> httpx.Response:
        def chunks() -> Iterator[bytes]:  # no content-length: sent chunked
            yield json.dumps(small).encode()

        headers = {**auth_headers(fmt, secret), "content-type": "application/json"}
        url = sqlite_gateway.url + path_of(fmt)
        return httpx.post(url, content=chunks(), headers=headers, timeout=20.0)

    unsized = post_unsized(key)
    assert unsized.status_code == 200, unsized.text
    assert [seen.json for seen in upstream.requests] == [large, small]

    refused = post_unsized("mv_not_a_real_key")
    assert refused.status_code == 401
    assert format_error(fmt, refused.json())["code"] == "invalid_api_key"
    assert len(upstream.requests) == 2


BAD_BODIES: dict[str, tuple[bytes, str]] = {
    "not json": (b"{not json", "invalid_json"),
    "a list": (b'[{"model": "m"}]', "invalid_json"),
    "a string": (b'"hello"', "invalid_json"),
    # Not JSON numbers, though Python's parser takes them (and no provider does).
    "NaN": (b'{"model": "m", "temperature": NaN, "messages": []}', "invalid_json"),
    "Infinity": (b'{"model": "m", "top_p": -Infinity, "messages": []}', "invalid_json"),
    "past a double": (b'{"model": "m", "temperature": 1e400, "messages": []}', "invalid_json"),
    "no model": (b'{"messages": [{"role": "user", "content": "hi"}]}', "invalid_model"),
    "no messages": (b'{"model": "m", "max_tokens": 5}', "invalid_messages"),
    "empty messages": (b'{"model": "m", "max_tokens": 5, "messages": []}', "invalid_messages"),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_bad_bodies_are_400_in_the_format_shape(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str
) -> None:
    key = issue_key(sqlite_gateway)
    headers = {**auth_headers(fmt, key), "content-type": "application/json"}
    with httpx.Client(base_url=sqlite_gateway.url, timeout=20.0) as http:
        for case, (raw, code) in BAD_BODIES.items():
            response = http.post(path_of(fmt), content=raw, headers=headers)
            assert response.status_code == 400, (case, response.text)
            assert format_error(fmt, response.json())["code"] == code, case
        # Authentication comes first: a bad body without a key is a 401.
        response = http.post(path_of(fmt), content=b"{not json", headers={})
        assert response.status_code == 401
        assert format_error(fmt, response.json())["code"] == "missing_api_key"
    assert upstream.requests == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_sdks_see_a_bad_body_as_a_bad_request(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str
) -> None:
    key = issue_key(sqlite_gateway)
    if fmt == "openai":
        with pytest.raises(openai.BadRequestError) as oerr:
            openai_client(sqlite_gateway, key).chat.completions.create(
                model=OPENAI_MODEL, messages=[]
            )
        assert oerr.value.code == "invalid_messages"
    else:
        with pytest.raises(anthropic.BadRequestError) as aerr:
            anthropic_client(sqlite_gateway, key).messages.create(
                model=ANTHROPIC_MODEL, max_tokens=5, messages=[]
            )
        assert anthropic_error(aerr.value.body)["code"] == "invalid_messages"
    assert upstream.requests == []


# -- GET /v1/models ------------------------------------------------------------------

EXPECTED_MODELS = ["gpt-4o-mini", "gpt-4.1", "claude-sonnet-4-5", "claude-haiku-4-5"]


def test_models_in_openai_shape_by_default(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    listed = openai_client(sqlite_gateway, key).models.list()

    assert [m.id for m in listed] == EXPECTED_MODELS
    assert all(m.object == "model" and m.owned_by for m in listed)
    response = httpx.get(
        sqlite_gateway.url + "/v1/models", headers={"authorization": f"Bearer {key}"}
    )
    assert response.status_code == 200
    assert response.json()["object"] == "list"
    seen = upstream.requests
    assert [(r.method, r.path) for r in seen] == [("GET", "/v1/models")] * 2
    assert_upstream_credential(seen[0].headers, "openai", key)
    assert "anthropic-version" not in seen[0].headers


def test_models_in_anthropic_shape_with_an_anthropic_version(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    listed = anthropic_client(sqlite_gateway, key).models.list()

    assert [m.id for m in listed.data] == EXPECTED_MODELS
    assert listed.data[0].display_name == "GPT-4o mini"
    assert listed.data[0].type == "model"
    [seen] = upstream.requests
    assert seen.path == "/v1/models"
    assert_upstream_credential(seen.headers, "anthropic", key)


@pytest.mark.parametrize("fmt", FORMATS)
def test_models_need_a_key(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str
) -> None:
    version = {"anthropic-version": "2023-06-01"} if fmt == "anthropic" else {}
    missing = httpx.get(sqlite_gateway.url + "/v1/models", headers=version)
    wrong = httpx.get(
        sqlite_gateway.url + "/v1/models",
        headers={**version, "authorization": "Bearer mv_not_a_real_key"},
    )

    assert (missing.status_code, wrong.status_code) == (401, 401)
    assert format_error(fmt, missing.json())["code"] == "missing_api_key"
    assert format_error(fmt, wrong.json())["code"] == "invalid_api_key"
    assert upstream.requests == []


# -- headers -------------------------------------------------------------------------


def _status_and_headers(
    server: LiveServer, fmt: str, key: str, *, stream: bool
) -> tuple[int, httpx.Headers]:
    """A minimal request's status and response headers, as a stream or a whole answer."""
    if stream:
        result = raw_stream(server, fmt, key, minimal_body(fmt))
        return result.status, result.headers
    response = raw_post(server, fmt, key, minimal_body(fmt))
    return response.status_code, response.headers


def _overhead(headers: httpx.Headers) -> float:
    value = float(headers["x-gateway-overhead-ms"])
    assert value >= 0
    return value


@pytest.mark.parametrize("fmt", FORMATS)
def test_headers_say_nothing_was_recalled_without_recall(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str
) -> None:
    _remember_oslo(sqlite_gateway)
    key = issue_key(sqlite_gateway, tools=True)
    body = minimal_body(fmt)
    body["messages"][0]["content"] = "umbrella weather in Oslo?"
    whole = raw_post(sqlite_gateway, fmt, key, body)
    streamed = raw_stream(sqlite_gateway, fmt, key, body)

    for headers in (whole.headers, streamed.headers):
        assert headers["x-memory-recalled"] == "0"
        _overhead(headers)
    assert "<memory" not in json.dumps(upstream.requests[0].json)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_overhead_does_not_count_the_time_spent_waiting_on_the_upstream(
    sqlite_gateway: LiveServer,
    upstream: ScriptedUpstream,
    monkeypatch: pytest.MonkeyPatch,
    fmt: str,
    stream: bool,
) -> None:
    delay = 0.6
    key = issue_key(sqlite_gateway)
    slow_upstream(monkeypatch, delay)
    started = time.monotonic()
    status, headers = _status_and_headers(sqlite_gateway, fmt, key, stream=stream)
    total_ms = (time.monotonic() - started) * 1000

    assert status == 200
    overhead_ms = _overhead(headers)
    assert total_ms >= delay * 1000
    # The second the upstream took is not memvault's overhead.
    assert overhead_ms < total_ms - delay * 1000 * 0.8, (overhead_ms, total_ms)


def test_overhead_is_smaller_than_a_slow_stream(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    upstream.enqueue(Reply(text="slow stream", text_chunk_chars=3, chunk_delay=0.15))
    result = raw_stream(sqlite_gateway, "openai", key, minimal_body("openai"))

    assert result.status == 200
    text = "".join(
        m.json()["choices"][0]["delta"].get("content") or ""
        for m in result.messages
        if m.data != "[DONE]"
    )
    assert text == "slow stream"
    assert result.elapsed >= 0.6
    assert _overhead(result.headers) < result.elapsed * 1000


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_overhead_counts_from_the_request_s_arrival_key_check_included(
    sqlite_gateway: LiveServer,
    upstream: ScriptedUpstream,
    monkeypatch: pytest.MonkeyPatch,
    fmt: str,
    stream: bool,
) -> None:
    # The key check runs before the gateway's own work starts; its time is memvault's.
    delay = 0.3
    key = issue_key(sqlite_gateway)
    accounts = sqlite_gateway.services.accounts
    check_key = accounts.authenticate

    def slow_check(secret: str | None) -> Any:
        time.sleep(delay)
        return check_key(secret)

    monkeypatch.setattr(accounts, "authenticate", slow_check)
    status, headers = _status_and_headers(sqlite_gateway, fmt, key, stream=stream)

    assert status == 200
    assert _overhead(headers) >= delay * 1000


@pytest.mark.parametrize("tools_on", [False, True], ids=["plain", "tools"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_gzipped_answer_reaches_the_client_decoded(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, tools_on: bool
) -> None:
    # Providers compress answers for clients that accept it; memvault reads them and
    # relays plain JSON (with its own headers, so no content-encoding).
    key = issue_key(sqlite_gateway, tools=tools_on)
    upstream.enqueue(Reply(text="compressed on the way", gzip=True))
    response = raw_post(sqlite_gateway, fmt, key, minimal_body(fmt))

    assert response.status_code == 200, response.text
    assert "content-encoding" not in response.headers
    answer = response.json()
    if fmt == "openai":
        assert answer["choices"][0]["message"]["content"] == "compressed on the way"
    else:
        assert answer["content"][0]["text"] == "compressed on the way"

    upstream.enqueue(Reply(text="and through the SDK", gzip=True))
    assert sdk_call(sqlite_gateway, fmt, key, stream=False) == "and through the SDK"
