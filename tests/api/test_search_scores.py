"""One score on every surface: REST, the CLI and the memory tools over MCP report the same
0-1 score for the same hit (domain.ranking.score; the README's "Search ranking")."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mcp_types import CallToolResult

from tests.api.helpers import url
from tests.cli.helpers import clean_env, invoke_memvault
from tests.mcp.helpers import connect, run, text
from tests.support.servers import LiveServer

NOTES = {
    "projects/Launch plan.md": "# Launch plan\n\nShip the beta launch on Friday. #launch\n",
    "projects/Beta.md": "# Beta\n\nThe beta slipped a week; launch after the fixes.\n",
    "notes/misc.md": "Unrelated lunch notes, and one beta mention.\n",
    "notes/other.md": "Nothing about it at all.\n",
}


def test_rest_cli_and_mcp_report_the_same_score(live_server: LiveServer, tmp_path: Path) -> None:
    c = live_server.client()
    for path, markdown in NOTES.items():
        assert c.put(url(path), json={"markdown": markdown}).status_code in (200, 201)
    query = "beta launch"
    # Keyword mode, so the order is the ranking formula's (each surface passes the mode on).
    rest = c.get("/v1/search", params={"q": query, "mode": "keyword"}).json()["results"]
    assert [h["path"] for h in rest] == [
        "projects/Launch plan.md",
        "projects/Beta.md",
        "notes/misc.md",
    ]
    scores = [h["score"] for h in rest]
    assert all(0.0 < s < 1.0 for s in scores) and scores == sorted(scores, reverse=True)
    expected = [(h["path"], h["score"]) for h in rest]

    env = clean_env(MEMVAULT_API_KEY=live_server.admin_key)
    args = ("search", query, "--mode", "keyword", "--url", live_server.url)
    as_json = json.loads(invoke_memvault(*args, "--json", env=env, cwd=tmp_path).stdout)
    assert [(h["path"], h["score"]) for h in as_json] == expected
    table = invoke_memvault(*args, env=env, cwd=tmp_path).stdout
    shown = re.findall(r"^\W*(\d\.\d\d)\s", table, re.MULTILINE)  # the score column
    assert shown == [f"{s:.2f}" for s in scores]

    async def call() -> CallToolResult:
        async with connect(live_server.url, live_server.admin_key) as client:
            return await client.call_tool("memory_search", {"query": query, "mode": "keyword"})

    lines = text(run(call)).splitlines()
    listed = [line for line in lines if re.match(r"\d+\. ", line)]
    assert [line.split(" — ")[0].split(". ", 1)[1] for line in listed] == [p for p, _ in expected]
    assert [re.findall(r"\(score (\d\.\d\d)\)$", line) for line in listed] == [
        [f"{s:.2f}"] for s in scores
    ]
