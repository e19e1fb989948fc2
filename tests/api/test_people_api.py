"""The identity routes over HTTP: signing in and out, the session cookie and its CSRF
token, expiry, password change, members, invitations, the organisation and the audit
log; every management route with a key or a session alike; the gateway and MCP with keys
only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memvault.container import build_services
from memvault.http_edge import SESSION_COOKIE
from tests.api.helpers import error_of, url
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.people import PASSWORD, Org, Person, make_org
from tests.support.servers import LiveServer, serve


@pytest.fixture
def org(live_server: LiveServer) -> Org:
    return make_org(live_server.services, "org-a")


def session_client(server: LiveServer, person: Person, *, csrf: bool = True) -> httpx.Client:
    """A browser-like client: the session cookie, and the CSRF header unless told not."""
    headers = {"x-csrf-token": person.session.csrf_token} if csrf else {}
    return httpx.Client(
        base_url=server.url,
        cookies={SESSION_COOKIE: person.session.secret},
        headers=headers,
        timeout=30.0,
    )


def anon(server: LiveServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, timeout=30.0)


# ---------------------------------------------------------------------------- signing in
def test_sign_in_with_a_password_sets_a_session_cookie(live_server: LiveServer, org: Org) -> None:
    with anon(live_server) as c:
        r = c.post("/v1/sessions", json={"email": org.member.email, "password": PASSWORD})
        assert r.status_code == 201, r.text
        body = r.json()
        assert set(body) == {"session", "member", "organisation", "csrf_token"}
        assert body["member"]["role"] == "member" and body["organisation"]["id"] == "org-a"
        cookie = r.headers["set-cookie"]
        assert cookie.startswith(f"{SESSION_COOKIE}=mvs_")
        assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
        assert "Secure" not in cookie  # plain HTTP here
        assert f"Max-Age={12 * 3600}" in cookie
        # The client now holds the cookie: /v1/me says who and how.
        me = c.get("/v1/me").json()
        assert (me["auth"], me["role"], me["key"]) == ("session", "member", None)
        assert me["member"]["email"] == org.member.email
        assert me["csrf_token"] == body["csrf_token"]
        assert me["session"]["current"] is True
        # Unsafe without the token: 403; with it, allowed.
        error_of(c.post("/v1/keys", json={"name": "k"}), 403, "csrf_token_missing")
        error_of(
            c.post("/v1/keys", json={"name": "k"}, headers={"x-csrf-token": "forged"}),
            403,
            "csrf_token_invalid",
        )
        made = c.post("/v1/keys", json={"name": "k"}, headers={"x-csrf-token": body["csrf_token"]})
        assert made.status_code == 201 and made.json()["member_id"] == org.member.member.id
        assert c.get("/v1/notes").status_code == 200  # a safe method needs no token


def test_the_cookie_is_secure_behind_https(live_server: LiveServer, org: Org) -> None:
    with anon(live_server) as c:
        r = c.post(
            "/v1/sessions",
            json={"email": org.owner.email, "password": PASSWORD},
            headers={"x-forwarded-proto": "https"},
        )
        assert r.status_code == 201 and "Secure" in r.headers["set-cookie"]


def test_failed_sign_ins_all_look_alike(live_server: LiveServer, org: Org) -> None:
    with anon(live_server) as c:
        answers = [
            c.post("/v1/sessions", json={"email": org.member.email, "password": "wrong one!!"}),
            c.post("/v1/sessions", json={"email": "nobody@x.test", "password": PASSWORD}),
        ]
        bodies = {(r.status_code, r.text) for r in answers}
        assert len(bodies) == 1
        error_of(answers[0], 401, "invalid_credentials")
        assert "set-cookie" not in answers[0].headers
        error_of(c.post("/v1/sessions", json={"email": "a@b.test"}), 400)
        error_of(c.post("/v1/sessions", json={"api_key": "x", "email": "a@b.test"}), 400)


def test_sign_in_attempts_are_rate_limited(live_server: LiveServer, org: Org) -> None:
    burst = int(live_server.services.settings.sign_in_burst)
    with anon(live_server) as c:
        for _ in range(burst):
            c.post("/v1/sessions", json={"email": org.member.email, "password": "wrong one!!"})
        r = c.post("/v1/sessions", json={"email": org.member.email, "password": PASSWORD})
        error_of(r, 429, "sign_in_rate_limited")
        assert int(r.headers["Retry-After"]) >= 1


def test_the_first_owner_signs_in_with_the_printed_key_and_sets_a_password(
    live_server: LiveServer,
) -> None:
    with anon(live_server) as c:
        r = c.post("/v1/sessions", json={"api_key": live_server.admin_key})
        assert r.status_code == 201, r.text
        token = r.json()["csrf_token"]
        assert r.json()["member"]["email"] is None and r.json()["member"]["role"] == "owner"
        headers = {"x-csrf-token": token}
        changed = c.post(
            "/v1/me/password", json={"new_password": "my own passphrase"}, headers=headers
        )
        assert changed.json() == {"changed": True, "sessions_ended": 0}
        profile = c.patch(
            "/v1/me",
            json={"email": "me@home.test", "current_password": "my own passphrase"},
            headers=headers,
        )
        assert profile.status_code == 200 and profile.json()["has_password"] is True
    with anon(live_server) as c:
        r = c.post("/v1/sessions", json={"email": "ME@home.test", "password": "my own passphrase"})
        assert r.status_code == 201


def test_a_vault_key_cannot_sign_in(live_server: LiveServer, org: Org) -> None:
    with anon(live_server) as c:
        error_of(
            c.post("/v1/sessions", json={"api_key": org.owner.vault_key.secret}),
            403,
            "admin_required",
        )


# ---------------------------------------------------------------------------- sessions
def test_sign_out_ends_the_session_and_clears_the_cookie(live_server: LiveServer, org: Org) -> None:
    with session_client(live_server, org.member, csrf=False) as c:
        error_of(c.delete("/v1/sessions/current"), 403, "csrf_token_missing")
    with session_client(live_server, org.member) as c:
        r = c.delete("/v1/sessions/current")
        assert r.status_code == 204
        assert (
            f'{SESSION_COOKIE}=""' in r.headers["set-cookie"]
            or "Max-Age=0" in r.headers["set-cookie"]
        )
    with session_client(live_server, org.member) as c:
        error_of(c.get("/v1/me"), 401, "session_expired")
    with live_server.client(org.member.key.secret) as c:
        error_of(c.delete("/v1/sessions/current"), 400, "not_a_session")


def test_listing_and_ending_ones_sessions(live_server: LiveServer, org: Org) -> None:
    other = live_server.services.sessions.sign_in_password(org.member.email, PASSWORD)
    with session_client(live_server, org.member) as c:
        listed = c.get("/v1/sessions").json()
        assert {s["id"] for s in listed} == {org.member.session.session.id, other.session.id}
        assert [s["current"] for s in listed if s["id"] == other.session.id] == [False]
        error_of(c.delete(f"/v1/sessions/{org.owner.session.session.id}"), 404)
        assert c.delete(f"/v1/sessions/{other.session.id}").status_code == 204
    with httpx.Client(base_url=live_server.url, cookies={SESSION_COOKIE: other.secret}) as c:
        error_of(c.get("/v1/me"), 401, "session_expired")
    # The owner's session was not the member's to end.
    with session_client(live_server, org.owner) as c:
        assert c.get("/v1/me").status_code == 200


def test_a_session_expires_when_idle(live_server: LiveServer, org: Org) -> None:
    idle = live_server.services.settings.session_idle_minutes * 60
    with session_client(live_server, org.member) as c:
        live_server.clock.advance(idle - 1)
        assert c.get("/v1/me").status_code == 200  # activity: the idle time starts again
        live_server.clock.advance(idle - 1)
        assert c.get("/v1/me").status_code == 200
        live_server.clock.advance(idle + 1)
        error_of(c.get("/v1/me"), 401, "session_expired")


def test_changing_the_password_over_http_ends_the_other_sessions(
    live_server: LiveServer, org: Org
) -> None:
    other = live_server.services.sessions.sign_in_password(org.member.email, PASSWORD)
    with session_client(live_server, org.member) as c:
        error_of(
            c.post("/v1/me/password", json={"current_password": "nope", "new_password": "x" * 20}),
            403,
            "current_password_required",
        )
        error_of(
            c.post("/v1/me/password", json={"current_password": PASSWORD, "new_password": "x"}),
            400,
            "weak_password",
        )
        r = c.post(
            "/v1/me/password",
            json={"current_password": PASSWORD, "new_password": "a brand new passphrase"},
        )
        assert r.json() == {"changed": True, "sessions_ended": 1}
        assert c.get("/v1/me").status_code == 200
    with httpx.Client(base_url=live_server.url, cookies={SESSION_COOKIE: other.secret}) as c:
        error_of(c.get("/v1/me"), 401, "session_expired")


def test_a_removed_members_session_and_keys_stop_at_once(live_server: LiveServer, org: Org) -> None:
    with session_client(live_server, org.admin) as admin:
        assert admin.delete(f"/v1/members/{org.member.member.id}").status_code == 204
    with session_client(live_server, org.member) as c:
        error_of(c.get("/v1/notes"), 401)
    for secret in (org.member.key.secret, org.member.vault_key.secret):
        with live_server.client(secret) as c:
            error_of(c.get("/v1/notes"), 401, "revoked_api_key")


def test_a_disabled_member_stops_everywhere(live_server: LiveServer, org: Org) -> None:
    with session_client(live_server, org.owner) as owner:
        r = owner.patch(f"/v1/members/{org.admin.member.id}", json={"disabled": True})
        assert r.status_code == 200 and r.json()["disabled_at"] is not None
    with live_server.client(org.admin.key.secret) as c:
        error_of(c.get("/v1/notes"), 401, "member_disabled")
    chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with live_server.client(org.admin.vault_key.secret) as c:
        refused = c.post("/v1/chat/completions", json=chat)  # the provider's error shape
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "member_disabled"
    with session_client(live_server, org.admin) as c:
        error_of(c.get("/v1/me"), 401)


# ---------------------------------------------------------------------------- keys only
def test_the_gateway_and_mcp_take_keys_only(live_server: LiveServer, org: Org) -> None:
    chat = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with session_client(live_server, org.owner) as c:
        refused = c.post("/v1/chat/completions", json=chat)
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "missing_api_key"
        r = c.post(
            "/mcp",
            json=rpc,
            headers={"Accept": "application/json, text/event-stream"},
        )
        assert r.status_code == 401


def test_every_management_route_takes_a_key_or_a_session_as_the_same_member(
    live_server: LiveServer, org: Org
) -> None:
    with (
        live_server.client(org.admin.key.secret) as by_key,
        session_client(live_server, org.admin) as by_session,
    ):
        for path in ("/v1/me", "/v1/members", "/v1/keys", "/v1/org", "/v1/audit", "/v1/notes"):
            a, b = by_key.get(path), by_session.get(path)
            assert a.status_code == b.status_code == 200, (path, a.text, b.text)
        me_key, me_session = by_key.get("/v1/me").json(), by_session.get("/v1/me").json()
        assert me_key["member"] == me_session["member"]
        assert (me_key["auth"], me_session["auth"]) == ("key", "session")
        # A note written through either is the same vault's.
        assert (
            by_session.put(url("s.md"), json={"markdown": "from the dashboard"}).status_code == 201
        )
        assert by_key.get(url("s.md")).json()["markdown"] == "from the dashboard"


# ---------------------------------------------------------------------------- members
def test_invitations_over_http(live_server: LiveServer, org: Org) -> None:
    with session_client(live_server, org.admin) as admin:
        error_of(
            admin.post("/v1/invitations", json={"email": "o@x.test", "role": "owner"}),
            403,
            "owner_required",
        )
        r = admin.post("/v1/invitations", json={"email": "new@org-a.test", "role": "admin"})
        assert r.status_code == 201, r.text
        created = r.json()
        assert {"id", "token", "expires_at"} <= set(created)
        listed = admin.get("/v1/invitations").json()
        assert [i["id"] for i in listed] == [created["id"]] and "token" not in listed[0]
    with anon(live_server) as c:
        r = c.post(
            "/v1/invitations/accept",
            json={"token": created["token"], "name": "Newt", "password": PASSWORD},
        )
        assert r.status_code == 201, r.text
        assert r.json()["member"]["role"] == "admin"
        assert c.get("/v1/me").json()["member"]["email"] == "new@org-a.test"  # signed in
        again = c.post(
            "/v1/invitations/accept",
            json={"token": created["token"], "name": "Again", "password": PASSWORD},
        )
        error_of(again, 404, "invitation_not_found")
    with session_client(live_server, org.owner) as owner:
        doomed = owner.post("/v1/invitations", json={"email": "d@org-a.test"}).json()
        assert doomed["role"] == "member"
        assert owner.delete(f"/v1/invitations/{doomed['id']}").status_code == 204
        error_of(owner.delete(f"/v1/invitations/{doomed['id']}"), 404)


def test_members_and_roles_over_http(live_server: LiveServer, org: Org) -> None:
    with session_client(live_server, org.member) as member:
        assert [m["id"] for m in member.get("/v1/members").json()] == [org.member.member.id]
        error_of(
            member.patch(f"/v1/members/{org.member.member.id}", json={"role": "owner"}),
            403,
            "owner_required",
        )
    with session_client(live_server, org.owner) as owner:
        listed = owner.get("/v1/members").json()
        assert {m["role"] for m in listed} == {"owner", "admin", "member"}
        assert all("password" not in str(m).lower() or "has_password" in m for m in listed)
        r = owner.patch(f"/v1/members/{org.member.member.id}", json={"role": "admin"})
        assert r.json()["role"] == "admin"
        error_of(owner.delete(f"/v1/members/{org.owner.member.id}"), 409, "last_owner")
        error_of(owner.patch("/v1/members/nobody", json={"role": "admin"}), 404, "member_not_found")
        error_of(owner.patch(f"/v1/members/{org.admin.member.id}", json={"role": "god"}), 400)


def test_the_organisation_and_the_audit_log_over_http(live_server: LiveServer, org: Org) -> None:
    with session_client(live_server, org.admin) as admin:
        assert admin.get("/v1/org").json()["name"] == "Org org-a"
        error_of(admin.patch("/v1/org", json={"name": "Mine"}), 403, "owner_required")
        events = admin.get("/v1/audit", params={"limit": 500}).json()
        kinds = {e["kind"] for e in events["events"]}
        assert {"org_created", "sign_in", "invitation_created", "invitation_accepted"} <= kinds
        assert PASSWORD not in str(events)
    with session_client(live_server, org.owner) as owner:
        assert owner.patch("/v1/org", json={"name": "Acme"}).json()["name"] == "Acme"
    with session_client(live_server, org.member) as member:
        error_of(member.get("/v1/audit"), 403, "admin_required")


def test_a_key_without_a_vault_binding(live_server: LiveServer, org: Org) -> None:
    with live_server.client(org.member.key.secret) as c:
        made = c.post("/v1/keys", json={"name": "no vault", "vault": False, "mcp": True}).json()
        assert made["vault"] is False
    with live_server.client(made["secret"]) as c:
        error_of(c.get("/v1/notes"), 403, "vault_not_bound")
        error_of(c.get("/v1/search", params={"q": "x"}), 403, "vault_not_bound")
        assert c.get("/v1/me").json()["key"]["vault"] is False
        r = c.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
        assert r.status_code == 403 and r.json()["error"]["data"]["code"] == "vault_not_bound"


# ---------------------------------------------------------------------------- sign-up
@pytest.fixture
def open_server(tmp_path: Path, clock: FakeClock) -> Iterator[LiveServer]:
    with backend_settings(tmp_path, "sqlite", signup="open") as settings:
        yield from serve(build_services(settings, clock=clock), clock)


def test_sign_up_is_off_unless_opened(live_server: LiveServer) -> None:
    with anon(live_server) as c:
        body = {"organisation": "X", "email": "x@x.test", "name": "X", "password": PASSWORD}
        error_of(c.post("/v1/signup", json=body), 404)


def test_sign_up_makes_an_organisation_and_its_owner(open_server: LiveServer) -> None:
    body = {
        "organisation": "Newco",
        "email": "founder@newco.test",
        "name": "F",
        "password": PASSWORD,
    }
    with anon(open_server) as c:
        r = c.post("/v1/signup", json=body)
        assert r.status_code == 201, r.text
        assert r.json()["member"]["role"] == "owner" and r.json()["organisation"]["name"] == "Newco"
        token = {"x-csrf-token": r.json()["csrf_token"]}
        assert c.get("/v1/me").json()["organisation"]["id"] != "local"
        made = c.post("/v1/keys", json={"name": "first", "admin": True}, headers=token)
        assert made.status_code == 201
        error_of(c.post("/v1/signup", json=body), 409, "email_taken")
    # Its key sees its own vault, not the local one.
    with open_server.client(made.json()["secret"]) as k:
        assert k.get("/v1/notes").json()["notes"] == []
        assert k.get("/v1/account").json()["id"] == r.json()["organisation"]["id"]
    with anon(open_server) as c:
        for i in range(int(open_server.services.settings.sign_in_burst) * 3):
            c.post(
                "/v1/signup", json={**body, "email": f"f{i}@newco.test", "organisation": f"N{i}"}
            )
        error_of(c.post("/v1/signup", json={**body, "email": "late@x.test"}), 429)
