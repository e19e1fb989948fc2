"""Keys, the account and tenant isolation through the REST API on a real server."""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from memvault.domain.models import Limits, Toggles
from tests.api.helpers import error_of, url

KEY_FIELDS = {
    "id",
    "name",
    "prefix",
    "recall",
    "tools",
    "mcp",
    "admin",
    "created_at",
    "revoked_at",
    # gateway settings and spend (tests/api/test_billing_api.py covers them)
    "recall_notes",
    "recall_tokens",
    "cache",
    "cache_ttl_seconds",
    "spend_cap_micros",
    "memory_tokens",
    "recall_mode",
    "spent_micros",
    # its owner (tests/api/test_people_api.py covers members)
    "member_id",
    "owner",
    "vault",
}


@pytest.fixture
def admin(live_server: Any) -> Iterator[httpx.Client]:
    with live_server.client() as client:
        yield client


def make_key(admin: httpx.Client, name: str = "script", **toggles: bool) -> dict[str, Any]:
    r = admin.post("/v1/keys", json={"name": name, **toggles})
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


# ---------------------------------------------------------------------------- me, keys


def test_me_shows_the_admin_key_with_every_toggle_on(admin: httpx.Client) -> None:
    r = admin.get("/v1/me")
    assert r.status_code == 200
    body = r.json()
    assert (body["auth"], body["role"], body["session"], body["csrf_token"]) == (
        "key",
        "owner",
        None,
        None,
    )
    assert body["organisation"]["id"] == "local"
    assert body["member"]["id"] == body["key"]["member_id"]
    me = body["key"]
    assert set(me) == KEY_FIELDS
    assert me["admin"] is True
    assert (me["recall"], me["tools"], me["mcp"]) == (True, True, True)
    assert me["revoked_at"] is None
    assert me["name"] == "admin"


def test_create_key_shows_the_secret_once_with_toggles_off(
    live_server: Any, admin: httpx.Client
) -> None:
    created = make_key(admin, "coding")
    assert set(created) == KEY_FIELDS | {"secret"}
    secret = created["secret"]
    assert secret.startswith("mvk_") and len(secret) > 40
    assert secret.startswith(created["prefix"])
    assert (created["recall"], created["tools"], created["mcp"]) == (False, False, False)
    assert created["admin"] is False
    assert created["revoked_at"] is None

    # The secret works, and nothing ever shows it again.
    with live_server.client(secret) as c:
        me = c.get("/v1/me").json()["key"]
        assert me["id"] == created["id"]
        assert "secret" not in me
        assert c.put(url("from-key.md"), json={"markdown": "hello"}).status_code == 201
    listed = admin.get("/v1/keys")
    assert listed.status_code == 200
    assert all(set(k) == KEY_FIELDS for k in listed.json())
    assert secret not in listed.text
    assert sorted(k["name"] for k in listed.json()) == ["admin", "coding"]
    assert secret not in admin.patch(f"/v1/keys/{created['id']}", json={"recall": True}).text


def test_a_key_is_stored_only_as_a_hash(live_server: Any, admin: httpx.Client) -> None:
    if live_server.services.settings.backend != "sqlite":
        pytest.skip("reads the embedded backend's database files")
    created = make_key(admin, "hashed")
    secret = created["secret"]
    data_dir = live_server.services.settings.sqlite_path.parent
    files = [p for p in data_dir.iterdir() if p.is_file()]
    assert live_server.services.settings.sqlite_path in files
    blob = b"".join(p.read_bytes() for p in files)  # the db and its WAL
    assert secret.encode() not in blob
    assert live_server.admin_key.encode() not in blob
    assert hashlib.sha256(secret.encode()).hexdigest().encode() in blob


