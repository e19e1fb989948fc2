"""An embedded import killed at any stage: the vault is as it was, or every imported note
is stored *and* searchable after the next `memvault serve`, with no manual step.

The importing process dies with ``os._exit`` (no cleanup runs, as with kill -9) before
the commit, inside the SQLite transaction, and right after the commit (before the
search index was updated). A real server is then started on the same data directory and
asked over HTTP.
"""

from __future__ import annotations

import io
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.cli.helpers import clean_env
from tests.cli.test_serve import Serve, serve  # noqa: F401  (the fixture)

MARKER = "quokkacrashtest"
NOTES = 40

# Runs in its own interpreter: makes the local organisation, then imports an archive and
# dies at the stage named by argv[1].
CRASHING_IMPORT = r"""
import io, os, sys, zipfile
from memvault.container import get_services

stage, archive_path, key_path = sys.argv[1], sys.argv[2], sys.argv[3]
services = get_services()
issued = services.accounts.bootstrap_local()
open(key_path, "w").write(issued.secret)

def die():
    os._exit(137)

def progress(phase, done, total):
    if stage == "before" and phase == "committing" and done == 0:
        die()
    if stage == "after" and phase == "committing" and done == total:
        die()

if stage == "during":
    conn = services.store.db.connection()
    conn.set_trace_callback(lambda sql: die() if sql.startswith("INSERT INTO notes") else None)

from memvault.services.context import Caller, Surface
who = Caller(account_id="local", surface=Surface.REST)
with open(archive_path, "rb") as fh:
    services.transfer.import_zip(who, io.BytesIO(fh.read()), progress=progress)
print("import finished without dying", flush=True)
"""


def make_archive(path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(NOTES):
            zf.writestr(f"crash/n{i:02d}.md", f"# Note {i}\n{MARKER} number {i}\n")
    path.write_bytes(buf.getvalue())


def search_total(url: str, key: str) -> int:
    answer = httpx.get(
        f"{url}/v1/search",
        params={"q": MARKER, "limit": 100, "mode": "keyword"},
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    return len(answer.json()["results"])


def note_count(url: str, key: str) -> int:
    answer = httpx.get(
        f"{url}/v1/notes",
        params={"limit": 100},
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    return len(answer.json()["notes"])


@pytest.mark.parametrize(("stage", "landed"), [("before", 0), ("during", 0), ("after", NOTES)])
def test_a_killed_import_leaves_nothing_or_everything_searchable(
    serve: Serve,  # noqa: F811
    tmp_path: Path,
    stage: str,
    landed: int,
) -> None:
    env = clean_env(MEMVAULT_DATA_DIR=str(tmp_path / "data"), MEMVAULT_EMBEDDINGS="off")
    archive, key_file = tmp_path / "vault.zip", tmp_path / "key"
    make_archive(archive)
    died = subprocess.run(
        [sys.executable, "-c", CRASHING_IMPORT, stage, str(archive), str(key_file)],
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert died.returncode == 137, died.stderr.decode()[-2000:]
    key = key_file.read_text()

    server = serve(env)
    server.wait_healthy()
    assert note_count(server.url, key) == landed
    deadline = time.monotonic() + 15
    while search_total(server.url, key) < landed and time.monotonic() < deadline:
        time.sleep(0.2)  # the start-up drain runs in the background
    assert search_total(server.url, key) == landed
