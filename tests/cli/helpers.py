"""Run the real `memvault` console script as a subprocess, as a user or a harness would."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

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
