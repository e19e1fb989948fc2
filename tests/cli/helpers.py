"""Run `memvault` as a user or a harness would, and see what it printed and its exit code.

`invoke_memvault` runs a command in this process, on the Typer app object (typer's
CliRunner), as if in a fresh process: the environment it is given and no other, the
given directory as its working directory, stdin from the given bytes (an empty stream
otherwise, like /dev/null), stdout and stderr captured as bytes. The CLI is an HTTP
client of the server, so nothing about it needs a process of its own.

`run_memvault` runs the real console script installed next to the interpreter as a
subprocess: for what only a process shows (`memvault serve`, bytes through a real pipe,
the installed script itself). `run_memvault_on_a_terminal` runs it with its stdout on a
pseudo-terminal, for what the CLI does only for a person at a terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typer.testing import CliRunner

from memvault.cli.main import app
from memvault.container import get_services
from memvault.settings import get_settings

if TYPE_CHECKING:
    from tests.support.servers import LiveServer

# The console script installed next to the interpreter running the tests (.venv/bin).
MEMVAULT = Path(sys.executable).parent / ("memvault.exe" if os.name == "nt" else "memvault")
TIMEOUT = 60.0


def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment without any MEMVAULT_* setting a developer may have set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


@dataclass(frozen=True)
class Result:
    code: int
    stdout: str
    stderr: str
    raw: bytes  # stdout exactly as written

    def __str__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def run_memvault(
    *args: str,
    env: dict[str, str],
    cwd: Path,
    stdin: bytes | None = None,
    timeout: float = TIMEOUT,
) -> Result:
    assert MEMVAULT.exists(), f"the memvault console script is not installed at {MEMVAULT}"
    proc = subprocess.run(
        [str(MEMVAULT), *args],
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    return Result(
        code=proc.returncode,
        stdout=proc.stdout.decode("utf-8"),
        stderr=proc.stderr.decode("utf-8"),
        raw=proc.stdout,
    )


def run_memvault_on_a_terminal(
    *args: str, env: dict[str, str], cwd: Path, timeout: float = TIMEOUT
) -> Result:
    """The console script with stdout on a pseudo-terminal (raw: no newline translation)."""
    import pty  # POSIX only
    import select
    import time
    import tty

    assert MEMVAULT.exists(), f"the memvault console script is not installed at {MEMVAULT}"
    primary, secondary = pty.openpty()
    tty.setraw(secondary)
    try:
        proc = subprocess.Popen(
            [str(MEMVAULT), *args],
            stdin=subprocess.DEVNULL,
            stdout=secondary,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        os.close(secondary)
        secondary = -1
        output = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([primary], [], [], 0.1)
            if ready:
                try:
                    data = os.read(primary, 65536)
                except OSError:  # EIO: the terminal's other end has closed
                    break
                if not data:
                    break
                output += data
            elif proc.poll() is not None:
                break
        stderr = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))[1]
    finally:
        os.close(primary)
        if secondary != -1:
            os.close(secondary)
    return Result(
        code=proc.returncode,
        stdout=output.decode("utf-8"),
        stderr=stderr.decode("utf-8"),
        raw=output,
    )


def invoke_memvault(
    *args: str, env: Mapping[str, str], cwd: Path, stdin: bytes | None = None
) -> Result:
    """`memvault ARGS` in process, with exactly ``env`` as its environment (see above)."""
    # The whole environment is replaced, as for a subprocess: what is not in env is unset.
    overrides: dict[str, str | None] = {k: None for k in os.environ if k not in env}
    overrides.update(env)
    # Output goes to a pipe, never a terminal, so rich renders it 80 columns wide unless
    # COLUMNS says otherwise (under `pytest -s` it would take the terminal's width).
    if env.get("COLUMNS") is None:
        overrides["COLUMNS"] = "80"
    # A fresh process has read no settings yet (the storage commands read MEMVAULT_*).
    get_settings.cache_clear()
    get_services.cache_clear()
    try:
        with contextlib.chdir(cwd):
            result = CliRunner().invoke(
                app, list(args), input=stdin, env=overrides, prog_name="memvault"
            )
    finally:
        get_settings.cache_clear()
        get_services.cache_clear()
    stderr = result.stderr_bytes.decode("utf-8")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # A crash: the traceback the console script would have printed on stderr.
        stderr += "".join(traceback.format_exception(result.exception))
    return Result(
        code=result.exit_code,
        stdout=result.stdout_bytes.decode("utf-8"),
        stderr=stderr,
        raw=result.stdout_bytes,
    )


class ServerCli:
    """The command line against a live server, signed in with a key (the admin key by
    default): ``cli("keys", "list")``; ``ok``/``json`` insist it succeeds, ``failed``
    that it exits 2 with its message on stderr, nothing on stdout and no traceback."""

    def __init__(self, server: LiveServer, cwd: Path) -> None:
        self.server = server
        self.cwd = cwd

    def __call__(self, *args: str, key: str | None = None) -> Result:
        env = clean_env(MEMVAULT_API_KEY=key or self.server.admin_key)
        return invoke_memvault(*args, "--url", self.server.url, env=env, cwd=self.cwd)

    def ok(self, *args: str, key: str | None = None) -> str:
        result = self(*args, key=key)
        assert result.code == 0, str(result)
        return result.stdout

    def json(self, *args: str, key: str | None = None) -> Any:
        return json.loads(self.ok(*args, "--json", key=key))

    def failed(self, *args: str, key: str | None = None) -> str:
        result = self(*args, key=key)
        assert result.code == 2, str(result)
        assert result.stdout == "" and "Traceback" not in result.stderr, str(result)
        return result.stderr
