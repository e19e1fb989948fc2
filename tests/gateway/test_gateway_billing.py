"""Money through the gateway: reservation before dispatch, release after, usage records."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest

from memvault.domain.pricing import cost_micros
from memvault.errors import NotFound
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


# ---------------------------------------------------------------------- streams cut short
# A reply that sends its first events at once, then holds the rest back (a model still
# generating) until the client goes away: what memvault received is known exactly.
HEAD_EVENTS = 30
LONG_TEXT = "word " * 400


def cut_reply(**extra: object) -> Reply:
    return Reply(
        text=LONG_TEXT,
        text_chunk_chars=5,
        pause_after_events=HEAD_EVENTS,
        input_tokens=100,
        output_tokens=400,
        **extra,  # type: ignore[arg-type]
    )


def test_an_openai_stream_the_client_drops_is_billed_what_was_consumed(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    billing = gateway.services.billing
    key = issue_key(gateway, spend_cap_micros=1_000_000)
    upstream.enqueue(cut_reply())
    stream = openai_client(gateway, key).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "talk"}], stream=True
    )
    for _ in stream:
        break
    upstream.wait_for_pause()  # the thirty chunks are on their way to memvault
    stream.close()  # the client hangs up after reading its first chunk

    [record] = wait_for_usage(gateway, 1)
    assert record.outcome == "client_disconnected" and record.estimated
    # The prompt as counted when the money was held, and the text memvault had received
    # from the upstream (about thirty chunks), not the one chunk the client read.
    assert record.input_tokens > 0
    assert record.output_tokens >= HEAD_EVENTS - 2
    assert record.cost_micros == cost_micros(
        billing.price(MODEL), record.input_tokens, record.output_tokens
    )
    assert record.cost_micros > 0
    # The spend cap counts the same numbers.
    key_id = gateway.services.accounts.authenticate(key).id
    assert billing.key_spent("local", key_id) == record.cost_micros
    assert billing.balance("local").held_micros == 0
    [seen] = upstream.requests
    assert seen.json["stream_options"] == {"include_usage": True}


def test_a_dropped_stream_counts_the_memory_calls_the_client_never_saw(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(gateway, tools=True)
    # A memory write streams in (buffered, never sent to the client) when it hangs up.
    markdown = "remember this " * 200
    upstream.enqueue(
        Reply(
            tool_calls=[ToolCall("memory_write", {"path": "cut.md", "markdown": markdown})],
            args_chunk_chars=40,
            pause_after_events=40,
            input_tokens=100,
            output_tokens=900,
        )
    )
    body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "save"}]}
    with (
        httpx.Client(base_url=gateway.url, timeout=20) as http,
        http.stream(
            "POST", "/v1/chat/completions", json=body, headers={"authorization": f"Bearer {key}"}
        ) as response,
    ):
        for line in response.iter_lines():
            assert "memory_write" not in line
            if line.startswith("data: "):
                break  # the first chunk (the role): then the client hangs up
        upstream.wait_for_pause()  # once the fragments before the pause are sent
    [record] = wait_for_usage(gateway, 1)
    assert record.outcome == "client_disconnected" and record.estimated
    # The client saw nothing but the role. Up to 38 fragments of the call's arguments were
    # sent before the pause: what reached memvault's socket is billed, read or not when the
    # hang-up reached it, so the count is more than the nothing (OpenAI) or the 1-token
    # placeholder (Anthropic) billed before.
    assert record.output_tokens > 1
    assert record.input_tokens > 0 and record.cost_micros > 0
    assert record.rounds == 0 and record.memory_calls == {}  # the cut call never ran
    with pytest.raises(NotFound):
        gateway.services.vault.read(USER, "cut.md")


def test_an_anthropic_stream_the_client_drops_counts_more_than_its_placeholder(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(gateway)
    upstream.enqueue(cut_reply())
    client = anthropic_client(gateway, key)
    with client.messages.stream(
        model="claude-haiku-4-5", max_tokens=1000, messages=[{"role": "user", "content": "talk"}]
    ) as stream:
        for _ in stream:
            break  # message_start only: its output_tokens is Anthropic's placeholder 1
        upstream.wait_for_pause()
    [record] = wait_for_usage(gateway, 1)
    assert record.outcome == "client_disconnected" and record.estimated
    assert record.input_tokens == 100  # message_start said so
    assert record.output_tokens >= HEAD_EVENTS - 6  # the text deltas received
    assert record.cost_micros > 0


def test_a_stream_whose_usage_never_comes_is_billed_an_estimate(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(gateway)
    # A provider that ignores stream_options.include_usage: the stream ends cleanly
    # without the usage chunk.
    upstream.enqueue(Reply(text="four words of text", usage_chunk=False))
    chunks = list(
        openai_client(gateway, key).chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "hi"}], stream=True
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
        "four words of text"
    )
    [record] = wait_for_usage(gateway, 1)
    assert record.outcome == "ok" and record.estimated
    assert record.input_tokens > 0 and record.output_tokens >= 4 and record.cost_micros > 0


def test_an_answer_with_its_usage_is_not_marked_estimated(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(gateway, tools=True)
    upstream.enqueue(Reply(text="a", input_tokens=5, output_tokens=1))
    upstream.enqueue(Reply(text="b", input_tokens=6, output_tokens=2))
    client = openai_client(gateway, key)
    client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "q"}])
    list(
        client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "q"}], stream=True
        )
    )
    records = wait_for_usage(gateway, 2)
    assert sorted((r.input_tokens, r.output_tokens, r.estimated) for r in records) == [
        (5, 1, False),
        (6, 2, False),
    ]


# ---------------------------------------------------------------------- numbers the ledger takes
@pytest.mark.parametrize("field", ["max_tokens", "max_completion_tokens"])
def test_a_huge_max_tokens_is_refused_with_400_before_anything_is_held(
    gateway: LiveServer, upstream: ScriptedUpstream, field: str
) -> None:
    billing = gateway.services.billing
    key = issue_key(gateway, tools=True)  # the account is unmetered: nothing refuses it first
    with pytest.raises(openai.BadRequestError) as caught:
        openai_client(gateway, key).chat.completions.create(
            model=MODEL,
            messages=[{"role": "user", "content": "hi"}],
            **{field: 10**30},  # type: ignore[arg-type]
        )
    assert caught.value.code == "invalid_max_tokens"
    with pytest.raises(anthropic.BadRequestError) as anthropic_caught:
        anthropic_client(gateway, key).messages.create(
            model="claude-haiku-4-5", max_tokens=10**30, messages=[{"role": "user", "content": "x"}]
        )
    body = anthropic_caught.value.body
    assert isinstance(body, dict)
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["code"] == "invalid_max_tokens"
    assert upstream.requests == []
    assert billing.balance("local").held_micros == 0
    # A large but plausible allowance is still taken.
    upstream.enqueue(Reply(text="fine"))
    answer = openai_client(gateway, key).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "hi"}], max_tokens=1_000_000
    )
    assert answer.choices[0].message.content == "fine"
