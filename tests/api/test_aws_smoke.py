"""One pass over every management route on the AWS backend, on a real server.

The REST suite's behaviour tests run on the embedded backend (tests/api/conftest.py);
the services behind the routes run their full contract suite on both backends
(tests/contract). This pass is what ties the two together on AWS: each route, called
over HTTP as a client would, against DynamoDB and S3 on moto and the real OpenSearch
node, answers as documented. The last test fails when a route is added without being
called here, so no route can lose its AWS coverage unnoticed.

(The gateway's routes run on both backends in tests/gateway; MCP's in tests/mcp.)
"""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Match

from memvault.api.app import create_app
from memvault.container import build_services
from memvault.domain import jobs as J
from tests.api.helpers import url
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.jobs import TERMINAL, deliver, moto_http
from tests.support.routes import api_routes, flat_routes
from tests.support.servers import LiveServer, serve

PLAN = "projects/Launch plan.md"


@pytest.fixture
def aws_server(tmp_path: Path, clock: FakeClock) -> Iterator[LiveServer]:
    # The job API's presigned S3 links name moto's loopback server (tests/support/jobs.py).
    with backend_settings(tmp_path, "aws", s3_presign_endpoint=moto_http()) as settings:
        yield from serve(build_services(settings, clock=clock), clock)


class RecordingClient:
    """An httpx client that notes which route template each request matched."""

    def __init__(
        self,
        server: LiveServer,
        calls: set[tuple[str, str]],
        client: httpx.Client | None = None,
    ) -> None:
        self._client = client or server.client()
        self._routes = flat_routes(create_app(server.services))
        self._calls = calls

    def request(self, method: str, path: str, **kwargs: object) -> httpx.Response:
        response = self._client.request(method, path, **kwargs)  # type: ignore[arg-type]
        scope = {"type": "http", "method": method, "path": httpx.URL(path).path}
        for route in self._routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                self._calls.add((method, getattr(route, "path", "")))
                break
        return response

    def close(self) -> None:
        self._client.close()


def ok(response: httpx.Response, status: int = 200) -> httpx.Response:
    assert response.status_code == status, response.text
    return response


def notes_versions_links_and_search(c: RecordingClient) -> None:
    markdown = "---\ntags: [launch]\n---\n# Launch plan\n\nShip the beta on Friday. [[Checklist]]\n"
    created = ok(
        c.request(
            "PUT", url(PLAN), content=markdown.encode(), headers={"Content-Type": "text/markdown"}
        ),
        201,
    ).json()
    assert created["note"]["version"] == 1 and created["note"]["tags"] == ["launch"]
    ok(c.request("PUT", url("Checklist.md"), json={"markdown": "# Checklist\n\n- beta\n"}), 201)

    listed = ok(c.request("GET", "/v1/notes?folder=projects")).json()
    assert [n["path"] for n in listed["notes"]] == [PLAN]
    read = ok(c.request("GET", url(PLAN)))
    assert read.headers["ETag"] == '"1"' and read.json()["markdown"] == markdown

    appended = ok(c.request("POST", url(PLAN, "/append"), json={"text": "Owner: Ana."})).json()
    assert appended["note"]["version"] == 2
    versions = ok(c.request("GET", url(PLAN, "/versions"))).json()
    assert [v["version"] for v in versions] == [2, 1]
    assert ok(c.request("GET", url(PLAN, "/versions/1"))).json()["markdown"] == markdown
    restored = ok(c.request("POST", url(PLAN, "/versions/1/restore"))).json()
    assert restored["note"]["version"] == 3

    backlinks = ok(c.request("GET", url("Checklist.md", "/backlinks"))).json()
    assert [b["path"] for b in backlinks] == [PLAN]
    outgoing = ok(c.request("GET", url(PLAN, "/links"))).json()
    assert [(x["target"], x["path"]) for x in outgoing] == [("Checklist", "Checklist.md")]
    hits = ok(c.request("GET", "/v1/search?q=beta+friday")).json()["results"]
    assert hits[0]["path"] == PLAN and "<mark>" in hits[0]["snippet"]
    recent = ok(c.request("GET", "/v1/recent")).json()
    assert {n["path"] for n in recent} == {PLAN, "Checklist.md"}
    assert ok(c.request("GET", "/v1/tags")).json() == {"launch": 1}

    moved = ok(c.request("POST", url("Checklist.md", "/move"), json={"to": "lists/Checklist.md"}))
    assert moved.json()["path"] == "lists/Checklist.md"
    ok(c.request("DELETE", url("lists/Checklist.md")), 204)
    ok(c.request("DELETE", url("lists/Checklist.md", "/history")), 204)
    gone = c.request("GET", url("lists/Checklist.md", "/versions"))
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "note_not_found"


