"""GET /v1/notes/{path} says whether the note is searchable by meaning yet."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx

from memvault.container import build_services
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.servers import LiveServer, serve


def test_a_written_note_reads_back_indexed(live_server: LiveServer) -> None:
    with live_server.client() as c:
        assert c.put(
            "/v1/notes/plans.md", json={"markdown": "# Plans\nwe ship Friday\n"}
        ).is_success
        body = c.get("/v1/notes/plans.md").json()
    assert body["vector_status"] == "indexed"


def test_a_note_whose_vectors_were_lost_reads_pending(live_server: LiveServer) -> None:
    with live_server.client() as c:
        c.put("/v1/notes/plans.md", json={"markdown": "# Plans\nwe ship Friday\n"})
        vectors = live_server.services.vectors
        assert vectors is not None
        vectors.clear(LOCAL_ACCOUNT_ID)
        assert c.get("/v1/notes/plans.md").json()["vector_status"] == "pending"
        # A 304 for an unchanged version carries no body, status or not.
        etag = c.get("/v1/notes/plans.md").headers["etag"]
        assert c.get("/v1/notes/plans.md", headers={"if-none-match": etag}).status_code == 304


def off_server(tmp_path: Path, clock: FakeClock) -> Iterator[LiveServer]:
    with backend_settings(tmp_path, "sqlite", embeddings="off") as settings:
        yield from serve(build_services(settings, clock=clock), clock)


def test_with_embeddings_off_every_note_reads_off(tmp_path: Path, clock: FakeClock) -> None:
    for server in off_server(tmp_path, clock):
        with server.client() as c:
            c.put("/v1/notes/a.md", json={"markdown": "text"})
            response = c.get("/v1/notes/a.md")
        assert response.status_code == 200
        assert response.json()["vector_status"] == "off"


def test_a_missing_note_is_still_a_404(live_server: LiveServer) -> None:
    with live_server.client() as c:
        response: httpx.Response = c.get("/v1/notes/nope.md")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "note_not_found"
