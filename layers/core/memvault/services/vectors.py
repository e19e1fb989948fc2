"""Keeping note vectors in step with storage: derived data, through the search outbox.

After each commit the notes it wrote are chunked (``domain.chunking``), embedded and
stored in the vector index; deleted notes lose their vectors and a moved note's vectors
are stored under its new path (re-embedded: the path is part of each chunk's context).
When the embedder or the index fails, the write still stands: the paths go to the same
outbox as the text index's (``SearchOutbox``) and are embedded on its next drain.

Vectors of two models are never compared: every vector records its model, searches ask
for the configured one, and when an account holds vectors of another model (the
configuration changed) every live note is queued for re-embedding through the outbox
(``ensure_model``, checked on the account's first write in a process, by ``reindex`` and
by ``memvault reindex --vectors``). A note's vector status (``note_status``) is
"indexed" when its chunks are of the current model and it waits in no outbox, "pending"
otherwise, and "off" when embeddings are off.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from memvault.domain.chunking import chunk_note
from memvault.domain.models import Note
from memvault.ports import ChunkVector, IndexedNotes, PackedChunks, VectorIndex
from memvault.services.embedding import EmbeddingService
from memvault.services.vector_workers import VectorWorkers

log = logging.getLogger("memvault.vectors")

VectorStatus = Literal["indexed", "pending", "off"]
# Notes embedded per embedder call while re-embedding a vault.
REEMBED_BATCH = 200
# How many queued notes a vault's vector status counts at most.
STATUS_QUEUE_SCAN = 10_000


@dataclass(frozen=True, slots=True)
class VaultVectorStatus:
    enabled: bool
    model: str | None
    chunks: int  # chunks of the current model
    other_models: dict[str, int]  # chunks of other models (to be re-embedded)
    queued: int  # notes waiting in the outbox (text index or vectors), up to the scan


class VectorSync:
    def __init__(
        self,
        store: IndexedNotes,
        vectors: VectorIndex,
        embedding: EmbeddingService,
        *,
        inline_notes: int = 64,
        workers: VectorWorkers | None = None,
    ) -> None:
        self.store = store
        self.vectors = vectors
        self.embedding = embedding
        # Chunk and embed large batches in worker processes (the local model only: its
        # calls cost nothing, so there is no usage to record; services.vector_workers).
        self.workers = workers
        # More written notes than this in one commit: embedded later, from the outbox.
        self.inline_notes = inline_notes
        self._checked: set[str] = set()  # accounts whose stored models were checked

    @property
    def model(self) -> str | None:
        return self.embedding.model

    # ------------------------------------------------------------------ following writes
    def follow(self, account_id: str, removed: Collection[str], written: Iterable[Note]) -> int:
        """Bring the vectors of one commit's notes up to date. Raises on any failure (the
        caller queues the paths). Returns how many notes it queued in the outbox instead:
        a commit of more than ``inline_notes`` notes (an import), or every note when the
        account's first commit in this process found vectors of another model."""
        if not self.embedding.enabled:
            return 0
        gone = set(removed)
        notes = list(written)
        gone -= {n.path for n in notes}
        if gone:
            self.vectors.delete_notes(account_id, sorted(gone))
        if len(notes) > self.inline_notes:
            self.store.queue_reindex(account_id, [n.path for n in notes])
            return len(notes)
        if notes:
            self.index_notes(account_id, notes)
        if account_id not in self._checked:
            return self.ensure_model(account_id)
        return 0

    def index_notes(self, account_id: str, notes: Sequence[Note]) -> int:
        """Chunk, embed and store ``notes`` (one embedder call per batch). Chunks stored."""
        stored = 0
        if self.workers is not None:
            done = 0
            items = [(note.path, note.title, note.markdown) for note in notes]
            by_path = {note.path: note for note in notes}
            for part, model, done_part in self.workers.parts(items):
                # As the workers packed them: no ChunkVector a chunk (ADR 0067).
                packed = [
                    PackedChunks(by_path[path], model, spans, blob)
                    for (path, _, _), (spans, blob) in zip(part, done_part, strict=True)
                ]
                stored += sum(len(p.spans) for p in packed)
                self.vectors.upsert_packed(account_id, packed)
                done += len(part)
            notes = notes[done:]  # all of them, unless there were no workers to ask
        for start in range(0, len(notes), REEMBED_BATCH):
            batch = notes[start : start + REEMBED_BATCH]
            chunked = [
                (note, chunk_note(note.markdown, title=note.title, path=note.path))
                for note in batch
            ]
            texts = [chunk.embed_text for _, chunks in chunked for chunk in chunks]
            result = self.embedding.embed(account_id, texts, purpose="index")
            vectors_iter = iter(result.vectors)
            by_note: dict[str, list[ChunkVector]] = {}
            for note, chunks in chunked:
                rows = [
                    ChunkVector(
                        note_id=note.id,
                        path=note.path,
                        chunk_index=chunk.index,
                        heading=chunk.heading,
                        offset=chunk.offset,
                        length=chunk.length,
                        text=chunk.text,
                        tags=note.tags,
                        vector=next(vectors_iter),
                        model=result.model,
                        updated_at=note.updated_at,
                    )
                    for chunk in chunks
                ]
                by_note[note.path] = rows
                stored += len(rows)
            self.vectors.upsert_notes(account_id, by_note)  # one index round trip a batch
        return stored

    def rest(self) -> None:
        """Stop the embedding workers, if any (a drain found its outbox empty)."""
        if self.workers is not None:
            self.workers.close()

    def drain(self, account_id: str, live: Sequence[Note], gone: Collection[str]) -> bool:
        """Embed the outbox's notes. True when done (the paths may leave the outbox);
        False when the embedder or the index failed (they stay for the next drain)."""
        if not self.embedding.enabled:
            return True
        try:
            if gone:
                self.vectors.delete_notes(account_id, list(gone))
            self.index_notes(account_id, live)
        except Exception:
            log.warning(
                "vector indexing failed; notes stay queued",
                extra={"account_id": account_id, "paths": len(live) + len(gone)},
                exc_info=True,
            )
            return False
        return True

    # ------------------------------------------------------------------ model changes
    def ensure_model(self, account_id: str) -> int:
        """Queue every live note for re-embedding when the account holds vectors of
        another model. Returns how many notes were queued."""
        model = self.model
        if model is None:
            return 0
        stored = self.vectors.indexed_models(account_id)
        self._checked.add(account_id)
        if not any(name != model for name in stored):
            return 0
        paths = sorted(self.store.note_keys(account_id))
        log.info(
            "vectors of another model found; re-embedding through the outbox",
            extra={"account_id": account_id, "model": model, "notes": len(paths)},
        )
        if paths:
            self.store.queue_reindex(account_id, paths)
        return len(paths)

    def reembed(self, account_id: str) -> int:
        """Re-embed every live note of the account now (``memvault reindex --vectors``):
        the account's vectors are replaced by the current model's. Returns notes embedded."""
        if not self.embedding.enabled:
            return 0
        self.vectors.clear(account_id)
        total = 0
        batch: list[Note] = []
        for note in self.store.iter_notes(account_id):
            batch.append(note)
            if len(batch) >= REEMBED_BATCH:
                self.index_notes(account_id, batch)
                total += len(batch)
                batch = []
        self.index_notes(account_id, batch)
        self._checked.add(account_id)
        return total + len(batch)

    # ------------------------------------------------------------------ status
    def note_status(self, account_id: str, path: str) -> VectorStatus:
        """The note's vector status. Never raises for the vector index: a read of the note
        must not fail over derived data, so an index that cannot answer reads "pending"."""
        model = self.model
        if model is None:
            return "off"
        if self.store.is_queued_reindex(account_id, path):
            return "pending"
        try:
            stored = self.vectors.indexed_paths(account_id, [path])
        except Exception:
            log.warning(
                "vector status unknown; reported pending",
                extra={"account_id": account_id},
                exc_info=True,
            )
            return "pending"
        return "indexed" if stored.get(path) == model else "pending"

    def vault_status(self, account_id: str) -> VaultVectorStatus:
        model = self.model
        stored = self.vectors.indexed_models(account_id) if model is not None else {}
        return VaultVectorStatus(
            enabled=model is not None,
            model=model,
            chunks=stored.get(model, 0) if model is not None else 0,
            other_models={m: n for m, n in stored.items() if m != model},
            queued=len(self.store.queued_reindex(account_id, STATUS_QUEUE_SCAN)),
        )
