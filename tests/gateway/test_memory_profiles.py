"""Memory profiles (memIDs) on gateway requests, with the official SDKs against the
scripted upstream, on both backends: precedence, dedupe, key collapse, the budget and
dropped lines, the applied header, silent failures, the owner-only attach rule,
retention on read, the spend cap after injection and the usage record."""

from __future__ import annotations

import copy
import time
from typing import Any

import anthropic
import openai
import pytest

from memvault.domain.models import KeySettings, Toggles, UsageRecord
from memvault.domain.profiles import FACTS_SOURCE, STABLE_SOURCE, ItemType, ProfilePatch
from memvault.services.context import Caller
from tests.gateway.conftest import anthropic_client, openai_client
from tests.support.people import Org, make_org
from tests.support.servers import LiveServer
from tests.support.upstream import ScriptedUpstream

STABLE_OPEN = f'<memory source="{STABLE_SOURCE}">'
FACTS_OPEN = f'<memory source="{FACTS_SOURCE}">'
QUESTION = "What should I feed my dog Pixel tonight?"
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": QUESTION},
]


def gateway_usage(server: LiveServer, count: int) -> list[UsageRecord]:
    """acme's gateway usage records once ``count`` exist (written after the answer)."""
    deadline = time.monotonic() + 10
    while True:
        found = [
            r
            for r in server.services.ledger.usage_between("acme", "2000-01-01", "2999-12-31")
            if r.api_format != "embeddings"
        ]
        if len(found) >= count:
            return found
        assert time.monotonic() < deadline, f"expected {count} usage records, found {len(found)}"
        time.sleep(0.05)


def org_of(server: LiveServer) -> Org:
    return make_org(server.services, "acme")


def plain_key(server: LiveServer, caller: Caller, **settings: Any) -> str:
    """A key of the caller's with no memory toggles (only profiles are in play)."""
    issued = server.services.keys.create_key(
        caller,
        name="app",
        toggles=Toggles(recall=False, tools=False),
        settings=KeySettings(**settings) if settings else None,
    )
    return issued.secret


def memory(
    server: LiveServer, caller: Caller, slug: str, *items: tuple[str, str, str | None]
) -> None:
    profiles = server.services.profiles
    profiles.create(caller, slug=slug, name=slug)
    for item_type, text, key in items:
        profiles.add_item(caller, slug, item_type=ItemType(item_type), text=text, key=key)


def chat(server: LiveServer, key: str, mem_ids: str | None, **extra: Any) -> Any:
    headers = {"x-mem-id": mem_ids} if mem_ids is not None else {}
    return openai_client(server, key).chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=copy.deepcopy(extra.pop("messages", CONVERSATION)),
        extra_headers=headers,
        **extra,
    )