def export_and_import(c: RecordingClient) -> None:
    ok(c.request("PUT", url("a/One.md"), json={"markdown": "# One\n\nfirst [[Two]]\n"}), 201)
    ok(c.request("PUT", url("Two.md"), json={"markdown": "# Two\n"}), 201)
    exported = ok(c.request("GET", "/v1/export"))
    with zipfile.ZipFile(io.BytesIO(exported.content)) as archive:
        assert sorted(archive.namelist()) == ["Two.md", "a/One.md", PLAN]
    assert exported.headers["X-Export-Windows-Unsafe"] == "0"
    assert ok(c.request("GET", "/v1/export/windows-unsafe")).json() == {"count": 0, "notes": []}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("b/Three.md", "# Three\n\nsee [[Two]]\n")
    imported = ok(
        c.request(
            "POST",
            "/v1/import",
            content=buffer.getvalue(),
            headers={"Content-Type": "application/zip"},
        )
    ).json()
    assert (imported["created"], imported["updated"], imported["skipped"]) == (1, 0, 0)
    assert ok(c.request("GET", url("b/Three.md"))).json()["title"] == "Three"
    backlinks = ok(c.request("GET", url("Two.md", "/backlinks"))).json()
    assert sorted(b["path"] for b in backlinks) == ["a/One.md", "b/Three.md"]


def files(c: RecordingClient) -> None:
    """Attachments on S3 (ADR 0043): stored, listed, served, linked, deleted."""
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
    stored = ok(c.request("PUT", "/v1/files/img/diagram.png", content=png), 201).json()
    assert stored["file"]["content_type"] == "image/png"
    listed = ok(c.request("GET", "/v1/files?prefix=img/")).json()["files"]
    assert [f["path"] for f in listed] == ["img/diagram.png"]
    served = ok(c.request("GET", "/v1/files/img/diagram.png"))
    assert served.content == png and served.headers["content-type"] == "image/png"
    ok(c.request("DELETE", "/v1/files/img/diagram.png"))
    gone = c.request("GET", "/v1/files/img/diagram.png")
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "file_not_found"

    # A large file's presigned path (README "Large files"): a PUT to S3 with no key, the
    # completion, then a presigned GET through ?link=1.
    began = ok(
        c.request("POST", "/v1/files/uploads", json={"path": "big.pdf", "bytes": len(png)}), 201
    )
    upload = began.json()["upload"]
    assert upload["url"].startswith(moto_http()), upload  # S3's, not memvault's
    ok(httpx.put(upload["url"], content=png, headers=upload["headers"], timeout=60))
    done = ok(c.request("POST", f"/v1/files/uploads/{began.json()['id']}/complete"), 201)
    assert done.json()["file"]["size"] == len(png)
    link = ok(c.request("GET", "/v1/files/big.pdf?link=1")).json()
    assert httpx.get(link["url"], timeout=60).content == png
    # memvault's own token links are the embedded server's; a forged token is refused.
    for method, path in (
        ("PUT", f"/v1/file-uploads/{began.json()['id']}?token=forged"),
        ("GET", "/v1/file-downloads/big.pdf?token=forged"),
    ):
        refused = c.request(method, path, content=png if method == "PUT" else None)
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_token"


