"""The CLI's job path against a server without the job API (an older memvault): it is
spoken to the old way, on scripted answers (httpx's mock transport). The job path itself
runs against a live server in tests/cli/test_cli.py."""

from __future__ import annotations

import io
import json
from typing import Any

import httpx

from memvault.cli.client import Client
from memvault.cli.transfer_jobs import export_via_job, import_via_job

REPORT = {"created": 1, "updated": 0, "unchanged": 0, "skipped": 0, "skipped_files": []}
NOT_FOUND = {"error": {"type": "not_found", "code": "route_not_found", "message": "no route"}}


def _client(answer: Any, seen: list[str]) -> Client:
    def handler(request: httpx.Request) -> httpx.Response:
        request.read()
        seen.append(f"{request.method} {request.url.path}")
        return answer(request)

    client = Client("http://memvault.test", "mvk_test")
    client.http = httpx.Client(
        base_url="http://memvault.test", transport=httpx.MockTransport(handler)
    )
    return client


def test_an_import_on_a_server_without_jobs_is_the_sync_import() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/imports":
            return httpx.Response(404, json=NOT_FOUND)
        line = json.dumps({"result": REPORT}).encode() + b"\n"
        return httpx.Response(200, headers={"Content-Type": "application/x-ndjson"}, content=line)

    sent: list[int] = []
    data = b"PK" * 1000
    report = import_via_job(_client(answer, seen), io.BytesIO(data), len(data), sent.append, print)
    assert report == REPORT
    assert seen == ["POST /v1/imports", "POST /v1/import"] and sum(sent) == len(data)


def test_an_export_on_a_server_without_jobs_is_the_sync_export() -> None:
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/exports":
            return httpx.Response(404, json=NOT_FOUND)
        return httpx.Response(200, content=b"zip bytes", headers={"X-Memvault-Notes": "3"})

    out = io.BytesIO()
    count = export_via_job(_client(answer, seen), out, lambda _total: None, lambda _n: None)
    assert (count, out.getvalue()) == (3, b"zip bytes")
    assert seen == ["POST /v1/exports", "GET /v1/export"]
