"""Worker processes that end with the server that started them, and the cores they may use.

Shared by the import's parsing workers (services.parsing) and the drain's embedding
workers (services.vector_workers). Imports nothing of memvault: the embedding workers'
fork server imports it before it forks them, and every module it imports is paid for once
per server process (ADR 0067).
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time

# How often a worker checks that the process that started it is still there.
PARENT_CHECK_SECONDS = 0.25
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def end_with_parent(parent_pid: int) -> None:
    """A worker's initializer: the worker ends when the server ends, however it ends.

    A clean shutdown stops the pool, but a server killed with SIGKILL (or by the OOM
    killer) runs no code, and its workers would parse on, orphaned. On Linux the kernel
    kills the worker when its parent dies (PR_SET_PDEATHSIG); everywhere, a daemon thread
    notices the parent is gone (the worker is re-parented) and exits.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the watcher alone
        pass
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_SECONDS)
        if os.getppid() != parent_pid:
            os._exit(1)


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may run on (containers)
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1
