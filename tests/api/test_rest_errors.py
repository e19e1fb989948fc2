"""Errors through the REST API on a real server: auth, status codes, shape, budgets.

Every error answer is exactly {"error": {"type", "code", "message"}}, whatever went wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.routing import Match

from memvault.api.app import create_app
from memvault.domain.models import MAX_NOTE_BYTES
from tests.api.helpers import error_of, url
from tests.support.routes import api_routes, flat_routes


@pytest.fixture
def c(live_server: Any) -> Iterator[httpx.Client]:
    with live_server.client() as client:
        yield client


@pytest.fixture
def anon(live_server: Any) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.url, timeout=60.0) as client:
        yield client


# Every authenticated route, with a body that would be valid.
ROUTES: list[tuple[str, str, dict[str, Any]]] = [
    ("GET", "/v1/notes", {}),
    ("GET", "/v1/notes/a.md", {}),
    ("PUT", "/v1/notes/a.md", {"json": {"markdown": "x"}}),
    ("PUT", "/v1/notes/a.md", {"content": b"raw", "headers": {"Content-Type": "text/markdown"}}),
    ("DELETE", "/v1/notes/a.md", {}),
    ("POST", "/v1/notes/a.md/append", {"json": {"text": "x"}}),
    ("POST", "/v1/notes/a.md/move", {"json": {"to": "b.md"}}),
    ("GET", "/v1/notes/a.md/versions", {}),
    ("GET", "/v1/notes/a.md/versions/1", {}),
    ("POST", "/v1/notes/a.md/versions/1/restore", {}),
    ("GET", "/v1/notes/a.md/backlinks", {}),
    ("GET", "/v1/notes/a.md/links", {}),
    ("DELETE", "/v1/notes/a.md/history", {}),
    ("GET", "/v1/search?q=x", {}),
    ("GET", "/v1/recent", {}),
    ("GET", "/v1/tags", {}),
    ("POST", "/v1/import", {"content": b"PK", "headers": {"Content-Type": "application/zip"}}),
    ("GET", "/v1/export", {}),
    ("GET", "/v1/export/windows-unsafe", {}),
    # The vault's files (ADR 0043).
    ("GET", "/v1/files", {}),
    ("GET", "/v1/files/a.png", {}),
    ("PUT", "/v1/files/a.png", {"content": b"\x89PNG"}),
    ("DELETE", "/v1/files/a.png", {}),
    # Import and export jobs (ADR 0041); their token links take no key: OPEN_ROUTES.
    ("POST", "/v1/imports", {"json": {"bytes": 64}}),
    ("GET", "/v1/imports/imp_some", {}),
    ("POST", "/v1/exports", {}),
    ("GET", "/v1/exports/exp_some", {}),
    ("POST", "/v1/files/uploads", {"json": {"path": "big.bin", "bytes": 64}}),
    ("POST", "/v1/files/uploads/upl_some/complete", {}),
    ("GET", "/v1/jobs", {}),
    # Money and memory profiles.
    ("GET", "/v1/balance", {}),
    ("POST", "/v1/balance", {"json": {"set_micros": 1}}),
    ("GET", "/v1/usage", {}),
    ("GET", "/v1/memories", {}),
    ("POST", "/v1/memories", {"json": {"slug": "u", "name": "U"}}),
    ("GET", "/v1/memories/some-id", {}),
    ("PATCH", "/v1/memories/some-id", {"json": {"name": "x"}}),
    ("DELETE", "/v1/memories/some-id", {}),
    ("POST", "/v1/memories/some-id/items", {"json": {"item_type": "fact", "text": "x"}}),
    ("PATCH", "/v1/memories/some-id/items/some-item", {"json": {"text": "x"}}),
    ("DELETE", "/v1/memories/some-id/items/some-item", {}),
    ("GET", "/v1/me", {}),
    ("GET", "/v1/keys", {}),
    ("POST", "/v1/keys", {"json": {"name": "k"}}),
    ("PATCH", "/v1/keys/some-id", {"json": {"recall": True}}),
    ("DELETE", "/v1/keys/some-id", {}),
    ("GET", "/v1/account", {}),
    ("PATCH", "/v1/account/limits", {"json": {"max_notes": 5}}),
    # The organisation, members and sessions (tests/api/test_people_api.py).
    ("GET", "/v1/org", {}),
    ("PATCH", "/v1/org", {"json": {"name": "x"}}),
    ("GET", "/v1/members", {}),
    ("PATCH", "/v1/members/some-id", {"json": {"role": "admin"}}),
    ("DELETE", "/v1/members/some-id", {}),
    ("GET", "/v1/invitations", {}),
    ("POST", "/v1/invitations", {"json": {"email": "a@b.test"}}),
    ("DELETE", "/v1/invitations/some-id", {}),
    ("GET", "/v1/sessions", {}),
    ("DELETE", "/v1/sessions/current", {}),
    ("DELETE", "/v1/sessions/some-id", {}),
    ("PATCH", "/v1/me", {"json": {"name": "x"}}),
    ("POST", "/v1/me/password", {"json": {"new_password": "a long passphrase"}}),
    ("GET", "/v1/audit", {}),
]
ROUTE_IDS = [f"{m} {p}" for m, p, _ in ROUTES]
# Routes that take no key: signing in, joining, and a job's links (their token is the
# credential: tests/contract/test_jobs.py).
OPEN_ROUTES = {
    ("POST", "/v1/sessions"),
    ("POST", "/v1/invitations/accept"),
    ("PUT", "/v1/imports/{job_id}/upload"),
    ("GET", "/v1/exports/{job_id}/download"),
    ("PUT", "/v1/file-uploads/{upload_id}"),
    ("GET", "/v1/file-downloads/{path:path}"),
}


def test_the_table_holds_every_management_route(live_server: Any) -> None:
    app = create_app(live_server.services, surfaces=("management",))
    routes = flat_routes(app)
    tabled = set()
    for method, path, _ in ROUTES:
        scope = {"type": "http", "method": method, "path": httpx.URL(path).path}
        tabled |= {
            (method, route.path) for route in routes if route.matches(scope)[0] is Match.FULL
        }
    missing = sorted(set(api_routes(app)) - tabled - OPEN_ROUTES)
    assert not missing, f"management routes the auth tests above do not try: {missing}"


def _unauthorized(response: httpx.Response, code: str) -> None:
    error = error_of(response, 401, code)
    assert error["type"] == "authentication_error"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


# ---------------------------------------------------------------------------- auth


@pytest.mark.parametrize(("method", "path", "kwargs"), ROUTES, ids=ROUTE_IDS)
def test_every_route_needs_a_key(
    live_server: Any, anon: httpx.Client, method: str, path: str, kwargs: dict[str, Any]
) -> None:
    def send(authorization: str | None) -> httpx.Response:
        headers = dict(kwargs.get("headers", {}))
        if authorization is not None:
            headers["Authorization"] = authorization
        rest = {k: v for k, v in kwargs.items() if k != "headers"}
        return anon.request(method, path, headers=headers, **rest)

    _unauthorized(send(None), "missing_api_key")
    _unauthorized(send(""), "missing_api_key")
    for header in ("Basic dXNlcjpwYXNz", "Bearer", "Token abc", "mvk_abc", "Bearer\tmvk_x"):
        _unauthorized(send(header), "malformed_authorization")
    _unauthorized(send("Bearer mvk_nope"), "invalid_api_key")
    # The admin key with one character changed is just as invalid.
    almost = live_server.admin_key[:-1] + ("A" if live_server.admin_key[-1] != "A" else "B")
    _unauthorized(send(f"Bearer {almost}"), "invalid_api_key")
    # Nothing was written by any of these.
    assert live_server.services.accounts.get_account("local").note_count == 0


@pytest.mark.parametrize(("method", "path", "kwargs"), ROUTES, ids=ROUTE_IDS)
def test_a_revoked_key_is_401_on_every_route(
    live_server: Any, c: httpx.Client, method: str, path: str, kwargs: dict[str, Any]
) -> None:
    made = c.post("/v1/keys", json={"name": "short-lived"}).json()
    assert c.delete(f"/v1/keys/{made['id']}").status_code == 200
    with live_server.client(made["secret"]) as revoked:
        _unauthorized(revoked.request(method, path, **kwargs), "revoked_api_key")


def test_the_bearer_scheme_is_case_insensitive(live_server: Any, anon: httpx.Client) -> None:
    for scheme in ("bearer", "BEARER", "Bearer"):
        r = anon.get("/v1/me", headers={"Authorization": f"{scheme} {live_server.admin_key}"})
        assert r.status_code == 200


MCP_INITIALIZE = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}'


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        *[(m, p, k) for m, p, k in ROUTES if p in ("/v1/notes", "/v1/me", "/v1/keys")],
        ("PUT", "/v1/notes/a.md", {"json": {"markdown": "x"}}),
        # MCP and the gateway read the key in the same place (memvault.http_edge).
        (
            "POST",
            "/mcp",
            {
                "content": MCP_INITIALIZE,
                "headers": {
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                },
            },
        ),
        ("POST", "/v1/chat/completions", {"json": {"model": "m", "messages": []}}),
        ("POST", "/v1/messages", {"json": {"model": "m", "max_tokens": 1, "messages": []}}),
        ("GET", "/v1/models", {}),
    ],
)
def test_duplicate_authorization_headers_are_400_on_every_surface(
    live_server: Any, anon: httpx.Client, method: str, path: str, kwargs: dict[str, Any]
) -> None:
    """Not "the first one wins": two keys in one request is a client bug (or a proxy
    adding its own), and guessing which is meant could act as the wrong account."""
    good = f"Bearer {live_server.admin_key}"
    extra = list(kwargs.get("headers", {}).items())
    rest = {k: v for k, v in kwargs.items() if k != "headers"}
    for pair in ([good, "Bearer mvk_other"], ["Bearer mvk_other", good], [good, good]):
        headers = [*extra, *(("Authorization", value) for value in pair)]
        r = anon.request(method, path, headers=headers, **rest)
        assert r.status_code == 400, r.text
        assert "duplicate_authorization" in r.text and "Authorization" in r.text
    assert live_server.services.accounts.get_account("local").note_count == 0


def test_duplicate_x_api_key_headers_are_400_where_x_api_key_is_read(
    live_server: Any, anon: httpx.Client
) -> None:
    body = {"model": "m", "max_tokens": 1, "messages": []}
    key = live_server.admin_key
    r = anon.post("/v1/messages", json=body, headers=[("x-api-key", key), ("x-api-key", "k2")])
    assert r.status_code == 400 and r.json()["error"]["code"] == "duplicate_authorization"
    assert "x-api-key" in r.json()["error"]["message"]


def test_a_bad_key_is_401_before_the_body_is_looked_at(anon: httpx.Client) -> None:
    for path in ("/v1/notes/a.md/append", "/v1/keys"):
        broken = anon.post(path, content=b"{nope", headers={"Content-Type": "application/json"})
        _unauthorized(broken, "missing_api_key")
        wrong_type = anon.post(path, json={"text": 5, "name": 5})
        _unauthorized(wrong_type, "missing_api_key")
    put = anon.put(url("a.md"), content=b"{nope", headers={"Content-Type": "application/json"})
    _unauthorized(put, "missing_api_key")
    huge = anon.put(
        url("a.md"),
        content=b"x" * (2 * MAX_NOTE_BYTES),
        headers={"Content-Type": "text/markdown", "Authorization": "Bearer mvk_nope"},
    )
    _unauthorized(huge, "invalid_api_key")


# ---------------------------------------------------------------------------- public routes


def test_healthz_needs_no_key(live_server: Any, anon: httpx.Client) -> None:
    r = anon.get("/healthz")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok"
    assert body["backend"] == live_server.services.settings.backend
    assert isinstance(body["version"], str)


def test_openapi_schema_lists_every_route(anon: httpx.Client) -> None:
    r = anon.get("/openapi.json")
    assert r.status_code == 200
    schema = r.json()
    assert schema["info"]["title"] == "memvault"
    paths = schema["paths"]
    expected = {
        "/healthz": {"get"},
        "/v1/notes": {"get"},
        "/v1/notes/{path}": {"get", "put", "delete"},
        "/v1/notes/{path}/append": {"post"},
        "/v1/notes/{path}/move": {"post"},
        "/v1/notes/{path}/versions": {"get"},
        "/v1/notes/{path}/versions/{version}": {"get"},
        "/v1/notes/{path}/versions/{version}/restore": {"post"},
        "/v1/notes/{path}/backlinks": {"get"},
        "/v1/notes/{path}/links": {"get"},
        "/v1/notes/{path}/history": {"delete"},
        "/v1/search": {"get"},
        "/v1/recent": {"get"},
        "/v1/tags": {"get"},
        "/v1/import": {"post"},
        "/v1/export": {"get"},
        "/v1/me": {"get"},
        "/v1/keys": {"get", "post"},
        "/v1/keys/{key_id}": {"patch", "delete"},
        "/v1/account": {"get"},
        "/v1/account/limits": {"patch"},
        "/v1/org": {"get", "patch"},
        "/v1/members": {"get"},
        "/v1/members/{member_id}": {"patch", "delete"},
        "/v1/invitations": {"get", "post"},
        "/v1/invitations/{invitation_id}": {"delete"},
        "/v1/invitations/accept": {"post"},
        "/v1/sessions": {"get", "post"},
        "/v1/sessions/current": {"delete"},
        "/v1/sessions/{session_id}": {"delete"},
        "/v1/me/password": {"post"},
        "/v1/audit": {"get"},
        "/v1/files": {"get"},
        "/v1/files/{path}": {"get", "put", "delete"},
        "/v1/imports": {"post"},
        "/v1/imports/{job_id}": {"get"},
        "/v1/imports/{job_id}/upload": {"put"},
        "/v1/exports": {"post"},
        "/v1/exports/{job_id}": {"get"},
        "/v1/exports/{job_id}/download": {"get"},
        "/v1/jobs": {"get"},
    }
    for path, methods in expected.items():
        assert path in paths, path
        assert methods <= set(paths[path]), (path, set(paths[path]))
    put_body = paths["/v1/notes/{path}"]["put"]["requestBody"]["content"]
    assert {"application/json", "text/markdown"} <= set(put_body)
    assert "application/zip" in paths["/v1/import"]["post"]["requestBody"]["content"]
    upload = paths["/v1/imports/{job_id}/upload"]["put"]["requestBody"]["content"]
    assert "application/zip" in upload
    docs = anon.get("/docs")
    assert docs.status_code == 200 and "openapi.json" in docs.text


# ---------------------------------------------------------------------------- 404, 405


# "/" is the dashboard (tests/dashboard/test_serving.py).
@pytest.mark.parametrize(
    "path", ["/v1/nope", "/nope", "/v2/notes", "/v1/notes-list", "/v1/keys/a/b"]
)
def test_unknown_routes_are_404(c: httpx.Client, anon: httpx.Client, path: str) -> None:
    for client in (c, anon):
        error = error_of(client.get(path), 404, "route_not_found")
        assert error["type"] == "not_found"


def test_a_missing_note_is_404(c: httpx.Client) -> None:
    error = error_of(c.get(url("nothing here.md")), 404, "note_not_found")
    assert error["type"] == "not_found"
    assert "nothing here.md" in error["message"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PATCH", "/v1/notes/a.md"),
        ("POST", "/v1/notes/a.md"),
        ("POST", "/v1/notes"),
        ("DELETE", "/v1/notes"),
        ("PUT", "/v1/search"),
        ("POST", "/healthz"),
        ("PATCH", "/v1/notes/a.md/append"),
        ("PATCH", "/v1/notes/a.md/versions/1/restore"),
        ("PUT", "/v1/keys"),
        ("GET", "/v1/import"),
        ("POST", "/v1/account"),
    ],
)
def test_wrong_methods_are_405_with_allow(c: httpx.Client, method: str, path: str) -> None:
    r = c.request(method, path)
    error = error_of(r, 405, "method_not_allowed")
    assert method in error["message"]
    assert r.headers.get("Allow")


# ---------------------------------------------------------------------------- 400


@pytest.mark.parametrize(
    "raw_path",
    [
        "no-suffix",
        "upper.MD",
        "a//b.md",
        "/abs.md",
        "C:/win.md",
        "a%5Cb.md",
        "ctrl%01.md",
        "%20lead.md",
        "trail%20/x.md",
        ".md",
        "dir/.md",
        "a/%2E%2E/b.md",
        "x" * 600 + ".md",
        "bad%ED%A0%80.md",
        "Caf%E9.md",
    ],
)
def test_invalid_note_paths_are_400(c: httpx.Client, raw_path: str) -> None:
    r = c.put("/v1/notes/" + raw_path, json={"markdown": "x"})
    error = error_of(r, 400)
    assert error["type"] == "invalid_request"
    assert error["code"] == "invalid_path"
    error_of(c.get("/v1/notes/" + raw_path), 400, "invalid_path")
    assert c.get("/v1/notes").json()["notes"] == []


def test_a_path_that_is_no_sub_resource_is_an_invalid_note_path(c: httpx.Client) -> None:
    c.put(url("a.md"), json={"markdown": "x"})
    # "a.md/versions/one" is no version route; as a note path it lacks ".md".
    error_of(c.get(url("a.md", "/versions/one")), 400, "invalid_path")
    error_of(c.get(url("a.md", "/append")), 400, "invalid_path")
    error_of(c.get(url("a.md", "/versions/1/restore")), 400, "invalid_path")
    error_of(c.get("/v1/notes/"), 400, "invalid_path")


def test_invalid_folder_and_cursor_are_400(c: httpx.Client) -> None:
    error_of(c.get("/v1/notes", params={"folder": "../up"}), 400, "invalid_path")
    error_of(c.get("/v1/search", params={"q": "x", "folder": "/abs"}), 400, "invalid_path")
    error_of(c.get("/v1/notes", params={"cursor": "%%%not-base64"}), 400, "invalid_cursor")
    error_of(c.get("/v1/notes", params={"cursor": "//79"}), 400, "invalid_cursor")


@pytest.mark.parametrize(
    "if_match",
    ["abc", '"0"', "0", "-1", "*", '"1", "2"', "²", "1.5", "9" * 5000, ""],
)
def test_bad_if_match_is_400_and_changes_nothing(c: httpx.Client, if_match: str) -> None:
    c.put(url("a.md"), json={"markdown": "x"})
    # As bytes, so that non-ASCII values reach the server as they are.
    headers = {b"If-Match": if_match.encode()}
    for r in (
        c.put(url("a.md"), json={"markdown": "y"}, headers=headers),
        c.delete(url("a.md"), headers=headers),
        c.post(url("a.md", "/append"), json={"text": "y"}, headers=headers),
        c.post(url("a.md", "/move"), json={"to": "b.md"}, headers=headers),
        c.post(url("a.md", "/versions/1/restore"), headers=headers),
    ):
        error_of(r, 400, "invalid_precondition")
    note = c.get(url("a.md")).json()
    assert note["markdown"] == "x" and note["version"] == 1


def test_bad_if_none_match_on_put_is_400(c: httpx.Client) -> None:
    for value in ('"1"', "W/*", "**"):
        r = c.put(url("a.md"), json={"markdown": "x"}, headers={"If-None-Match": value})
        error_of(r, 400, "invalid_precondition")
    both = c.put(
        url("a.md"), json={"markdown": "x"}, headers={"If-None-Match": "*", "If-Match": "1"}
    )
    error_of(both, 400, "invalid_precondition")
    error_of(c.get(url("a.md")), 404)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/v1/notes/a.md"),
        ("POST", "/v1/notes/a.md/append"),
        ("POST", "/v1/notes/a.md/move"),
        ("POST", "/v1/keys"),
        ("PATCH", "/v1/account/limits"),
    ],
)
@pytest.mark.parametrize("body", [b"{not json", b'{"markdown": "x",}', b"\xff\xfe", b"[1, 2"])
def test_invalid_json_is_400(c: httpx.Client, method: str, path: str, body: bytes) -> None:
    r = c.request(method, path, content=body, headers={"Content-Type": "application/json"})
    error = error_of(r, 400, "invalid_json")
    assert error["type"] == "invalid_request"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/v1/notes/deep.md"),
        ("POST", "/v1/notes/deep.md/append"),
        ("POST", "/v1/notes/deep.md/move"),
        ("POST", "/v1/keys"),
        ("PATCH", "/v1/account/limits"),
        ("POST", "/v1/balance"),
    ],
)
@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_body_nested_too_deeply_is_400_not_500(
    c: httpx.Client, method: str, path: str, depth: int
) -> None:
    for body in ("[" * depth + "]" * depth, '{"markdown": ' + "[" * depth + "]" * depth + "}"):
        r = c.request(method, path, content=body, headers={"Content-Type": "application/json"})
        error = error_of(r, 400, "invalid_json")
        assert "nested" in error["message"]
    error_of(c.get(url("deep.md")), 404)


def test_put_without_content_type_that_looks_like_json_is_parsed_as_json(c: httpx.Client) -> None:
    error_of(c.put(url("a.md"), content=b"{broken"), 400, "invalid_json")
    assert c.put(url("a.md"), content=b'{"markdown": "ok"}').status_code == 201
    assert c.get(url("a.md")).json()["markdown"] == "ok"


def test_unsupported_content_type_and_bad_utf8_are_400(c: httpx.Client) -> None:
    for content_type in ("application/x-www-form-urlencoded", "application/octet-stream"):
        r = c.put(url("a.md"), content=b"x", headers={"Content-Type": content_type})
        error = error_of(r, 400, "unsupported_media_type")
        assert "text/markdown" in error["message"]
    r = c.put(url("a.md"), content=b"\xff\xfe bad", headers={"Content-Type": "text/markdown"})
    error_of(r, 400, "invalid_utf8")
    error_of(c.get(url("a.md")), 404)


def test_a_blank_search_is_400(c: httpx.Client) -> None:
    error_of(c.get("/v1/search", params={"q": "   "}), 400, "empty_query")


# ---------------------------------------------------------------------------- 400 invalid_input
# Bad input is 400 with the field named, whatever check found it (FastAPI's validation or
# the vault's own); 422 is kept for content that was understood and refused.


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("PUT", "/v1/notes/a.md", {"json": {"markdown": 5}}),
        ("PUT", "/v1/notes/a.md", {"json": {"markdown": None}}),
        ("PUT", "/v1/notes/a.md", {"json": {}}),
        ("PUT", "/v1/notes/a.md", {"json": {"markdown": "x", "title": "extra"}}),
        ("PUT", "/v1/notes/a.md", {"json": ["markdown"]}),
        ("PUT", "/v1/notes/a.md", {"json": "just a string"}),
        ("POST", "/v1/notes/a.md/append", {"json": {"text": 5}}),
        ("POST", "/v1/notes/a.md/append", {"json": {"text": ""}}),
        ("POST", "/v1/notes/a.md/append", {"json": {}}),
        ("POST", "/v1/notes/a.md/append", {"json": {"text": ["a"]}}),
        (
            "POST",
            "/v1/notes/a.md/append",
            {"content": b"text", "headers": {"Content-Type": "text/plain"}},
        ),
        ("POST", "/v1/notes/a.md/move", {"json": {"to": 3}}),
        ("POST", "/v1/notes/a.md/move", {"json": {"to": "b.md", "force": True}}),
        ("GET", "/v1/notes?limit=0", {}),
        ("GET", "/v1/notes?limit=501", {}),
        ("GET", "/v1/notes?limit=ten", {}),
        ("GET", "/v1/search", {}),
        ("GET", "/v1/search?q=", {}),
        ("GET", "/v1/search?q=x&limit=101", {}),
        ("GET", "/v1/search?q=" + "x" * 4097, {}),
        ("GET", "/v1/recent?limit=0", {}),
        ("GET", "/v1/recent?limit=-5", {}),
    ],
)
def test_bad_input_is_400_invalid_input(
    c: httpx.Client, method: str, path: str, kwargs: dict[str, Any]
) -> None:
    error = error_of(c.request(method, path, **kwargs), 400, "invalid_input")
    assert error["type"] == "invalid_request"
    assert c.get("/v1/notes").json()["notes"] == []


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/notes/s.md", b'{"markdown": "a\\ud800b"}'),
        ("/v1/notes/s.md/append", b'{"text": "a\\udfffb"}'),
    ],
)
def test_an_unpaired_surrogate_in_json_is_400_not_500(
    c: httpx.Client, path: str, body: bytes
) -> None:
    method = "PUT" if path.endswith(".md") else "POST"
    for headers in ({"Content-Type": "application/json"}, {}):
        r = c.request(method, path, content=body, headers=headers)
        error = error_of(r, 400, "invalid_input")
        # Without a content type, append does not read its body as JSON at all.
        assert "unpaired surrogate" in error["message"] or not headers
    error_of(c.get(url("s.md")), 404)


@pytest.mark.parametrize(
    ("method", "path", "kwargs", "message"),
    [
        ("PUT", "/v1/notes/a.md", {"json": {"markdown": 5}}, "markdown: must be a string"),
        ("PUT", "/v1/notes/a.md", {"json": {}}, "markdown: is required"),
        (
            "PUT",
            "/v1/notes/a.md",
            {"json": {"markdown": "x", "title": "extra"}},
            "unknown field 'title' in the body",
        ),
        (
            "PUT",
            "/v1/notes/a.md",
            {"json": ["markdown"]},
            "the body must be a JSON object (Content-Type: application/json)",
        ),
        ("POST", "/v1/notes/a.md/append", {"json": {"text": ""}}, "text: must not be empty"),
        (
            "POST",
            "/v1/notes/a.md/append",
            {"json": ["a"]},
            "the body must be a JSON object (Content-Type: application/json)",
        ),
        ("POST", "/v1/notes/a.md/move", {"json": {}}, "to: is required"),
        ("POST", "/v1/notes/a.md/move", {"json": {"to": 3}}, "to: must be a string"),
        ("GET", "/v1/notes?limit=0", {}, "limit: must be at least 1"),
        ("GET", "/v1/notes?limit=501", {}, "limit: must be at most 500"),
        ("GET", "/v1/notes?limit=ten", {}, "limit: must be a whole number"),
        ("GET", "/v1/search", {}, "q: is required"),
        ("GET", "/v1/search?q=", {}, "q: must not be empty"),
        ("GET", "/v1/search?q=x&limit=101", {}, "limit: must be at most 100"),
        ("GET", "/v1/search?q=" + "x" * 4097, {}, "q: must be at most 4096 characters"),
        ("GET", "/v1/notes/a.md/versions/0", {}, "version: must be at least 1"),
        (
            "POST",
            "/v1/keys",
            {"json": {"name": "k", "admin": "yes"}},
            "admin: must be true or false",
        ),
        (
            "PATCH",
            "/v1/account/limits",
            {"json": {"max_notes": 1.5}},
            "max_notes: must be a whole number",
        ),
    ],
)
def test_invalid_input_names_the_field(
    c: httpx.Client, method: str, path: str, kwargs: dict[str, Any], message: str
) -> None:
    error = error_of(c.request(method, path, **kwargs), 400, "invalid_input")
    assert error["message"] == message


def test_every_problem_is_named_in_one_message(c: httpx.Client) -> None:
    error = error_of(c.get("/v1/search", params={"limit": "x"}), 400, "invalid_input")
    assert error["message"] == "q: is required; limit: must be a whole number"


# ---------------------------------------------------------------------------- 409, 413


def test_conflicts_are_409_with_the_shape(c: httpx.Client) -> None:
    c.put(url("a.md"), json={"markdown": "x"})
    error = error_of(c.put(url("a.md"), json={"markdown": "y"}, headers={"If-Match": "5"}), 409)
    assert error == {
        "type": "conflict",
        "code": "version_conflict",
        "message": error["message"],
    }


def test_too_large_is_413_with_the_limit_in_the_message(c: httpx.Client) -> None:
    error = error_of(
        c.put(url("big.md"), json={"markdown": "y" * (MAX_NOTE_BYTES + 1)}), 413, "note_too_large"
    )
    assert error["type"] == "payload_too_large"
    assert str(MAX_NOTE_BYTES) in error["message"]


# ---------------------------------------------------------------------------- 429


def _rate_limited(response: httpx.Response, code: str) -> int:
    error = error_of(response, 429, code)
    assert error["type"] == "rate_limited"
    retry_after = response.headers["Retry-After"]
    assert retry_after.isdigit() and int(retry_after) >= 1
    assert retry_after in error["message"]
    return int(retry_after)


def test_searches_past_the_burst_are_429_with_retry_after(
    live_server: Any, c: httpx.Client
) -> None:
    for i in range(60):
        r = c.get("/v1/search", params={"q": f"term{i}"})
        assert r.status_code == 200, (i, r.text)
    wait = _rate_limited(c.get("/v1/search", params={"q": "more"}), "searches_budget_exhausted")
    _rate_limited(c.get("/v1/search", params={"q": "more"}), "searches_budget_exhausted")
    # Searches and writes are separate budgets; reads are not budgeted at all.
    assert c.put(url("a.md"), json={"markdown": "still writable"}).status_code == 201
    assert c.get("/v1/notes").status_code == 200
    assert c.get(url("a.md")).status_code == 200
    # The bucket refills at 2 a second.
    live_server.clock.advance(wait)
    assert c.get("/v1/search", params={"q": "again"}).status_code == 200
    live_server.clock.advance(30)
    for _ in range(60):
        assert c.get("/v1/search", params={"q": "x"}).status_code == 200
    _rate_limited(c.get("/v1/search", params={"q": "x"}), "searches_budget_exhausted")


def test_writes_past_the_burst_are_429_and_change_nothing(
    live_server: Any, c: httpx.Client
) -> None:
    for i in range(60):
        r = c.put(url(f"n{i}.md"), json={"markdown": f"note {i}"})
        assert r.status_code == 201, (i, r.text)
    code = "writes_budget_exhausted"
    _rate_limited(c.put(url("late.md"), json={"markdown": "late"}), code)
    _rate_limited(c.post(url("n0.md", "/append"), json={"text": "late"}), code)
    _rate_limited(c.post(url("n0.md", "/move"), json={"to": "moved.md"}), code)
    _rate_limited(c.delete(url("n1.md")), code)
    _rate_limited(c.post(url("n0.md", "/versions/1/restore")), code)
    error_of(c.get(url("late.md")), 404)
    assert c.get(url("n0.md")).json()["markdown"] == "note 0"
    assert c.get(url("n1.md")).status_code == 200
    assert len(c.get("/v1/notes", params={"limit": 500}).json()["notes"]) == 60
    # Searching still works: the budgets are separate.
    assert c.get("/v1/search", params={"q": "note"}).status_code == 200
    live_server.clock.advance(1)
    assert c.put(url("late.md"), json={"markdown": "late"}).status_code == 201


# ---------------------------------------------------------------------------- shape everywhere


def test_every_error_has_exactly_the_shape(c: httpx.Client, anon: httpx.Client) -> None:
    c.put(url("a.md"), json={"markdown": "x"})
    c.put(url("b.md"), json={"markdown": "y"})
    responses = [
        anon.get("/v1/notes"),
        c.get("/v1/nope"),
        c.patch("/v1/notes/a.md"),
        c.get(url("zz.md")),
        c.put(url("a.md"), json={"markdown": "z"}, headers={"If-Match": "9"}),
        c.post(url("a.md", "/move"), json={"to": "b.md"}),
        c.put("/v1/notes/%2E%2E/x.md", json={"markdown": "x"}),
        c.put(url("a.md"), json={"markdown": 1}),
        c.put(url("a.md"), content=b"{", headers={"Content-Type": "application/json"}),
        c.put(url("a.md"), json={"markdown": "q" * (MAX_NOTE_BYTES + 1)}),
        c.delete(url("a.md", "/history")),
    ]
    assert [r.status_code for r in responses] == [
        401,
        404,
        405,
        404,
        409,
        409,
        400,
        400,
        400,
        413,
        409,  # purging a live note: a state conflict (delete it first)
    ]
    for r in responses:
        error_of(r, r.status_code)


def test_an_unexpected_failure_is_a_500_with_the_shape_and_no_details(
    live_server: Any, c: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("internal detail that must not leak")

    monkeypatch.setattr(live_server.services.vault, "tags", boom)
    r = c.get("/v1/tags")
    error = error_of(r, 500, "internal_error")
    assert error["type"] == "internal_error"
    assert "internal detail" not in r.text


def test_a_dependency_outage_is_a_503_with_the_shape(
    live_server: Any, c: httpx.Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.errors import ServiceUnavailable

    def down(*_args: object, **_kwargs: object) -> None:
        raise ServiceUnavailable("the search engine is not answering", code="search_unavailable")

    monkeypatch.setattr(live_server.services.index, "search", down)
    error = error_of(c.get("/v1/search", params={"q": "x"}), 503, "search_unavailable")
    assert error["type"] == "service_unavailable"
    assert error["message"] == "the search engine is not answering"
