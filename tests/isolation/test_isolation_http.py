"""Tenant isolation over HTTP, on both backends, as an attacker would try it: every
management route of the app (enumerated, so a new route is attacked too), with each of
organisation B's ways in (an owner's session, an admin key, a member's session, a vault
key, and mixed credentials), with A's paths and ids in the URL and body; the gateway's
recall and memory tools; MCP's tools and resources. Every answer is checked for A's
markers; the probe counts attempts and leaks and fails on one leak, and A's state must
be exactly as before."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from memvault.api.app import create_app
from memvault.domain import jobs as J
from memvault.http_edge import SESSION_COOKIE
from memvault.services import uploads as U
from tests.isolation.world import (
    A_FILES,
    A_PATHS,
    SEARCH,
    Probe,
    World,
    add_jobs,
    build_world,
)
from tests.mcp.helpers import post, rpc
from tests.support.people import PASSWORD, Person
from tests.support.routes import api_routes
from tests.support.servers import LiveServer
from tests.support.upstream import Reply, ScriptedUpstream, ToolCall

MCP_VERSION = "2025-06-18"
_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")


@pytest.fixture
def world(server: LiveServer) -> World:
    built = build_world(server.services)
    add_jobs(built)
    return built


def management_routes(server: LiveServer) -> list[tuple[str, str]]:
    return api_routes(create_app(server.services, surfaces=("management",)))


def values_for(world: World, param: str) -> list[str]:
    ids = world.a_ids()
    return {
        "path": [quote(p, safe="/") for p in A_PATHS + A_FILES],
        "version": ["1"],
        "key_id": ids["key"],
        "member_id": ids["member"],
        "invitation_id": ids["invitation"],
        "session_id": ids["session"],
        "memory": ids["memory"],
        "item_id": ids["item"],
        "job_id": ids["job"],
        "upload_id": ids["upload"],
    }[param]


def _zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("secret/plan.md", "# B's import")
    return out.getvalue()


def body_for(world: World, method: str, template: str) -> dict[str, Any]:
    """A request body the route would take (aimed at A where it names anyone)."""
    a_owner = world.a.owner.email
    bodies: dict[tuple[str, str], dict[str, Any]] = {
        ("PUT", "/v1/notes/{path:path}"): {"json": {"markdown": "# written by B"}},
        ("POST", "/v1/notes/{path:path}/append"): {"json": {"text": "B was here"}},
        ("POST", "/v1/notes/{path:path}/move"): {"json": {"to": "b-moved.md"}},
        ("POST", "/v1/import"): {"content": _zip(), "headers": {"Content-Type": "application/zip"}},
        ("PUT", "/v1/files/{path:path}"): {"content": b"written by B"},
        ("POST", "/v1/imports"): {"json": {"bytes": len(_zip()), "filename": "b.zip"}},
        ("POST", "/v1/files/uploads"): {"json": {"path": "secret/diagram.png", "bytes": 4}},
        ("PUT", "/v1/file-uploads/{upload_id}"): {"content": b"B's!"},
        ("PUT", "/v1/imports/{job_id}/upload"): {
            "content": _zip(),
            "headers": {"Content-Type": "application/zip"},
        },
        ("POST", "/v1/keys"): {"json": {"name": "b-key"}},
        ("PATCH", "/v1/keys/{key_id}"): {"json": {"recall": False}},
        ("PATCH", "/v1/account/limits"): {"json": {"max_notes": 9}},
        ("POST", "/v1/balance"): {"json": {"set_micros": 1}},
        ("PATCH", "/v1/org"): {"json": {"name": "B renamed"}},
        ("PATCH", "/v1/members/{member_id}"): {"json": {"role": "member"}},
        ("POST", "/v1/invitations"): {"json": {"email": a_owner, "role": "admin"}},
        ("POST", "/v1/invitations/accept"): {
            "json": {"token": "mvi_guessed", "name": "B", "password": PASSWORD}
        },
        # Sign in as A's owner with a guessed password (refused like any failure).
        ("POST", "/v1/sessions"): {"json": {"email": a_owner, "password": "a guessed password"}},
        ("PATCH", "/v1/me"): {"json": {"name": "B person"}},
        ("POST", "/v1/memories"): {"json": {"slug": "b-new", "name": "B's"}},
        ("PATCH", "/v1/memories/{memory}"): {"json": {"name": "B renamed", "active": False}},
        ("POST", "/v1/memories/{memory}/items"): {
            "json": {"item_type": "guardrail", "text": "B was here"}
        },
        ("PATCH", "/v1/memories/{memory}/items/{item_id}"): {"json": {"text": "B was here"}},
        ("POST", "/v1/me/password"): {
            "json": {"current_password": "not it at all", "new_password": "x" * 20}
        },
    }
    return bodies.get((method, template), {})


def _sent(url: str, kwargs: dict[str, Any]) -> str:
    return url + " " + json.dumps(kwargs.get("json", {}))


def _answer(response: httpx.Response) -> str:
    headers = " ".join(f"{k}: {v}" for k, v in response.headers.items())
    content = response.content
    if content[:2] == b"PK":
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            text = " ".join(
                n + " " + archive.read(n).decode("utf-8", "replace") for n in archive.namelist()
            )
    else:
        text = content.decode("utf-8", "replace")
    return headers + "\n" + text


def session_client(server: LiveServer, person: Person, **extra: Any) -> httpx.Client:
    started = server.services.sessions.sign_in_password(person.email, PASSWORD)
    return httpx.Client(
        base_url=server.url,
        cookies={SESSION_COOKIE: started.secret},
        headers={"x-csrf-token": started.csrf_token, **extra.get("headers", {})},
        timeout=60.0,
    )


def b_clients(server: LiveServer, world: World) -> Iterator[tuple[str, httpx.Client]]:
    b, a = world.b, world.a
    yield "B owner session", session_client(server, b.owner)
    yield "B admin key", server.client(b.admin.key.secret)
    yield "B member session", session_client(server, b.member)
    yield "B member vault key", server.client(b.member.vault_key.secret)
    # Mixed credentials: B's key with A's cookie (the key decides: B), and A's cookie
    # with B's CSRF token on a route that only reads (the cookie is A's own, so no leak
    # is possible here; on an unsafe route the token is refused).
    mixed = server.client(b.owner.key.secret)
    mixed.cookies.set(SESSION_COOKIE, a.owner.session.secret)
    yield "B key + A cookie", mixed


# The signed links of jobs: what authorises them is the token in the URL (its purpose).
TOKEN_ROUTES = {
    "/v1/imports/{job_id}/upload": J.UPLOAD,
    "/v1/exports/{job_id}/download": J.DOWNLOAD,
    "/v1/file-uploads/{upload_id}": U.UPLOAD,
    "/v1/file-downloads/{path:path}": U.DOWNLOAD,
}


def test_no_route_lets_one_organisation_see_or_touch_another(
    server: LiveServer, world: World
) -> None:
    before = world.snapshot()
    probe = world.probe()
    attempted: set[tuple[str, str]] = set()
    routes = management_routes(server)
    # Signing out ends the session in use: last.
    routes.sort(key=lambda r: r == ("DELETE", "/v1/sessions/current"))
    for who, client in b_clients(server, world):
        with client:
            for method, template in routes:
                params = _PARAM.findall(template)
                urls = [template]
                for param in params:
                    urls = [
                        _PARAM.sub(value, u, count=1)
                        for u in urls
                        for value in values_for(world, param)
                    ]
                kwargs = body_for(world, method, template)
                for url in urls:
                    if template == "/v1/search":
                        url += f"?q={SEARCH}&limit=50"
                    if template == "/v1/usage":
                        url += "?key_id=" + world.a_ids()["key"][0]
                    if template in TOKEN_ROUTES:  # B's valid token of B's own job
                        url += "?token=" + world.b_tokens[TOKEN_ROUTES[template]]
                    response = client.request(method, url, **kwargs)
                    attempted.add((method, template))
                    probe.seen(
                        f"{who} {method} {url} -> {response.status_code}",
                        _answer(response),
                        _sent(url, kwargs),
                    )
                    assert response.status_code < 500, (who, method, url, response.text)
            for extra in ("/v1/notes?folder=secret", "/v1/usage", f"/v1/search?q={SEARCH}+launch"):
                response = client.get(extra)
                probe.seen(f"{who} GET {extra}", _answer(response), extra)
    missing = sorted(set(routes) - attempted)
    assert not missing, f"routes the isolation suite did not attack: {missing}"

    # A's cookie with B's token on an unsafe route: refused.
    with httpx.Client(
        base_url=server.url,
        cookies={SESSION_COOKIE: world.a.owner.session.secret},
        headers={"x-csrf-token": world.b.owner.session.csrf_token},
    ) as forged:
        refused = forged.post("/v1/keys", json={"name": "forged"})
        assert (
            refused.status_code == 403 and refused.json()["error"]["code"] == "csrf_token_invalid"
        )

    _check_job_tokens(server, world, probe)
    probe.assert_no_leaks(at_least=5 * 60)
    assert world.snapshot() == before, "organisation A changed under B's requests"
    # A's upload survived every attempt: A still completes it.
    done = server.services.uploads.complete(world.a.owner.caller, world.a_uploads[0])
    assert done.created and done.file.size == 4


def _check_job_tokens(server: LiveServer, world: World, probe: Probe) -> None:
    """A job's token works for that job's link only: never another job's (A's or B's),
    nor the other purpose's. B's own download token does fetch B's export (so the
    refusals are the tokens', not a broken route)."""
    a_import, a_export = world.a_jobs
    b_import, b_export = world.b_jobs[J.UPLOAD], world.b_jobs[J.DOWNLOAD]
    upload, download = "/v1/imports/{}/upload?token={}", "/v1/exports/{}/download?token={}"
    tries = [
        (upload, b_import, world.a_tokens[J.UPLOAD]),
        (upload, a_export, world.a_tokens[J.UPLOAD]),
        (upload, a_import, world.a_tokens[J.DOWNLOAD]),
        (upload, a_import, world.b_tokens[J.UPLOAD]),
        (download, b_export, world.a_tokens[J.DOWNLOAD]),
        (download, a_import, world.a_tokens[J.DOWNLOAD]),
        (download, a_export, world.a_tokens[J.UPLOAD]),
        (download, a_export, world.b_tokens[J.DOWNLOAD]),
    ]
    with httpx.Client(base_url=server.url, timeout=60.0) as anyone:
        for link, job_id, token in tries:
            url = link.format(job_id, token)
            if link is upload:
                r = anyone.put(url, content=_zip(), headers={"Content-Type": "application/zip"})
            else:
                r = anyone.get(url)
            probe.seen(f"token link {url} -> {r.status_code}", _answer(r), url)
            assert r.status_code == 401, (url, r.status_code, r.text)
            assert r.json()["error"]["code"] == "invalid_token", r.text
        own = anyone.get(download.format(b_export, world.b_tokens[J.DOWNLOAD]))
        assert own.status_code == 200 and own.content[:2] == b"PK", own.text


