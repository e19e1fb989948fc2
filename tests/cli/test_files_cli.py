"""`memvault files put/get` against a live server on both backends: a file past what a
Lambda request carries goes up through the presigned path and comes back byte-identical;
a small one goes in one PUT; a refusal is the server's typed error (exit 2)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.cli.files import DIRECT_MAX
from memvault.domain.models import Limits
from tests.cli.helpers import ServerCli
from tests.support.clock import FakeClock
from tests.support.jobs import job_server
from tests.support.servers import LiveServer


@pytest.fixture
def server(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[LiveServer]:
    yield from job_server(tmp_path, backend, clock)


def test_files_go_up_and_come_down_at_any_size(server: LiveServer, tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    cli = ServerCli(server, cwd)
    big = os.urandom(DIRECT_MAX + 1024 * 1024)
    (cwd / "talk.mp4").write_bytes(big)
    (cwd / "tiny.png").write_bytes(b"PNG tiny")

    put = cli.json("files", "put", "talk.mp4", "media/talk.mp4")
    assert put["file"]["size"] == len(big) and put["message"] == "stored"
    assert "stored: tiny.png" in cli.ok("files", "put", "tiny.png")
    assert server.services.attachments.get(
        server.services.callers.for_key(server.admin_key)[0], "media/talk.mp4"
    ).size == len(big)

    assert "wrote back.mp4" in cli.ok("files", "get", "media/talk.mp4", "-o", "back.mp4")
    assert (cwd / "back.mp4").read_bytes() == big
    assert cli("files", "get", "tiny.png", "-o", "-").raw == b"PNG tiny"

    server.services.accounts.set_limits("local", Limits(max_file_bytes=1024))
    refused = cli.failed("files", "put", "talk.mp4", "other.mp4")
    assert "file_too_large (413)" in refused
    assert "file_not_found (404)" in cli.failed("files", "get", "none.png")
    assert not (cwd / "none.png").exists()
