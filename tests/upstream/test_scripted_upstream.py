"""The scripted upstream is protocol-correct: the official SDKs, pointed straight at it,
parse every scripted reply into exactly what was scripted and surface every fault."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest

from tests.support.upstream import Fault, Hang, Malformed, Reply, ScriptedUpstream, ToolCall

USER: Any = [{"role": "user", "content": "hi"}]
WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "strict": True,  # the SDK's stream helper only parses arguments of strict tools
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
}


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedUpstream]:
    with ScriptedUpstream() as up:
        yield up


@pytest.fixture
def up(server: ScriptedUpstream) -> ScriptedUpstream:
    server.reset()
    return server


def oai(up: ScriptedUpstream, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(base_url=up.base_url + "/v1", api_key="x", max_retries=0, timeout=timeout)


def ant(up: ScriptedUpstream, timeout: float = 5.0) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=up.base_url, api_key="x", max_retries=0, timeout=timeout)


def chat(client: openai.OpenAI, **kwargs: Any) -> Any:
    return client.chat.completions.create(model="gpt-4o-mini", messages=USER, **kwargs)


def message(client: anthropic.Anthropic, **kwargs: Any) -> Any:
    return client.messages.create(model="claude-haiku-4-5", max_tokens=50, messages=USER, **kwargs)


# -- OpenAI Chat Completions ---------------------------------------------------------


def test_openai_text_reply_and_the_request_is_recorded(up: ScriptedUpstream) -> None:
    up.enqueue(Reply(text="Hello there"))
    done = chat(oai(up))

    assert done.id.startswith("chatcmpl-")
    assert done.object == "chat.completion"
    assert done.model == "gpt-4o-mini"
    choice = done.choices[0]
    assert (choice.message.role, choice.message.content) == ("assistant", "Hello there")
    assert choice.message.tool_calls is None
    assert choice.finish_reason == "stop"
    [seen] = up.requests
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.headers["authorization"] == "Bearer x"
    assert seen.json["messages"] == USER
    assert json.loads(seen.body) == seen.json
    assert done.usage is not None
    assert done.usage.prompt_tokens == len(seen.body) // 4
    assert done.usage.completion_tokens == len("Hello there") // 4
    assert done.usage.total_tokens == done.usage.prompt_tokens + done.usage.completion_tokens


def test_openai_tool_calls_keep_ids_raw_arguments_and_overrides(up: ScriptedUpstream) -> None:
    calls = [
        ToolCall("get_weather", {"city": "Paris"}),
        ToolCall("get_weather", {"city": "Oslo"}),
        ToolCall("broken", '{"city": "Par', id="call_fixed"),
    ]
    up.enqueue(Reply(tool_calls=calls, input_tokens=11, output_tokens=22, model="gpt-4.1"))
    done = chat(oai(up))

    msg = done.choices[0].message
    assert msg.content is None
    assert [c.function.name for c in msg.tool_calls] == ["get_weather", "get_weather", "broken"]
    assert [c.function.arguments for c in msg.tool_calls] == [
        '{"city":"Paris"}',
        '{"city":"Oslo"}',
        '{"city": "Par',
    ]
    ids = [c.id for c in msg.tool_calls]
    assert ids[0].startswith("call_") and ids[0] != ids[1] and ids[2] == "call_fixed"
    assert done.choices[0].finish_reason == "tool_calls"
    assert done.model == "gpt-4.1"
    assert (done.usage.prompt_tokens, done.usage.completion_tokens) == (11, 22)


def test_openai_raw_stream_chunks_and_usage(up: ScriptedUpstream) -> None:
    up.enqueue(Reply(text="abcdefghij", text_chunk_chars=4, stop_reason="length"))
    chunks = list(chat(oai(up), stream=True, stream_options={"include_usage": True}))

    first, *middle, finish, usage = chunks
    assert first.choices[0].delta.role == "assistant"
    assert [c.choices[0].delta.content for c in middle] == ["abcd", "efgh", "ij"]
    assert finish.choices[0].finish_reason == "length"
    assert all(c.usage is None for c in chunks[:-1])
    assert usage.choices == []
    assert usage.usage.completion_tokens == len("abcdefghij") // 4
    assert len({c.id for c in chunks}) == 1


def raw_openai_stream(up: ScriptedUpstream, **extra: Any) -> list[dict[str, Any]]:
    """The JSON payloads of a streamed chat completion, checking it ends with [DONE]."""
    body = {"model": "m", "messages": USER, "stream": True, **extra}
    with httpx.stream("POST", up.base_url + "/v1/chat/completions", json=body) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    return [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]


def test_openai_stream_without_usage_option_has_no_usage_key(up: ScriptedUpstream) -> None:
    payloads = raw_openai_stream(up)
    assert all("usage" not in p for p in payloads)
    assert payloads[-1]["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "stop",
    }


def test_openai_stream_with_usage_option_has_null_usage_until_the_last(
    up: ScriptedUpstream,
) -> None:
    *chunks, last = raw_openai_stream(up, stream_options={"include_usage": True})
    # An explicit null, not a missing key: parsers keyed on presence must cope with it.
    assert all("usage" in c and c["usage"] is None for c in chunks)
    assert last["choices"] == []
    assert set(last["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}


def test_openai_stream_helper_rebuilds_tool_calls(up: ScriptedUpstream) -> None:
    calls = [ToolCall("get_weather", {"city": "Paris"}), ToolCall("get_weather", {"city": "Rome"})]
    up.enqueue(Reply(text="Checking.", tool_calls=calls, args_chunk_chars=3))
    client = oai(up)
    with client.chat.completions.stream(
        model="gpt-4o-mini", messages=USER, tools=[WEATHER_TOOL]
    ) as stream:
        deltas = [e.delta for e in stream if e.type == "content.delta"]
        final = stream.get_final_completion()

    assert "".join(deltas) == "Checking."
    msg = final.choices[0].message
    assert msg.content == "Checking."
    assert msg.tool_calls is not None
    assert [c.function.parsed_arguments for c in msg.tool_calls] == [
        {"city": "Paris"},
        {"city": "Rome"},
    ]
    assert final.choices[0].finish_reason == "tool_calls"


def test_async_openai_streams(up: ScriptedUpstream) -> None:
    up.enqueue(Reply(text="async hello", tool_calls=[ToolCall("get_weather", {"city": "Oslo"})]))

    async def run() -> Any:
        client = openai.AsyncOpenAI(base_url=up.base_url + "/v1", api_key="x", max_retries=0)
        async with client.chat.completions.stream(
            model="m", messages=USER, tools=[WEATHER_TOOL]
        ) as stream:
            return await stream.get_final_completion()

    msg = asyncio.run(run()).choices[0].message
    assert msg.content == "async hello"
    assert msg.tool_calls[0].function.parsed_arguments == {"city": "Oslo"}


# -- Anthropic Messages --------------------------------------------------------------


def test_anthropic_text_and_tool_use_reply(up: ScriptedUpstream) -> None:
    calls = [ToolCall("get_weather", {"city": "Paris"}), ToolCall("broken", "{not json")]
    up.enqueue(Reply(text="Let me check.", tool_calls=calls))
    done = message(ant(up))

    assert done.id.startswith("msg_")
    assert (done.type, done.role, done.model) == ("message", "assistant", "claude-haiku-4-5")
    text, weather, broken = done.content
    assert (text.type, text.text) == ("text", "Let me check.")
    assert (weather.type, weather.name, weather.input) == (
        "tool_use",
        "get_weather",
        {"city": "Paris"},
    )
    assert broken.input == {}
    assert weather.id.startswith("toolu_") and weather.id != broken.id
    assert (done.stop_reason, done.stop_sequence) == ("tool_use", None)
    [seen] = up.requests
    assert seen.path == "/v1/messages"
    assert seen.headers["user-agent"].startswith("Anthropic/Python")
    assert "anthropic-version" in seen.headers
    assert done.usage.input_tokens == len(seen.body) // 4


def test_anthropic_tool_only_reply_has_no_text_block(up: ScriptedUpstream) -> None:
    up.enqueue(Reply(tool_calls=[ToolCall("get_weather", {"city": "Oslo"})]))
    assert [block.type for block in message(ant(up)).content] == ["tool_use"]


def test_anthropic_stream_helper_rebuilds_the_message(up: ScriptedUpstream) -> None:
    calls = [ToolCall("get_weather", {"city": "Paris"}, id="toolu_fixed")]
    up.enqueue(Reply(text="Let me check.", tool_calls=calls, output_tokens=9))
    client = ant(up)
    with client.messages.stream(model="claude-haiku-4-5", max_tokens=50, messages=USER) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()

    assert text == "Let me check."
    assert [b.type for b in final.content] == ["text", "tool_use"]
    tool = final.content[1]
    assert isinstance(tool, anthropic.types.ToolUseBlock)
    assert (tool.id, tool.input) == ("toolu_fixed", {"city": "Paris"})
    assert final.stop_reason == "tool_use"
    assert final.usage.output_tokens == 9


def test_anthropic_raw_stream_is_event_and_data_pairs(up: ScriptedUpstream) -> None:
    up.enqueue(Reply(text="hello", tool_calls=[ToolCall("t", {"a": 1})]))
    with httpx.stream(
        "POST", up.base_url + "/v1/messages", json={"model": "m", "stream": True}
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        messages = response.read().decode().strip().split("\n\n")

    kinds = []
    for sse in messages:
        event, data = sse.split("\n")
        kind = event.removeprefix("event: ")
        assert json.loads(data.removeprefix("data: "))["type"] == kind
        kinds.append(kind)
    block = ["content_block_start", "content_block_delta", "content_block_delta"]
    expected = ["message_start", "ping", *block, "content_block_stop"]
    expected += ["content_block_start", "content_block_delta", "content_block_stop"]
    expected += ["message_delta", "message_stop"]
    assert kinds == expected
    start = json.loads(messages[0].split("data: ")[1])["message"]
    assert (start["content"], start["usage"]["output_tokens"]) == ([], 1)


def test_async_anthropic_streams(up: ScriptedUpstream) -> None:
    up.enqueue(Reply(text="async hi"))

    async def run() -> Any:
        client = anthropic.AsyncAnthropic(base_url=up.base_url, api_key="x", max_retries=0)
        async with client.messages.stream(model="m", max_tokens=5, messages=USER) as stream:
            return await stream.get_final_message()

    final = asyncio.run(run())
    assert final.content[0].text == "async hi"
    assert final.stop_reason == "end_turn"


# -- script behaviour ----------------------------------------------------------------


def test_steps_are_fifo_then_default_and_reset_clears(up: ScriptedUpstream) -> None:
    client = oai(up)
    up.enqueue(Reply(text="one"), Reply(text="two"))
    up.set_default(Reply(text="fallback"))
    texts = [chat(client).choices[0].message.content for _ in range(4)]
    assert texts == ["one", "two", "fallback", "fallback"]

    up.enqueue(Reply(text="left over"))
    up.reset()
    assert up.requests == []
    assert chat(client).choices[0].message.content == "ok"


def test_each_endpoint_renders_the_same_step_in_its_own_format(up: ScriptedUpstream) -> None:
    up.set_default(Reply(text="shared"))
    assert chat(oai(up)).choices[0].message.content == "shared"
    assert message(ant(up)).content[0].text == "shared"


def test_models_in_both_shapes_without_consuming_steps(up: ScriptedUpstream) -> None:
    up.enqueue(Reply(text="still queued"))
    expected = ["gpt-4o-mini", "gpt-4.1", "claude-sonnet-4-5", "claude-haiku-4-5"]
    assert [m.id for m in oai(up).models.list()] == expected
    listed = ant(up).models.list()
    assert [m.id for m in listed.data] == expected
    assert listed.data[0].display_name == "GPT-4o mini"
    assert [r.method for r in up.requests] == ["GET", "GET"]
    assert chat(oai(up)).choices[0].message.content == "still queued"


def test_unknown_path_is_an_openai_style_404(up: ScriptedUpstream) -> None:
    response = httpx.post(up.base_url + "/v1/audio/speech", json={})
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert up.requests[0].path == "/v1/audio/speech"


def test_embeddings_answer_real_vectors_without_consuming_chat_steps(up: ScriptedUpstream) -> None:
    up.enqueue(Reply(text="still queued"))
    out = oai(up).embeddings.create(
        model="text-embedding-3-small", input=["apples and pears", "pears and apples", "cars"]
    )
    first, same, other = (d.embedding for d in out.data)
    assert len(first) == 64 and first == same and first != other
    assert out.usage.prompt_tokens == 7
    bad = httpx.post(up.base_url + "/v1/embeddings", json={"model": "m", "input": []})
    assert bad.status_code == 400
    up.enqueue_embeddings(Fault(status=503))
    assert (
        httpx.post(up.base_url + "/v1/embeddings", json={"model": "m", "input": "x"}).status_code
        == 503
    )
    assert chat(oai(up)).choices[0].message.content == "still queued"


# -- faults --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "openai_error", "anthropic_error", "anthropic_type"),
    [
        (400, openai.BadRequestError, anthropic.BadRequestError, "invalid_request_error"),
        (401, openai.AuthenticationError, anthropic.AuthenticationError, "authentication_error"),
        (403, openai.PermissionDeniedError, anthropic.PermissionDeniedError, "permission_error"),
        (404, openai.NotFoundError, anthropic.NotFoundError, "not_found_error"),
        (429, openai.RateLimitError, anthropic.RateLimitError, "rate_limit_error"),
        (500, openai.InternalServerError, anthropic.InternalServerError, "api_error"),
        (503, openai.InternalServerError, anthropic.ServiceUnavailableError, "api_error"),
        (529, openai.InternalServerError, anthropic.OverloadedError, "overloaded_error"),
    ],
)
def test_fault_status_reaches_the_sdk_as_its_exception(
    up: ScriptedUpstream,
    status: int,
    openai_error: type[openai.APIStatusError],
    anthropic_error: type[anthropic.APIStatusError],
    anthropic_type: str,
) -> None:
    up.enqueue(Fault(status), Fault(status))
    with pytest.raises(openai_error) as oe:
        chat(oai(up))
    assert type(oe.value) is openai_error
    assert oe.value.status_code == status
    assert f"scripted fault: HTTP {status}" in oe.value.message
    assert oe.value.body == {
        "message": f"scripted fault: HTTP {status}",
        "type": oe.value.type,
        "param": None,
        "code": oe.value.code,
    }

    with pytest.raises(anthropic_error) as ae:
        message(ant(up))
    assert type(ae.value) is anthropic_error
    assert ae.value.status_code == status
    assert ae.value.body == {
        "type": "error",
        "error": {"type": anthropic_type, "message": f"scripted fault: HTTP {status}"},
    }


def test_fault_with_custom_body_and_headers(up: ScriptedUpstream) -> None:
    up.enqueue(
        Fault(
            429,
            body={"error": {"message": "slow down", "type": "requests"}},
            headers={"retry-after": "7"},
        ),
        Fault(502, body=b"<html>bad gateway</html>", headers={"content-type": "text/html"}),
    )
    with pytest.raises(openai.RateLimitError, match="slow down") as err:
        chat(oai(up))
    assert err.value.response.headers["retry-after"] == "7"

    response = httpx.post(up.base_url + "/v1/messages", json={})
    assert (response.status_code, response.text) == (502, "<html>bad gateway</html>")
    assert response.headers["content-type"] == "text/html"


def test_hang_times_the_client_out_without_blocking_others(up: ScriptedUpstream) -> None:
    up.enqueue(Hang(5), Hang(5))
    with pytest.raises(openai.APITimeoutError):
        chat(oai(up, timeout=0.3))
    # While the second hang holds its request, other requests are answered at once.
    errors: list[Exception] = []

    def hang() -> None:
        try:
            httpx.post(up.base_url + "/v1/messages", json={}, timeout=1.0)
        except httpx.ReadTimeout as exc:
            errors.append(exc)

    hung = threading.Thread(target=hang)
    hung.start()
    up.wait_for_requests(2)
    started = time.monotonic()
    replies = [message(ant(up)).content[0].text for _ in range(5)]
    assert replies == ["ok"] * 5
    assert time.monotonic() - started < 1.0
    hung.join()
    assert len(errors) == 1


def test_anthropic_hang_times_the_client_out(up: ScriptedUpstream) -> None:
    up.enqueue(Hang(5))
    with pytest.raises(anthropic.APITimeoutError):
        message(ant(up, timeout=0.3))


def test_hang_that_elapses_answers_504_and_closes(up: ScriptedUpstream) -> None:
    up.enqueue(Hang(0.1))
    response = httpx.post(up.base_url + "/v1/messages", json={})
    assert response.status_code == 504
    assert response.headers["connection"] == "close"
    assert response.json()["error"]["type"] == "api_error"


def test_stop_is_prompt_while_a_request_hangs() -> None:
    upstream = ScriptedUpstream().start()
    upstream.enqueue(Hang(30))
    outcome: list[int] = []
    client = threading.Thread(
        target=lambda: outcome.append(
            httpx.post(upstream.base_url + "/v1/chat/completions", json={}, timeout=10).status_code
        )
    )
    client.start()
    upstream.wait_for_requests(1)
    started = time.monotonic()
    upstream.stop()
    assert time.monotonic() - started < 3.0
    client.join(timeout=5)
    assert outcome == [504]


def test_many_concurrent_requests(up: ScriptedUpstream) -> None:
    up.set_default(Reply(text="x" * 40, chunk_delay=0.01))

    async def run() -> list[str]:
        client = openai.AsyncOpenAI(base_url=up.base_url + "/v1", api_key="x", max_retries=0)

        async def one() -> str:
            stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
            return "".join([c.choices[0].delta.content or "" async for c in stream])

        return await asyncio.gather(*(one() for _ in range(30)))

    started = time.monotonic()
    assert asyncio.run(run()) == ["x" * 40] * 30
    # Each stream takes ~0.1 s of scripted delay; run serially that would be ~3 s.
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("endpoint", ["/v1/chat/completions", "/v1/messages"])
def test_malformed_body_breaks_the_sdk_parse(up: ScriptedUpstream, endpoint: str) -> None:
    up.enqueue(Malformed())
    with pytest.raises(json.JSONDecodeError):
        if endpoint == "/v1/messages":
            message(ant(up))
        else:
            chat(oai(up))
    response = httpx.post(up.base_url + endpoint, json={})
    assert response.status_code == 200  # the default reply follows; the fault was one step


def test_malformed_stream_breaks_the_openai_stream(up: ScriptedUpstream) -> None:
    up.enqueue(Malformed(b"data: {bad\n\n", content_type="text/event-stream"))
    with pytest.raises(json.JSONDecodeError):
        list(chat(oai(up), stream=True))


# -- mid-stream faults ---------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["/v1/chat/completions", "/v1/messages"])
def test_disconnect_breaks_the_chunked_body(up: ScriptedUpstream, endpoint: str) -> None:
    up.enqueue(Reply(text="hello world", fail_after_events=3))
    body = {"model": "m", "stream": True}
    with (
        pytest.raises(httpx.RemoteProtocolError),
        httpx.stream("POST", up.base_url + endpoint, json=body) as response,
    ):
        response.read()


def test_disconnect_surfaces_in_both_sdks(up: ScriptedUpstream) -> None:
    broken = Reply(text="hello world", fail_after_events=3)
    up.enqueue(broken, broken)
    with pytest.raises(openai.APIConnectionError):
        list(chat(oai(up), stream=True))
    # The Anthropic SDK lets the transport error through unwrapped.
    with pytest.raises(httpx2.RemoteProtocolError):
        list(message(ant(up), stream=True))


def test_error_event_surfaces_in_both_sdks(up: ScriptedUpstream) -> None:
    broken = Reply(text="hello world", fail_after_events=2, fail_mode="error_event")
    up.enqueue(broken, broken)
    with pytest.raises(openai.APIError, match="scripted mid-stream error"):
        list(chat(oai(up), stream=True))
    with pytest.raises(anthropic.APIStatusError) as err:
        list(message(ant(up), stream=True))
    assert err.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "scripted mid-stream error"},
    }


def test_garbage_surfaces_in_both_sdks(up: ScriptedUpstream) -> None:
    broken = Reply(text="hello world", fail_after_events=2, fail_mode="garbage")
    up.enqueue(broken, broken)
    with pytest.raises(json.JSONDecodeError):
        list(chat(oai(up), stream=True))
    with pytest.raises(json.JSONDecodeError):
        list(message(ant(up), stream=True))


def test_events_before_the_fault_arrive_intact(up: ScriptedUpstream) -> None:
    up.enqueue(Reply(text="abcdefgh", text_chunk_chars=4, fail_after_events=2))
    seen: list[str] = []
    with pytest.raises(openai.APIConnectionError):
        seen.extend(c.choices[0].delta.content or "" for c in chat(oai(up), stream=True))
    assert seen == ["", "abcd"]


def test_invalid_chunk_sizes_are_rejected_when_scripted() -> None:
    with pytest.raises(ValueError):
        Reply(text_chunk_chars=0)


ANTHROPIC_TOOL_TURN: Any = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "toolu_a", "name": "lookup", "input": {}}],
}
RESULT_A: Any = {"type": "tool_result", "tool_use_id": "toolu_a", "content": "ok"}


@pytest.mark.parametrize(
    "answer",
    [
        [{"type": "text", "text": "note"}, RESULT_A],  # something ahead of the result
        [{"type": "text", "text": "no result at all"}],
    ],
)
def test_anthropic_refuses_a_tool_answer_that_does_not_begin_with_its_results(
    up: ScriptedUpstream, answer: Any
) -> None:
    up.enqueue(Reply(text="kept for the next request"))
    messages = [USER[0], ANTHROPIC_TOOL_TURN, {"role": "user", "content": answer}]
    with pytest.raises(anthropic.BadRequestError, match="tool_result"):
        ant(up).messages.create(model="claude-haiku-4-5", max_tokens=5, messages=messages)
    # The refused request did not spend the scripted step.
    fine = [USER[0], ANTHROPIC_TOOL_TURN, {"role": "user", "content": [RESULT_A, answer[0]]}]
    reply = ant(up).messages.create(model="claude-haiku-4-5", max_tokens=5, messages=fine)
    assert [b.text for b in reply.content if b.type == "text"] == ["kept for the next request"]


def test_anthropic_refuses_results_for_other_calls(up: ScriptedUpstream) -> None:
    other = {**RESULT_A, "tool_use_id": "toolu_other"}
    messages = [USER[0], ANTHROPIC_TOOL_TURN, {"role": "user", "content": [other]}]
    with pytest.raises(anthropic.BadRequestError, match="toolu_a"):
        ant(up).messages.create(model="claude-haiku-4-5", max_tokens=5, messages=messages)


OPENAI_TOOL_TURN: Any = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
        {"id": "call_b", "type": "function", "function": {"name": "f", "arguments": "{}"}},
    ],
}


@pytest.mark.parametrize(
    "after",
    [
        [{"role": "tool", "tool_call_id": "call_a", "content": "ok"}, USER[0]],  # b unanswered
        [{"role": "tool", "tool_call_id": "call_x", "content": "ok"}],  # answers no call
    ],
)
def test_openai_refuses_tool_turns_out_of_shape(up: ScriptedUpstream, after: Any) -> None:
    with pytest.raises(openai.BadRequestError, match="tool"):
        oai(up).chat.completions.create(
            model="gpt-4o-mini", messages=[USER[0], OPENAI_TOOL_TURN, *after]
        )
    answered = [{"role": "tool", "tool_call_id": c, "content": "ok"} for c in ("call_b", "call_a")]
    up.enqueue(Reply(text="fine"))
    reply = oai(up).chat.completions.create(
        model="gpt-4o-mini", messages=[USER[0], OPENAI_TOOL_TURN, *answered]
    )
    assert reply.choices[0].message.content == "fine"