def sent_system(upstream: ScriptedUpstream, index: int = 0) -> str:
    first = upstream.requests[index].json["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def sent_user(upstream: ScriptedUpstream, index: int = 0) -> str:
    return str(upstream.requests[index].json["messages"][-1]["content"])


def test_precedence_dedupe_key_collapse_and_placement(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    org = org_of(gateway)
    me = org.member.caller
    memory(
        gateway,
        me,
        "user-1",
        ("guardrail", "Never recommend chocolate for dogs.", None),
        ("preference", "Answer in French.", "language"),
        ("fact", "The user's dog Pixel is allergic to chicken.", None),
    )
    memory(
        gateway,
        me,
        "team",
        ("guardrail", "Never recommend chocolate for dogs.", None),  # a duplicate
        ("guardrail", "Cite a vet for medical advice.", None),
        ("preference", "Answer in German.", "language"),  # collapses to user-1's
        ("preference", "Be brief.", "tone"),
        ("fact", "The office closes at six.", None),
    )
    key = plain_key(gateway, me)
    raw = chat(gateway, key, "user-1, team")
    assert raw.headers["x-memory-applied"] == "user-1,team"
    system = sent_system(upstream)
    block, _, rest = system.partition("</memory>")
    assert block.startswith(STABLE_OPEN)
    assert rest == "\n\nYou are a helpful assistant."  # the client's system text follows
    assert block.count("Never recommend chocolate for dogs.") == 1
    assert "Cite a vet for medical advice." in block
    assert '<preference key="language">Answer in French.</preference>' in block
    assert "German" not in system
    assert '<preference key="tone">Be brief.</preference>' in block
    user = sent_user(upstream)
    facts, _, question = user.rpartition("\n\n")
    assert question == QUESTION
    assert facts.startswith(FACTS_OPEN) and facts.endswith("</memory>")
    assert "Pixel is allergic to chicken." in facts
    assert "office closes" not in facts  # not relevant to the question

    # The same request again: the blocks are byte for byte the same (prompt caching).
    chat(gateway, key, "user-1, team")
    assert sent_system(upstream, 1) == system and sent_user(upstream, 1) == user
    # Order is precedence: the other way round, German wins.
    chat(gateway, key, "team,user-1")
    assert '<preference key="language">Answer in German.</preference>' in sent_system(upstream, 2)


def test_silent_failures_and_the_owner_only_rule(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    org = org_of(gateway)
    memory(gateway, org.member.caller, "colleague", ("guardrail", "Speak like a pirate.", None))
    memory(gateway, org.admin.caller, "mine", ("guardrail", "Use metric units.", None))
    memory(gateway, org.admin.caller, "off", ("guardrail", "Be terse.", None))
    gateway.services.profiles.update(org.admin.caller, "off", ProfilePatch(active=False))
    # The admin can read the colleague's memory, but their key cannot attach it.
    assert gateway.services.profiles.get(org.admin.caller, gateway_id(gateway, org)).profile
    key = plain_key(gateway, org.admin.caller)
    raw = chat(gateway, key, "typo,colleague,off,mine,bad slug!")
    assert raw.status_code == 200
    assert raw.headers["x-memory-applied"] == "mine"
    system = sent_system(upstream)
    assert "Use metric units." in system
    assert "pirate" not in system and "terse" not in system
    # Nothing resolves: the header is still sent, empty; the request is untouched.
    raw = chat(gateway, key, "typo")
    assert raw.headers["x-memory-applied"] == ""
    assert upstream.requests[1].json["messages"] == CONVERSATION
    # No header: no applied header either.
    assert "x-memory-applied" not in chat(gateway, key, None).headers


def gateway_id(server: LiveServer, org: Org) -> str:
    rows = server.services.profiles.list_memories(org.admin.caller, q="colleague").rows
    return rows[0].profile.id


def test_a_failing_lookup_is_skipped_and_the_request_proceeds(
    gateway: LiveServer, upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    org = org_of(gateway)
    memory(gateway, org.member.caller, "u", ("guardrail", "Use metric units.", None))
    key = plain_key(gateway, org.member.caller)

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("storage down")

    monkeypatch.setattr(gateway.services.profiles.store, "owned_profiles", broken)
    raw = chat(gateway, key, "u")
    assert raw.status_code == 200
    assert raw.headers["x-memory-applied"] == ""
    assert upstream.requests[0].json["messages"] == CONVERSATION


def test_more_than_16_mem_ids_is_a_400_in_each_providers_shape(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    org = org_of(gateway)
    key = plain_key(gateway, org.member.caller)
    many = ",".join(f"m{i}" for i in range(17))
    with pytest.raises(openai.BadRequestError) as caught:
        chat(gateway, key, many)
    assert caught.value.code == "too_many_mem_ids"
    # Nothing was attached, and the header says so: it is sent whenever x-mem-id was.
    assert caught.value.response.headers["x-memory-applied"] == ""
    with pytest.raises(anthropic.BadRequestError) as refused:
        anthropic_client(gateway, key).messages.create(
            model="claude-haiku-4-5",
            max_tokens=50,
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={"x-mem-id": many},
        )
    body = refused.value.body
    assert isinstance(body, dict) and body["error"]["code"] == "too_many_mem_ids"
    assert not upstream.requests
    assert chat(gateway, key, ",".join(f"m{i}" for i in range(16))).status_code == 200


def test_anthropic_system_prompt_gets_the_block_first(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    org = org_of(gateway)
    memory(
        gateway,
        org.member.caller,
        "u",
        ("guardrail", "Use metric units.", None),
        ("fact", "Pixel the dog is allergic to chicken.", None),
    )
    key = plain_key(gateway, org.member.caller)
    client = anthropic_client(gateway, key)
    raw = client.messages.with_raw_response.create(
        model="claude-haiku-4-5",
        max_tokens=50,
        messages=[{"role": "user", "content": QUESTION}],
        extra_headers={"x-mem-id": "u"},
    )
    assert raw.headers["x-memory-applied"] == "u"
    sent = upstream.requests[0].json
    assert sent["system"].startswith(STABLE_OPEN)  # created: the client sent none
    assert "Pixel the dog is allergic" in sent["messages"][-1]["content"]
    client.messages.create(
        model="claude-haiku-4-5",
        max_tokens=50,
        system=[{"type": "text", "text": "Be kind."}],
        messages=[{"role": "user", "content": QUESTION}],
        extra_headers={"x-mem-id": "u"},
    )
    system = upstream.requests[1].json["system"]
    assert system[0]["text"].startswith(STABLE_OPEN)
    assert system[1] == {"type": "text", "text": "Be kind."}


def test_the_budget_drops_lines_and_an_all_dropped_memory_is_not_applied(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    org = org_of(gateway)
    me = org.member.caller
    long = "Prefer this. " * 150  # about 450 tokens a preference
    memory(gateway, me, "a", *[("preference", long + str(i), f"k{i}") for i in range(3)])
    memory(gateway, me, "b", ("preference", long + "b", "kb"))
    memory(gateway, me, "g", ("guardrail", "Always be honest. " * 100, None))
    key = plain_key(gateway, me)
    raw = chat(gateway, key, "a,b,g")
    # Three of a's fit the 1,500-token budget; b's would overflow and is dropped; the
    # guardrail ships whole, never counted.
    assert raw.headers["x-memory-applied"] == "a,g"
    system = sent_system(upstream)
    assert system.count("<preference ") == 3
    assert "Prefer this. " * 150 + "b" not in system
    assert system.count("Always be honest.") == 100
    # The budget is the key's (memory_tokens): at 600 only one of a's preferences fits.
    small = plain_key(gateway, me, memory_tokens=600)
    chat(gateway, small, "a,b,g")
    assert sent_system(upstream, 1).count("<preference ") == 1


def test_retention_expires_on_read_guardrails_stay_and_null_restores(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    org = org_of(gateway)
    me = org.member.caller
    profiles = gateway.services.profiles
    memory(
        gateway,
        me,
        "u",
        ("guardrail", "Use metric units.", None),
        ("preference", "Answer in French.", "language"),
        ("fact", "Pixel the dog is allergic to chicken.", None),
    )
    gateway.clock.advance(40 * 86_400)
    key = plain_key(gateway, me)
    profiles.update(me, "u", ProfilePatch(set_retention=True, retention_days=30))
    chat(gateway, key, "u")
    assert "French" not in sent_system(upstream) and "Use metric units." in sent_system(upstream)
    assert FACTS_OPEN not in sent_user(upstream)
    detail = profiles.get(me, "u")
    assert [i.item_type for i in detail.items] == [ItemType.GUARDRAIL]
    assert detail.item_counts == {"guardrail": 1, "preference": 0, "fact": 0}
    # Back to keeping forever: the items are current again (the sweep has not run).
    profiles.update(me, "u", ProfilePatch(set_retention=True, retention_days=None))
    chat(gateway, key, "u")
    assert "French" in sent_system(upstream, 1)
    assert "allergic to chicken" in sent_user(upstream, 1)
    # The sweep deletes what is past retention, never the guardrails.
    profiles.update(me, "u", ProfilePatch(set_retention=True, retention_days=30))
    assert profiles.sweep_expired(gateway.clock()) == 2
    profiles.update(me, "u", ProfilePatch(set_retention=True, retention_days=None))
    assert [i.text for i in profiles.get(me, "u").items] == ["Use metric units."]


def test_the_spend_cap_is_checked_after_injection_and_usage_is_attributed(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    org = org_of(gateway)
    me = org.owner.caller
    memory(
        gateway,
        me,
        "big",
        *[("guardrail", f"Rule {i}: always be honest. " * 70, None) for i in range(6)],
        ("fact", "Pixel the dog is allergic to chicken.", None),
    )
    services = gateway.services
    price = services.billing.price("gpt-4o-mini")
    # A cap that covers the bare request but not one with 2,400 more tokens in it.
    plain = plain_key(gateway, me)
    chat(gateway, plain, None, max_tokens=10)
    first = gateway_usage(gateway, 1)
    cap = first[0].cost_micros * 3 + int(price.input_per_million * 600 / 1_000_000) + 50
    key = plain_key(gateway, me, spend_cap_micros=cap)
    assert chat(gateway, key, None, max_tokens=10).status_code == 200
    with pytest.raises(openai.APIStatusError) as refused:
        chat(gateway, key, "big", max_tokens=10)
    assert refused.value.status_code == 402
    assert refused.value.response.headers["x-memory-applied"] == "big"
    # Attribution: a request with profiles records what each source added.
    chat(gateway, plain, "big", max_tokens=10)
    records = [r for r in gateway_usage(gateway, 3) if r.injected_profile_tokens]
    assert len(records) == 1
    record = records[0]
    assert record.injected_profile_tokens >= 2_400
    assert record.injected_recall_tokens == 0
    assert record.search_embed_calls == 1
    assert record.injected_tokens == record.injected_profile_tokens


def test_a_stream_gets_the_blocks_and_the_applied_header(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    org = org_of(gateway)
    memory(gateway, org.member.caller, "u", ("guardrail", "Use metric units.", None))
    key = plain_key(gateway, org.member.caller)
    client = openai_client(gateway, key)
    with client.chat.completions.with_streaming_response.create(
        model="gpt-4o-mini",
        messages=copy.deepcopy(CONVERSATION),
        stream=True,
        extra_headers={"x-mem-id": "u,nope"},
    ) as response:
        assert response.headers["x-memory-applied"] == "u"
        chunks = list(response.iter_lines())
    assert any("[DONE]" in line for line in chunks)
    assert sent_system(upstream).startswith(STABLE_OPEN)


def test_facts_sit_next_to_the_vault_recall_block(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    org = org_of(gateway)
    me = org.member.caller
    gateway.services.vault.write(
        org.owner.key_caller, "pets/Pixel.md", "# Pixel\nPixel eats salmon kibble for dinner."
    )
    memory(gateway, me, "u", ("fact", "Pixel the dog is allergic to chicken.", None))
    issued = gateway.services.keys.create_key(me, name="r", toggles=Toggles(recall=True))
    raw = chat(gateway, issued.secret, "u")
    assert raw.headers["x-memory-applied"] == "u" and raw.headers["x-memory-recalled"] == "1"
    # The facts block, then the recall block, then the question, in one message.
    facts, recall_tag, rest = sent_user(upstream).partition('\n\n<memory source="memvault vault">')
    assert recall_tag and facts.startswith(FACTS_OPEN) and "allergic to chicken" in facts
    assert "salmon kibble" in rest and rest.endswith(f"</memory>\n\n{QUESTION}")
