"""Parsing many notes at once (imports), on every core the machine has.

Markdown parsing is pure Python and dominates a large import; notes are independent,
so a big batch is parsed in worker processes. Notes are handed to the workers in
chunks while the caller is still reading the rest (unzipping overlaps parsing and the
workers' start-up), and only what parsing derives comes back: the caller already holds
the markdown. Where processes cannot be started (AWS Lambda has no /dev/shm for
multiprocessing's semaphores) it falls back to one core.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType

from memvault.domain.models import LinkRef, PutNote
from memvault.services.vault import build_put

log = logging.getLogger("memvault.parsing")

# Below this many notes, starting workers costs more than it saves.
PARALLEL_MIN_NOTES = 2000
MAX_WORKERS = 4
CHUNK = 250

# (path, markdown, expected version): one note to parse.
Item = tuple[str, str, int]
# What parsing derives from a note: title, tags, links and the markdown's sha256.
_Derived = tuple[str, tuple[str, ...], tuple[LinkRef, ...], str]
_POOL_ERRORS = (OSError, NotImplementedError, BrokenProcessPool, PermissionError)


def _derive(items: list[Item]) -> list[_Derived]:
    """Runs in a worker: everything ``build_put`` derives, without the markdown itself."""
    out: list[_Derived] = []
    for path, markdown, expected in items:
        put = build_put(path, markdown, expected)
        out.append((put.title, put.tags, put.links, put.sha256))
    return out


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


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may run on (containers)
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


class BulkParser:
    """``build_put`` for each note added, in order; in worker processes for big batches.

    Use as a context manager: leaving it stops the workers, abandoning queued work when
    the caller gave up (a refused import).
    """

    def __init__(self, expected_notes: int) -> None:
        self._items: list[Item] = []
        self._times: list[float | None] = []  # each note's own modification time, if known
        self._futures: list[Future[list[_Derived]]] = []
        self._submitted = 0  # items[:submitted] are with the workers
        self._workers = min(MAX_WORKERS, _usable_cpus())
        self._parallel = expected_notes >= PARALLEL_MIN_NOTES and self._workers >= 2
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> BulkParser:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=exc_type is not None)
            self._pool = None

    def add(
        self, path: str, markdown: str, expected_version: int, updated_at: float | None = None
    ) -> None:
        self._items.append((path, markdown, expected_version))
        self._times.append(updated_at)
        if self._parallel and len(self._items) - self._submitted >= CHUNK:
            self._submit()

    def results(self) -> list[PutNote]:
        """The parsed notes, in the order they were added."""
        derived: list[_Derived] = []
        if self._parallel:
            self._submit()
            try:
                for future in self._futures:
                    derived += future.result()
            except _POOL_ERRORS:
                log.warning("parallel parsing unavailable; parsing on one core", exc_info=True)
                derived = []
        derived += _derive(self._items[len(derived) :])
        return [
            PutNote(
                path=path,
                markdown=markdown,
                title=title,
                tags=tags,
                links=links,
                sha256=sha256,
                expected_version=expected,
                updated_at=updated_at,
            )
            for (path, markdown, expected), (title, tags, links, sha256), updated_at in zip(
                self._items, derived, self._times, strict=True
            )
        ]

    def _submit(self) -> None:
        chunk = self._items[self._submitted :]
        if not chunk or not self._parallel:
            return
        try:
            if self._pool is None:
                # "spawn": a fresh interpreter per worker, never a fork of a threaded server.
                context = multiprocessing.get_context("spawn")
                self._pool = ProcessPoolExecutor(
                    max_workers=self._workers,
                    mp_context=context,
                    initializer=end_with_parent,
                    initargs=(os.getpid(),),
                )
            self._futures.append(self._pool.submit(_derive, chunk))
        except _POOL_ERRORS:
            log.warning("parallel parsing unavailable; parsing on one core", exc_info=True)
            self._parallel = False  # what was submitted is parsed again by results()
            self._futures = []
            return
        self._submitted = len(self._items)


def build_puts(items: Sequence[Item]) -> list[PutNote]:
    """``build_put`` for each (path, markdown, expected version), in order."""
    with BulkParser(len(items)) as parser:
        for path, markdown, expected in items:
            parser.add(path, markdown, expected)
        return parser.results()
