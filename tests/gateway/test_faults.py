"""Upstream failures as clients see them.

An upstream 4xx passes through with its status and body; 5xx, timeouts, refused
connections and malformed answers become a clear 502/504 in the format's own error shape;
a stream that fails once started ends with the format's error event. Never a hang, and
never a failure dressed up as a clean end.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from tests.gateway.conftest import issue_key
from tests.gateway.protocol_helpers import (
    RawStream,
    custom_gateway,
    format_error,
    minimal_body,
    raw_post,
    raw_stream,
    sdk_call,
)
from tests.support.clock import FakeClock
from tests.support.servers import LiveServer, free_port
from tests.support.upstream import Fault, Hang, Malformed, Reply, ScriptedUpstream, ToolCall

FORMATS = ["openai", "anthropic"]
TOGGLES = [False, True]
TOGGLE_IDS = ["plain", "tools"]
# The tests that wait out the upstream read timeout run with a short one (the other
# gateway tests keep the 3 s of tests/gateway/conftest.py, ample on a loaded machine).
READ_TIMEOUT = 0.5


@pytest.fixture
def timeout_gateway(
    tmp_path: Path, clock: FakeClock, upstream: ScriptedUpstream
) -> Iterator[LiveServer]:
    """memvault (SQLite) whose upstream read timeout is READ_TIMEOUT."""
    with custom_gateway(tmp_path, clock, upstream, upstream_read_timeout=READ_TIMEOUT) as server:
        yield server


def provider_type(fmt: str, code: str) -> str:
    """The format's own error type for a provider failure memvault reports (502/504)."""
    if fmt == "anthropic" and code == "upstream_timeout":
        return "timeout_error"
    return "api_error"


def error_event(fmt: str, result: RawStream) -> dict[str, Any]:
    """The error of the stream's last event, checking the stream ends with it and only it."""
    assert result.status == 200, result.text
    assert result.messages, result.text
    last = result.messages[-1]
    if fmt == "openai":
        assert last.event is None
        assert all(m.data != "[DONE]" for m in result.messages), result.text
    else:
        assert last.event == "error", result.text
        assert all(m.event != "message_stop" for m in result.messages), result.text
    error = format_error(fmt, last.json())
    assert error["type"] == provider_type(fmt, error["code"])
    # Only the last event is an error.
    for message in result.messages[:-1]:
        if message.data != "[DONE]":
            payload = message.json()
            assert "error" not in payload and payload.get("type") != "error", result.text
    return error


def streamed_text(fmt: str, result: RawStream) -> str:
    text = ""
    for message in result.messages:
        if message.data == "[DONE]":
            continue
        payload = message.json()
        if fmt == "openai" and payload.get("choices"):
            text += payload["choices"][0]["delta"].get("content") or ""
        elif fmt == "anthropic" and payload.get("type") == "content_block_delta":
            text += payload["delta"].get("text", "")
    return text


# -- upstream 4xx: passed through ---------------------------------------------------

OPENAI_4XX = {
    400: openai.BadRequestError,
    401: openai.AuthenticationError,
    404: openai.NotFoundError,
    429: openai.RateLimitError,
}
ANTHROPIC_4XX = {
    400: anthropic.BadRequestError,
    401: anthropic.AuthenticationError,
    404: anthropic.NotFoundError,
    429: anthropic.RateLimitError,
}


