"""Recall's search mode per key: a key's recall_mode overrides the vault's default (hybrid
when vectors are on), so a key set to keyword recalls by words alone."""

from __future__ import annotations

from tests.gateway.conftest import issue_key, openai_client
from tests.support.servers import LiveServer
from tests.support.upstream import ScriptedUpstream

STORAGE = (
    "# Storage\n\nAfter comparing options the team settled on PostgreSQL; MySQL lacked the JSON"
    " columns and SQLite the concurrent writers.\n"
)


def ask(server: LiveServer, key: str, text: str) -> int:
    raw = openai_client(server, key).chat.completions.with_raw_response.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": text}]
    )
    return int(raw.headers["x-memory-recalled"])


def test_a_keys_recall_mode_overrides_the_vaults_default(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    c = sqlite_gateway.client()
    assert c.put("/v1/notes/decisions/storage.md", json={"markdown": STORAGE}).status_code == 201
    question = "Which database did we choose?"

    default = issue_key(sqlite_gateway, recall=True)
    assert ask(sqlite_gateway, default, question) == 1  # hybrid: found by meaning
    last = upstream.requests[-1].json["messages"][-1]["content"]
    assert "PostgreSQL" in last and '<note path="decisions/storage.md"' in last

    by_words = issue_key(sqlite_gateway, recall=True, recall_mode="keyword")
    assert ask(sqlite_gateway, by_words, question) == 0  # none of its words is in the note
    assert upstream.requests[-1].json["messages"][-1]["content"] == question