def keys_account_and_billing(c: RecordingClient) -> None:
    assert ok(c.request("GET", "/v1/me")).json()["key"]["admin"] is True
    created = ok(c.request("POST", "/v1/keys", json={"name": "ci-bot", "recall": True}), 201)
    key_id = created.json()["id"]
    assert created.json()["secret"].startswith("mvk_")
    assert key_id in {k["id"] for k in ok(c.request("GET", "/v1/keys")).json()}
    patched = ok(c.request("PATCH", f"/v1/keys/{key_id}", json={"tools": True})).json()
    assert patched["tools"] is True and patched["recall"] is True
    assert ok(c.request("DELETE", f"/v1/keys/{key_id}")).json()["revoked_at"] is not None

    assert ok(c.request("GET", "/v1/account")).json()["note_count"] == 4
    limits = ok(c.request("PATCH", "/v1/account/limits", json={"max_notes": 7})).json()
    assert limits["max_notes"] == 7

    assert ok(c.request("GET", "/v1/balance")).json()["balance_micros"] is None
    balance = ok(c.request("POST", "/v1/balance", json={"set_micros": 5_000_000})).json()
    assert balance["balance_micros"] == 5_000_000
    usage = ok(c.request("GET", "/v1/usage?from=2026-01-01&to=2026-01-31")).json()
    assert usage["days"] == [] and usage["totals"]["requests"] == 0


def org_members_and_sessions(c: RecordingClient, server: LiveServer, calls: set[Any]) -> None:
    assert ok(c.request("GET", "/v1/org")).json()["id"] == "local"
    assert ok(c.request("PATCH", "/v1/org", json={"name": "Local Co"})).json()["name"] == "Local Co"
    invited = ok(
        c.request("POST", "/v1/invitations", json={"email": "ana@local.test", "role": "admin"}),
        201,
    ).json()
    spare = ok(c.request("POST", "/v1/invitations", json={"email": "bo@local.test"}), 201).json()
    listed = ok(c.request("GET", "/v1/invitations")).json()
    assert {i["id"] for i in listed} == {invited["id"], spare["id"]}
    ok(c.request("DELETE", f"/v1/invitations/{spare['id']}"), 204)

    # Ana joins (and is signed in by it), then signs in a second time elsewhere.
    browser = RecordingClient(server, calls, httpx.Client(base_url=server.url, timeout=60.0))
    other = RecordingClient(server, calls, httpx.Client(base_url=server.url, timeout=60.0))
    password = "ana's long passphrase"
    joined = ok(
        browser.request(
            "POST",
            "/v1/invitations/accept",
            json={"token": invited["token"], "name": "Ana", "password": password},
        ),
        201,
    ).json()
    csrf = {"x-csrf-token": joined["csrf_token"]}
    ana_id = joined["member"]["id"]
    me = ok(browser.request("GET", "/v1/me")).json()
    assert (me["auth"], me["role"]) == ("session", "admin")
    second = ok(
        other.request(
            "POST", "/v1/sessions", json={"email": "ANA@local.test", "password": password}
        ),
        201,
    ).json()
    assert len(ok(browser.request("GET", "/v1/sessions")).json()) == 2
    ok(browser.request("DELETE", f"/v1/sessions/{second['session']['id']}", headers=csrf), 204)
    assert (
        ok(browser.request("PATCH", "/v1/me", json={"name": "Ana B"}, headers=csrf)).json()["name"]
        == "Ana B"
    )
    changed = browser.request(
        "POST",
        "/v1/me/password",
        json={"current_password": password, "new_password": "a newer passphrase"},
        headers=csrf,
    )
    assert ok(changed).json()["changed"] is True

    members = ok(c.request("GET", "/v1/members")).json()
    assert sorted(m["role"] for m in members) == ["admin", "owner"]
    assert (
        ok(c.request("PATCH", f"/v1/members/{ana_id}", json={"role": "member"})).json()["role"]
        == "member"
    )
    kinds = {e["kind"] for e in ok(c.request("GET", "/v1/audit")).json()["events"]}
    assert {"invitation_accepted", "sign_in", "role_changed", "password_changed"} <= kinds
    ok(browser.request("DELETE", "/v1/sessions/current", headers=csrf), 204)
    ok(c.request("DELETE", f"/v1/members/{ana_id}"), 204)
    browser.close()
    other.close()


