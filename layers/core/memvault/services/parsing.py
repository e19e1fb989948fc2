"""Parsing many notes at once (imports), on every core the machine has.

Markdown parsing is pure Python and dominates a large import; notes are independent,
so a big batch is parsed in worker processes. Notes are handed to the workers in
chunks while the caller is still reading the rest (unzipping overlaps parsing and the
workers' start-up), and only what parsing derives comes back: the caller already holds
the markdown. Where processes cannot be started (AWS Lambda has no /dev/shm for
multiprocessing's semaphores) it falls back to one core.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType

from memvault.domain.models import LinkRef, PutNote
from memvault.services.lifeline import end_with_parent, usable_cpus
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


# The lifeline and the core count live in services.lifeline (shared with the embedding
# workers, whose fork server imports it); the names stay importable from here.
_usable_cpus = usable_cpus


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