def test_toggles_on_creation_and_patch(admin: httpx.Client) -> None:
    created = make_key(admin, "recaller", recall=True)
    assert (created["recall"], created["tools"], created["mcp"]) == (True, False, False)
    key_id = created["id"]

    r = admin.patch(f"/v1/keys/{key_id}", json={"mcp": True})
    assert r.status_code == 200
    assert (r.json()["recall"], r.json()["tools"], r.json()["mcp"]) == (True, False, True)
    r = admin.patch(f"/v1/keys/{key_id}", json={"recall": False, "tools": True})
    assert (r.json()["recall"], r.json()["tools"], r.json()["mcp"]) == (False, True, True)
    r = admin.patch(f"/v1/keys/{key_id}", json={})
    assert (r.json()["recall"], r.json()["tools"], r.json()["mcp"]) == (False, True, True)
    r = admin.patch(f"/v1/keys/{key_id}", json={"tools": None})
    assert r.json()["tools"] is True
    listed = {k["id"]: k for k in admin.get("/v1/keys").json()}
    assert (listed[key_id]["recall"], listed[key_id]["tools"], listed[key_id]["mcp"]) == (
        False,
        True,
        True,
    )


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": ""},
        {"name": "   "},
        {"name": "x" * 101},
        {"name": 5},
        {"name": "k", "recall": "yes"},
        {"name": "k", "tools": 1},
        {"name": "k", "admin": "yes"},
        {"name": "k", "secret": "mvk_chosen"},
    ],
)
def test_create_key_validation(admin: httpx.Client, body: dict[str, Any]) -> None:
    error_of(admin.post("/v1/keys", json=body), 400, "invalid_input")
    assert len(admin.get("/v1/keys").json()) == 1


def test_create_key_name_with_control_characters_is_refused(admin: httpx.Client) -> None:
    error_of(admin.post("/v1/keys", json={"name": "a\nb"}), 400, "invalid_key_name")
    assert make_key(admin, "  padded  ")["name"] == "padded"


@pytest.mark.parametrize("body", [{"recall": "true"}, {"mcp": 0}, {"admin": True}, []])
def test_patch_toggles_validation(admin: httpx.Client, body: Any) -> None:
    key_id = make_key(admin)["id"]
    error_of(admin.patch(f"/v1/keys/{key_id}", json=body), 400, "invalid_input")
    listed = {k["id"]: k for k in admin.get("/v1/keys").json()}
    assert listed[key_id]["recall"] is False and listed[key_id]["admin"] is False


def test_unknown_key_ids_are_404(admin: httpx.Client) -> None:
    error_of(admin.patch("/v1/keys/nope", json={"recall": True}), 404, "key_not_found")
    error_of(admin.delete("/v1/keys/nope"), 404, "key_not_found")


def test_revoke(live_server: Any, admin: httpx.Client) -> None:
    created = make_key(admin, "doomed")
    with live_server.client(created["secret"]) as c:
        assert c.get("/v1/notes").status_code == 200
        r = admin.delete(f"/v1/keys/{created['id']}")
        assert r.status_code == 200
        revoked_at = r.json()["revoked_at"]
        assert revoked_at is not None
        for response in (c.get("/v1/notes"), c.get("/v1/me"), c.put(url("x.md"), json={})):
            error_of(response, 401, "revoked_api_key")
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
    again = admin.delete(f"/v1/keys/{created['id']}")
    assert again.status_code == 200 and again.json()["revoked_at"] == revoked_at
    listed = {k["id"]: k for k in admin.get("/v1/keys").json()}
    assert listed[created["id"]]["revoked_at"] == revoked_at
    # Toggling a revoked key does not bring it back.
    admin.patch(f"/v1/keys/{created['id']}", json={"recall": True})
    with live_server.client(created["secret"]) as c:
        error_of(c.get("/v1/me"), 401, "revoked_api_key")


# ---------------------------------------------------------------------------- admin only


ADMIN_ROUTES = [
    ("GET", "/v1/keys", None),
    ("POST", "/v1/keys", {"name": "sneaky", "recall": True}),
    ("PATCH", "/v1/keys/{admin_id}", {"recall": False}),
    ("DELETE", "/v1/keys/{admin_id}", None),
    ("PATCH", "/v1/account/limits", {"max_notes": 1}),
]


