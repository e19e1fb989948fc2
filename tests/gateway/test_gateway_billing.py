"""Money through the gateway: reservation before dispatch, release after, usage records."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest

from memvault.domain.pricing import cost_micros
from memvault.services.context import Caller, Surface
from tests.gateway.conftest import anthropic_client, issue_key, openai_client, wait_for_usage
from tests.support.servers import LiveServer
from tests.support.upstream import Reply, ScriptedUpstream, ToolCall

USER = Caller(account_id="local", surface=Surface.REST)
MODEL = "gpt-4o-mini"
SECRET_NOTE = "The vault code is swordfish-42."


def test_insufficient_balance_is_refused_before_dispatch(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    gateway.services.billing.set_balance("local", 10)  # ten micro-dollars
    key = issue_key(gateway, tools=True)
    with pytest.raises(openai.APIStatusError) as caught:
        openai_client(gateway, key).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.status_code == 402
    assert caught.value.code == "insufficient_balance"
    with pytest.raises(anthropic.APIStatusError) as anthropic_caught:
        anthropic_client(gateway, key).messages.create(
            model="claude-haiku-4-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    assert anthropic_caught.value.status_code == 402
    body = anthropic_caught.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["code"] == "insufficient_balance"
    assert upstream.requests == []
    assert gateway.services.billing.balance("local").balance_micros == 10


def test_the_spend_cap_counts_the_injected_recall(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    vault = sqlite_gateway.services.vault
    for i in range(5):
        vault.write(USER, f"launch/{i}.md", "launch plan " + "detail " * 300)
    # Without recall the request would cost ~1 micro-dollar to hold; the recall block adds
    # ~1,800 tokens, which the cap (checked on the assembled request) cannot hold.
    key = issue_key(sqlite_gateway, recall=True, spend_cap_micros=150, recall_tokens=2000)
    client = openai_client(sqlite_gateway, key)
    plain = client.chat.completions.create(
        model=MODEL,
        max_tokens=10,
        messages=[{"role": "user", "content": "launch plan"}],
        extra_headers={"x-memory-recall": "off"},
    )
    assert plain.choices[0].message.content == "ok"
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(
            model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "launch plan"}]
        )
    assert caught.value.status_code == 402
    assert caught.value.code == "spend_cap_exceeded"
    assert len(upstream.requests) == 1


def test_a_request_is_charged_what_upstream_reported_over_every_round(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    billing = gateway.services.billing
    billing.set_balance("local", 1_000_000)
    gateway.services.vault.write(USER, "facts/Secret.md", SECRET_NOTE)
    key = issue_key(gateway, recall=True, tools=True)
    upstream.enqueue(
        Reply(
            tool_calls=[ToolCall("memory_read", {"path": "facts/Secret.md"})],
            input_tokens=1000,
            output_tokens=20,
        ),
        Reply(text="Done.", input_tokens=1200, output_tokens=10),
    )
    client = openai_client(gateway, key)
    client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "what is the vault code?"}]
    )
    [record] = wait_for_usage(gateway, 1)  # written after the hold is settled
    expected = cost_micros(billing.price(MODEL), 2200, 30)
    balance = billing.balance("local")
    assert balance.balance_micros == 1_000_000 - expected
    assert balance.held_micros == 0
    assert (record.input_tokens, record.output_tokens, record.rounds) == (2200, 30, 1)
    assert record.memory_calls == {"memory_read": 1}
    assert record.recalled_notes == 1 and record.injected_tokens > 0
    assert record.cost_micros == expected and record.status == 200 and record.outcome == "ok"
    assert record.model == MODEL and record.api_format == "openai"
    assert "swordfish" not in repr(record)  # never note content
    assert "vault code" not in repr(record)  # never prompt text


def test_an_upstream_failure_releases_the_hold(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    from tests.support.upstream import Fault

    billing = gateway.services.billing
    billing.set_balance("local", 1_000_000)
    key = issue_key(gateway, tools=True)
    upstream.enqueue(Fault(status=503))
    with pytest.raises(openai.APIStatusError) as caught:
        openai_client(gateway, key).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.status_code == 502
    assert billing.balance("local").balance_micros == 1_000_000
    assert billing.balance("local").held_micros == 0
    [record] = wait_for_usage(gateway, 1)
    assert record.status == 502 and record.cost_micros == 0


def test_a_client_that_hangs_up_mid_stream_has_its_hold_released(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    billing = sqlite_gateway.services.billing
    billing.set_balance("local", 1_000_000)
    key = issue_key(sqlite_gateway)
    upstream.enqueue(
        Reply(
            text="word " * 400,
            text_chunk_chars=5,
            chunk_delay=0.01,
            input_tokens=100,
            output_tokens=400,
        )
    )
    body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "talk"}]}
    with (
        httpx.Client(base_url=sqlite_gateway.url, timeout=20) as http,
        http.stream(
            "POST", "/v1/chat/completions", json=body, headers={"authorization": f"Bearer {key}"}
        ) as response,
    ):
        assert response.status_code == 200
        for _ in response.iter_lines():
            break  # hang up after the first event
    [record] = wait_for_usage(sqlite_gateway, 1)
    assert record.outcome == "client_disconnected"
    balance = billing.balance("local")
    assert balance.held_micros == 0
    assert balance.balance_micros is not None and balance.balance_micros > 1_000_000 - 1_000


def test_usage_report_aggregates_gateway_requests_by_day_and_key(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(gateway, tools=True)
    upstream.enqueue(
        Reply(
            tool_calls=[ToolCall("memory_search", {"query": "x"})], input_tokens=10, output_tokens=2
        ),
        Reply(text="a", input_tokens=11, output_tokens=3),
        Reply(text="b", input_tokens=5, output_tokens=1),
    )
    client = openai_client(gateway, key)
    for _ in range(2):
        client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "q"}])
    wait_for_usage(gateway, 2)
    with gateway.client() as admin:
        report = admin.get("/v1/usage", params={"from": "2026-01-01", "to": "2026-12-31"}).json()
    [day] = report["days"]
    assert day["requests"] == 2
    assert (day["input_tokens"], day["output_tokens"], day["rounds"]) == (26, 6, 1)
    assert day["memory_calls"] == {"memory_search": 1}
