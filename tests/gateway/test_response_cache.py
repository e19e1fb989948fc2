"""The response cache on the gateway, with the official SDKs against the scripted
upstream: opt-in per key or per request, hits that cost nothing and never reach the
provider, streamed answers replayed, and every request with memory attached bypassing it.
"""

from __future__ import annotations

import time
from typing import Any

import openai
import pytest

from memvault.domain.models import KeySettings, Toggles, UsageRecord
from memvault.services.context import Caller
from tests.gateway.conftest import anthropic_client, openai_client
from tests.support.people import make_org
from tests.support.servers import LiveServer
from tests.support.upstream import Fault, Reply, ScriptedUpstream

MESSAGES = [{"role": "user", "content": "Name three prime numbers."}]


def owner(server: LiveServer, org: str = "acme") -> Caller:
    return make_org(server.services, org).owner.caller


def key(server: LiveServer, caller: Caller, *, cache_ttl: int | None, **toggles: bool) -> str:
    issued = server.services.keys.create_key(
        caller,
        name="app",
        toggles=Toggles(recall=toggles.get("recall", False), tools=toggles.get("tools", False)),
        settings=KeySettings(cache_ttl_seconds=cache_ttl),
    )
    return issued.secret


def ask(
    server: LiveServer, secret: str, headers: dict[str, str] | None = None, **extra: Any
) -> Any:
    return openai_client(server, secret).chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=extra.pop("messages", MESSAGES),
        extra_headers=headers or {},
        **extra,
    )


def usage(server: LiveServer, account: str, count: int) -> list[UsageRecord]:
    deadline = time.monotonic() + 10
    while True:
        found = server.services.ledger.usage_between(account, "2000-01-01", "2999-12-31")
        if len(found) >= count:
            return sorted(found, key=lambda r: r.started_at)
        assert time.monotonic() < deadline, f"{len(found)} usage records, not {count}"
        time.sleep(0.05)


