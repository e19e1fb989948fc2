"""The OpenAI Responses format (POST /v1/responses) through the gateway, seen from the
official openai SDK (``client.responses.create`` / ``.stream``, sync and async) against
the scripted upstream: pass-through, recall, the memory tools as function tools, rounds
continued with function_call_output items, the stream rewritten into one, errors,
memory profiles and billing."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import openai
import pytest

from memvault.errors import NotFound
from memvault.gateway.formats.responses import MEMORY_TOOLS
from memvault.services.context import Caller, Surface
from memvault.tools import TOOL_NAMES, VAULT_INSTRUCTIONS
from tests.gateway.conftest import (
    async_openai_client,
    issue_key,
    openai_client,
    wait_for_usage,
)
from tests.gateway.protocol_helpers import parse_sse
from tests.gateway.test_memory_profiles import (
    FACTS_OPEN,
    STABLE_OPEN,
    memory,
    org_of,
    plain_key,
)
from tests.support.servers import LiveServer
from tests.support.upstream import Fault, Malformed, Reply, ScriptedUpstream, ToolCall

MODEL = "gpt-4.1-mini"
PATH = "/v1/responses"
USER = Caller(account_id="local", surface=Surface.REST)
WEATHER: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
WEB_SEARCH_CALL: dict[str, Any] = {
    "id": "ws_1",
    "type": "web_search_call",
    "status": "completed",
    "action": {"type": "search", "query": "oslo weather"},
}


def write(path: str, markdown: str) -> ToolCall:
    return ToolCall("memory_write", {"path": path, "markdown": markdown})


def search(query: str = "anything") -> ToolCall:
    return ToolCall("memory_search", {"query": query})


def note_text(server: LiveServer, path: str) -> str | None:
    try:
        return server.services.vault.read(USER, path).markdown
    except NotFound:
        return None


def ask(server: LiveServer, key: str, **extra: Any) -> Any:
    extra.setdefault("input", "hello")
    return openai_client(server, key).responses.with_raw_response.create(model=MODEL, **extra)


def raw(server: LiveServer, key: str, body: Any, **headers: str) -> httpx.Response:
    return httpx.post(
        server.url + PATH,
        json=body,
        headers={"authorization": f"Bearer {key}", **headers},
        timeout=20,
    )


def raw_events(server: LiveServer, key: str, body: dict[str, Any]) -> tuple[list[Any], str]:
    """A stream read whole with httpx: its events' JSON, and the text (comments too)."""
    with httpx.stream(
        "POST",
        server.url + PATH,
        json={**body, "stream": True},
        headers={"authorization": f"Bearer {key}"},
        timeout=20,
    ) as response:
        assert response.status_code == 200
        text = response.read().decode()
    messages, _ = parse_sse(text)
    return [m.json() for m in messages], text


def sent(upstream: ScriptedUpstream, index: int = 0) -> dict[str, Any]:
    request = upstream.requests[index]
    assert request.path == PATH
    body = request.json
    assert isinstance(body, dict)
    return body


def assert_consecutive(events: list[Any]) -> None:
    """Every event numbered on from 0, and output items numbered on from 0 as added."""
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    added = [e["output_index"] for e in events if e["type"] == "response.output_item.added"]
    assert added == list(range(len(added)))
    assert [e["type"] for e in events].count("response.completed") == 1
    assert events[0]["type"] == "response.created" and events[-1]["type"] == "response.completed"


# ---------------------------------------------------------------------------- pass-through
def test_a_plain_key_sends_the_request_up_unchanged_and_relays_the_answer(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    upstream.enqueue(
        Reply(
            text="Hi there", reasoning="thinking", output_items=[WEB_SEARCH_CALL], input_tokens=12
        )
    )
    body = {
        "model": MODEL,
        "instructions": "Be terse.",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "hello"}]}],
        "tools": [{"type": "web_search"}, WEATHER],
        "previous_response_id": "resp_client_earlier",
        "store": False,
        "reasoning": {"effort": "low"},
        "include": ["reasoning.encrypted_content"],
        "future_field": {"kept": [1, 2.5, None]},
    }
    response = raw(sqlite_gateway, key, body)
    assert response.status_code == 200
    assert sent(upstream) == body  # previous_response_id, store, unknown fields: as sent
    assert upstream.requests[0].headers["authorization"] == "Bearer sk-upstream-openai"
    answer = response.json()
    assert [item["type"] for item in answer["output"]] == [
        "reasoning",
        "web_search_call",
        "message",
    ]
    assert answer["output"][1] == WEB_SEARCH_CALL
    assert answer["usage"]["input_tokens"] == 12
    [record] = wait_for_usage(sqlite_gateway, 1)
    assert record.api_format == "responses" and record.input_tokens == 12


