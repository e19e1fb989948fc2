"""Chunking and embedding many notes at once (an import's drain), in worker processes.

A bulk import queues every note's vectors in the outbox, and the drain chunks and embeds
them a thousand notes a call (services.vectors). With the local model both are pure
Python and numpy on one core, and the import itself is already over: the drain is what
"import with embeddings" waits for (ADR 0048). Each call's notes are split across worker
processes that chunk (``domain.chunking``) and embed them with their own copy of the
model, built by a factory the composition root hands over (picklable: a module-level
function, so no adapter is imported here); only offsets and float32 vectors come back, the
caller already holds the markdown. The caller writes one part's vectors while the workers
embed the next.

Workers are started on the first call of at least ``PARALLEL_MIN_NOTES`` notes and kept
for the calls that follow (a drain is many calls); a smaller call, the end of a drain,
stops them. Where processes cannot be started (AWS Lambda has no /dev/shm) the caller
chunks and embeds on its own core, as before.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memvault.domain.chunking import chunk_note
from memvault.ports import Embedder

log = logging.getLogger("memvault.vectors")

# Below this many notes in one call, starting or keeping workers costs more than it saves.
PARALLEL_MIN_NOTES = 400
MAX_WORKERS = 4
# Notes a worker gets at a time: small enough that writing one part overlaps the next.
PART = 100

# (path, title, markdown) of one note to chunk and embed.
Item = tuple[str, str, str]
# A note's chunks as (index, heading, offset, length) and their vectors (float32 rows).
Chunked = tuple[list[tuple[int, str, int, int]], bytes]
_POOL_ERRORS = (OSError, NotImplementedError, BrokenProcessPool, PermissionError)

_factory: Callable[[], Embedder] | None = None


@runtime_checkable
class ArrayEmbedder(Protocol):
    """An embedder that hands its vectors over as one float32 array (the local model)."""

    @property
    def model(self) -> str: ...
    def embed_array(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


def _start(parent_pid: int, factory: Callable[[], Embedder]) -> None:
    """A worker's initializer: end with the parent, and remember how to build the model."""
    from memvault.services.parsing import end_with_parent  # (parsing imports the vault)

    global _factory
    end_with_parent(parent_pid)
    _factory = factory


def chunk_and_embed(embedder: Embedder, items: Sequence[Item]) -> tuple[str, list[Chunked]]:
    """The chunks of each note and their vectors (the model's name first). Runs in a worker
    (or in the caller, when there are none)."""
    chunked = [chunk_note(markdown, title=title, path=path) for path, title, markdown in items]
    texts = [chunk.embed_text for chunks in chunked for chunk in chunks]
    if isinstance(embedder, ArrayEmbedder):
        # float32 rows as computed (ADR 0058): a list of Python floats and back cost as
        # much as the embedding itself.
        vectors = embedder.embed_array(texts)
        model = embedder.model
    else:
        result = embedder.embed(texts)
        vectors = np.asarray(result.vectors, dtype=np.float32).reshape(len(texts), result.dimension)
        model = result.model
    out: list[Chunked] = []
    row = 0
    for chunks in chunked:
        spans = [(c.index, c.heading, c.offset, c.length) for c in chunks]
        out.append((spans, vectors[row : row + len(chunks)].tobytes()))
        row += len(chunks)
    return model, out


def _work(items: list[Item]) -> tuple[str, list[Chunked]]:
    assert _factory is not None, "worker started without a model factory"
    return chunk_and_embed(_factory(), items)


class VectorWorkers:
    """Worker processes that chunk and embed notes with a model of their own."""

    def __init__(self, factory: Callable[[], Embedder], *, workers: int | None = None) -> None:
        from memvault.services.parsing import _usable_cpus

        self._factory = factory
        self._workers = workers or min(MAX_WORKERS, _usable_cpus())
        self._pool: ProcessPoolExecutor | None = None
        self._broken = self._workers < 2

    def parts(self, items: Sequence[Item]) -> Iterator[tuple[Sequence[Item], str, list[Chunked]]]:
        """(notes, model, chunked) per part of ``items``, in order; it stops early, after
        the parts it gave, when processes cannot start or die (the caller does the rest on
        its own core). Raises whatever the model raised."""
        if len(items) < PARALLEL_MIN_NOTES or self._broken:
            self.close()
            return
        futures: list[tuple[Sequence[Item], Future[tuple[str, list[Chunked]]]]] = []
        try:
            pool = self._ensure_pool()
            for start in range(0, len(items), PART):
                part = list(items[start : start + PART])
                futures.append((part, pool.submit(_work, part)))
        except _POOL_ERRORS:
            self._give_up()
            return
        for submitted, future in futures:
            try:
                model, chunked = future.result()
            except _POOL_ERRORS:
                self._give_up()
                return
            yield submitted, model, chunked

    @property
    def available(self) -> bool:
        return not self._broken

    def _ensure_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # "spawn": a fresh interpreter per worker, never a fork of a threaded server.
            self._pool = ProcessPoolExecutor(
                max_workers=self._workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start,
                initargs=(os.getpid(), self._factory),
            )
        return self._pool

    def _give_up(self) -> None:
        log.warning("embedding workers unavailable; embedding on one core", exc_info=True)
        self._broken = True
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