@pytest.mark.parametrize(("method", "path", "body"), ADMIN_ROUTES)
def test_a_non_admin_key_is_403_on_admin_routes(
    live_server: Any, admin: httpx.Client, method: str, path: str, body: Any
) -> None:
    admin_id = admin.get("/v1/me").json()["key"]["id"]
    secret = make_key(admin, "plain", recall=True, tools=True, mcp=True)["secret"]
    with live_server.client(secret) as c:
        r = c.request(method, path.format(admin_id=admin_id), json=body)
        error = error_of(r, 403, "admin_required")
        assert error["type"] == "permission_error"
        # Even with a broken body, the answer is about the key.
        broken = c.request(
            method,
            path.format(admin_id=admin_id),
            content=b"{not json",
            headers={"Content-Type": "application/json"},
        )
        error_of(broken, 403, "admin_required")
    assert sorted(k["name"] for k in admin.get("/v1/keys").json()) == ["admin", "plain"]
    me = admin.get("/v1/me").json()["key"]
    assert me["recall"] is True and me["revoked_at"] is None
    assert admin.get("/v1/account").json()["max_notes"] == Limits().max_notes


def test_a_non_admin_key_manages_notes_and_reads_its_account(
    live_server: Any, admin: httpx.Client
) -> None:
    secret = make_key(admin, "plain")["secret"]
    with live_server.client(secret) as c:
        assert c.get("/v1/me").json()["key"]["admin"] is False
        assert c.put(url("n.md"), json={"markdown": "x"}).status_code == 201
        assert c.get("/v1/account").status_code == 200
        assert c.get("/v1/search", params={"q": "x"}).status_code == 200


# ---------------------------------------------------------------------------- account


def test_account_and_limits(admin: httpx.Client) -> None:
    r = admin.get("/v1/account")
    assert r.status_code == 200
    account = r.json()
    assert set(account) == {
        "id",
        "name",
        "max_notes",
        "max_bytes",
        "max_files",
        "max_file_bytes",
        "note_count",
        "total_bytes",
    }
    assert account["id"] == "local"
    assert (account["note_count"], account["total_bytes"]) == (0, 0)
    assert account["max_notes"] == Limits().max_notes
    assert account["max_bytes"] == Limits().max_bytes

    admin.put(url("a.md"), json={"markdown": "12345"})
    admin.put(url("b.md"), json={"markdown": "123"})
    account = admin.get("/v1/account").json()
    assert (account["note_count"], account["total_bytes"]) == (2, 8)

    r = admin.patch("/v1/account/limits", json={"max_notes": 2})
    assert r.status_code == 200
    assert r.json()["max_notes"] == 2
    assert r.json()["max_bytes"] == Limits().max_bytes
    r = admin.patch("/v1/account/limits", json={"max_bytes": 10})
    assert (r.json()["max_notes"], r.json()["max_bytes"]) == (2, 10)

    error = error_of(admin.put(url("c.md"), json={"markdown": "x"}), 413, "vault_note_limit")
    assert error["type"] == "quota_exceeded"
    error_of(admin.put(url("a.md"), json={"markdown": "123456789"}), 413, "vault_byte_limit")
    assert admin.get(url("a.md")).json()["markdown"] == "12345"
    # Shrinking is still allowed past the limits.
    assert admin.put(url("a.md"), json={"markdown": "1"}).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"max_notes": 0},
        {"max_bytes": -1},
        {"max_notes": "10"},
        {"max_notes": 1.5},
        {"max_notes": True},
        {"max_notes": 10**30},
        {"max_notes": 5, "other": 1},
    ],
)
def test_limits_validation(admin: httpx.Client, body: dict[str, Any]) -> None:
    error_of(admin.patch("/v1/account/limits", json=body), 400, "invalid_input")
    assert admin.get("/v1/account").json()["max_notes"] == Limits().max_notes


# ---------------------------------------------------------------------------- isolation


@dataclass
class Tenants:
    a: httpx.Client
    b: httpx.Client
    b_admin_id: str


@pytest.fixture
def tenants(live_server: Any) -> Iterator[Tenants]:
    accounts = live_server.services.accounts
    accounts.create_account("other", account_id="acct-b")
    issued = accounts.issue_key(
        "acct-b", name="b-admin", toggles=Toggles(recall=True, tools=True, mcp=True), admin=True
    )
    with live_server.client() as a, live_server.client(issued.secret) as b:
        yield Tenants(a=a, b=b, b_admin_id=issued.key.id)


