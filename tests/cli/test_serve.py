"""`memvault serve` as a real process: first-start admin key, data directory, restarts.

Every server is started on a free port with its own data directory and is always
stopped (terminate, then kill) by the fixture, whatever the test did.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.cli.helpers import MEMVAULT, clean_env, invoke_memvault, run_memvault
from tests.support.servers import free_port

KEY_RE = re.compile(r"mvk_[A-Za-z0-9_-]+")
START_TIMEOUT = 20.0


@dataclass
class Served:
    proc: subprocess.Popen[bytes]
    url: str
    stdout_file: Path
    stderr_file: Path

    @property
    def stdout(self) -> str:
        return self.stdout_file.read_text(encoding="utf-8")

    @property
    def stderr(self) -> str:
        return self.stderr_file.read_text(encoding="utf-8")

    def wait_healthy(self, timeout: float = START_TIMEOUT) -> dict[str, str]:
        """Poll /healthz until it answers; fail fast if the process exits."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                pytest.fail(
                    f"memvault serve exited with {self.proc.returncode}\n"
                    f"--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"
                )
            try:
                response = httpx.get(f"{self.url}/healthz", timeout=1.0)
                if response.status_code == 200:
                    body: dict[str, str] = response.json()
                    return body
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"memvault serve did not answer /healthz within {timeout} s")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


Serve = Callable[..., Served]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    started: list[Served] = []
    cwd = tmp_path / "cwd"
    cwd.mkdir()

    def start(env: dict[str, str], *extra: str) -> Served:
        port = free_port()
        n = len(started)
        out, err = tmp_path / f"serve{n}.out", tmp_path / f"serve{n}.err"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            proc = subprocess.Popen(
                [str(MEMVAULT), "serve", "--port", str(port), *extra],
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                env=env,
                cwd=cwd,
            )
        served = Served(proc, f"http://127.0.0.1:{port}", out, err)
        started.append(served)
        return served

    try:
        yield start
    finally:
        for served in started:
            served.stop()


def me(url: str, key: str) -> httpx.Response:
    return httpx.get(f"{url}/v1/me", headers={"Authorization": f"Bearer {key}"}, timeout=10)


def test_first_start_prints_the_admin_key_once_and_never_again(
    serve: Serve, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    env = clean_env(MEMVAULT_DATA_DIR=str(data_dir))

    first = serve(env)
    health = first.wait_healthy()
    assert health["status"] == "ok" and health["backend"] == "sqlite"
    keys = KEY_RE.findall(first.stdout)
    assert len(keys) == 1, first.stdout  # printed exactly once
    key = keys[0]
    assert re.fullmatch(r"mvk_[A-Za-z0-9_-]{40,}", key)
    assert "shown this once" in first.stdout
    assert str(data_dir) in first.stdout
    assert KEY_RE.search(first.stderr) is None  # the key goes to stdout only

    answer = me(first.url, key)
    assert answer.status_code == 200, answer.text
    assert (answer.json()["auth"], answer.json()["role"]) == ("key", "owner")
    who = answer.json()["key"]  # the local organisation's owner's key
    assert who["admin"] is True
    assert (who["recall"], who["tools"], who["mcp"]) == (True, True, True)
    assert who["revoked_at"] is None
    assert me(first.url, "mvk_wrong").status_code == 401

    # Write something so the restart can be seen to keep the vault.
    put = httpx.put(
        f"{first.url}/v1/notes/kept.md",
        json={"markdown": "# kept\n"},
        headers={"Authorization": f"Bearer {key}"},
    )
    assert put.status_code == 201, put.text
    first.stop()
    assert first.proc.returncode is not None
    assert (data_dir / "memvault.sqlite3").exists()

    second = serve(env)
    second.wait_healthy()
    assert KEY_RE.search(second.stdout) is None, second.stdout
    assert "created the local" not in second.stdout
    assert me(second.url, key).json()["key"]["admin"] is True
    note = httpx.get(
        f"{second.url}/v1/notes/kept.md", headers={"Authorization": f"Bearer {key}"}, timeout=10
    )
    assert note.status_code == 200 and note.json()["markdown"] == "# kept\n"

    # The CLI, pointed at the served URL with that key, works against it too.
    result = invoke_memvault(
        "read", "kept.md", "--url", second.url, env=clean_env(MEMVAULT_API_KEY=key), cwd=tmp_path
    )
    assert result.code == 0 and result.stdout == "# kept\n", str(result)


def test_xdg_data_home_is_the_default_data_root(serve: Serve, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    home = tmp_path / "home"
    env = clean_env(XDG_DATA_HOME=str(xdg), HOME=str(home))
    served = serve(env)
    served.wait_healthy()
    assert (xdg / "memvault" / "memvault.sqlite3").exists()
    assert not (home / ".local").exists()
    assert str(xdg / "memvault") in served.stdout
    assert len(KEY_RE.findall(served.stdout)) == 1


def test_without_xdg_data_home_data_goes_under_home(serve: Serve, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = clean_env(HOME=str(home))
    env.pop("XDG_DATA_HOME", None)
    served = serve(env)
    served.wait_healthy()
    assert (home / ".local" / "share" / "memvault" / "memvault.sqlite3").exists()


def test_memvault_data_dir_wins_over_xdg_data_home(serve: Serve, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    data_dir = tmp_path / "explicit"
    served = serve(clean_env(XDG_DATA_HOME=str(xdg), MEMVAULT_DATA_DIR=str(data_dir)))
    served.wait_healthy()
    assert (data_dir / "memvault.sqlite3").exists()
    assert not (xdg / "memvault").exists()


def test_a_taken_port_fails_clearly_without_creating_the_account(tmp_path: Path) -> None:
    import socket

    data_dir = tmp_path / "data"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_memvault(
            "serve",
            "--port",
            str(port),
            env=clean_env(MEMVAULT_DATA_DIR=str(data_dir)),
            cwd=tmp_path,
        )
    assert result.code == 1, str(result)
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert KEY_RE.search(result.stdout) is None  # no key shown for a server that never ran