@pytest.mark.parametrize("tools_on", TOGGLES, ids=TOGGLE_IDS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_upstream_4xx_reach_the_sdk_as_their_exception_with_the_upstream_message(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, tools_on: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    expected = OPENAI_4XX if fmt == "openai" else ANTHROPIC_4XX
    for status, error_class in expected.items():
        for stream in (False, True):
            upstream.enqueue(Fault(status))
            with pytest.raises(error_class) as err:
                sdk_call(sqlite_gateway, fmt, key, stream=stream)
            assert type(err.value) is error_class, (status, stream)
            assert err.value.status_code == status
            assert f"scripted fault: HTTP {status}" in err.value.message
            if fmt == "anthropic":
                # The upstream's own body, not memvault's.
                assert err.value.body == {
                    "type": "error",
                    "error": {
                        "type": err.value.body["error"]["type"],
                        "message": f"scripted fault: HTTP {status}",
                    },
                }
    assert len(upstream.requests) == 2 * len(expected)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_an_upstream_4xx_body_passes_through_byte_for_byte(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, stream: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    body = b'{"error": {"message": "context too long: 9000 > 8192", "type": "x", "extra": [1]}}'
    upstream.enqueue(
        Fault(413, body=body),
        Fault(404, body=b"no such model", headers={"content-type": "text/plain; charset=utf-8"}),
    )
    request = minimal_body(fmt, stream=stream)

    first = raw_post(sqlite_gateway, fmt, key, request)
    assert (first.status_code, first.content) == (413, body)
    assert first.headers["content-type"].startswith("application/json")
    second = raw_post(sqlite_gateway, fmt, key, request)
    assert (second.status_code, second.content) == (404, b"no such model")
    assert second.headers["content-type"].startswith("text/plain")


# -- upstream 5xx: a 502 in the format's shape ---------------------------------------


@pytest.mark.parametrize("tools_on", TOGGLES, ids=TOGGLE_IDS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_upstream_5xx_become_a_502_in_the_format_shape(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, tools_on: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    for status in (500, 503):
        for stream in (False, True):
            upstream.enqueue(Fault(status))
            response = raw_post(sqlite_gateway, fmt, key, minimal_body(fmt, stream=stream))
            assert response.status_code == 502, (status, stream, response.text)
            assert response.headers["content-type"].startswith("application/json")
            error = format_error(fmt, response.json())
            assert (error["type"], error["code"]) == ("api_error", "upstream_error")
            assert f"HTTP {status}" in error["message"]
            assert f"scripted fault: HTTP {status}" in error["message"]

    upstream.enqueue(Fault(500), Fault(503))
    if fmt == "openai":
        with pytest.raises(openai.InternalServerError) as oerr:
            sdk_call(sqlite_gateway, fmt, key, stream=False)
        assert (oerr.value.status_code, oerr.value.code) == (502, "upstream_error")
        with pytest.raises(openai.InternalServerError):
            sdk_call(sqlite_gateway, fmt, key, stream=True)
    else:
        with pytest.raises(anthropic.InternalServerError) as aerr:
            sdk_call(sqlite_gateway, fmt, key, stream=False)
        assert aerr.value.status_code == 502
        with pytest.raises(anthropic.InternalServerError):
            sdk_call(sqlite_gateway, fmt, key, stream=True)


# -- timeouts: a 504, soon ------------------------------------------------------------


def test_an_upstream_that_never_answers_is_a_504_after_the_read_timeout(
    timeout_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    plain = issue_key(timeout_gateway)
    tools = issue_key(timeout_gateway, tools=True)
    upstream.set_default(Hang(30))
    cases = [
        (fmt, stream, key) for fmt in FORMATS for stream in (False, True) for key in (plain, tools)
    ]

    def run(case: tuple[str, bool, str]) -> tuple[httpx.Response, float]:
        fmt, stream, key = case
        started = time.monotonic()
        response = raw_post(timeout_gateway, fmt, key, minimal_body(fmt, stream=stream))
        return response, time.monotonic() - started

    def sdk(fmt: str) -> tuple[BaseException | None, float]:
        started = time.monotonic()
        try:
            sdk_call(timeout_gateway, fmt, plain, stream=fmt == "anthropic")
        except (openai.APIStatusError, anthropic.APIStatusError) as exc:
            return exc, time.monotonic() - started
        return None, time.monotonic() - started

    # All at once: each waits out the same read timeout.
    with ThreadPoolExecutor(max_workers=len(cases) + len(FORMATS)) as pool:
        raw_futures = [pool.submit(run, case) for case in cases]
        sdk_futures = [pool.submit(sdk, fmt) for fmt in FORMATS]
        raw_results = [f.result() for f in raw_futures]
        sdk_results = [f.result() for f in sdk_futures]

    for (fmt, stream, _), (response, elapsed) in zip(cases, raw_results, strict=True):
        assert response.status_code == 504, (fmt, stream, response.text)
        error = format_error(fmt, response.json())
        assert (error["type"], error["code"]) == (
            provider_type(fmt, "upstream_timeout"),
            "upstream_timeout",
        )
        assert READ_TIMEOUT * 0.9 <= elapsed < READ_TIMEOUT + 4, elapsed
    for exc, elapsed in sdk_results:
        assert isinstance(exc, openai.InternalServerError | anthropic.APIStatusError), exc
        assert exc.status_code == 504
        assert elapsed < READ_TIMEOUT + 4


def test_a_stream_that_stalls_midway_ends_with_a_timeout_error_event(
    timeout_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    plain = issue_key(timeout_gateway)
    tools = issue_key(timeout_gateway, tools=True)
    # The first event at once, then nothing for longer than the read timeout.
    upstream.set_default(Reply(text="abcdefgh", text_chunk_chars=4, chunk_delay=10))
    cases = [(fmt, key) for fmt in FORMATS for key in (plain, tools)]

    def run(case: tuple[str, str]) -> RawStream:
        fmt, key = case
        return raw_stream(timeout_gateway, fmt, key, minimal_body(fmt))

    with ThreadPoolExecutor(max_workers=len(cases)) as pool:
        results = list(pool.map(run, cases))

    for (fmt, _), result in zip(cases, results, strict=True):
        error = error_event(fmt, result)
        assert error["code"] == "upstream_timeout", result.text
        assert result.elapsed < READ_TIMEOUT + 4


@contextlib.contextmanager
def black_hole() -> Iterator[str]:
    """An upstream that accepts connections and never reads from them: a large request
    body fills the socket buffers and the sender's writes block."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in accepted:
            connection.close()
        listener.close()


def test_an_upstream_that_stops_reading_a_large_request_is_a_504_not_a_hang(
    tmp_path: Path, clock: FakeClock, upstream: ScriptedUpstream
) -> None:
    # Sending the request is bounded like waiting for the answer: at most about the read
    # timeout for the body to go out, then the read timeout for the answer's headers.
    with (
        black_hole() as hole,
        custom_gateway(
            tmp_path,
            clock,
            upstream,
            openai_base_url=hole + "/v1",
            anthropic_base_url=hole,
            upstream_read_timeout=READ_TIMEOUT,
        ) as server,
    ):
        key = issue_key(server)
        for fmt, stream in (("openai", False), ("anthropic", True)):
            body = minimal_body(fmt, stream=stream)
            # 8 MB: twice the most a loopback socket's send buffer takes here
            # (net.ipv4.tcp_wmem's maximum, 4 MiB), so the gateway's writes block.
            body["messages"][0]["content"] = "x " * (4 * 1024 * 1024)
            # A hang would outlast the client's timeout and fail here; how long the 504
            # took is not asserted (the gateway's own work on the body grows with the
            # machine's load: 7.2 s once against a bound of 7 s).
            response = raw_post(server, fmt, key, body, timeout=30)
            assert response.status_code == 504, (fmt, response.text[:300])
            assert format_error(fmt, response.json())["code"] == "upstream_timeout"


# -- connection refused: a 502 --------------------------------------------------------


def test_an_unreachable_upstream_is_a_502(
    tmp_path: Path, clock: FakeClock, upstream: ScriptedUpstream
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with custom_gateway(
        tmp_path, clock, upstream, openai_base_url=dead + "/v1", anthropic_base_url=dead
    ) as server:
        for tools_on in TOGGLES:
            key = issue_key(server, tools=tools_on)
            for fmt in FORMATS:
                for stream in (False, True):
                    started = time.monotonic()
                    response = raw_post(server, fmt, key, minimal_body(fmt, stream=stream))
                    assert response.status_code == 502, (fmt, stream, response.text)
                    error = format_error(fmt, response.json())
                    assert (error["type"], error["code"]) == (
                        "api_error",
                        "upstream_unreachable",
                    )
                    assert time.monotonic() - started < 3
        for fmt in FORMATS:
            headers = {"anthropic-version": "2023-06-01"} if fmt == "anthropic" else {}
            models = httpx.get(
                server.url + "/v1/models",
                headers={**headers, "authorization": f"Bearer {key}"},
                timeout=10,
            )
            assert models.status_code == 502
            assert format_error(fmt, models.json())["code"] == "upstream_unreachable"
        with pytest.raises(openai.InternalServerError) as oerr:
            sdk_call(server, "openai", key, stream=True)
        assert oerr.value.status_code == 502
        with pytest.raises(anthropic.InternalServerError) as aerr:
            sdk_call(server, "anthropic", key, stream=False)
        assert aerr.value.status_code == 502
    assert upstream.requests == []


# -- malformed answers: a 502 ---------------------------------------------------------

MALFORMED = [
    Malformed(),
    Malformed(b"<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
    Malformed(b"", content_type="application/json"),
]


@pytest.mark.parametrize("tools_on", TOGGLES, ids=TOGGLE_IDS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_malformed_answer_is_a_502(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, tools_on: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    for step in MALFORMED:
        upstream.enqueue(step)
        response = raw_post(sqlite_gateway, fmt, key, minimal_body(fmt))
        assert response.status_code == 502, (step, response.text)
        error = format_error(fmt, response.json())
        assert (error["type"], error["code"]) == ("api_error", "upstream_malformed")

    upstream.enqueue(Malformed())
    error_class = openai.InternalServerError if fmt == "openai" else anthropic.InternalServerError
    with pytest.raises(error_class) as err:
        sdk_call(sqlite_gateway, fmt, key, stream=False)
    assert err.value.status_code == 502


@pytest.mark.parametrize("tools_on", TOGGLES, ids=TOGGLE_IDS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_malformed_answer_to_a_stream_is_a_502_not_a_clean_end(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, tools_on: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    for step in MALFORMED:
        upstream.enqueue(step)
        result = raw_stream(sqlite_gateway, fmt, key, minimal_body(fmt))
        assert result.status == 502, (step, result.text)
        error = format_error(fmt, json.loads(result.text))
        assert (error["type"], error["code"]) == ("api_error", "upstream_malformed")

    upstream.enqueue(Malformed())
    error_class = openai.InternalServerError if fmt == "openai" else anthropic.InternalServerError
    with pytest.raises(error_class) as err:
        sdk_call(sqlite_gateway, fmt, key, stream=True)
    assert err.value.status_code == 502


# An event stream that ends cleanly (no transport error) before the answer does.
CUT_SHORT = {
    "openai": (
        b'data: {"id":"chatcmpl-cut","object":"chat.completion.chunk","created":1,'
        b'"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant",'
        b'"content":"Half an ans"},"finish_reason":null}]}\n\n'
    ),
    "anthropic": (
        b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_cut",'
        b'"type":"message","role":"assistant","model":"claude-haiku-4-5","content":[],'
        b'"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}'
        b"\n\n"
        b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
        b'"content_block":{"type":"text","text":""}}\n\n'
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
        b'"delta":{"type":"text_delta","text":"Half an ans"}}\n\n'
    ),
}


@pytest.mark.parametrize("tools_on", TOGGLES, ids=TOGGLE_IDS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_stream_cut_short_without_its_end_is_an_error_not_a_clean_end(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, tools_on: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    upstream.enqueue(Malformed(CUT_SHORT[fmt], content_type="text/event-stream"))
    result = raw_stream(sqlite_gateway, fmt, key, minimal_body(fmt))

    error = error_event(fmt, result)
    assert error["code"] == "upstream_malformed", result.text
    assert streamed_text(fmt, result) == "Half an ans"


def test_a_whole_answer_of_the_wrong_shape_is_a_502_when_memvault_reads_it(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    for fmt in FORMATS:
        upstream.enqueue(Malformed(b'{"unexpected": true}'), Malformed(b"[1, 2, 3]"))
        for _ in range(2):
            response = raw_post(sqlite_gateway, fmt, key, minimal_body(fmt))
            assert response.status_code == 502, response.text
            assert format_error(fmt, response.json())["code"] == "upstream_malformed"


# -- faults once the stream has started: the format's error event ---------------------

MID_STREAM_CODES = {
    "disconnect": "upstream_stream_broken",
    "error_event": "upstream_stream_error",
    "garbage": "upstream_malformed",
}
MID_TEXT = "The quick brown fox jumps over the lazy dog."


@pytest.mark.parametrize("tools_on", TOGGLES, ids=TOGGLE_IDS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_stream_that_fails_midway_ends_with_the_format_error_event(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, tools_on: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    for mode, code in MID_STREAM_CODES.items():
        for fail_after in (0, 4):
            upstream.enqueue(
                Reply(
                    text=MID_TEXT, text_chunk_chars=5, fail_after_events=fail_after, fail_mode=mode
                )  # type: ignore[arg-type]
            )
            result = raw_stream(sqlite_gateway, fmt, key, minimal_body(fmt))
            case = (mode, fail_after, result.text)
            error = error_event(fmt, result)
            assert error["code"] == code, case
            if mode == "error_event":
                assert "scripted mid-stream error" in error["message"], case
            text = streamed_text(fmt, result)
            assert MID_TEXT.startswith(text) and len(text) < len(MID_TEXT), case
            if fail_after:
                assert text, case  # what came before the fault reached the client
            assert result.elapsed < 5, case


@pytest.mark.parametrize("tools_on", TOGGLES, ids=TOGGLE_IDS)
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_sdks_raise_when_a_stream_fails_midway(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, tools_on: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    error_class = openai.APIError if fmt == "openai" else anthropic.APIError
    for mode in MID_STREAM_CODES:
        upstream.enqueue(
            Reply(text=MID_TEXT, text_chunk_chars=5, fail_after_events=4, fail_mode=mode)  # type: ignore[arg-type]
        )
        started = time.monotonic()
        with pytest.raises(error_class) as err:
            sdk_call(sqlite_gateway, fmt, key, stream=True)
        assert time.monotonic() - started < 5
        # memvault's error event, as the SDK parsed it.
        body = err.value.body
        error = body if fmt == "openai" else body["error"]  # type: ignore[index]
        assert isinstance(error, dict), body
        assert (error["type"], error["code"]) == ("api_error", MID_STREAM_CODES[mode])


def test_a_failing_memory_tool_round_ends_the_stream_with_an_error_event(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    search = ToolCall("memory_search", {"query": "oslo"})
    for fmt in FORMATS:
        upstream.enqueue(Reply(text="Let me look.", tool_calls=[search]), Fault(500))
        result = raw_stream(sqlite_gateway, fmt, key, minimal_body(fmt))
        error = error_event(fmt, result)
        assert error["code"] == "upstream_error", result.text
        assert streamed_text(fmt, result) == "Let me look."

        upstream.enqueue(Reply(text="Let me look.", tool_calls=[search]), Fault(503))
        response = raw_post(sqlite_gateway, fmt, key, minimal_body(fmt))
        assert response.status_code == 502, response.text
        assert format_error(fmt, response.json())["code"] == "upstream_error"
    assert len(upstream.requests) == 8
