"""Bulk vector indexing in worker processes (ADR 0048): what is stored is what one core
would have stored, where processes cannot start the caller's core does it all, and the
workers (forked from the fork server, ADR 0062) end with the server however it ends."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

import memvault.services.vector_workers as vector_workers
from memvault.adapters.embeddings.local import shared_local_embedder
from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.vectors import SqliteVectorIndex
from memvault.domain.models import Note
from memvault.services.embedding import EmbeddingService
from memvault.services.vector_workers import VectorWorkers
from memvault.services.vectors import VectorSync

WORDS = [
    "we",
    "picked",
    "Postgres",
    "because",
    "the",
    "team",
    "knows",
    "it,",
    "and",
    "SQLite",
    "for",
    "the",
    "embedded",
    "build",
]


def notes(count: int) -> list[Note]:
    out = []
    for n in range(count):
        words = " ".join(WORDS[(n + i) % len(WORDS)] for i in range(40 + 9 * n))
        body = f"# Note {n}\n\n{words}.\n\n## Later\n\n{words[::-1]}\n"
        markdown = f"---\ntags: [t{n % 3}]\n---\n{body}"
        out.append(
            Note(
                id=f"id{n}",
                path=f"f{n % 4}/n{n}.md",
                title=f"Note {n}",
                tags=(f"t{n % 3}",),
                version=1,
                size=len(markdown),
                created_at=1.0,
                updated_at=float(n),
                markdown=markdown,
                sha256="",
            )
        )
    return out


def stored(db: Database) -> list[tuple[object, ...]]:
    rows = (
        db.connection()
        .execute(
            "SELECT path, chunk_index, note_id, model, heading, start, length, text, tag_keys,"
            " updated_at, vector FROM vector_chunks ORDER BY path, chunk_index"
        )
        .fetchall()
    )
    return [tuple(r) for r in rows]


def sync(path: Path, workers: VectorWorkers | None) -> tuple[VectorSync, Database]:
    db = Database(path)
    embedding = EmbeddingService(shared_local_embedder(), None)
    return VectorSync(None, SqliteVectorIndex(db), embedding, workers=workers), db  # type: ignore[arg-type]


@pytest.fixture()
def few(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vector_workers, "PARALLEL_MIN_NOTES", 10)
    monkeypatch.setattr(vector_workers, "PART", 7)


@pytest.mark.usefixtures("few")
def test_workers_store_what_one_core_stores(tmp_path: Path) -> None:
    batch = notes(24)
    one, one_db = sync(tmp_path / "one.sqlite3", None)
    workers = VectorWorkers(partial(shared_local_embedder, 256), workers=2)
    many, many_db = sync(tmp_path / "many.sqlite3", workers)
    try:
        assert many.index_notes("acc", batch) == one.index_notes("acc", batch) > 24
        assert workers._pool is not None  # the parts went to the workers
        assert stored(many_db) == stored(one_db)
        many.rest()
        assert workers._pool is None
        # A small batch (a write) stays on the caller's core, and answers the same.
        assert many.index_notes("acc", batch[:3]) == one.index_notes("acc", batch[:3])
        assert workers._pool is None and stored(many_db) == stored(one_db)
    finally:
        workers.close()


@pytest.mark.usefixtures("few")
def test_no_processes_means_one_core_not_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_processes(method: str) -> object:
        raise OSError("no /dev/shm")  # as on AWS Lambda

    monkeypatch.setattr(multiprocessing, "get_context", no_processes)
    batch = notes(15)
    one, one_db = sync(tmp_path / "one.sqlite3", None)
    workers = VectorWorkers(partial(shared_local_embedder, 256), workers=2)
    many, many_db = sync(tmp_path / "many.sqlite3", workers)
    assert many.index_notes("acc", batch) == one.index_notes("acc", batch)
    assert stored(many_db) == stored(one_db) and not workers.available


# Starts two embedding workers on long notes, prints the fork server's pid and theirs, then
# waits (the test kills it with SIGKILL: no clean-up code runs).
SERVER = r"""
import threading, time
from functools import partial
import multiprocessing.forkserver as forkserver
from memvault.adapters.embeddings.local import shared_local_embedder
from memvault.services import vector_workers

workers = vector_workers.VectorWorkers(partial(shared_local_embedder, 256), workers=2)
items = [(f"n{i}.md", "n", "word " * 20000) for i in range(vector_workers.PARALLEL_MIN_NOTES)]
threading.Thread(target=lambda: list(workers.parts(items)), daemon=True).start()
deadline = time.monotonic() + 60
while not (workers._pool and len(workers._pool._processes) == 2) and time.monotonic() < deadline:
    time.sleep(0.05)
