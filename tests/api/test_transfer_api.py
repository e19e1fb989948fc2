"""Import and export over real HTTP: a uvicorn server on 127.0.0.1, spoken to with httpx
(and, where a client library would hide what matters, a raw socket)."""

from __future__ import annotations

import http.client
import io
import json
import re
import socket
import threading
import time
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
from memvault.errors import Conflict, RateLimited
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


# An import of notes only reports no files (attachments and .obsidian/, ADR 0043).
NO_FILES = {"files_created": 0, "files_updated": 0, "files_unchanged": 0, "config_files": 0}


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
            "skipped": 0,
            "skipped_files": [],
            "files_created": 2,  # the attachment and the .obsidian/ configuration
            "files_updated": 0,
            "files_unchanged": 0,
            "config_files": 1,
        }
        assert client.get("/v1/files/pic.png").content == b"\x89PNG"
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
            **NO_FILES,
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
    notes = {f"big/{i}.md": noise(1_000_000, i) for i in range(3)}
    with live_server.client() as client:
        _write(client, notes)
        r = client.get("/v1/export")
        assert r.status_code == 200
        assert int(r.headers["content-length"]) == len(r.content) > 2 * 1024 * 1024
        with zipfile.ZipFile(io.BytesIO(r.content)) as zf:
            assert {i.filename: zf.read(i).decode() for i in zf.infolist()} == notes


# ---------------------------------------------------------------------- streamed import

NDJSON = "application/x-ndjson"
STREAMED = {**ZIP, "Accept": NDJSON}


def streamed(response: httpx.Response) -> list[dict[str, Any]]:
    """A streamed import's events, one JSON object per line; asserts the stream's shape."""
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith(NDJSON)
    assert response.text.endswith("\n")
    events = [json.loads(line) for line in response.text.splitlines()]
    *progress, outcome = events
    assert all(set(e) == {"phase", "done", "total"} for e in progress), events
    assert set(outcome) in ({"result"}, {"error"}), events
    return events