def _seed_a(a: httpx.Client) -> None:
    assert a.put(url("secret/plan.md"), json={"markdown": "v1 zebra #private"}).status_code == 201
    assert a.put(url("secret/plan.md"), json={"markdown": "v2 zebra #private"}).status_code == 200
    assert a.put(url("linker.md"), json={"markdown": "[[plan]] zebra"}).status_code == 201


def test_another_account_cannot_read_or_find_notes(tenants: Tenants) -> None:
    _seed_a(tenants.a)
    b = tenants.b
    error_of(b.get(url("secret/plan.md")), 404, "note_not_found")
    error_of(b.get(url("secret/plan.md", "/versions")), 404, "note_not_found")
    error_of(b.get(url("secret/plan.md", "/versions/1")), 404, "version_not_found")
    error_of(b.get(url("secret/plan.md", "/backlinks")), 404, "note_not_found")
    assert b.get("/v1/notes").json() == {"notes": [], "next_cursor": None}
    assert b.get("/v1/notes", params={"folder": "secret"}).json()["notes"] == []
    assert b.get("/v1/notes", params={"tag": "private"}).json()["notes"] == []
    assert b.get("/v1/search", params={"q": "zebra"}).json()["results"] == []
    assert b.get("/v1/search", params={"q": "zebra", "tag": "private"}).json()["results"] == []
    assert b.get("/v1/recent").json() == []
    assert b.get("/v1/tags").json() == {}
    account = b.get("/v1/account").json()
    assert account["id"] == "acct-b" and account["note_count"] == 0
    with zipfile.ZipFile(io.BytesIO(b.get("/v1/export").content)) as zf:
        assert not [n for n in zf.namelist() if n.endswith(".md")]
    # A cursor minted from A's listing does not leak anything either.
    page = tenants.a.get("/v1/notes", params={"limit": 1}).json()
    assert page["next_cursor"] is not None
    assert b.get("/v1/notes", params={"cursor": page["next_cursor"]}).json()["notes"] == []


def test_another_account_cannot_change_notes(tenants: Tenants) -> None:
    _seed_a(tenants.a)
    b = tenants.b
    error_of(b.delete(url("secret/plan.md")), 404, "note_not_found")
    error_of(b.delete(url("secret/plan.md"), headers={"If-Match": '"2"'}), 404)
    error_of(b.delete(url("secret/plan.md", "/history")), 404, "note_not_found")
    error_of(b.post(url("secret/plan.md", "/move"), json={"to": "mine.md"}), 404)
    error_of(b.post(url("secret/plan.md", "/versions/1/restore")), 404, "version_not_found")
    stale = b.put(url("secret/plan.md"), json={"markdown": "hijack"}, headers={"If-Match": '"2"'})
    error_of(stale, 409, "version_conflict")
    appended = b.post(
        url("secret/plan.md", "/append"), json={"text": "x"}, headers={"If-Match": '"2"'}
    )
    error_of(appended, 409, "version_conflict")

    # Writing to the same path makes B's own note, a version 1, and leaves A's alone.
    own = b.put(url("secret/plan.md"), json={"markdown": "b's own"}, headers={"If-None-Match": "*"})
    assert own.status_code == 201 and own.json()["note"]["version"] == 1
    assert b.post(url("secret/plan.md", "/append"), json={"text": "more"}).status_code == 200
    assert b.post(url("secret/plan.md", "/move"), json={"to": "b.md"}).status_code == 200
    assert b.delete(url("b.md")).status_code == 204
    assert b.delete(url("b.md", "/history")).status_code == 204
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("secret/plan.md", "imported by b")
        zf.writestr("linker.md", "imported by b")
    imported = b.post(
        "/v1/import", content=archive.getvalue(), headers={"Content-Type": "application/zip"}
    )
    assert imported.status_code == 200, imported.text
    assert imported.json()["created"] == 2

    a = tenants.a
    note = a.get(url("secret/plan.md")).json()
    assert note["markdown"] == "v2 zebra #private" and note["version"] == 2
    assert a.get(url("linker.md")).json()["markdown"] == "[[plan]] zebra"
    assert [v["version"] for v in a.get(url("secret/plan.md", "/versions")).json()] == [2, 1]
    assert [n["path"] for n in a.get(url("secret/plan.md", "/backlinks")).json()] == ["linker.md"]
    assert {h["path"] for h in a.get("/v1/search", params={"q": "zebra"}).json()["results"]} == {
        "secret/plan.md",
        "linker.md",
    }
    assert a.get("/v1/account").json()["note_count"] == 2
    # And B's links never count toward A's notes (nor A's toward B's).
    assert b.get(url("linker.md", "/backlinks")).json() == []