def test_the_sdk_reads_a_whole_answer_and_a_passed_through_stream(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    client = openai_client(sqlite_gateway, key)
    upstream.enqueue(Reply(text="Hello, world"), Reply(text="Streamed words", reasoning="r"))
    assert client.responses.create(model=MODEL, input="hi").output_text == "Hello, world"
    with client.responses.stream(model=MODEL, input="hi") as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert "".join(deltas) == "Streamed words" == final.output_text
    assert [item.type for item in final.output] == ["reasoning", "message"]
    assert sent(upstream, 1)["stream"] is True
    records = wait_for_usage(sqlite_gateway, 2)
    assert all(r.api_format == "responses" and r.output_tokens > 0 for r in records)


def test_errors_are_in_openai_s_shape_naming_the_field(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    for body, param in [
        ({"model": MODEL, "input": 5}, "input"),
        ({"model": MODEL, "input": ["not an item"]}, "input"),
        ({"model": MODEL, "input": "x", "instructions": ["no"]}, "instructions"),
        ({"input": "x"}, "model"),
        ({"model": MODEL, "input": "x", "tools": {}}, "tools"),
        ({"model": MODEL, "input": "x", "max_output_tokens": 2**40}, "max_output_tokens"),
    ]:
        response = raw(sqlite_gateway, key, body)
        assert response.status_code == 400, body
        error = response.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["type"] == "invalid_request_error" and error["param"] == param
    refused = raw(sqlite_gateway, "mv_wrong", {"model": MODEL, "input": "x"})
    assert refused.status_code == 401
    assert refused.json()["error"]["type"] == "authentication_error"
    with pytest.raises(openai.AuthenticationError):
        openai_client(sqlite_gateway, "mv_wrong").responses.create(model=MODEL, input="x")
    upstream.enqueue(Fault(429, headers={"retry-after": "3"}))
    with pytest.raises(openai.RateLimitError) as caught:
        openai_client(sqlite_gateway, key).responses.create(model=MODEL, input="x")
    assert caught.value.response.headers["retry-after"] == "3"
    assert len(upstream.requests) == 1  # the 400s and 401s never went up


# ---------------------------------------------------------------------------- recall
def test_recall_goes_ahead_of_the_last_user_input_and_instructions_stay_byte_stable(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    gateway.services.vault.write(USER, "pets/Pixel.md", "Pixel the dog eats salmon kibble.")
    key = issue_key(gateway, recall=True)
    raw_answer = ask(gateway, key, input="What does Pixel eat?", instructions="Be terse.")
    assert raw_answer.headers["x-memory-recalled"] == "1"
    first = sent(upstream)
    assert first["instructions"] == "Be terse."
    assert first["input"].startswith('<memory source="memvault vault">')
    assert first["input"].endswith("\n\nWhat does Pixel eat?")
    assert "salmon kibble" in first["input"]
    items = [
        {"role": "user", "content": "What does Pixel eat?"},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    ]
    ask(gateway, key, input=items, tools=[WEATHER])
    second = sent(upstream, 1)["input"]
    assert second[1:] == items[1:]  # the client's later items as sent
    assert second[0]["content"].startswith('<memory source="memvault vault">')
    parts = [{"type": "input_text", "text": "What does Pixel eat?"}]
    ask(gateway, key, input=[{"type": "message", "role": "user", "content": parts}])
    third = sent(upstream, 2)["input"][0]["content"]
    assert third[0]["type"] == "input_text" and "salmon kibble" in third[0]["text"]
    assert third[1:] == parts


# ---------------------------------------------------------------------------- tools and rounds
def test_memory_tools_are_function_tools_after_the_clients_byte_stable(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    for _ in range(2):
        ask(sqlite_gateway, key, instructions="Be terse.", tools=[WEATHER])
    first, second = upstream.requests[0].body, upstream.requests[1].body
    assert first == second
    body = sent(upstream)
    assert body["tools"] == [WEATHER, *MEMORY_TOOLS]
    assert [t["name"] for t in body["tools"][1:]] == list(TOOL_NAMES)
    assert all(set(t) == {"type", "name", "description", "parameters"} for t in MEMORY_TOOLS)
    assert body["instructions"] == f"Be terse.\n\n{VAULT_INSTRUCTIONS}"
    assert body["input"] == "hello"


def test_a_memory_only_turn_runs_and_continues_from_the_stored_response(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(gateway, tools=True)
    upstream.enqueue(
        Reply(
            text="Noting that.",
            tool_calls=[write("facts/Tea.md", "likes green tea")],
            reasoning="r",
        ),
        Reply(text="Done: I will remember.", input_tokens=30, output_tokens=5),
    )
    answer = openai_client(gateway, key).responses.create(model=MODEL, input="I like green tea")
    assert note_text(gateway, "facts/Tea.md") == "likes green tea"
    assert answer.output_text == "Noting that.\n\nDone: I will remember."
    assert [item.type for item in answer.output] == ["reasoning", "message", "message"]
    first, second = sent(upstream), sent(upstream, 1)
    [call] = [c for c in upstream.requests[0].json["tools"] if c["name"] == "memory_write"]
    assert call["type"] == "function"
    # The round continues the first round's stored response with the call's output.
    assert second["previous_response_id"] not in (None, first.get("previous_response_id"))
    [output] = second["input"]
    assert output["type"] == "function_call_output" and "facts/Tea.md" in output["output"]
    # The answer's id is the last round's: the stored response a client continues from.
    assert answer.id.startswith("resp_") and answer.id != second["previous_response_id"]
    record = wait_for_usage(gateway, 1)[-1]
    assert record.rounds == 1 and record.memory_calls == {"memory_write": 1}
    assert answer.usage is not None
    assert answer.usage.input_tokens == record.input_tokens > 30
    assert answer.usage.output_tokens == record.output_tokens


def test_without_store_each_round_is_sent_whole(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    upstream.enqueue(Reply(tool_calls=[search("tea")], reasoning="r"), Reply(text="none found"))
    answer = ask(sqlite_gateway, key, input="tea?", store=False).parse()
    assert answer.output_text == "none found"
    second = sent(upstream, 1)
    assert "previous_response_id" not in second and second["store"] is False
    kinds = [item.get("type", "message") for item in second["input"]]
    assert kinds == ["message", "reasoning", "function_call", "function_call_output"]
    assert second["input"][0] == {"role": "user", "content": "tea?"}
    assert second["input"][2]["call_id"] == second["input"][3]["call_id"]


def test_mixed_turn_runs_writes_drops_reads_and_returns_the_clients_calls(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(gateway, tools=True)
    upstream.enqueue(
        Reply(
            tool_calls=[
                write("facts/Mixed.md", "written in a mixed turn"),
                search("mixed"),
                ToolCall("get_weather", {"city": "Oslo"}),
            ]
        )
    )
    answer = ask(gateway, key, tools=[WEATHER]).parse()
    assert [(i.type, getattr(i, "name", None)) for i in answer.output] == [
        ("function_call", "get_weather")
    ]
    assert note_text(gateway, "facts/Mixed.md") == "written in a mixed turn"
    assert len(upstream.requests) == 1
    assert wait_for_usage(gateway, 1)[-1].memory_calls == {"memory_write": 1}


def test_a_client_tool_named_like_a_memory_tool_keeps_them_off(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    own = {**WEATHER, "name": "memory_search"}
    answer = ask(sqlite_gateway, key, tools=[own])
    assert answer.headers["x-token-notice"] == "memory tools unavailable: tool name collision"
    assert sent(upstream)["tools"] == [own]


def test_more_than_eight_calls_fail_the_request_before_any_runs(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(gateway, tools=True)
    upstream.enqueue(Reply(tool_calls=[write(f"n{i}.md", "x") for i in range(9)]))
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client(gateway, key).responses.create(model=MODEL, input="x")
    assert caught.value.code == "memory_tool_call_ceiling"
    assert all(note_text(gateway, f"n{i}.md") is None for i in range(9))


def test_rounds_run_out_after_four_and_the_notice_says_so(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    upstream.set_default(Reply(tool_calls=[search()], input_tokens=10, output_tokens=1))
    answer = ask(sqlite_gateway, key)
    assert len(upstream.requests) == 5
    assert "memory tool rounds ran out" in answer.headers["x-token-notice"]
    assert sent(upstream, 4)["tool_choice"] == "none"  # the last round: no more calls
    assert answer.parse().output == []


def test_writes_over_4mb_per_request_are_refused_to_the_model(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    # The allowance is the rounds' (tests/gateway/test_memory_tools.py holds it on both
    # backends); here, that a Responses request carries it across its rounds.
    gateway = sqlite_gateway
    key = issue_key(gateway, tools=True)
    mb = "x" * 1_000_000
    upstream.enqueue(
        Reply(tool_calls=[write(f"big{i}.md", mb) for i in range(4)]),
        Reply(tool_calls=[write("big4.md", "y" * 300_000)]),
        Reply(text="stored what I could"),
    )
    client = openai_client(gateway, key).with_options(timeout=180)
    answer = client.responses.create(model=MODEL, input="store them", max_output_tokens=2_000_000)
    assert answer.output_text == "stored what I could"
    [refused] = sent(upstream, 2)["input"]
    assert "write_allowance_exhausted" in refused["output"]
    assert note_text(gateway, "big3.md") == mb and note_text(gateway, "big4.md") is None


# ---------------------------------------------------------------------------- streams
def test_a_stream_with_memory_rounds_is_one_continuous_response(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    gateway.services.vault.write(USER, "facts/Oslo.md", "The user lives in Oslo.")
    key = issue_key(gateway, tools=True)
    upstream.enqueue(
        Reply(text="Let me check.", tool_calls=[search("home")], reasoning="look it up"),
        Reply(text="You live in Oslo.", output_items=[WEB_SEARCH_CALL]),
    )
    events, text = raw_events(gateway, key, {"model": MODEL, "input": "Where do I live?"})
    assert_consecutive(events)
    # Never a memory call's item or arguments, nor the memory tools in the echoed tools.
    for event in events:
        shown = {k: v for k, v in event.get("response", {}).items() if k != "instructions"}
        assert "memory_search" not in json.dumps({**event, "response": shown})
    assert ": memory tools running" in text
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert [i["type"] for i in done] == ["reasoning", "message", "web_search_call", "message"]
    completed = events[-1]["response"]
    assert completed["id"] == events[0]["response"]["id"]
    assert completed["output"] == done
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    assert deltas == "Let me check.\n\nYou live in Oslo."
    record = wait_for_usage(gateway, 1)[-1]
    assert record.rounds == 1 and record.memory_calls == {"memory_search": 1}
    assert completed["usage"]["input_tokens"] == record.input_tokens
    assert completed["usage"]["output_tokens"] == record.output_tokens


def test_the_sdk_stream_helper_and_the_async_client_read_a_rewritten_stream(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    client = openai_client(sqlite_gateway, key)
    script = [
        Reply(tool_calls=[search("a")], args_chunk_chars=3),
        Reply(text="first", tool_calls=[ToolCall("get_weather", {"city": "Oslo"})]),
    ]
    upstream.enqueue(*script)
    with client.responses.stream(model=MODEL, input="hi", tools=[WEATHER]) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert final.output_text == "first"
    assert [(i.type, getattr(i, "name", None)) for i in final.output] == [
        ("message", None),
        ("function_call", "get_weather"),
    ]
    assert "response.function_call_arguments.delta" in kinds  # the client's own call streams

    async def run() -> tuple[str, str]:
        aclient = async_openai_client(sqlite_gateway, key)
        upstream.enqueue(Reply(tool_calls=[search("b")]), Reply(text="async whole"))
        whole = await aclient.responses.create(model=MODEL, input="hi")
        upstream.enqueue(Reply(tool_calls=[search("c")]), Reply(text="async streamed"))
        async with aclient.responses.stream(model=MODEL, input="hi") as astream:
            streamed = await astream.get_final_response()
        return whole.output_text, streamed.output_text

    assert asyncio.run(run()) == ("async whole", "async streamed")


def test_mid_stream_failures_are_error_events_then_response_failed(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    upstream.enqueue(Reply(tool_calls=[write(f"n{i}.md", "x") for i in range(9)]))
    events, _ = raw_events(sqlite_gateway, key, {"model": MODEL, "input": "x"})
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    error, failed = events[-2:]
    assert error["type"] == "error" and error["code"] == "memory_tool_call_ceiling"
    assert failed["type"] == "response.failed"
    assert failed["response"]["id"] == events[0]["response"]["id"]
    for mode in ("error_event", "response_failed"):
        upstream.enqueue(
            Reply(tool_calls=[search()]), Reply(text="x" * 40, fail_after_events=5, fail_mode=mode)
        )  # type: ignore[arg-type]
        events, _ = raw_events(sqlite_gateway, key, {"model": MODEL, "input": "x"})
        assert events[-2]["type"] == "error" and events[-2]["code"] == "upstream_stream_error"
        assert events[-1]["type"] == "response.failed"
    records = wait_for_usage(sqlite_gateway, 3)
    assert sorted(r.status for r in records) == [400, 502, 502]


def test_a_dropped_stream_is_billed_what_memvault_received(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    upstream.enqueue(
        Reply(tool_calls=[search()], input_tokens=50, output_tokens=5),
        Reply(text="word " * 400, text_chunk_chars=5, pause_after_events=30),
    )
    stream = openai_client(sqlite_gateway, key).responses.create(
        model=MODEL, input="talk", stream=True
    )
    for _ in stream:
        break
    upstream.wait_for_pause()
    stream.close()
    [record] = wait_for_usage(sqlite_gateway, 1)
    assert record.outcome == "client_disconnected" and record.estimated
    assert record.input_tokens > 50 and record.output_tokens >= 5 + 20
    assert sqlite_gateway.services.billing.balance("local").held_micros == 0


# ---------------------------------------------------------------------------- memory profiles
def test_memory_profiles_go_first_in_instructions_and_facts_next_to_the_input(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    me = org_of(gateway).member.caller
    memory(
        gateway,
        me,
        "user-1",
        ("guardrail", "Never recommend chocolate for dogs.", None),
        ("fact", "The user's dog Pixel is allergic to chicken.", None),
    )
    key = plain_key(gateway, me)
    client = openai_client(gateway, key)
    for input_ in [
        "What should Pixel eat?",
        [{"role": "user", "content": "What should Pixel eat?"}],
    ]:
        answer = client.responses.with_raw_response.create(
            model=MODEL,
            input=input_,
            instructions="Be terse.",
            extra_headers={"x-mem-id": "user-1"},
        )
        assert answer.headers["x-memory-applied"] == "user-1"
    first, second = sent(upstream), sent(upstream, 1)
    assert first["instructions"] == second["instructions"]  # byte-stable
    block, _, own = first["instructions"].partition("</memory>\n\n")
    assert block.startswith(STABLE_OPEN) and "chocolate" in block and own == "Be terse."
    assert first["input"].startswith(FACTS_OPEN) and "allergic to chicken" in first["input"]
    assert first["input"].endswith("\n\nWhat should Pixel eat?")
    assert second["input"][0]["content"] == first["input"]


def test_upstream_failures_are_502_and_a_passed_through_stream_ends_in_an_error_event(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    upstream.enqueue(
        Fault(500), Malformed(), Reply(text="y" * 40, fail_after_events=4, fail_mode="garbage")
    )
    for code in ("upstream_error", "upstream_malformed"):
        failed = raw(sqlite_gateway, key, {"model": MODEL, "input": "x"})
        assert failed.status_code == 502
        error = failed.json()["error"]
        assert set(error) == {"message", "type", "param", "code"} and error["code"] == code
    events, _ = raw_events(sqlite_gateway, key, {"model": MODEL, "input": "x"})
    assert [e["sequence_number"] for e in events[:-1]] == list(range(len(events) - 1))
    assert events[-1]["type"] == "error" and events[-1]["code"] == "upstream_malformed"
    records = wait_for_usage(sqlite_gateway, 3)
    assert sorted(r.status for r in records) == [502, 502, 502]
