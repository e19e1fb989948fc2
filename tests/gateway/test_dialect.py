"""The gateway speaks each provider's dialect: the headers clients rely on, each format's
own error types, and nothing of memvault's provider credential in what it relays."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
import pytest
from openai._models import FinalRequestOptions

from tests.gateway.conftest import (
    UPSTREAM_ANTHROPIC_KEY,
    UPSTREAM_OPENAI_KEY,
    anthropic_client,
    issue_key,
    openai_client,
    wait_for_usage,
)
from tests.gateway.protocol_helpers import (
    anthropic_error,
    format_error,
    minimal_body,
    openai_error,
    path_of,
    raw_post,
    raw_stream,
    sdk_call,
)
from tests.support.servers import LiveServer
from tests.support.upstream import Fault, Malformed, Reply, ScriptedUpstream

FORMATS = ["openai", "anthropic"]

OPENAI_HEADERS = {
    "x-request-id": "req_openai_123",
    "openai-processing-ms": "42",
    "openai-organization": "org-memvault",
    "x-ratelimit-limit-requests": "500",
    "x-ratelimit-remaining-requests": "499",
    "x-ratelimit-reset-tokens": "6ms",
}
ANTHROPIC_HEADERS = {
    "request-id": "req_anthropic_456",
    "anthropic-ratelimit-requests-limit": "50",
    "anthropic-ratelimit-requests-remaining": "49",
    "anthropic-ratelimit-tokens-reset": "2026-01-01T00:00:00Z",
}
# Upstream headers that are the provider's business, never relayed.
PRIVATE_HEADERS = {"x-internal-route": "shard-7", "set-cookie": "session=abc"}


def provider_headers(fmt: str) -> dict[str, str]:
    return OPENAI_HEADERS if fmt == "openai" else ANTHROPIC_HEADERS


def assert_relayed(headers: httpx.Headers, expected: dict[str, str]) -> None:
    for name, value in expected.items():
        assert headers.get(name) == value, (name, dict(headers))
    for name in PRIVATE_HEADERS:
        assert name not in headers, name


# ---------------------------------------------------------------------------- headers
@pytest.mark.parametrize("tools_on", [False, True], ids=["plain", "tools"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_providers_request_ids_and_rate_limits_reach_the_client(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, stream: bool, tools_on: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    upstream.enqueue(Reply(text="hi", headers={**provider_headers(fmt), **PRIVATE_HEADERS}))
    if stream:
        result = raw_stream(sqlite_gateway, fmt, key, minimal_body(fmt))
        assert result.status == 200
        headers = result.headers
    else:
        response = raw_post(sqlite_gateway, fmt, key, minimal_body(fmt))
        assert response.status_code == 200
        headers = response.headers
    assert_relayed(headers, provider_headers(fmt))
    assert headers["x-memory-recalled"] == "0"  # memvault's own still there


def test_the_anthropic_sdk_sees_the_providers_request_id(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    upstream.enqueue(Reply(text="hi", headers=ANTHROPIC_HEADERS))
    message = anthropic_client(sqlite_gateway, key).messages.create(**minimal_body("anthropic"))
    assert message._request_id == "req_anthropic_456"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
def test_the_openai_sdk_sees_the_retry_after_the_provider_asked_for(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, stream: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    asked = {"retry-after": "7", "retry-after-ms": "7000", **OPENAI_HEADERS}
    upstream.enqueue(Fault(429, headers={**asked, **PRIVATE_HEADERS}))
    with pytest.raises(openai.RateLimitError) as caught:
        sdk_call(sqlite_gateway, "openai", key, stream=stream)
    assert_relayed(caught.value.response.headers, asked)
    # What the SDK waits before retrying: the provider's seven seconds, not its own 1 s.
    client = openai_client(sqlite_gateway, key)
    options = FinalRequestOptions(method="post", url="/chat/completions")
    assert client._calculate_retry_timeout(1, options, caught.value.response.headers) == 7


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_provider_failure_keeps_its_retry_after_on_the_502(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str
) -> None:
    key = issue_key(sqlite_gateway)
    asked = {"retry-after": "3", **provider_headers(fmt)}
    upstream.enqueue(Fault(503, headers={**asked, **PRIVATE_HEADERS}))
    response = raw_post(sqlite_gateway, fmt, key, minimal_body(fmt))
    assert response.status_code == 502
    assert_relayed(response.headers, asked)


# ---------------------------------------------------------------------------- error types
OPENAI_TYPES = {
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "rate_limit_error",
    "insufficient_quota",
    "api_error",
}
ANTHROPIC_TYPES = {
    "invalid_request_error",
    "authentication_error",
    "billing_error",
    "permission_error",
    "not_found_error",
    "request_too_large",
    "rate_limit_error",
    "timeout_error",
    "api_error",
    "overloaded_error",
}


def memvault_error(fmt: str, response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    error = format_error(fmt, body)
    if fmt == "openai":
        assert set(error) == {"message", "type", "param", "code"}, error
        assert error["type"] in OPENAI_TYPES, error
    else:
        assert set(error) == {"type", "message", "code"}, error
        assert error["type"] in ANTHROPIC_TYPES, error
    return error


@pytest.mark.parametrize("fmt", FORMATS)
def test_errors_memvault_makes_use_the_formats_own_types(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str
) -> None:
    key = issue_key(sqlite_gateway)

    def post(body: Any, secret: str | None = key) -> httpx.Response:
        return raw_post(sqlite_gateway, fmt, secret, body)

    expected = {
        "bad body": (post(b"{not json"), 400, "invalid_request_error", "invalid_json"),
        "no key": (post(minimal_body(fmt), None), 401, "authentication_error", None),
    }
    sqlite_gateway.services.billing.set_balance("local", 0)
    expected["no money"] = (
        post(minimal_body(fmt)),
        402,
        "insufficient_quota" if fmt == "openai" else "billing_error",
        "insufficient_balance",
    )
    sqlite_gateway.services.billing.set_balance("local", None)
    upstream.enqueue(Fault(500))
    expected["upstream down"] = (post(minimal_body(fmt)), 502, "api_error", "upstream_error")
    for case, (response, status, type_, code) in expected.items():
        assert response.status_code == status, (case, response.text)
        error = memvault_error(fmt, response)
        assert error["type"] == type_, case
        if code is not None:
            assert error["code"] == code, case


def test_openai_errors_name_the_parameter_at_fault(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    for body, param in (
        ({"messages": [{"role": "user", "content": "hi"}]}, "model"),
        ({"model": "gpt-4o-mini", "messages": []}, "messages"),
        (minimal_body("openai", max_tokens=10**30), "max_tokens"),
    ):
        response = raw_post(sqlite_gateway, "openai", key, body)
        assert response.status_code == 400
        assert memvault_error("openai", response)["param"] == param


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_mid_stream_error_event_uses_the_formats_types(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str
) -> None:
    key = issue_key(sqlite_gateway, tools=True)
    upstream.enqueue(Reply(text="The quick brown fox.", fail_after_events=4))
    result = raw_stream(sqlite_gateway, fmt, key, minimal_body(fmt))
    error = format_error(fmt, result.messages[-1].json())
    assert (error["type"], error["code"]) == ("api_error", "upstream_stream_broken")
    if fmt == "openai":
        assert error["param"] is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_unexpected_failure_is_a_500_in_the_formats_shape(
    sqlite_gateway: LiveServer,
    upstream: ScriptedUpstream,
    monkeypatch: pytest.MonkeyPatch,
    fmt: str,
) -> None:
    key = issue_key(sqlite_gateway)

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("memvault.gateway.engine.plan_request", broken)
    response = raw_post(sqlite_gateway, fmt, key, minimal_body(fmt))
    assert response.status_code == 500
    error = memvault_error(fmt, response)
    assert (error["type"], error["code"]) == ("api_error", "internal_error")
    assert "a bug" not in response.text


# ---------------------------------------------------------------------------- the credential
def credential(fmt: str) -> str:
    return UPSTREAM_OPENAI_KEY if fmt == "openai" else UPSTREAM_ANTHROPIC_KEY


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_relayed_4xx_never_carries_memvaults_provider_key(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, stream: bool
) -> None:
    key = issue_key(sqlite_gateway)
    secret = credential(fmt)
    message = f"Incorrect API key provided: {secret}. You can find your key at ..."
    body = {"error": {"message": message, "type": "invalid_request_error", "code": "k"}}
    upstream.enqueue(Fault(401, body=body))
    response = raw_post(sqlite_gateway, fmt, key, minimal_body(fmt, stream=stream))
    assert response.status_code == 401
    assert secret not in response.text
    relayed = response.json()["error"]["message"]
    assert relayed.startswith("Incorrect API key provided: ") and "find your key" in relayed


@pytest.mark.parametrize("tools_on", [False, True], ids=["plain", "tools"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_relayed_failures_never_carry_memvaults_provider_key(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, tools_on: bool
) -> None:
    key = issue_key(sqlite_gateway, tools=tools_on)
    secret = credential(fmt)
    upstream.enqueue(Fault(500, body={"error": {"message": f"key {secret} is broken"}}))
    failed = raw_post(sqlite_gateway, fmt, key, minimal_body(fmt))
    assert failed.status_code == 502
    assert "is broken" in failed.text and secret not in failed.text

    # An error event mid-stream, its message naming the key.
    event = (
        b'data: {"error": {"message": "bad key ' + secret.encode() + b'", "type": "x"}}\n\n'
        if fmt == "openai"
        else b'event: error\ndata: {"type": "error", "error": {"type": "api_error",'
        b' "message": "bad key ' + secret.encode() + b'"}}\n\n'
    )
    upstream.enqueue(Malformed(event, content_type="text/event-stream"))
    streamed = raw_stream(sqlite_gateway, fmt, key, minimal_body(fmt))
    assert "bad key" in streamed.text and secret not in streamed.text


# ---------------------------------------------------------------------------- client strings
@pytest.mark.parametrize("size", [257, 5 * 1024 * 1024], ids=["just over", "5 MiB"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_a_model_name_over_the_limit_is_refused_and_never_stored(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream, fmt: str, size: int
) -> None:
    key = issue_key(sqlite_gateway)
    body = minimal_body(fmt)
    body["model"] = "m" * size
    response = raw_post(sqlite_gateway, fmt, key, body)
    assert response.status_code == 400
    error = memvault_error(fmt, response)
    assert error["code"] == "invalid_model"
    assert len(response.content) < 2_000  # the refusal does not echo it back
    assert upstream.requests == []
    # A name at the limit is taken.
    body["model"] = "m" * 256
    assert raw_post(sqlite_gateway, fmt, key, body).status_code == 200
    [record] = wait_for_usage(sqlite_gateway, 1)
    assert record.model == "m" * 256


def test_the_sdks_see_a_long_model_name_as_a_bad_request(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    with pytest.raises(openai.BadRequestError) as oerr:
        openai_client(sqlite_gateway, key).chat.completions.create(
            model="m" * 1000, messages=[{"role": "user", "content": "hi"}]
        )
    assert oerr.value.code == "invalid_model" and oerr.value.param == "model"
    with pytest.raises(anthropic.BadRequestError) as aerr:
        anthropic_client(sqlite_gateway, key).messages.create(
            model="m" * 1000, max_tokens=5, messages=[{"role": "user", "content": "hi"}]
        )
    assert anthropic_error(aerr.value.body)["code"] == "invalid_model"
    assert upstream.requests == []


def test_error_shapes_the_protocol_helpers_expect(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    # The OpenAI shape carries param and code beside message and type, as OpenAI's does.
    key = issue_key(sqlite_gateway)
    response = httpx.post(
        sqlite_gateway.url + path_of("openai"),
        content=json.dumps({"model": "gpt-4o-mini", "messages": []}),
        headers={"authorization": f"Bearer {key}", "content-type": "application/json"},
    )
    error = openai_error(response.json())
    assert list(error) == ["message", "type", "param", "code"]
    assert (error["type"], error["param"], error["code"]) == (
        "invalid_request_error",
        "messages",
        "invalid_messages",
    )