def test_another_account_cannot_touch_keys_or_limits(tenants: Tenants, live_server: Any) -> None:
    a, b = tenants.a, tenants.b
    a_admin_id = a.get("/v1/me").json()["key"]["id"]
    assert [k["name"] for k in b.get("/v1/keys").json()] == ["b-admin"]
    error_of(b.patch(f"/v1/keys/{a_admin_id}", json={"recall": False}), 404, "key_not_found")
    error_of(b.delete(f"/v1/keys/{a_admin_id}"), 404, "key_not_found")
    error_of(a.delete(f"/v1/keys/{tenants.b_admin_id}"), 404, "key_not_found")
    assert a.get("/v1/me").json()["key"]["revoked_at"] is None

    made = b.post("/v1/keys", json={"name": "b-script"}).json()
    with live_server.client(made["secret"]) as b2:
        assert b2.get("/v1/account").json()["id"] == "acct-b"
    assert "b-script" not in {k["name"] for k in a.get("/v1/keys").json()}

    assert b.patch("/v1/account/limits", json={"max_notes": 3}).json()["max_notes"] == 3
    assert a.get("/v1/account").json()["max_notes"] == Limits().max_notes


def test_budgets_are_per_account(tenants: Tenants) -> None:
    for _ in range(60):
        assert tenants.a.get("/v1/search", params={"q": "x"}).status_code == 200
    error_of(tenants.a.get("/v1/search", params={"q": "x"}), 429)
    assert tenants.b.get("/v1/search", params={"q": "x"}).status_code == 200


def test_admin_keys_rotate_but_the_last_one_cannot_be_revoked(
    admin: httpx.Client, live_server: Any
) -> None:
    me = admin.get("/v1/me").json()["key"]
    last = admin.delete(f"/v1/keys/{me['id']}")
    assert last.status_code == 409
    assert last.json()["error"]["code"] == "last_admin_key"
    created = admin.post("/v1/keys", json={"name": "second admin", "admin": True})
    assert created.status_code == 201 and created.json()["admin"] is True
    with live_server.client(created.json()["secret"]) as second:
        assert second.delete(f"/v1/keys/{me['id']}").status_code == 200
        assert second.get("/v1/keys").status_code == 200
    assert admin.get("/v1/me").status_code == 401  # the rotated-out key stopped working


def test_a_revoked_keys_toggles_cannot_change(admin: httpx.Client) -> None:
    key = admin.post("/v1/keys", json={"name": "old"}).json()
    admin.delete(f"/v1/keys/{key['id']}")
    r = admin.patch(f"/v1/keys/{key['id']}", json={"recall": True})
    assert r.status_code == 409 and r.json()["error"]["code"] == "key_revoked"


def test_a_keys_response_cache_is_off_until_turned_on(admin: httpx.Client) -> None:
    made = admin.post("/v1/keys", json={"name": "cached", "cache": True})
    assert made.status_code in (200, 201), made.text
    body = made.json()
    assert (body["cache"], body["cache_ttl_seconds"]) == (True, 3600)
    key_id = body["id"]
    plain = admin.post("/v1/keys", json={"name": "plain"}).json()
    assert (plain["cache"], plain["cache_ttl_seconds"]) == (False, None)
    changed = admin.patch(f"/v1/keys/{key_id}", json={"cache_ttl_seconds": 60}).json()
    assert (changed["cache"], changed["cache_ttl_seconds"]) == (True, 60)
    off = admin.patch(f"/v1/keys/{key_id}", json={"cache": False}).json()
    assert (off["cache"], off["cache_ttl_seconds"]) == (False, None)
    refused = admin.patch(f"/v1/keys/{key_id}", json={"cache_ttl_seconds": 0})
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "invalid_input"
    assert "cache_ttl_seconds" in refused.json()["error"]["message"]
