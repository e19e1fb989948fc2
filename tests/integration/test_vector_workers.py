"""Bulk vector indexing in worker processes (ADR 0048): what is stored is what one core
would have stored, and where processes cannot start the caller's core does it all."""

from __future__ import annotations

import multiprocessing
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
