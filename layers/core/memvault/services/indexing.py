"""Keeping the search index in step with storage.

Storage is the source of truth and commits first. The index follows each commit: the
changed notes are (re)indexed and the inbound-link counts that ranking uses are brought
up to date. When the index cannot be reached, the write still succeeds: the paths it
touched go to an outbox in storage, drained on a later successful commit in this
process, at a Lambda function's idle moment (``drain_pending``), by the ops function's
schedule every few minutes (``drain_all``), or by ``memvault reindex``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence

from memvault.domain import markdown as md
from memvault.domain import paths
from memvault.domain.models import (
    DeleteNote,
    MoveNote,
    Note,
    NoteChange,
    PutNote,
    SearchDoc,
)
from memvault.ports import CommitResult, IndexedNotes, SearchIndex
from memvault.services.links import LinkGraph, LinkTargets
from memvault.services.vectors import VectorSync

log = logging.getLogger("memvault.indexing")

# Past this many changed notes in one commit, inbound link counts are recomputed for
# the whole vault in one pass instead of note by note.
BULK_RELINK_THRESHOLD = 200
REINDEX_BATCH = 500
# What one drain call takes from an outbox (SearchOutbox.queued_reindex's default).
DRAIN_BATCH = 1000
# What a good commit drains of its account's outbox when notes are embedded too.
DRAIN_AFTER_WRITE = 20


def search_doc(note: Note, inbound: int) -> SearchDoc:
    body = md.truncate_utf8(md.body_for_search(note.markdown), md.SEARCH_BODY_LIMIT_BYTES)
    return SearchDoc(
        note_id=note.id,
        path=note.path,
        title=note.title,
        tags=note.tags,
        body=body,
        updated_at=note.updated_at,
        inbound_links=inbound,
    )


class IndexSync:
    def __init__(
        self,
        store: IndexedNotes,
        index: SearchIndex,
        links: LinkGraph,
        vectors: VectorSync | None = None,
    ) -> None:
        self.store = store
        self.index = index
        self.links = links
        # Note vectors follow the same commits and the same outbox (services.vectors).
        self.vectors = vectors
        # Accounts this process queued work for; drained after its next good commit.
        self._pending: set[str] = set()
        # Notes queued for their vectors only: this process indexed their text in the
        # commit (path -> the version it indexed). A drain indexes their text again only
        # when the note has moved past that version (ADR 0048: an import's drain indexed
        # every note's text a second time). Lost on restart: then the drain does both.
        self._text_current: dict[str, dict[str, int]] = {}

    def after_commit(
        self, account_id: str, changes: Sequence[NoteChange], result: CommitResult
    ) -> bool:
        """Bring the index (and vectors) up to date with a commit; False when that failed
        and the commit's notes were queued in the outbox instead."""
        try:
            self._follow(account_id, changes, result)
        except Exception:
            touched = {c.path for c in changes} | {n.path for n in result.notes if n}
            touched |= {c.new_path for c in changes if isinstance(c, MoveNote)}
            current = self._text_current.get(account_id, {})
            for path in touched:
                current.pop(path, None)
            log.warning(
                "search index update failed; queued for retry",
                extra={"account_id": account_id, "paths": len(touched)},
                exc_info=True,
            )
            try:
                self.store.queue_reindex(account_id, touched)
                self._pending.add(account_id)
            except Exception:  # the write stands; `memvault reindex` is the last resort
                log.exception("could not queue notes for reindexing")
            return False
        if self.vectors is not None and not self._follow_vectors(account_id, changes, result):
            return False
        if account_id in self._pending:
            # Embedding costs about a millisecond a chunk: with vectors on, a write drains
            # a bounded part of the outbox, not a whole vault's re-embedding.
            self.drain(account_id, DRAIN_AFTER_WRITE if self.vectors is not None else DRAIN_BATCH)
        return True

    def _follow_vectors(
        self, account_id: str, changes: Sequence[NoteChange], result: CommitResult
    ) -> bool:
        """Vectors of the commit's notes; on failure their paths join the outbox (the
        write stands). False when they were queued in the outbox instead."""
        assert self.vectors is not None
        removed = [c.path for c in changes if isinstance(c, (DeleteNote, MoveNote))]
        written = [n for n in result.notes if n is not None]
        # The commit's text is indexed (``_follow`` came first): whatever the vectors do,
        # a drain need not index these versions' text again.
        current = self._text_current.setdefault(account_id, {})
        for note in written:
            current[note.path] = note.version
        try:
            if self.vectors.follow(account_id, removed, written):
                # Queued for later (a bulk commit, or another model's vectors): drained in
                # the background, and a bounded part by each later write.
                self._pending.add(account_id)
                return False
            for note in written:  # embedded already: nothing waits in the outbox
                if current.get(note.path) == note.version:
                    del current[note.path]
        except Exception:
            touched = set(removed) | {n.path for n in written}
            log.warning(
                "vector indexing failed; queued for retry",
                extra={"account_id": account_id, "paths": len(touched)},
                exc_info=True,
            )
            try:
                self.store.queue_reindex(account_id, touched)
                self._pending.add(account_id)
            except Exception:  # the write stands; `memvault reindex --vectors` mends it
                log.exception("could not queue notes for vector indexing")
            return False
        return True

    def _follow(self, account_id: str, changes: Sequence[NoteChange], result: CommitResult) -> None:
        removed = [c.path for c in changes if isinstance(c, (DeleteNote, MoveNote))]
        if removed:
            self.index.delete(account_id, removed)
        written = {n.path: n for n in result.notes if n is not None}
        if len(changes) > BULK_RELINK_THRESHOLD:
            counts = self.links.inbound_counts_all(account_id)
        else:
            affected, targets = self._affected(account_id, changes, result, written)
            # The targets read for the changed links resolve most of the links counted
            # next: only the rest are read (a note's write: 11 DynamoDB calls -> 9).
            counts = self._counts_for(account_id, affected, known=targets)
        self.index.upsert(
            account_id, [search_doc(n, counts.get(n.path, 0)) for n in written.values()]
        )
        self.index.set_inbound(account_id, {p: c for p, c in counts.items() if p not in written})

    def _affected(
        self,
        account_id: str,
        changes: Sequence[NoteChange],
        result: CommitResult,
        written: dict[str, Note],
    ) -> tuple[set[str], LinkTargets]:
        """Notes whose inbound count may have moved: the written notes themselves, what
        each changed note links to now and did not before (or the reverse), and every
        note sharing a file name with one that appeared or vanished (bare links to that
        name may now resolve differently). A link a note kept across its change adds and
        removes nothing, so its target is left alone: an edit that keeps its links
        recounts only itself. With them, the link targets read to find them."""
        touched_keys: set[str] = set()
        touched_names: set[str] = set()
        for change, prior, note in zip(changes, result.previous, result.notes, strict=True):
            old_links = set(prior.links) if prior is not None else set()
            if isinstance(change, PutNote):
                new_links = set(change.links)
            elif isinstance(change, MoveNote):
                # A moved note links where it did before, but for links re-keyed from
                # its new folder (``MoveNote.links``).
                new_links = set(change.links) if change.links is not None else old_links
            else:
                new_links = set()
            touched_keys.update(link.target_key for link in old_links ^ new_links)
            if isinstance(change, MoveNote):
                # Its links may resolve differently from its new folder (tie-breaks).
                touched_keys.update(link.target_key for link in new_links)
            old_path = prior.path if prior is not None else None
            new_path = note.path if note is not None else None
            if old_path != new_path:  # a note appeared, vanished or moved
                touched_names.update(paths.name_key(p) for p in (old_path, new_path) if p)
        targets = self.links.targets(account_id, touched_keys)
        affected: set[str] = set(written)
        for key in touched_keys:
            affected.update(targets.candidates(key))  # whatever note it resolves to
        for names in self.store.paths_by_name(account_id, touched_names).values():
            affected.update(names)
        return affected, targets

    def _counts_for(
        self, account_id: str, note_paths: Collection[str], known: LinkTargets | None = None
    ) -> dict[str, int]:
        found = self.links.sources(account_id, note_paths, known=known)
        return {p: len(s) for p, s in found.items()}

    def drain(self, account_id: str, limit: int = DRAIN_BATCH) -> int:
        """Index up to ``limit`` notes queued while the index was unreachable. Returns how
        many."""
        queued = self.store.queued_reindex(account_id, limit)
        if not queued:
            self._pending.discard(account_id)
            if self.vectors is not None:
                self.vectors.rest()  # the bulk is over: no embedding workers kept
            return 0
        # One batched read (the notes under their stored spelling), not a read a note.
        live = self.store.get_notes(account_id, queued)
        gone = [p for p in queued if p not in live]
        if gone:
            self.index.delete(account_id, gone)
        current = self._text_current.get(account_id, {})
        stale = {p: n for p, n in live.items() if current.get(p) != n.version}
        counts = self._counts_for(account_id, list(stale))
        self.index.upsert(account_id, [search_doc(n, counts.get(p, 0)) for p, n in stale.items()])
        if self.vectors is not None and not self.vectors.drain(
            account_id, list(live.values()), gone
        ):
            return 0  # the notes stay queued: the embedder gets them on the next drain
        self.store.unqueue_reindex(account_id, queued)
        for path in queued:
            current.pop(path, None)
        self._pending.discard(account_id)
        if len(queued) < limit and self.vectors is not None:
            self.vectors.rest()  # the outbox is empty: no embedding workers kept
        return len(queued)

    def drain_all(self, stop: Callable[[], bool] = lambda: False) -> int:
        """Drain every account's outbox (the ops function's scheduled run, ADR 0031),
        until each is empty or ``stop`` says time is up (the rest waits for the next run).
        Raises (ServiceUnavailable) when the index is still unreachable. Returns how many
        notes were indexed or removed."""
        return self._drain_each(self.store.accounts_with_queued_reindex(), stop)

    @property
    def pending(self) -> bool:
        """Whether this process queued work that it has not drained yet."""
        return bool(self._pending)

    def drain_pending(self, stop: Callable[[], bool] = lambda: False, batch: int = 50) -> int:
        """Drain the outboxes this process queued work in, ``batch`` notes at a time until
        ``stop`` (a function's idle moment)."""
        return self._drain_each(sorted(self._pending), stop, batch)

    def _drain_each(
        self, accounts: Sequence[str], stop: Callable[[], bool], batch: int = DRAIN_BATCH
    ) -> int:
        total = 0
        for account in accounts:
            while not stop():
                drained = self.drain(account, batch)
                total += drained
                if drained < batch:
                    break
        return total

    def reindex(self, account_id: str, *, vectors: bool = False) -> int:
        """Rebuild the account's search index from storage (and with ``vectors``, re-embed
        every note: ``memvault reindex --vectors``). Returns notes indexed."""
        counts = self.links.inbound_counts_all(account_id)
        queued = self.store.queued_reindex(account_id)
        self.index.clear(account_id)
        batch: list[SearchDoc] = []
        total = 0
        for note in self.store.iter_notes(account_id):
            batch.append(search_doc(note, counts.get(note.path, 0)))
            if len(batch) >= REINDEX_BATCH:
                self.index.upsert(account_id, batch)
                total += len(batch)
                batch = []
        self.index.upsert(account_id, batch)
        embedding = self.vectors is not None and self.vectors.model is not None
        if vectors and self.vectors is not None:
            self.vectors.reembed(account_id)
        if queued and embedding and not vectors:
            # The outbox may hold notes waiting for their vectors: drain it (each pass
            # re-indexes its text too, which changes nothing).
            while self.drain(account_id):
                pass
        elif queued:
            self.store.unqueue_reindex(account_id, queued)
        self._pending.discard(account_id)
        return total + len(batch)