def test_a_key_with_the_cache_answers_a_repeat_without_the_provider(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    secret = key(gateway, owner(gateway), cache_ttl=600)
    upstream.enqueue(Reply(text="2, 3 and 5.", input_tokens=12, output_tokens=6))
    first = ask(gateway, secret)
    assert first.headers["x-cache"] == "miss"
    usage(gateway, "acme", 1)  # the miss is stored once its answer is settled
    second = ask(gateway, secret)
    assert second.headers["x-cache"] == "hit"
    assert second.parse().choices[0].message.content == "2, 3 and 5."
    assert second.text == first.text  # byte for byte what the first client got
    assert len(upstream.requests) == 1
    # The fake clock stands still: the records are told apart by their outcome.
    hit, miss = sorted(usage(gateway, "acme", 2), key=lambda r: r.outcome)
    assert (miss.outcome, miss.cost_micros > 0, miss.cache_hits) == ("ok", True, 0)
    assert (hit.outcome, hit.cost_micros, hit.input_tokens, hit.cache_hits) == (
        "cache_hit",
        0,
        0,
        1,
    )
    assert hit.cache_saved_tokens == 18
    assert gateway.services.ledger.get_balance("acme").held_micros == 0  # hold released
    # Another question, or the same one with another parameter, is another entry.
    assert ask(gateway, secret, temperature=0.5).headers["x-cache"] == "miss"
    assert len(upstream.requests) == 2


def test_x_cache_asks_or_refuses_per_request(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    caller = owner(gateway)
    plain, cached = key(gateway, caller, cache_ttl=None), key(gateway, caller, cache_ttl=600)
    assert "x-cache" not in ask(gateway, plain).headers  # not asked for: no cache at all
    assert ask(gateway, plain, {"x-cache": "on"}).headers["x-cache"] == "miss"
    usage(gateway, "acme", 2)
    assert ask(gateway, plain, {"x-cache": "on"}).headers["x-cache"] == "hit"
    off = ask(gateway, cached, {"x-cache": "off"})
    assert "x-cache" not in off.headers
    assert len(upstream.requests) == 3


def test_answers_never_cross_organisations(gateway: LiveServer, upstream: ScriptedUpstream) -> None:
    a = key(gateway, owner(gateway, "acme"), cache_ttl=600)
    b = key(gateway, owner(gateway, "globex"), cache_ttl=600)
    ask(gateway, a)
    usage(gateway, "acme", 1)
    assert ask(gateway, b).headers["x-cache"] == "miss"
    assert len(upstream.requests) == 2


def test_an_expired_answer_is_asked_again(gateway: LiveServer, upstream: ScriptedUpstream) -> None:
    secret = key(gateway, owner(gateway), cache_ttl=60)
    ask(gateway, secret)
    usage(gateway, "acme", 1)
    gateway.clock.advance(61)
    assert ask(gateway, secret).headers["x-cache"] == "miss"
    assert len(upstream.requests) == 2


def test_a_failed_answer_is_never_cached(gateway: LiveServer, upstream: ScriptedUpstream) -> None:
    secret = key(gateway, owner(gateway), cache_ttl=600)
    upstream.enqueue(Fault(status=500))
    client = openai_client(gateway, secret).with_options(max_retries=0)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)  # type: ignore[arg-type]
    usage(gateway, "acme", 1)
    assert ask(gateway, secret).headers["x-cache"] == "miss"
    assert len(upstream.requests) == 2


def test_a_streamed_answer_is_replayed_as_a_stream(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    secret = key(gateway, owner(gateway), cache_ttl=600)
    upstream.enqueue(Reply(text="Two, three and five."))

    def streamed() -> tuple[str, str]:
        raw = openai_client(gateway, secret).chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=MESSAGES, stream=True
        )
        text = "".join(
            chunk.choices[0].delta.content or "" for chunk in raw.parse() if chunk.choices
        )
        return raw.headers["x-cache"], text

    assert streamed() == ("miss", "Two, three and five.")
    usage(gateway, "acme", 1)
    assert streamed() == ("hit", "Two, three and five.")
    assert len(upstream.requests) == 1
    # A whole answer to the same messages is another entry (its bytes differ).
    assert ask(gateway, secret).headers["x-cache"] == "miss"


def test_the_anthropic_format_is_cached_too(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    secret = key(gateway, owner(gateway), cache_ttl=600)

    def message() -> Any:
        return anthropic_client(gateway, secret).messages.with_raw_response.create(
            model="claude-haiku-4-5",
            max_tokens=50,
            messages=MESSAGES,  # type: ignore[arg-type]
        )

    assert message().headers["x-cache"] == "miss"
    usage(gateway, "acme", 1)
    assert message().headers["x-cache"] == "hit"
    assert len(upstream.requests) == 1


@pytest.mark.parametrize("memory", ["recall", "tools", "x-mem-id"])
def test_a_request_with_memory_attached_bypasses_the_cache(
    gateway: LiveServer, upstream: ScriptedUpstream, memory: str
) -> None:
    caller = owner(gateway)
    gateway.services.vault.write(caller, "primes.md", "Three prime numbers: 2, 3 and 5.")
    secret = key(gateway, caller, cache_ttl=600, recall=memory == "recall", tools=memory == "tools")
    headers = {"x-mem-id": "someone"} if memory == "x-mem-id" else {}
    for _ in range(2):
        answer = ask(gateway, secret, headers)
        assert answer.headers["x-cache"] == "bypass (memory)"
    assert len(upstream.requests) == 2


def test_the_responses_format_is_cached_too(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    secret = key(gateway, owner(gateway), cache_ttl=600)

    def respond() -> Any:
        return openai_client(gateway, secret).responses.with_raw_response.create(
            model="gpt-4o-mini", input="Name three prime numbers."
        )

    first = respond()
    assert first.headers["x-cache"] == "miss"
    usage(gateway, "acme", 1)
    second = respond()
    assert second.headers["x-cache"] == "hit"
    assert second.parse().id == first.parse().id  # the same stored response, continuable
    assert second.parse().output_text == first.parse().output_text
    assert len(upstream.requests) == 1
