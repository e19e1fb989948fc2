"""Search modes on every surface: GET /v1/search's mode and min_score, the CLI's --mode and
--min-score, memory_search over MCP. Each passes them on, reports the mode that ran (and
why, when it fell back) and names the chunk a hybrid hit matched; bad values are a 400
invalid_input (a refused tool call) naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_types import CallToolResult

from tests.api.helpers import url
from tests.cli.helpers import clean_env, invoke_memvault
from tests.mcp.helpers import connect, run, text
from tests.support.servers import LiveServer

NOTES = {
    "decisions/storage.md": (
        "# Storage\n\nAfter comparing options the team settled on PostgreSQL; MySQL lacked"
        " the JSON columns and SQLite the concurrent writers.\n"
    ),
    "notes/cooking.md": "# Cooking\n\nBake the sourdough at 230 degrees for forty minutes.\n",
}
PARAPHRASE = "which database did we choose"


@pytest.fixture
def server(live_server: LiveServer) -> LiveServer:
    c = live_server.client()
    for path, markdown in NOTES.items():
        assert c.put(url(path), json={"markdown": markdown}).status_code in (200, 201)
    return live_server


def test_rest_search_by_meaning_names_the_mode_and_the_chunk(server: LiveServer) -> None:
    c = server.client()
    keyword = c.get("/v1/search", params={"q": PARAPHRASE, "mode": "keyword"}).json()
    assert keyword["mode"] == "keyword" and keyword["fallback"] is None
    assert keyword["results"] == []

    default = c.get("/v1/search", params={"q": PARAPHRASE}).json()
    assert default["mode"] == "hybrid"  # vectors are on
    [hit] = default["results"]
    assert hit["path"] == "decisions/storage.md" and 0.4 <= hit["score"] < 1
    assert hit["chunk"]["heading"] == "Storage"
    note = c.get(url(hit["path"])).json()["markdown"]
    start, length = hit["chunk"]["offset"], hit["chunk"]["length"]
    assert "PostgreSQL" in note[start : start + length]

    strict = c.get("/v1/search", params={"q": PARAPHRASE, "mode": "semantic", "min_score": 0.99})
    assert strict.status_code == 200 and strict.json()["results"] == []
    loose = c.get("/v1/search", params={"q": PARAPHRASE, "mode": "semantic", "min_score": 0})
    # Every note scores at 0: the paraphrased one first.
    assert [h["path"] for h in loose.json()["results"]] == [
        "decisions/storage.md",
        "notes/cooking.md",
    ]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"mode": "fuzzy"}, "mode"),
        ({"mode": ""}, "mode"),
        ({"min_score": "1.5"}, "min_score"),
        ({"min_score": "-0.1"}, "min_score"),
        ({"min_score": "high"}, "min_score"),
    ],
)
def test_bad_modes_and_cut_offs_are_a_400_naming_the_field(
    server: LiveServer, params: dict[str, str], field: str
) -> None:
    r = server.client().get("/v1/search", params={"q": "sourdough", **params})
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["type"] == "invalid_request" and error["code"] == "invalid_input"
    assert field in error["message"]


def test_the_cli_passes_mode_and_min_score_on(server: LiveServer, tmp_path: Path) -> None:
    env = clean_env(MEMVAULT_API_KEY=server.admin_key)
    base = ("search", PARAPHRASE, "--url", server.url, "--json")
    found = json.loads(
        invoke_memvault(
            *base, "--mode", "hybrid", "--min-score", "0.4", env=env, cwd=tmp_path
        ).stdout
    )
    assert [n["path"] for n in found] == ["decisions/storage.md"]
    # The note shape (id, title, path, tags, body, score) and where it matched.
    assert {"id", "title", "path", "tags", "body", "score"} <= set(found[0])
    assert found[0]["chunk"]["heading"] == "Storage"
    keyword = invoke_memvault(*base, "--mode", "keyword", env=env, cwd=tmp_path)
    assert json.loads(keyword.stdout) == []
    strict = invoke_memvault(*base, "--min-score", "0.99", env=env, cwd=tmp_path)
    assert json.loads(strict.stdout) == []
    bad = invoke_memvault(*base, "--mode", "fuzzy", env=env, cwd=tmp_path)
    assert bad.code == 2 and "fuzzy" in bad.stderr


def test_memory_search_over_mcp_takes_the_same_options(server: LiveServer) -> None:
    async def call(arguments: dict[str, object]) -> CallToolResult:
        async with connect(server.url, server.admin_key) as client:
            return await client.call_tool("memory_search", arguments)

    hybrid = run(lambda: call({"query": PARAPHRASE, "mode": "hybrid", "min_score": 0.4}))
    assert not hybrid.is_error
    shown = text(hybrid)
    assert "decisions/storage.md" in shown and "(hybrid search)" in shown
    assert "matched under 'Storage' at offset" in shown
    assert shown.count("decisions/") == 1 and "cooking" not in shown  # the cut-off held

    keyword = run(lambda: call({"query": PARAPHRASE, "mode": "keyword"}))
    assert not keyword.is_error and "No notes match" in text(keyword)
    refused = run(lambda: call({"query": PARAPHRASE, "mode": "fuzzy"}))
    assert refused.is_error and "mode" in text(refused)
    refused = run(lambda: call({"query": PARAPHRASE, "min_score": 2}))
    assert refused.is_error and "min_score" in text(refused)


def test_a_keys_recall_mode_is_set_shown_and_reset(live_server: LiveServer) -> None:
    c = live_server.client()
    created = c.post("/v1/keys", json={"name": "words", "recall": True, "recall_mode": "keyword"})
    assert created.status_code == 201, created.text
    key = created.json()
    assert key["recall_mode"] == "keyword"
    patched = c.patch(f"/v1/keys/{key['id']}", json={"recall_mode": "semantic"}).json()
    assert patched["recall_mode"] == "semantic"
    kept = c.patch(f"/v1/keys/{key['id']}", json={"recall_notes": 3}).json()
    assert kept["recall_mode"] == "semantic"  # left out: unchanged
    reset = c.patch(f"/v1/keys/{key['id']}", json={"recall_mode": "default"}).json()
    assert reset["recall_mode"] is None
    assert c.get("/v1/keys").json()  # listed without error
    bad = c.patch(f"/v1/keys/{key['id']}", json={"recall_mode": "fuzzy"})
    assert bad.status_code == 400 and "recall_mode" in bad.json()["error"]["message"]


def test_the_cli_sets_a_keys_recall_mode(live_server: LiveServer, tmp_path: Path) -> None:
    env = clean_env(MEMVAULT_API_KEY=live_server.admin_key)
    base = ("--url", live_server.url, "--json")
    made = invoke_memvault(
        "keys",
        "create",
        "words",
        "--recall",
        "--recall-mode",
        "keyword",
        *base,
        env=env,
        cwd=tmp_path,
    )
    created = json.loads(made.stdout)
    assert created["recall_mode"] == "keyword"
    reset = invoke_memvault(
        "keys", "toggle", created["id"], "--recall-mode", "default", *base, env=env, cwd=tmp_path
    )
    assert json.loads(reset.stdout)["recall_mode"] is None
    bad = invoke_memvault(
        "keys", "toggle", created["id"], "--recall-mode", "fuzzy", *base, env=env, cwd=tmp_path
    )
    assert bad.code != 0 and "recall_mode" in bad.stderr