def memory_profiles(c: RecordingClient) -> None:
    made = ok(c.request("POST", "/v1/memories", json={"slug": "user-1", "name": "U"}), 201)
    memory_id = made.json()["id"]
    item = ok(
        c.request(
            "POST",
            "/v1/memories/user-1/items",
            json={"item_type": "fact", "text": "The user's dog is called Pixel."},
        ),
        201,
    ).json()
    assert item["embedded"] is True
    edited = c.request(
        "PATCH", f"/v1/memories/user-1/items/{item['id']}", json={"text": "Pixel is a dog."}
    )
    assert ok(edited).json()["text"] == "Pixel is a dog."
    patched = ok(c.request("PATCH", f"/v1/memories/{memory_id}", json={"retention_days": 30}))
    assert patched.json()["retention_days"] == 30
    listed = ok(c.request("GET", "/v1/memories?q=user")).json()["memories"]
    assert [m["slug"] for m in listed] == ["user-1"] and listed[0]["attachable"] is True
    shown = ok(c.request("GET", "/v1/memories/user-1")).json()
    assert shown["item_counts"] == {"guardrail": 0, "preference": 0, "fact": 1}
    ok(c.request("DELETE", f"/v1/memories/user-1/items/{item['id']}"), 204)
    ok(c.request("DELETE", "/v1/memories/user-1"), 204)
    assert c.request("GET", f"/v1/memories/{memory_id}").status_code == 404


def _job_ended(c: RecordingClient, path: str) -> dict[str, Any]:
    for _ in range(500):
        job: dict[str, Any] = ok(c.request("GET", path)).json()
        if job["status"] in TERMINAL:
            return job
        time.sleep(0.02)
    raise AssertionError(f"{path} did not end: {job}")


def jobs(c: RecordingClient, server: LiveServer) -> None:
    """Import and export jobs on S3 (ADR 0041): the presigned PUT and GET answer with no
    Authorization; S3's Object Created event is handed to the job function (deliver)."""
    services = server.services
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("jobs/Four.md", "# Four\n\nsee [[Two]]\n")
    archive_bytes = buffer.getvalue()
    created = ok(c.request("POST", "/v1/imports", json={"bytes": len(archive_bytes)}), 201).json()
    upload = created["upload"]
    assert upload["url"].startswith(moto_http()), upload  # S3's, not memvault's
    ok(httpx.put(upload["url"], content=archive_bytes, headers=upload["headers"], timeout=60))
    deliver(services, "local", created["id"])
    imported = _job_ended(c, f"/v1/imports/{created['id']}")
    assert imported["status"] == "succeeded", imported
    assert imported["report"]["created"] == 1
    assert ok(c.request("GET", url("jobs/Four.md"))).json()["title"] == "Four"

    export = ok(c.request("POST", "/v1/exports"), 202).json()
    deliver(services, "local", export["id"])
    exported = _job_ended(c, f"/v1/exports/{export['id']}")
    assert exported["status"] == "succeeded", exported
    fetched = httpx.get(exported["download"]["url"], timeout=60)  # presigned S3 GET
    assert fetched.status_code == 200
    assert fetched.content == ok(c.request("GET", "/v1/export")).content
    listed = ok(c.request("GET", "/v1/jobs?limit=5")).json()["items"]
    assert [j["id"] for j in listed] == [export["id"], created["id"]]

    # memvault's own token links are the embedded server's; on AWS none is handed out
    # (the links are S3's). A token signed for another job (or purpose) is not valid.
    key, until = services.jobs.jobs.signing_key(), services.jobs.clock() + 600
    upload_token = J.sign_token(key, J.UPLOAD, "local", export["id"], until)
    download_token = J.sign_token(key, J.DOWNLOAD, "local", created["id"], until)
    for method, path in (
        ("PUT", f"/v1/imports/{created['id']}/upload?token={download_token}"),
        ("GET", f"/v1/exports/{export['id']}/download?token={upload_token}"),
    ):
        refused = c.request(method, path, content=archive_bytes if method == "PUT" else None)
        assert refused.status_code == 401, refused.text
        assert refused.json()["error"]["code"] == "invalid_token"


def test_every_management_route_answers_on_aws(aws_server: LiveServer) -> None:
    calls: set[tuple[str, str]] = set()
    client = RecordingClient(aws_server, calls)
    try:
        notes_versions_links_and_search(client)
        export_and_import(client)
        files(client)
        keys_account_and_billing(client)
        org_members_and_sessions(client, aws_server, calls)
        memory_profiles(client)
        jobs(client, aws_server)
    finally:
        client.close()
    # Every management route of the app must have been called above.
    app = create_app(aws_server.services, surfaces=("management",))
    routes = set(api_routes(app))  # into the included routers (tests.support.routes)
    assert len(routes) > 40
    missing = sorted(routes - calls)
    assert not missing, f"management routes with no AWS smoke call: {missing}"