def phases(events: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    return [(e["phase"], e["done"], e["total"]) for e in events if "phase" in e]


def test_a_streamed_import_reports_each_phase_then_the_report(live_server: LiveServer) -> None:
    notes = [(f"bulk/{i}.md", f"note {i} {MARKER}\n") for i in range(250)]
    with live_server.client() as client:
        seed(client)
        data = make_zip(*notes, ("seed.md", "seed v2\n"), ("keep.md", "kept, edited\n"))
        events = streamed(client.post("/v1/import", content=data, headers=STREAMED))
        assert events[-1] == {
            "result": {
                "created": 250,
                "updated": 1,
                "unchanged": 1,
                "skipped": 0,
                "skipped_files": [],
                **NO_FILES,
            }
        }
        steps = phases(events)
        parsing = [s for s in steps if s[0] == "parsing"]
        assert parsing[0] == ("parsing", 0, 252) and parsing[-1] == ("parsing", 252, 252)
        done = [d for _, d, _ in parsing]
        assert done == sorted(set(done)) and 3 <= len(parsing) <= 102  # at sensible steps
        # 251 changes (the unchanged note is not written): commit, then index.
        assert steps[len(parsing) :] == [
            ("committing", 0, 251),
            ("committing", 251, 251),
            ("indexing", 0, 251),
            ("indexing", 251, 251),
        ]
        assert client.get("/v1/notes/bulk/7.md").json()["markdown"] == f"note 7 {MARKER}\n"
        assert len(client.get("/v1/search", params={"q": MARKER, "limit": 100}).json()["results"])


def test_a_streamed_import_with_nothing_to_change(live_server: LiveServer) -> None:
    with live_server.client() as client:
        seed(client)
        data = make_zip(("seed.md", "seed v2\n"), (".trash/pic.png", b"\x89PNG"))
        events = streamed(client.post("/v1/import", content=data, headers=STREAMED))
        assert phases(events) == [
            ("parsing", 0, 1),
            ("parsing", 1, 1),
            ("committing", 0, 0),
            ("indexing", 0, 0),
        ]
        assert events[-1]["result"]["unchanged"] == 1
        assert events[-1]["result"]["skipped_files"] == [".trash/pic.png"]


def test_a_streamed_multipart_import(live_server: LiveServer) -> None:
    with live_server.client() as client:
        data = make_zip(("multi/part.md", "uploaded"))
        r = client.post("/v1/import", headers={"Accept": NDJSON}, **multipart(data))
        assert streamed(r)[-1]["result"]["created"] == 1
        assert client.get("/v1/notes/multi/part.md").json()["markdown"] == "uploaded"


@pytest.mark.parametrize(
    "case", ["not a zip", "dot-dot inside", "zip bomb", "invalid UTF-8 note", "note over 1 MB"]
)
def test_a_streamed_refusal_is_the_last_event_with_the_usual_body(
    live_server: LiveServer, case: str
) -> None:
    build, _error, code = REFUSALS[case]
    data = build()
    with live_server.client() as client:
        seed(client)
        before = vault_state(client)
        plain = client.post("/v1/import", content=data, headers=ZIP)
        assert plain.status_code >= 400
        events = streamed(client.post("/v1/import", content=data, headers=STREAMED))
        assert events[-1] == plain.json()  # exactly the unstreamed error body
        assert events[-1]["error"]["code"] == code
        assert not [p for p in phases(events) if p[0] != "parsing"]  # never committed
        assert vault_state(client) == before


def test_a_streamed_refusal_after_parsing_began(live_server: LiveServer) -> None:
    with live_server.client() as client:
        seed(client)  # 3 notes
        before = vault_state(client)
        archive = hostile(("fine.md", "ok"), ("late/bad.md", b"caf\xe9"))
        events = streamed(client.post("/v1/import", content=archive, headers=STREAMED))
        assert phases(events)[0][:2] == ("parsing", 0)
        error = events[-1]["error"]
        assert (error["type"], error["code"]) == ("unprocessable", "invalid_utf8")
        assert "nothing was changed" in error["message"]
        assert vault_state(client) == before


def test_a_streamed_capacity_refusal_comes_before_anything_is_unpacked(
    live_server: LiveServer,
) -> None:
    with live_server.client() as client:
        seed(client)  # 3 notes
        live_server.services.accounts.set_limits(LOCAL_ACCOUNT_ID, Limits(max_notes=3))
        before = vault_state(client)
        events = streamed(client.post("/v1/import", content=hostile(), headers=STREAMED))
        assert phases(events) == []  # refused from the archive's directory alone
        error = events[-1]["error"]
        assert (error["type"], error["code"]) == ("quota_exceeded", "vault_note_limit")
        assert "nothing was changed" in error["message"]
        assert vault_state(client) == before


def test_a_streamed_import_over_budget(live_server: LiveServer) -> None:
    with live_server.client() as client:
        budgets = live_server.services.vault.budgets
        with pytest.raises(RateLimited):
            for _ in range(1000):
                budgets.charge(LOCAL_ACCOUNT_ID, Bucket.WRITES)
        events = streamed(client.post("/v1/import", content=hostile(), headers=STREAMED))
        assert events[-1]["error"]["code"] == "writes_budget_exhausted"
        assert client.get("/v1/notes").json()["notes"] == []


def test_a_streamed_import_fails_cleanly_on_an_unexpected_error(
    live_server: LiveServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("storage on fire")

    monkeypatch.setattr(live_server.services.store, "commit", broken)
    with live_server.client() as client:
        events = streamed(client.post("/v1/import", content=hostile(), headers=STREAMED))
        assert events[-1] == {
            "error": {
                "type": "internal_error",
                "code": "internal_error",
                "message": "something went wrong on our side",
            }
        }
        assert "storage on fire" not in str(events)


def test_what_is_refused_before_the_archive_is_in_keeps_its_status(
    small_server: LiveServer,
) -> None:
    big = make_zip(("big.md", noise(SMALL_LIMIT + 1000)), compression=zipfile.ZIP_STORED)
    with small_server.client() as client:
        r = client.post("/v1/import", content=big, headers=STREAMED)
        assert_error(r, 413, "payload_too_large", "archive_too_large")
        r = client.post(
            "/v1/import",
            content=b"--nope\r\ngarbage",
            headers={"Content-Type": "multipart/form-data", "Accept": NDJSON},
        )
        assert_error(r, 400, "invalid_request", "invalid_multipart")
    r = httpx.post(
        small_server.url + "/v1/import", content=make_zip(("a.md", "a")), headers=STREAMED
    )
    assert_error(r, 401, "authentication_error", "missing_api_key")


@pytest.mark.parametrize(
    "accept",
    [None, "application/json", "*/*", f"{NDJSON};q=0", "application/ndjson", "text/plain"],
)
def test_without_asking_for_ndjson_an_import_answers_json(
    live_server: LiveServer, accept: str | None
) -> None:
    headers = dict(ZIP) if accept is None else {**ZIP, "Accept": accept}
    with live_server.client() as client:
        r = client.post("/v1/import", content=make_zip(("a.md", "a")), headers=headers)
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/json"
        assert r.json()["created"] == 1
        r = client.post("/v1/import", content=b"not a zip", headers=headers)
        assert_error(r, 422, "unprocessable", "not_a_zip")


@pytest.mark.parametrize(
    "accept", [NDJSON, f"application/json;q=0.5, {NDJSON}", "APPLICATION/X-NDJSON; q=1"]
)
def test_each_spelling_of_the_ndjson_accept_header_streams(
    live_server: LiveServer, accept: str
) -> None:
    with live_server.client() as client:
        r = client.post(
            "/v1/import", content=make_zip(("a.md", "a")), headers={**ZIP, "Accept": accept}
        )
        assert streamed(r)[-1]["result"]["created"] == 1


def test_the_openapi_schema_documents_the_stream(live_server: LiveServer) -> None:
    schema = httpx.get(live_server.url + "/openapi.json").json()
    answers = schema["paths"]["/v1/import"]["post"]["responses"]["200"]["content"]
    assert {"application/json", NDJSON} <= set(answers)
    text = json.dumps(answers[NDJSON]["schema"])
    for name in ("phase", "parsing", "committing", "indexing", "result", "error", "skipped"):
        assert name in text
    assert "$defs" not in text


# A client that goes away mid-import: the import runs on, and lands whole or not at all.


def read_events_until(response: http.client.HTTPResponse, phase: str) -> list[dict[str, Any]]:
    events = []
    while True:
        line = response.readline()
        assert line, f"the stream ended before {phase!r}: {events}"
        events.append(json.loads(line))
        if events[-1].get("phase") == phase:
            return events


def start_streamed_import(server: LiveServer, data: bytes) -> socket.socket:
    where = urlsplit(server.url)
    sock = socket.create_connection((where.hostname, where.port), timeout=10)
    head = (
        "POST /v1/import HTTP/1.1\r\nHost: test\r\n"
        f"Authorization: Bearer {server.admin_key}\r\n"
        f"Content-Type: application/zip\r\nAccept: {NDJSON}\r\n"
        f"Content-Length: {len(data)}\r\n\r\n"
    )
    sock.sendall(head.encode("latin-1") + data)
    return sock


def wait_for(check: Any, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.mark.parametrize("outcome", ["lands", "refused"])
def test_a_dropped_connection_mid_import_keeps_it_all_or_nothing(
    live_server: LiveServer, monkeypatch: pytest.MonkeyPatch, outcome: str
) -> None:
    store = live_server.services.store
    original = store.commit
    reached, release = threading.Event(), threading.Event()
    finished: list[str] = []

    def held_commit(account_id: str, changes: Any, **kwargs: Any) -> Any:
        reached.set()
        assert release.wait(30)
        try:
            if outcome == "refused":
                raise Conflict("someone else wrote first", code="version_conflict")
            return original(account_id, changes, **kwargs)
        finally:
            finished.append(outcome)

    notes = {f"drop/{i}.md": f"dropped {i}\n" for i in range(40)}
    with live_server.client() as client:
        seed(client)
        before = vault_state(client)
        monkeypatch.setattr(store, "commit", held_commit)
        sock = start_streamed_import(live_server, make_zip(*notes.items()))
        response = http.client.HTTPResponse(sock)
        response.begin()
        assert response.status == 200
        read_events_until(response, "committing")  # parsed; the commit is under way
        assert reached.wait(30)
        sock.close()  # the client goes away
        release.set()
        wait_for(lambda: finished, "the import to end")

        def landed() -> bool:
            paths = {
                n["path"] for n in client.get("/v1/notes", params={"limit": 500}).json()["notes"]
            }
            mine = paths & set(notes)
            assert mine in (set(), set(notes)), "half an import is visible"
            return mine == set(notes)

        if outcome == "lands":
            wait_for(landed, "the whole import to be visible")

            def indexed() -> bool:
                hits = client.get("/v1/search", params={"q": "dropped", "limit": 100}).json()
                return len(hits["results"]) == 40

            wait_for(indexed, "the import's notes to be indexed")
        else:
            assert not landed()
            assert vault_state(client) == before