print(forkserver._forkserver._forkserver_pid, *workers._pool._processes, flush=True)
time.sleep(3600)
"""


def alive(pid: int) -> bool:
    return vector_workers._alive(pid)


@pytest.mark.skipif(
    "forkserver" not in multiprocessing.get_all_start_methods(), reason="no fork server here"
)
def test_the_fork_server_and_its_workers_end_when_the_server_is_killed() -> None:
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 3, "the fork server and two workers"
        assert all(alive(pid) for pid in pids)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if alive(pid)] == []


# A server's main script: logs which process imports it, then starts two warmed workers
# whose model factory is the local model's, or (argv[1] == "own") a function of its own.
MAIN_SCRIPT = r"""
import os, sys
with open(os.environ["IMPORT_LOG"], "a") as log:
    log.write(f"{os.getpid()} {__name__}\n")

from memvault.adapters.embeddings.local import shared_local_embedder


def own_factory():
    return shared_local_embedder(256)


if __name__ == "__main__":
    from functools import partial
    import multiprocessing.forkserver as forkserver
    from memvault.services import vector_workers

    workers = vector_workers.VectorWorkers(
        own_factory if sys.argv[1] == "own" else partial(shared_local_embedder, 256),
        workers=2,
        warm=("memvault.adapters.embeddings.local_warm",),
    )
    items = [(f"n{i}.md", "n", "a few words") for i in range(vector_workers.PARALLEL_MIN_NOTES)]
    parts = list(workers.parts(items))
    print(len(parts), forkserver._forkserver._forkserver_pid, *workers._pool._processes)
    workers.close()
"""


@pytest.mark.skipif(
    "forkserver" not in multiprocessing.get_all_start_methods(), reason="no fork server here"
)
@pytest.mark.parametrize("factory", ["local", "own"])
def test_no_forked_worker_imports_the_servers_main_script(tmp_path: Path, factory: str) -> None:
    # multiprocessing prepares each forked worker by importing its parent's main script
    # unless the fork server's __main__ carries its path (ADR 0067). The workers need it
    # only for a factory defined there: then the fork server imports it, once.
    script, log = tmp_path / "server.py", tmp_path / "imports.log"
    script.write_text(MAIN_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), factory],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "IMPORT_LOG": str(log)},
        check=True,
    )
    parts, server, *workers = (int(p) for p in done.stdout.split())
    assert parts == vector_workers.PARALLEL_MIN_NOTES // vector_workers.PART and len(workers) == 2
    imports = [line.split() for line in log.read_text().splitlines()]
    assert imports[0][1] == "__main__"
    assert imports[1:] == ([[str(server), "__mp_main__"]] if factory == "own" else [])


def test_packed_vectors_that_do_not_split_into_the_spans_are_refused(tmp_path: Path) -> None:
    from memvault.ports import PackedChunks

    many, db = sync(tmp_path / "v.sqlite3", None)
    note = notes(1)[0]
    spans = [(0, "", 0, 4), (1, "", 4, 4)]
    with pytest.raises(ValueError, match="do not split"):
        many.vectors.upsert_packed("acc", [PackedChunks(note, "m", spans, b"\0" * (4 * 257))])
    assert stored(db) == []
    many.vectors.upsert_packed("acc", [PackedChunks(note, "m", spans, b"\0" * (8 * 256))])
    assert [(r[1], r[5], len(r[10])) for r in stored(db)] == [(0, 0, 1024), (1, 4, 1024)]


def test_a_workers_chunks_and_vectors_are_chunk_note_and_embed_array_bit_for_bit() -> None:
    # A worker embeds each chunk as its context and its text (ADR 0079): the spans and
    # every vector byte must be chunk_note's chunks and embed_array's vectors of their
    # embed_text, for notes with frontmatter, an empty body, no heading, Windows line
    # ends, runs of spaces, marks, text NFKC changes and added tokens.
    import numpy as np

    from memvault.domain.chunking import chunk_note

    local = shared_local_embedder()
    bodies = [
        "# Why\n\nwe picked Postgres.\nthen SQLite  for the embedded build\n\n## Later\n\nmore",
        "",
        "no heading at all\r\nwindows line ends\r\n",
        "# Ünïcödé ｆｕｌｌｗｉｄｔｈ\n\nﬁ and a mark \u2581 and <s>added</s>\n",
        "   indented first line\n\ttabbed\n" + "long line of words " * 60,
    ]
    items = [
        (f"f/n{n}.md", f"Note {n}" if n % 2 else "", f"---\ntags: [t]\n---\n{body}")
        for n, body in enumerate(bodies)
    ]
    model, got = vector_workers.chunk_and_embed(local, items)
    assert model == local.model
    for (path, title, markdown), (spans, blob) in zip(items, got, strict=True):
        chunks = chunk_note(markdown, title=title, path=path)
        assert spans == [(c.index, c.heading, c.offset, c.length) for c in chunks]
        want = local.embed_array([c.embed_text for c in chunks])
        assert blob == np.ascontiguousarray(want, dtype=np.float32).tobytes(), path
