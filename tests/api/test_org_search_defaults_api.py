"""The organisation's default search mode and min_score over HTTP, the CLI and MCP: set
with PATCH /v1/org (owners and admins; tests/api/test_roles_api.py tries every role),
shown by GET /v1/org, and used by GET /v1/search and memory_search where the request
names none. A bad value is a 400 naming the field, and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


def test_the_org_default_mode_is_set_shown_used_and_reset(server: LiveServer) -> None:
    c = server.client()
    org = c.get("/v1/org").json()
    assert org["search_mode"] is None and org["min_score"] is None
    assert c.get("/v1/search", params={"q": PARAPHRASE}).json()["mode"] == "hybrid"

    patched = c.patch("/v1/org", json={"search_mode": "keyword"})
    assert patched.status_code == 200, patched.text
    assert patched.json()["search_mode"] == "keyword" and patched.json()["min_score"] is None
    found = c.get("/v1/search", params={"q": PARAPHRASE}).json()
    assert found["mode"] == "keyword" and found["results"] == []
    asked = c.get("/v1/search", params={"q": PARAPHRASE, "mode": "hybrid"}).json()
    assert [h["path"] for h in asked["results"]] == ["decisions/storage.md"]

    async def call(arguments: dict[str, object]) -> str:
        async with connect(server.url, server.admin_key) as client:
            return text(await client.call_tool("memory_search", arguments))

    assert "No notes match" in run(lambda: call({"query": PARAPHRASE}))
    assert "decisions/storage.md" in run(lambda: call({"query": PARAPHRASE, "mode": "hybrid"}))

    # A cut-off alone keeps the mode; "default" puts the deployment's back.
    cut = c.patch("/v1/org", json={"min_score": 0.99}).json()
    assert cut["search_mode"] == "keyword" and cut["min_score"] == 0.99
    reset = c.patch("/v1/org", json={"search_mode": "default"}).json()
    assert reset["search_mode"] is None and reset["min_score"] == 0.99
    strict = c.get("/v1/search", params={"q": PARAPHRASE}).json()
    assert strict["mode"] == "hybrid" and strict["results"] == []
    cleared = c.patch("/v1/org", json={"min_score": None}).json()
    assert cleared["min_score"] is None and cleared["name"] == org["name"]
    assert len(c.get("/v1/search", params={"q": PARAPHRASE}).json()["results"]) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"search_mode": "fuzzy"}, "search_mode"),
        ({"search_mode": 3}, "search_mode"),
        ({"min_score": 1.5}, "min_score"),
        ({"min_score": "0.3"}, "min_score"),
        ({"search_defaults": "keyword"}, "search_defaults"),
    ],
)
def test_a_bad_value_is_a_400_naming_the_field(
    live_server: LiveServer, body: dict[str, object], field: str
) -> None:
    c = live_server.client()
    r = c.patch("/v1/org", json=body)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["type"] == "invalid_request" and field in error["message"]
    org = c.get("/v1/org").json()
    assert org["search_mode"] is None and org["min_score"] is None


def test_the_cli_shows_and_sets_the_org_defaults(server: LiveServer, tmp_path: Path) -> None:
    env = clean_env(MEMVAULT_API_KEY=server.admin_key)
    base = ("--url", server.url)
    set_ = invoke_memvault(
        "org", "search", "--mode", "keyword", "--min-score", "0.2", *base, "--json",
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert set_.code == 0, set_.stderr
    assert json.loads(set_.stdout)["search_mode"] == "keyword"
    shown = invoke_memvault("org", "show", *base, env=env, cwd=tmp_path)
    assert "search mode keyword, min score 0.2" in shown.stdout
    searched = invoke_memvault("search", PARAPHRASE, *base, "--json", env=env, cwd=tmp_path)
    assert json.loads(searched.stdout) == []  # keyword: the paraphrase shares no word
    reset = invoke_memvault(
        "org", "search", "--mode", "default", "--min-score", "default", *base, "--json",
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert json.loads(reset.stdout)["search_mode"] is None
    bad = invoke_memvault("org", "search", "--mode", "fuzzy", *base, env=env, cwd=tmp_path)
    assert bad.code == 2 and "search_mode" in bad.stderr
    nothing = invoke_memvault("org", "search", *base, env=env, cwd=tmp_path)
    assert nothing.code == 2 and "nothing to change" in nothing.stderr