def _check_upstream(probe: Probe, upstream: ScriptedUpstream, name: str, sent: str) -> None:
    for n, request in enumerate(upstream.requests):
        probe.seen(f"{name}: upstream request {n}", request.body.decode("utf-8", "replace"), sent)


def test_the_gateway_recalls_and_runs_tools_in_the_callers_organisation_only(
    server: LiveServer, world: World, upstream: ScriptedUpstream
) -> None:
    before = world.snapshot()
    probe = world.probe()
    key = world.b.member.key.secret  # recall, tools and MCP on
    question = f"What is the {SEARCH} launch plan? Read secret/plan.md and Other.md."
    calls = [
        ToolCall("memory_search", {"query": SEARCH, "limit": 20}),
        ToolCall("memory_list", {"limit": 200}),
        ToolCall("memory_list", {"attachments": True}),
        *[ToolCall("memory_read", {"path": p}) for p in A_PATHS + A_FILES],
    ]
    for api, path, body in (
        (
            "openai",
            "/v1/chat/completions",
            {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]},
        ),
        (
            "responses",
            "/v1/responses",
            {"model": "gpt-4.1-mini", "input": question, "store": False},
        ),
        (
            "anthropic",
            "/v1/messages",
            {
                "model": "claude-haiku-4-5",
                "max_tokens": 100,
                "messages": [{"role": "user", "content": question}],
            },
        ),
    ):
        upstream.reset()
        upstream.enqueue(
            Reply(tool_calls=calls),
            Reply(
                tool_calls=[ToolCall("memory_link", {"source": "mine.md", "target": "Other.md"})]
            ),
            Reply(text="done"),
        )
        with server.client(key) as client:
            response = client.post(path, json=body)
        assert response.status_code == 200, response.text
        probe.seen(f"{api} answer", _answer(response), question)
        _check_upstream(
            probe, upstream, api, question + " " + json.dumps([c.arguments for c in calls])
        )
        assert len(upstream.requests) == 3  # the tools ran, on B's own vault
        # What recall put ahead of the question is B's own note, not A's.
        first = upstream.requests[0].body.decode()
        assert "ours" in first
    probe.assert_no_leaks(at_least=8)
    assert world.snapshot() == before


