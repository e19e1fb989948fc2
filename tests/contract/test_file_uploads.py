"""One large file through the presigned path, on both backends (README "/v1/files"):
POST /v1/files/uploads answers where to PUT exactly the declared bytes (a presigned S3
PUT on AWS, memvault's own token URL embedded), with no Authorization header; POST
.../complete stores them as PUT /v1/files/{path} would. GET /v1/files/{path} of a file
larger than a Lambda answer redirects to a presigned S3 GET on AWS and streams embedded;
?link=1 answers a link on both. On AWS the links name a moto server on a loopback port
(tests/support/jobs.py), so every PUT and GET here is a real HTTP request to a URL
memvault signed."""

from __future__ import annotations

import hashlib
import os
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memvault.domain.models import Limits
from tests.support.clock import FakeClock
from tests.support.jobs import job_server
from tests.support.people import make_org
from tests.support.servers import LiveServer

BIG = os.urandom(8 * 1024 * 1024 + 123)  # past Lambda's 6 MB answer and 4.7 MB request


@pytest.fixture
def server(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[LiveServer]:
    yield from job_server(tmp_path, backend, clock)


def _begin(c: httpx.Client, path: str, size: int, **extra: Any) -> httpx.Response:
    return c.post("/v1/files/uploads", json={"path": path, "bytes": size, **extra})


def _send(began: dict[str, Any], data: bytes) -> httpx.Response:
    up = began["upload"]
    assert up["method"] == "PUT" and up["max_bytes"] == began["bytes"]
    return httpx.put(up["url"], content=data, headers=up["headers"], timeout=60.0)


def _files(c: httpx.Client) -> list[str]:
    return [f["path"] for f in c.get("/v1/files").json()["files"]]


def test_a_large_file_goes_up_and_comes_down_byte_identical(
    server: LiveServer, backend: str
) -> None:
    sha = hashlib.sha256(BIG).hexdigest()
    with server.client() as c:
        began = _begin(c, "media/talk.mp4", len(BIG), sha256=sha)
        assert began.status_code == 201, began.text
        body = began.json()
        assert body["id"].startswith("upl_") and body["path"] == "media/talk.mp4"
        assert "authorization" not in {h.lower() for h in body["upload"]["headers"]}
        if backend == "aws":  # SigV4: the signature covers the declared Content-Length
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(body["upload"]["url"]).query)
            assert "content-length" in query["X-Amz-SignedHeaders"][0].split(";")
        put = _send(body, BIG)  # no Authorization header
        assert put.status_code == 200, put.text
        assert _files(c) == []  # not in the vault until completed

        done = c.post(f"/v1/files/uploads/{body['id']}/complete")
        assert done.status_code == 201, done.text
        stored = done.json()["file"]
        assert stored["size"] == len(BIG) and stored["sha256"] == sha
        assert stored["content_type"] == "video/mp4"
        assert _files(c) == ["media/talk.mp4"]
        # The upload is used up.
        assert c.post(f"/v1/files/uploads/{body['id']}/complete").status_code == 404

        got = c.get("/v1/files/media/talk.mp4", follow_redirects=False)
        if backend == "aws":  # larger than a Lambda answer: fetched from S3
            assert got.status_code == 307
            assert got.headers["x-content-type-options"] == "nosniff"
            fetched = httpx.get(got.headers["location"], timeout=60.0)  # no Authorization
        else:  # streamed by memvault
            assert got.status_code == 200
            fetched = got
        assert fetched.status_code == 200 and fetched.content == BIG
        assert fetched.headers["content-type"] == "video/mp4"
        assert fetched.headers["content-disposition"].startswith("inline;")

        link = c.get("/v1/files/media/talk.mp4", params={"link": "1"})
        assert link.status_code == 200 and set(link.json()) == {"url", "expires_at"}
        assert httpx.get(link.json()["url"], timeout=60.0).content == BIG

        # A small file is still answered directly on both backends.
        assert c.put("/v1/files/small.svg", content=b"<svg/>").status_code == 201
        small = c.get("/v1/files/small.svg", follow_redirects=False)
        assert small.status_code == 200 and small.content == b"<svg/>"
        # An SVG's link is a download, never shown inline.
        svg_link = c.get("/v1/files/small.svg", params={"link": "1"}).json()["url"]
        svg = httpx.get(svg_link)
        assert svg.content == b"<svg/>"
        assert svg.headers["content-disposition"].startswith("attachment;")


def test_refusals_before_the_upload_are_typed(server: LiveServer) -> None:
    server.services.accounts.set_limits("local", Limits(max_file_bytes=1000, max_bytes=5000))
    with server.client() as c:
        over = _begin(c, "big.bin", 1001)
        assert over.status_code == 413 and over.json()["error"]["code"] == "file_too_large"
        assert _begin(c, "zero.bin", 0).json()["error"]["code"] == "invalid_size"
        assert _begin(c, "Note.md", 10).json()["error"]["code"] == "invalid_path"
        bad_sha = _begin(c, "a.bin", 10, sha256="abc")
        assert bad_sha.status_code == 400 and bad_sha.json()["error"]["code"] == "invalid_sha256"
        # The byte quota, as it stands, refuses a file that cannot fit.
        for n in range(5):
            assert c.put(f"/v1/files/f{n}.bin", content=b"x" * 900).status_code == 201
        full = _begin(c, "more.bin", 600)
        assert full.status_code == 413 and full.json()["error"]["code"] == "vault_byte_limit"
    with server.client("not-a-key") as anonymous:
        assert _begin(anonymous, "x.bin", 10).status_code == 401


