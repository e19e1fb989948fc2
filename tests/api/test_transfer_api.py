"""Import and export over real HTTP: a uvicorn server on 127.0.0.1, spoken to with httpx
(and, where a client library would hide what matters, a raw socket)."""

from __future__ import annotations

import http.client
import io
import re
import socket
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from memvault.container import build_services
from memvault.domain.budgets import Bucket
from memvault.domain.models import Limits
from memvault.errors import RateLimited
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from tests.contract.test_import_export import (
    MARKER,
    REFUSALS,
    hostile,
    make_zip,
    noise,
)
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.servers import LiveServer, serve

ZIP = {"Content-Type": "application/zip"}
SMALL_LIMIT = 64 * 1024


# ---------------------------------------------------------------------- fixtures and helpers


@pytest.fixture
def small_server(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[LiveServer]:
    """A live server whose imports may be at most 64 KiB."""
    with backend_settings(tmp_path, backend, import_max_archive_bytes=SMALL_LIMIT) as settings:
        yield from serve(build_services(settings, clock=clock), clock)


def vault_state(client: httpx.Client) -> dict[str, Any]:
    """Every note with its markdown and version history, as a user sees them."""
    state: dict[str, Any] = {}
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": 500}
        if cursor:
            params["cursor"] = cursor
        page = client.get("/v1/notes", params=params)
        assert page.status_code == 200, page.text
        body = page.json()
        for summary in body["notes"]:
            path = summary["path"]
            note = client.get(f"/v1/notes/{path}").json()
            history = client.get(f"/v1/notes/{path}/versions").json()
            state[path] = (note["markdown"], [(v["version"], v["sha256"]) for v in history])
        cursor = body["next_cursor"]
        if not cursor:
            return state


def seed(client: httpx.Client) -> None:
    for path, markdown in [
        ("seed.md", "seed v1\n"),
        ("seed.md", "seed v2\n"),
        ("keep.md", "kept [[seed]]\n"),
        ("folder/Deep.md", "deep\r\n"),
    ]:
        r = client.put(f"/v1/notes/{path}", json={"markdown": markdown})
        assert r.status_code in (200, 201), r.text


def assert_error(response: httpx.Response, status: int, type_: str, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert (error["type"], error["code"]) == (type_, code), error
    assert isinstance(error["message"], str) and error["message"]


def multipart(data: bytes, field: str = "file") -> dict[str, Any]:
    return {"files": {field: ("vault.zip", data, "application/zip")}}


def raw_exchange(url: str, head: str, parts: list[bytes]) -> http.client.HTTPResponse:
    """Send a request head and some body parts, then read the response.

    The body is never finished: an answer proves the server decided without it.
    """
    where = urlsplit(url)
    sock = socket.create_connection((where.hostname, where.port), timeout=10)
    sock.sendall(head.encode("latin-1"))
    for part in parts:
        try:
            sock.sendall(part)
        except (BrokenPipeError, ConnectionResetError):
            break  # the server answered and closed: fine, read what it said
    response = http.client.HTTPResponse(sock)
    response.begin()
    return response


# ---------------------------------------------------------------------- import


def test_import_a_raw_zip_body(live_server: LiveServer) -> None:
    with live_server.client() as client:
        seed(client)
        data = make_zip(
            ("seed.md", "seed v2\n"),
            ("keep.md", "kept, edited\n"),
            ("new/one.md", f"new {MARKER}\n"),
            ("pic.png", b"\x89PNG"),
            (".obsidian/app.json", "{}"),
        )
        r = client.post("/v1/import", content=data, headers=ZIP)
        assert r.status_code == 200, r.text
        assert r.json() == {
            "created": 1,
            "updated": 1,
            "unchanged": 1,
            "skipped": 2,
            "skipped_files": ["pic.png", ".obsidian/app.json"],
        }
        assert client.get("/v1/notes/new/one.md").json()["markdown"] == f"new {MARKER}\n"
        assert [v["version"] for v in client.get("/v1/notes/seed.md/versions").json()] == [2, 1]
        assert [v["version"] for v in client.get("/v1/notes/keep.md/versions").json()] == [2, 1]
        # Never deletes: folder/Deep.md was not in the archive.
        assert client.get("/v1/notes/folder/Deep.md").json()["markdown"] == "deep\r\n"
        hits = client.get("/v1/search", params={"q": MARKER}).json()
        assert MARKER in str(hits) and "new/one.md" in str(hits)


def test_import_a_chunked_body_without_content_length(live_server: LiveServer) -> None:
    data = make_zip(("a.md", "a"), ("b.md", "b"))

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(data), 100):
            yield data[i : i + 100]

    with live_server.client() as client:
        r = client.post("/v1/import", content=chunks(), headers=ZIP)
        assert r.status_code == 200, r.text
        assert r.json()["created"] == 2


def test_import_as_a_multipart_file_field(live_server: LiveServer) -> None:
    with live_server.client() as client:
        seed(client)
        data = make_zip(("seed.md", "seed v3\n"), ("multi/part.md", "uploaded"))
        r = client.post("/v1/import", data={"note": "ignored"}, **multipart(data))
        assert r.status_code == 200, r.text
        body = r.json()
        assert (body["created"], body["updated"], body["unchanged"]) == (1, 1, 0)
        assert client.get("/v1/notes/multi/part.md").json()["markdown"] == "uploaded"


def test_multipart_without_the_file_field_is_refused(live_server: LiveServer) -> None:
    with live_server.client() as client:
        seed(client)
        before = vault_state(client)
        r = client.post("/v1/import", **multipart(make_zip(("x.md", "x")), field="archive"))
        assert_error(r, 400, "invalid_request", "missing_file")
        assert vault_state(client) == before


def test_a_malformed_multipart_body_is_a_json_400(live_server: LiveServer) -> None:
    with live_server.client() as client:
        r = client.post(
            "/v1/import",
            content=b"--nope\r\ngarbage",
            headers={"Content-Type": "multipart/form-data"},  # no boundary
        )
        assert_error(r, 400, "invalid_request", "invalid_multipart")


def test_import_needs_a_key(live_server: LiveServer) -> None:
    r = httpx.post(live_server.url + "/v1/import", content=make_zip(("a.md", "a")), headers=ZIP)
    assert_error(r, 401, "authentication_error", "missing_api_key")
    with live_server.client() as client:
        assert client.get("/v1/notes").json()["notes"] == []


STATUS_BY_CLASS = {
    "Unprocessable": (422, "unprocessable"),
    "TooLarge": (413, "payload_too_large"),
}

HTTP_REFUSALS = [
    "not a zip",
    "empty file",
    "truncated in the middle",
    "absolute path",
    "dot-dot inside",
    "drive letter",
    "backslash separators",
    "symlink note",
    "encrypted note",
    "case-only twins",
    "NFC and NFD twins",
    "note over 1 MB",
    "declared size lies (deflate)",
    "zip bomb",
    "invalid UTF-8 note",
    "corrupt deflate stream",
    "entry name not UTF-8",
]


@pytest.mark.parametrize("case", HTTP_REFUSALS)
@pytest.mark.parametrize("how", ["raw", "multipart"])
def test_each_refusal_has_its_status_and_changes_nothing(
    live_server: LiveServer, case: str, how: str
) -> None:
    build, error, code = REFUSALS[case]
    status, type_ = STATUS_BY_CLASS[error.__name__]
    data = build()
    with live_server.client() as client:
        seed(client)
        before = vault_state(client)
        if how == "raw":
            r = client.post("/v1/import", content=data, headers=ZIP)
        else:
            r = client.post("/v1/import", **multipart(data))
        assert_error(r, status, type_, code)
        assert "nothing was changed" in r.json()["error"]["message"]
        assert vault_state(client) == before


def test_over_quota_is_refused_413(live_server: LiveServer) -> None:
    with live_server.client() as client:
        seed(client)  # 3 notes
        live_server.services.accounts.set_limits(LOCAL_ACCOUNT_ID, Limits(max_notes=3))
        before = vault_state(client)
        r = client.post("/v1/import", content=hostile(), headers=ZIP)  # one new note
        assert_error(r, 413, "quota_exceeded", "vault_note_limit")
        assert vault_state(client) == before

        live_server.services.accounts.set_limits(
            LOCAL_ACCOUNT_ID, Limits(max_notes=100, max_bytes=200)
        )
        r = client.post("/v1/import", content=make_zip(("big.md", "x" * 200)), headers=ZIP)
        assert_error(r, 413, "quota_exceeded", "vault_byte_limit")
        assert vault_state(client) == before


def test_an_exhausted_write_budget_is_refused_429(live_server: LiveServer) -> None:
    with live_server.client() as client:
        seed(client)
        before = vault_state(client)
        budgets = live_server.services.vault.budgets
        with pytest.raises(RateLimited):
            for _ in range(1000):
                budgets.charge(LOCAL_ACCOUNT_ID, Bucket.WRITES)
        r = client.post("/v1/import", content=hostile(), headers=ZIP)
        assert_error(r, 429, "rate_limited", "writes_budget_exhausted")
        assert int(r.headers["Retry-After"]) >= 1
        assert vault_state(client) == before


# ---------------------------------------------------------------------- archive size limit


def test_an_archive_within_the_limit_is_accepted(small_server: LiveServer) -> None:
    data = make_zip(("fits.md", noise(SMALL_LIMIT - 1000)), compression=zipfile.ZIP_STORED)
    assert len(data) <= SMALL_LIMIT
    with small_server.client() as client:
        r = client.post("/v1/import", content=data, headers=ZIP)
        assert r.status_code == 200, r.text
        r = client.post("/v1/import", **multipart(data))
        assert r.status_code == 200, r.text
        assert r.json()["unchanged"] == 1


@pytest.mark.parametrize("how", ["raw", "chunked", "multipart"])
def test_an_archive_over_the_limit_is_refused_413(small_server: LiveServer, how: str) -> None:
    data = make_zip(("big.md", noise(SMALL_LIMIT + 1000)), compression=zipfile.ZIP_STORED)
    assert SMALL_LIMIT < len(data) < SMALL_LIMIT + 4096
    with small_server.client() as client:
        if how == "raw":
            r = client.post("/v1/import", content=data, headers=ZIP)
        elif how == "chunked":
            r = client.post("/v1/import", content=iter([data[:40_000], data[40_000:]]), headers=ZIP)
        else:
            r = client.post("/v1/import", **multipart(data))
        assert_error(r, 413, "payload_too_large", "archive_too_large")
        assert str(SMALL_LIMIT) in r.json()["error"]["message"]
        assert client.get("/v1/notes").json()["notes"] == []


@pytest.mark.parametrize("multipart_body", [False, True])
def test_a_declared_oversize_body_is_refused_before_it_is_sent(
    small_server: LiveServer, multipart_body: bool
) -> None:
    content_type = "multipart/form-data; boundary=xyz" if multipart_body else "application/zip"
    head = (
        "POST /v1/import HTTP/1.1\r\nHost: test\r\n"
        f"Authorization: Bearer {small_server.admin_key}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {50 * 1024 * 1024}\r\n\r\n"
    )
    response = raw_exchange(small_server.url, head, [])
    assert response.status == 413
    assert b'"archive_too_large"' in response.read()


@pytest.mark.parametrize("multipart_body", [False, True])
def test_an_oversize_stream_is_refused_while_it_streams(
    small_server: LiveServer, multipart_body: bool
) -> None:
    # Chunked, so there is no length to judge up front: the server must count as the
    # bytes arrive and answer 413 long before the (never finished) body would end.
    content_type = "multipart/form-data; boundary=xyz" if multipart_body else "application/zip"
    head = (
        "POST /v1/import HTTP/1.1\r\nHost: test\r\n"
        f"Authorization: Bearer {small_server.admin_key}\r\n"
        f"Content-Type: {content_type}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    prefix = (
        b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="v.zip"\r\n'
        b"Content-Type: application/zip\r\n\r\n"
        if multipart_body
        else b""
    )
    piece = b"PK" + b"\x00" * (32 * 1024 - 2)
    chunks = [prefix] if prefix else []
    chunks += [piece] * 8  # 256 KiB, four times the limit, and no closing chunk
    parts = [b"%x\r\n%s\r\n" % (len(c), c) for c in chunks]
    response = raw_exchange(small_server.url, head, parts)
    assert response.status == 413
    assert b'"archive_too_large"' in response.read()


# ---------------------------------------------------------------------- export


def _write(client: httpx.Client, notes: dict[str, str]) -> None:
    for path, markdown in notes.items():
        r = client.put(f"/v1/notes/{path}", json={"markdown": markdown})
        assert r.status_code in (200, 201), r.text


EXPORT_NOTES = {
    "plain.md": "plain",
    "crlf.md": "a\r\nb\r\n",
    "bom.md": "\ufeff# BOM\n",
    "empty.md": "",
    "front.md": "---\ntitle: T\n---\nbody [[plain]]\n",
    "日本語/メモ.md": "メモ #タグ\n",
    "Café/Résumé ✓.md": "é 🧠\n",
}


def test_export_streams_a_zip_that_round_trips(live_server: LiveServer) -> None:
    with live_server.client() as client:
        _write(client, EXPORT_NOTES)
        before = vault_state(client)
        with client.stream("GET", "/v1/export") as response:
            assert response.status_code == 200
            headers = response.headers
            data = b"".join(response.iter_bytes())
        assert headers["content-type"] == "application/zip"
        assert re.fullmatch(
            r'attachment; filename="memvault-\d{8}-\d{6}\.zip"', headers["content-disposition"]
        )
        assert int(headers["content-length"]) == len(data)
        assert int(headers["x-memvault-notes"]) == len(EXPORT_NOTES)
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            assert zf.testzip() is None
            entries = {i.filename: zf.read(i) for i in zf.infolist()}
        assert entries == {p: md.encode("utf-8") for p, md in EXPORT_NOTES.items()}

        r = client.post("/v1/import", content=data, headers=ZIP)
        assert r.status_code == 200, r.text
        assert r.json() == {
            "created": 0,
            "updated": 0,
            "unchanged": len(EXPORT_NOTES),
            "skipped": 0,
            "skipped_files": [],
        }
        assert vault_state(client) == before


def test_export_of_an_empty_vault(live_server: LiveServer) -> None:
    with live_server.client() as client:
        r = client.get("/v1/export")
        assert r.status_code == 200
        assert r.headers["x-memvault-notes"] == "0"
        assert int(r.headers["content-length"]) == len(r.content)
        with zipfile.ZipFile(io.BytesIO(r.content)) as zf:
            assert zf.infolist() == []


def test_export_needs_a_key(live_server: LiveServer) -> None:
    r = httpx.get(live_server.url + "/v1/export")
    assert_error(r, 401, "authentication_error", "missing_api_key")


def test_export_larger_than_a_read_chunk(live_server: LiveServer) -> None:
    # Several 1 MiB stream chunks: Content-Length must match what is streamed.
    notes = {f"big/{i}.md": noise(1_000_000, i) for i in range(4)}
    with live_server.client() as client:
        _write(client, notes)
        r = client.get("/v1/export")
        assert r.status_code == 200
        assert int(r.headers["content-length"]) == len(r.content) > 2 * 1024 * 1024
        with zipfile.ZipFile(io.BytesIO(r.content)) as zf:
            assert {i.filename: zf.read(i).decode() for i in zf.infolist()} == notes
