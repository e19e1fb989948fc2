"""Parsing many notes at once (imports), on every core the machine has.

Markdown parsing is pure Python and dominates a large import; notes are independent,
so a big batch is parsed in worker processes. Where processes cannot be started (AWS
Lambda has no /dev/shm for multiprocessing's semaphores) it falls back to one core.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from memvault.domain.models import PutNote
from memvault.services.vault import build_put

log = logging.getLogger("memvault.parsing")

# Below this many notes, starting workers costs more than it saves.
PARALLEL_MIN_NOTES = 2000
MAX_WORKERS = 4
CHUNK = 250


def _build(item: tuple[str, str, int]) -> PutNote:
    path, markdown, expected = item
    return build_put(path, markdown, expected)


def build_puts(items: Sequence[tuple[str, str, int]]) -> list[PutNote]:
    """``build_put`` for each (path, markdown, expected version), in order."""
    workers = min(MAX_WORKERS, os.cpu_count() or 1)
    if len(items) < PARALLEL_MIN_NOTES or workers < 2:
        return [_build(item) for item in items]
    try:
        # "spawn": a fresh interpreter per worker, never a fork of a threaded server.
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            return list(pool.map(_build, items, chunksize=CHUNK))
    except (OSError, NotImplementedError, BrokenProcessPool, PermissionError):
        log.warning("parallel parsing unavailable; parsing on one core", exc_info=True)
        return [_build(item) for item in items]
