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
stops them. They are forked from multiprocessing's fork server, a single-threaded process
started once per server that imports numpy, the tokenizer and the model's code and loads
the model (``warm``), and spares the workers this process's main script
(``services.worker_main``): a worker then costs a fork, about 0.02 s of CPU, instead of a
fresh interpreter's 0.5-0.8 s (ADR 0062, 0067). Where there is no fork
server (not POSIX), a worker is a fresh interpreter ("spawn"); never a fork of this
threaded process. Where processes cannot be started at all (AWS Lambda has no /dev/shm)
the caller chunks and embeds on its own core, as before.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import spawn
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memvault.domain.chunking import chunk_note, chunk_spans
from memvault.domain.markdown import split_frontmatter
from memvault.services.lifeline import PARENT_CHECK_SECONDS, end_with_parent, usable_cpus

if TYPE_CHECKING:  # the fork server imports this module: nothing it does not need (ADR 0067)
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
# Where the fork server finds the server's main script (services.worker_main's MAIN_ENV).
_MAIN_ENV = "MEMVAULT_WORKERS_MAIN"
_POOL_ERRORS = (OSError, NotImplementedError, BrokenProcessPool, PermissionError)

_factory: Callable[[], Embedder] | None = None


@runtime_checkable
class ArrayEmbedder(Protocol):
    """An embedder that hands its vectors over as one float32 array (the local model)."""

    @property
    def model(self) -> str: ...
    def embed_array(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


@runtime_checkable
class PartsEmbedder(ArrayEmbedder, Protocol):
    """One that also embeds texts given as a shared head and a tail, the head's work done
    once (the local model: ``StaticEmbedder.embed_parts``, ADR 0079)."""

    def embed_parts(self, parts: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]: ...


# What the fork server imports before it forks workers (besides the factory's module and
# the modules the composition root names: the local model's, which loads it there).
_PRELOAD = (
    "numpy",
    "tokenizers",
    "safetensors.numpy",
    "memvault.services.vector_workers",
)


def _start(server_pid: int, forked: bool, factory: Callable[[], Embedder]) -> None:
    """A worker's initializer: end with the server that asked for it, however it ends, and
    remember how to build the model. A worker forked from the fork server also ends with
    that (its parent); and it watches the server itself, since the fork server outlives the
    server while any worker holds the pipe that tells it to stop."""
    global _factory
    if forked:
        end_with_parent(os.getppid())
        if not _alive(server_pid):
            os._exit(1)
        threading.Thread(target=_watch_server, args=(server_pid,), daemon=True).start()
    else:
        end_with_parent(server_pid)
    _factory = factory


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (not gone, not a zombie waiting to be reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # there, under another user
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # no /proc: the signal's answer stands
        return True
    return stat[stat.rindex(")") + 2 :][:1] not in ("Z", "X")


def _watch_server(pid: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_SECONDS)
        if not _alive(pid):
            os._exit(1)


def _context(factory: Callable[[], Embedder], warm: Sequence[str] = ()) -> tuple[BaseContext, bool]:
    """The fork server's context, told what to import first (True); else spawn."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        func = getattr(factory, "func", factory)  # a functools.partial's function
        module = getattr(func, "__module__", None)
        preload = [*_PRELOAD, module] if module and module != "__main__" else list(_PRELOAD)
        # What the fork server does about the server's main script (``worker_main``): a
        # forked worker imports it unless the fork server's ``__main__`` carries its path;
        # it needs it only for a factory defined there (ADR 0067).
        try:
            main_path = spawn.get_preparation_data("vector-worker").get("init_main_from_path")
        except RuntimeError:  # asked while a child imports its main module: none then
            main_path = None
        if main_path:
            mode = "import" if module == "__main__" else "named"
            os.environ[_MAIN_ENV] = f"{mode}:{main_path}"
            preload.append("memvault.services.worker_main")
        else:  # no main script (python -c): none inherited from a parent either
            os.environ.pop(_MAIN_ENV, None)
        preload.extend(warm)
        # Only until the server runs (then it is this process's for good): whoever starts
        # it first decides what it imports; these are all importable anywhere.
        context.set_forkserver_preload(preload)
        return context, True
    return multiprocessing.get_context("spawn"), False


def chunk_and_embed(embedder: Embedder, items: Sequence[Item]) -> tuple[str, list[Chunked]]:
    """The chunks of each note and their vectors (the model's name first). Runs in a worker
    (or in the caller, when there are none)."""
    if isinstance(embedder, PartsEmbedder):
        return embedder.model, _chunk_and_embed_parts(embedder, items)
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


def _chunk_and_embed_parts(embedder: PartsEmbedder, items: Sequence[Item]) -> list[Chunked]:
    """``chunk_and_embed`` with no ``Chunk`` made: each chunk's span of its note, and its
    embedded text as its context (shared by a section's chunks) and its text, which
    ``embed_parts`` embeds as the whole text, bit for bit (ADR 0079)."""
    notes: list[list[tuple[int, str, int, int]]] = []
    parts: list[tuple[str, str]] = []
    heads: dict[str, str] = {}
    for path, title, markdown in items:
        _, body = split_frontmatter(markdown)
        base = len(markdown) - len(body)
        spans = chunk_spans(body, title=title, path=path)
        notes.append(
            [(n, span[0], base + span[2], span[3] - span[2]) for n, span in enumerate(spans)]
        )
        for _, context, start, end, _ in spans:
            if context and end > start:  # chunk_body's f"{context}\n\n{text}"
                head = heads.get(context)
                if head is None:
                    head = heads[context] = context + "\n\n"
                parts.append((head, body[start:end]))
            else:  # the context alone (an empty body), or the text alone (no context)
                parts.append((context, body[start:end]))
    vectors = embedder.embed_parts(parts)
    out: list[Chunked] = []
    row = 0
    for spans_of_note in notes:
        out.append((spans_of_note, vectors[row : row + len(spans_of_note)].tobytes()))
        row += len(spans_of_note)
    return out


def _work(items: list[Item]) -> tuple[str, list[Chunked]]:
    assert _factory is not None, "worker started without a model factory"
    return chunk_and_embed(_factory(), items)


class VectorWorkers:
    """Worker processes that chunk and embed notes with a model of their own."""

    def __init__(
        self,
        factory: Callable[[], Embedder],
        *,
        workers: int | None = None,
        warm: Sequence[str] = (),
    ) -> None:
        """``warm``: modules the fork server also imports, whose import builds the model
        there (the local model's ``local_warm``), so a forked worker starts with it."""
        self._factory = factory
        self._warm = tuple(warm)
        self._workers = workers or min(MAX_WORKERS, usable_cpus())
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
            # Never a fork of this (threaded) process: forked from the fork server, or a
            # fresh interpreter.
            context, forked = _context(self._factory, self._warm)
            self._pool = ProcessPoolExecutor(
                max_workers=self._workers,
                mp_context=context,
                initializer=_start,
                initargs=(os.getpid(), forked, self._factory),
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
