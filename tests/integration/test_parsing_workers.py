"""An import's parsing workers end with the process that started them, even when it is
killed with SIGKILL mid-import (no clean-up code runs then)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from memvault.services import parsing

# Starts a big parse in worker processes, prints the workers' pids, then waits forever
# (the test kills it).
PARSING_PROCESS = r"""
import sys, time
from memvault.services.parsing import BulkParser, PARALLEL_MIN_NOTES, CHUNK

parser = BulkParser(PARALLEL_MIN_NOTES)
for i in range(CHUNK * 4):
    parser.add(f"n{i}.md", "# note\n" + "[[link]] #tag words " * 200, 0)
deadline = time.monotonic() + 60
while not (parser._pool and parser._pool._processes) and time.monotonic() < deadline:
    time.sleep(0.05)
print(" ".join(str(pid) for pid in parser._pool._processes), flush=True)
time.sleep(3600)
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead but not yet reaped by its (new) parent.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(parsing._usable_cpus() < 2, reason="parsing runs in workers only on 2+ cores")
def test_workers_end_when_their_parent_is_killed() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", PARSING_PROCESS], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert pids, "no worker started"
        assert all(alive(pid) for pid in pids)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if alive(pid)] == []


def test_a_worker_whose_parent_is_gone_exits_at_once() -> None:
    code = "from memvault.services.parsing import end_with_parent; end_with_parent(1)"
    done = subprocess.run([sys.executable, "-c", code + "; print('lived')"], capture_output=True)
    assert done.returncode == 1 and b"lived" not in done.stdout