def test_bytes_that_differ_from_what_was_declared_store_nothing(
    server: LiveServer, backend: str
) -> None:
    with server.client() as c:
        # Shorter than declared.
        short = _begin(c, "short.bin", 1000).json()
        put = _send(short, b"s" * 900)
        if put.status_code == 200:  # S3 itself may refuse it: a signed Content-Length
            refused = c.post(f"/v1/files/uploads/{short['id']}/complete")
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"]["code"] == "upload_size_mismatch"
        assert c.post(f"/v1/files/uploads/{short['id']}/complete").status_code in (404, 409)

        # Longer than declared: refused while it arrives (embedded), or at completion.
        long = _begin(c, "long.bin", 100).json()
        put = _send(long, b"l" * 150)
        if backend == "sqlite":
            assert put.status_code == 413 and put.json()["error"]["code"] == "upload_too_large"
        done = c.post(f"/v1/files/uploads/{long['id']}/complete")
        assert done.status_code in (400, 409)

        # The declared digest is not the bytes'.
        data = b"d" * 100
        wrong = _begin(c, "digest.bin", 100, sha256=hashlib.sha256(b"other").hexdigest()).json()
        assert _send(wrong, data).status_code == 200
        refused = c.post(f"/v1/files/uploads/{wrong['id']}/complete")
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == "upload_digest_mismatch"
        assert c.post(f"/v1/files/uploads/{wrong['id']}/complete").status_code == 404

        assert _files(c) == []
        assert server.services.attachments.store.file_usage("local").bytes == 0


def test_the_quota_and_limits_are_checked_again_when_completed(server: LiveServer) -> None:
    with server.client() as c:
        body = _begin(c, "late.bin", 2000).json()
        assert _send(body, b"q" * 2000).status_code == 200
        # The limit is lowered while the bytes travel: the completion refuses them.
        server.services.accounts.set_limits("local", Limits(max_bytes=1000))
        refused = c.post(f"/v1/files/uploads/{body['id']}/complete")
        assert refused.status_code == 413 and refused.json()["error"]["code"] == "vault_byte_limit"
        assert _files(c) == []
        assert c.post(f"/v1/files/uploads/{body['id']}/complete").status_code == 404

        server.services.accounts.set_limits("local", Limits(max_files=1))
        assert c.put("/v1/files/one.bin", content=b"1").status_code == 201
        second = _begin(c, "two.bin", 10)
        assert second.status_code == 413 and second.json()["error"]["code"] == "vault_file_limit"


def test_another_organisations_upload_is_not_found(server: LiveServer) -> None:
    other = make_org(server.services, "other")
    with server.client() as mine:
        body = _begin(mine, "mine.bin", 10).json()
        assert _send(body, b"0123456789").status_code == 200
    with server.client(other.owner.vault_key.secret) as theirs:
        stolen = theirs.post(f"/v1/files/uploads/{body['id']}/complete")
        assert stolen.status_code == 404 and stolen.json()["error"]["code"] == "upload_not_found"
        assert theirs.get("/v1/files").json()["files"] == []
    # Within an organisation: a member completes only their own uploads.
    with server.client(other.owner.vault_key.secret) as owner:
        owners = _begin(owner, "owners.bin", 3).json()
        assert _send(owners, b"abc").status_code == 200
    with server.client(other.member.vault_key.secret) as member:
        assert member.post(f"/v1/files/uploads/{owners['id']}/complete").status_code == 404
        own = _begin(member, "members.bin", 3).json()
        assert _send(own, b"xyz").status_code == 200
        assert member.post(f"/v1/files/uploads/{own['id']}/complete").status_code == 201
    with server.client(other.owner.vault_key.secret) as owner:
        assert owner.post(f"/v1/files/uploads/{owners['id']}/complete").status_code == 201
    with server.client() as mine:
        assert mine.post(f"/v1/files/uploads/{body['id']}/complete").status_code == 201
        assert _files(mine) == ["mine.bin"]


def test_an_expired_upload_is_refused(server: LiveServer, backend: str) -> None:
    with server.client() as c:
        assert c.put("/v1/files/kept.png", content=b"kept").status_code == 201
        link = c.get("/v1/files/kept.png", params={"link": "1"}).json()["url"]
        late = _begin(c, "late.bin", 4).json()
        sent = _begin(c, "sent.bin", 4).json()
        assert _send(sent, b"sent").status_code == 200
        server.clock.advance(3600 + 301)
        if backend == "sqlite":  # memvault's own download link has run out too
            stale = httpx.get(link)
            assert stale.status_code == 401 and stale.json()["error"]["code"] == "token_expired"
        if backend == "sqlite":  # S3 checks its presigned URL's time by the real clock
            put = _send(late, b"late")
            assert put.status_code == 401 and put.json()["error"]["code"] == "token_expired"
            forged = httpx.put(late["upload"]["url"].replace("token=", "token=x"), content=b"1")
            assert forged.status_code == 401
        done = c.post(f"/v1/files/uploads/{sent['id']}/complete")
        assert done.status_code == 409 and done.json()["error"]["code"] == "upload_expired"
        assert _files(c) == ["kept.png"]