def test_mcp_tools_and_resources_see_only_the_callers_organisation(
    server: LiveServer, world: World
) -> None:
    before = world.snapshot()
    probe = world.probe()
    url = server.url
    for person in world.b.people.values():
        key = person.key.secret
        messages = [
            rpc("tools/call", {"name": "memory_search", "arguments": {"query": SEARCH}}),
            rpc("tools/call", {"name": "memory_list", "arguments": {"limit": 200}}),
            rpc("tools/call", {"name": "memory_list", "arguments": {"folder": "secret"}}),
            *[
                rpc("tools/call", {"name": "memory_read", "arguments": {"path": p}})
                for p in A_PATHS
            ],
            rpc(
                "tools/call",
                {"name": "memory_link", "arguments": {"source": "x.md", "target": "Other.md"}},
            ),
            rpc(
                "tools/call",
                {"name": "memory_append", "arguments": {"path": "secret/plan.md", "text": "b"}},
            ),
            rpc("resources/list"),
            *[
                rpc("resources/read", {"uri": "memvault://notes/" + quote(p, safe="")})
                for p in A_PATHS
            ],
        ]
        for message in messages:
            response = post(url, message, key=key, version=MCP_VERSION)
            assert response.status_code == 200, response.text
            probe.seen(
                f"mcp {person.member.role} {message['method']}",
                _answer(response),
                json.dumps(message),
            )
    # A's vault key over MCP is A's own business; B cannot use MCP with A's ids at all:
    # a session cookie is no way into MCP.
    with httpx.Client(cookies={SESSION_COOKIE: world.b.owner.session.secret}) as browser:
        refused = browser.post(
            url + "/mcp",
            json=rpc("tools/list"),
            headers={"Accept": "application/json, text/event-stream"},
        )
        probe.seen("mcp with a cookie", _answer(refused))
        assert refused.status_code == 401
    probe.assert_no_leaks(at_least=3 * 12)
    assert world.snapshot() == before
