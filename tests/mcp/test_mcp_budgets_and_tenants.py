"""Budgets are the account's, whatever the surface; and an account sees only its own vault."""

from __future__ import annotations

from typing import Any

from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller
from tests.mcp.conftest import TIGHT_BUDGET, issue_key
from tests.mcp.helpers import connect, run, text
from tests.support.servers import LiveServer


def mcp_calls(
    server: LiveServer, key: str, *calls: tuple[str, dict[str, Any]]
) -> list[tuple[str, bool]]:
    async def main() -> list[tuple[str, bool]]:
        out = []
        async with connect(server.url, key) as client:
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                out.append((text(result), bool(result.is_error)))
        return out

    return run(main)


def test_writes_spent_over_mcp_are_refused_on_rest(tight_server: LiveServer) -> None:
    writes = [
        ("memory_write", {"path": f"n{i}.md", "markdown": f"# {i}"}) for i in range(TIGHT_BUDGET)
    ]
    results = mcp_calls(
        tight_server,
        tight_server.admin_key,
        *writes,
        ("memory_append", {"path": "n0.md", "text": "more"}),
    )
    assert [is_error for _, is_error in results] == [False] * TIGHT_BUDGET + [True]
    message = results[-1][0]
    assert message.startswith(
        "refused (writes_budget_exhausted): the vault's writes budget is used up"
    )
    with tight_server.client() as rest:
        response = rest.put("/v1/notes/rest.md", json={"markdown": "# rest"})
        assert response.status_code == 429
        assert response.json()["error"]["code"] == "writes_budget_exhausted"
        # Reads are not budgeted, on either surface.
        assert rest.get("/v1/notes/n0.md").status_code == 200
    assert not mcp_calls(tight_server, tight_server.admin_key, ("memory_read", {"path": "n0.md"}))[
        0
    ][1]


def test_searches_spent_on_rest_are_refused_over_mcp(tight_server: LiveServer) -> None:
    with tight_server.client() as rest:
        for _ in range(TIGHT_BUDGET):
            assert rest.get("/v1/search", params={"q": "anything"}).status_code == 200
        assert rest.get("/v1/search", params={"q": "anything"}).status_code == 429
    [(message, is_error)] = mcp_calls(
        tight_server, tight_server.admin_key, ("memory_search", {"query": "anything"})
    )
    assert is_error
    assert message.startswith("refused (searches_budget_exhausted): ")
    assert "retry in" in message


def test_surfaces_share_one_budget_and_it_refills(tight_server: LiveServer) -> None:
    """Alternating surfaces never multiplies the budget; another key of the account shares it."""
    other_key = issue_key(tight_server, mcp=True)
    with tight_server.client() as rest:
        assert rest.put("/v1/notes/a.md", json={"markdown": "a"}).status_code == 201
        assert not mcp_calls(
            tight_server, other_key, ("memory_write", {"path": "b.md", "markdown": "b"})
        )[0][1]
        assert rest.put("/v1/notes/c.md", json={"markdown": "c"}).status_code == 201
        [(message, is_error)] = mcp_calls(
            tight_server,
            tight_server.admin_key,
            ("memory_write", {"path": "d.md", "markdown": "d"}),
        )
        assert is_error and "writes_budget_exhausted" in message
        assert rest.put("/v1/notes/d.md", json={"markdown": "d"}).status_code == 429
        tight_server.clock.advance(60)  # a minute refills it
    [(message, is_error)] = mcp_calls(
        tight_server, tight_server.admin_key, ("memory_write", {"path": "d.md", "markdown": "d"})
    )
    assert not is_error, message


def test_an_account_sees_only_its_own_vault(live_server: LiveServer) -> None:
    svc = live_server.services
    svc.accounts.create_account("other", account_id="other")
    theirs = issue_key(live_server, "other", mcp=True)
    ours = live_server.admin_key
    secret = "secret/Acquisition plan.md"
    [(message, is_error)] = mcp_calls(
        live_server,
        ours,
        ("memory_write", {"path": secret, "markdown": "# Acquisition plan\n\nBuy Zyxcorp."}),
    )
    assert not is_error, message

    async def theirs_view() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with connect(live_server.url, theirs) as client:
            out["read"] = text(await client.call_tool("memory_read", {"path": secret}))
            out["search"] = text(
                await client.call_tool("memory_search", {"query": "zyxcorp acquisition"})
            )
            out["list"] = text(await client.call_tool("memory_list", {}))
            out["link"] = text(
                await client.call_tool("memory_link", {"source": "x.md", "target": secret})
            )
            out["resources"] = (await client.list_resources()).resources
            try:
                await client.read_resource("memvault://notes/secret/Acquisition%20plan.md")
                out["resource"] = "read"
            except Exception as exc:
                out["resource"] = str(exc)
            # The same path in their vault is a different note.
            out["write"] = text(
                await client.call_tool("memory_write", {"path": secret, "markdown": "mine"})
            )
        return out

    view = run(theirs_view)
    assert view["read"] == f"refused (note_not_found): no note at {secret!r}"
    assert view["search"] == "No notes match 'zyxcorp acquisition'."
    assert view["list"] == "No notes."
    assert view["link"].startswith("refused (note_not_found)")
    assert view["resources"] == []
    assert view["resource"].startswith("Resource not found")
    assert view["write"] == f"Created {secret} (version 1)."
    ours_note = svc.vault.read(Caller(account_id=LOCAL_ACCOUNT_ID), secret)
    assert ours_note.markdown == "# Acquisition plan\n\nBuy Zyxcorp."
    assert ours_note.version == 1
