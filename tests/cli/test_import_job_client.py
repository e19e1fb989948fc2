"""The CLI's job path against a server without the job API (an older memvault): it is
spoken to the old way, on scripted answers (httpx's mock transport). The job path itself
runs against a live server in tests/cli/test_cli.py; how the job's polled phases become the
progress bars' events is checked here on scripted polls, since a live job's timing decides
which phases a poll happens to see."""

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


def _phase_events(polls: list[dict[str, Any] | None]) -> list[tuple[str, int, int]]:
    from memvault.cli.transfer_jobs import _Phases

    events: list[dict[str, Any]] = []
    phases = _Phases(events.append)
    for progress in polls:
        phases(progress)
    return [(e["phase"], e["done"], e["total"]) for e in events]


def test_a_phase_a_poll_saw_part_way_is_shown_finished_once_a_later_one_is_reported() -> None:
    # A poll saw committing at 0/2, the next one (the job had ended) indexing at 2/2: the
    # committing bar must not be left at 0/2 after a successful import.
    events = _phase_events(
        [
            {"phase": "parsing", "done": 2, "total": 2},
            {"phase": "committing", "done": 0, "total": 2},
            {"phase": "indexing", "done": 2, "total": 2},
        ]
    )
    assert events == [
        ("parsing", 2, 2),
        ("committing", 0, 2),
        ("committing", 2, 2),
        ("indexing", 2, 2),
    ]


def test_phases_a_poll_never_saw_are_shown_finished_and_a_repeat_is_not_sent_again() -> None:
    events = _phase_events(
        [
            None,
            {"phase": "parsing", "done": 1, "total": 3},
            {"phase": "parsing", "done": 1, "total": 3},
            {"phase": "indexing", "done": 3, "total": 3},
        ]
    )
    assert events == [
        ("parsing", 1, 3),
        ("parsing", 3, 3),
        ("committing", 3, 3),
        ("indexing", 3, 3),
    ]
