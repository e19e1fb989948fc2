"""Memory profiles on a key that also has the memory tools: the facts block goes ahead of
the user's message in every format, never into the vault's system note that the tools
add (chat completions inserts it after the leading system messages, ahead of the
question)."""

from __future__ import annotations

from typing import Any

from memvault.domain.models import Toggles
from memvault.tools import VAULT_INSTRUCTIONS
from tests.gateway.conftest import anthropic_client, openai_client
from tests.gateway.test_memory_profiles import FACTS_OPEN, STABLE_OPEN, memory, org_of
from tests.support.servers import LiveServer
from tests.support.upstream import ScriptedUpstream

QUESTION = "What should Pixel eat?"


def test_facts_go_ahead_of_the_question_with_the_memory_tools_on(
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
    key = gateway.services.keys.create_key(
        me, name="app", toggles=Toggles(recall=False, tools=True)
    ).secret
    headers = {"x-mem-id": "user-1"}
    openai_client(gateway, key).chat.completions.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": "Be terse."},
            {"role": "user", "content": QUESTION},
        ],
        extra_headers=headers,
    )
    anthropic_client(gateway, key).messages.create(
        model="claude-haiku-4-5",
        max_tokens=64,
        messages=[{"role": "user", "content": QUESTION}],
        extra_headers=headers,
    )
    openai_client(gateway, key).responses.create(
        model="gpt-4.1-mini", input=QUESTION, extra_headers=headers
    )
    chat, messages, responses = (r.json for r in upstream.requests)
    assert isinstance(chat, dict) and isinstance(messages, dict) and isinstance(responses, dict)
    system, note, user = chat["messages"]
    assert system["content"].startswith(STABLE_OPEN) and note["content"] == VAULT_INSTRUCTIONS
    assert user["content"].startswith(FACTS_OPEN) and user["content"].endswith(QUESTION)
    last: Any = messages["messages"][-1]["content"]
    assert last.startswith(FACTS_OPEN) and last.endswith(QUESTION)
    assert responses["input"].startswith(FACTS_OPEN) and responses["input"].endswith(QUESTION)
