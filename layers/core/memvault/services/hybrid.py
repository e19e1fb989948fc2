"""Search modes: keyword, semantic and hybrid, the same on every backend (ADR 0027).

``VaultService.search_outcome`` checks the request and charges the budget, then hands it
here. Keyword search is the ``SearchIndex`` alone, as before. Semantic and hybrid search
embed the query (the configured ``Embedder``), ask the ``VectorIndex`` for the nearest
chunks (the account filter and the model filter inside its query) and, for hybrid, the
``SearchIndex`` for the keyword hits; domain.fusion fuses them into one 0-1 score, with
recency applied once, here, and drops hits under ``min_score``.

A search asked for semantic or hybrid runs as keyword when vectors cannot answer, and
says why (``SearchOutcome.fallback``): embeddings are off, the account has no vectors of
the current model yet (never indexed, or being re-embedded after a model change), or the
embedding model failed just now.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from memvault.domain.fusion import (
    DEFAULT_MIN_SCORE,
    Fused,
    Fusion,
    SearchMode,
    fuse_kept,
)
from memvault.domain.memo import Memo
from memvault.domain.models import MatchedChunk, NoteSummary, SearchHit, SearchQuery
from memvault.errors import ServiceUnavailable
from memvault.ports import Embedder, SearchIndex, VaultStorage, VectorHit, VectorIndex

log = logging.getLogger("memvault.search")

# The vector half is asked for more chunks than the page has notes (a note has several,
# and one ranked low by its chunks can come first once fused); fewer than 60 lost answers
# on LoCoMo (recall@5 0.881 -> 0.869 at 30). A page of more than 10 notes asks for as many
# chunks per note as a page of 10 (CHUNK_POOL / KEYWORD_POOL = 6), up to MAX_POOL (ADR
# 0070). The keyword half is asked for at least KEYWORD_POOL notes: a deeper pool (30)
# changed nothing there, and its snippets cost; a shallower one (recall's 5) lost answers
# (recall path 0.881 -> 0.872). A caller may ask for a shallower keyword half than its
# page (``keyword_limit``): recall's pool of 20 keeps it at KEYWORD_POOL (ADR 0070).
CHUNK_POOL = 60
KEYWORD_POOL = 10
MAX_POOL = 100
# A snippet cut from the matched chunk (semantic hits have no highlighted one).
SNIPPET_CHARS = 240
# "The account has vectors of this model" is remembered this long (it stays true until
# a model change, which a new model name separates); "none yet" is asked every time.
INDEXED_MEMO_SECONDS = 60.0

# Where a hybrid search's keyword half runs while the vector half runs in the caller's
# thread (ADR 0078; two: the machine's cores, as the gateway's worker and the API's pool are).
_HALVES = ThreadPoolExecutor(max_workers=2, thread_name_prefix="memvault-halves")

FALLBACK_OFF = "vectors are off (MEMVAULT_EMBEDDINGS=off): keyword search ran"
FALLBACK_NOT_INDEXED = (
    "the vault has no vectors for the embedding model {model} yet (being indexed, or"
    " re-embedding after a model change: memvault reindex --vectors): keyword search ran"
)
FALLBACK_FAILED = "the embedding model could not answer just now: keyword search ran"


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    hits: list[SearchHit]
    mode: SearchMode  # the mode that ran
    fallback: str | None = None  # why it is not the mode asked for


# Embeds a query for an account (billing, where the model bills, is the hook's business).
QueryEmbedder = Callable[[str, str], list[float]]


class SemanticSearch:
    """The vector side: the embedder, the vector index, and whether an account has vectors."""

    def __init__(
        self,
        vectors: VectorIndex,
        embedder: Embedder,
        embed_query: QueryEmbedder | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.vectors = vectors
        self.embedder = embedder
        self.embed_query = embed_query or self._embed
        self._indexed: Memo[tuple[str, str], bool] = Memo(
            4096, max_age=INDEXED_MEMO_SECONDS, clock=clock
        )

    @property
    def model(self) -> str:
        return self.embedder.model

    def _embed(self, account_id: str, text: str) -> list[float]:
        return self.embedder.embed([text]).vectors[0]

    def unavailable(self, account_id: str) -> str | None:
        """Why vector search cannot answer for the account now, or None when it can."""
        key = (account_id, self.model)
        found, _ = self._indexed.lookup(key)
        if found:
            return None
        if self.vectors.holds_model(account_id, self.model):
            self._indexed.put(key, True)
            return None
        return FALLBACK_NOT_INDEXED.format(model=self.model)

    def nearest(
        self, account_id: str, query: SearchQuery, limit: int, *, texts: bool = True
    ) -> list[VectorHit]:
        """``texts=False``: hits with what fusing needs; ``with_texts`` fills the kept."""
        vector = self.embed_query(account_id, query.text)
        return self.vectors.nearest(
            account_id,
            vector,
            model=self.model,
            limit=limit,
            folder=query.folder,
            tag=query.tag,
            texts=texts,
        )

    def with_texts(self, account_id: str, hits: Sequence[VectorHit]) -> list[VectorHit]:
        return self.vectors.with_texts(account_id, self.model, hits) if hits else []


class HybridSearch:
    """Runs a checked search in the mode asked, or in keyword mode with the reason."""

    def __init__(
        self,
        store: VaultStorage,
        index: SearchIndex,
        semantic: SemanticSearch | None,
        clock: Callable[[], float],
        fusion: Fusion = Fusion.EITHER,
    ) -> None:
        self.store = store
        self.index = index
        self.semantic = semantic
        self.clock = clock
        self.fusion = fusion
        # The vector half on this thread and the keyword half on the pool (ADR 0078);
        # False: the other way round, as before it (the bench alternates the two).
        self.keyword_on_pool = True

    @property
    def vectors_on(self) -> bool:
        return self.semantic is not None

    def run(
        self,
        account_id: str,
        query: SearchQuery,
        *,
        mode: SearchMode,
        min_score: float | None,
        keyword_limit: int | None = None,
    ) -> SearchOutcome:
        """``keyword_limit``: how many notes a hybrid search's keyword half brings (None:
        the page's limit, at least KEYWORD_POOL); keyword search ignores it."""
        fallback: str | None = None
        if mode is not SearchMode.KEYWORD:
            fallback = (
                FALLBACK_OFF if self.semantic is None else self.semantic.unavailable(account_id)
            )
            if fallback is not None and self.semantic is not None and self._empty(account_id):
                fallback = None  # nothing to index yet: no vectors is no fault
        if mode is SearchMode.KEYWORD or fallback is not None or self.semantic is None:
            hits = self.index.search(account_id, query, now=self.clock())
            if min_score is not None:
                hits = [hit for hit in hits if hit.score >= min_score]
            return SearchOutcome(hits, SearchMode.KEYWORD, fallback)
        semantic = self.semantic
        limit = min(MAX_POOL, max(CHUNK_POOL, CHUNK_POOL * query.limit // KEYWORD_POOL))
        keyword: list[SearchHit] = []
        if mode is SearchMode.HYBRID:
            depth = max(KEYWORD_POOL, query.limit) if keyword_limit is None else keyword_limit
            pool = replace(query, limit=min(MAX_POOL, max(1, depth)))
            keyword, found = self._halves(semantic, account_id, query, pool, limit)
        else:
            found = self._nearest(semantic, account_id, query, limit)
        if found is None:
            log.warning("query embedding failed; keyword search ran", extra={"account": account_id})
            if mode is SearchMode.HYBRID:
                hits = keyword[: query.limit]  # the keyword half already ran
            else:
                hits = self.index.search(account_id, query, now=self.clock())
            if min_score is not None:
                hits = [hit for hit in hits if hit.score >= min_score]
            return SearchOutcome(hits, SearchMode.KEYWORD, FALLBACK_FAILED)
        chunks = found
        # Only the kept notes are made (ADR 0078).
        kept = fuse_kept(
            keyword,
            chunks,
            mode=mode,
            now=self.clock(),
            min_score=DEFAULT_MIN_SCORE if min_score is None else min_score,
            limit=query.limit,
            fusion=self.fusion,
        )
        # The kept notes' chunks read whole; a chunk whose note changed since is left out.
        chunk_of = {(c.path, c.chunk_index): c for c in chunks}
        whole = semantic.with_texts(
            account_id, [chunk_of[(f.path, i)] for f in kept for i in f.chunks]
        )
        return SearchOutcome(self._hits(account_id, query, kept, keyword, whole), mode)

    def _halves(
        self,
        semantic: SemanticSearch,
        account_id: str,
        query: SearchQuery,
        pool: SearchQuery,
        limit: int,
    ) -> tuple[list[SearchHit], list[VectorHit] | None]:
        """The keyword hits and the nearest chunks (None: the query could not be embedded)
        of a hybrid search, the halves side by side: the pool asks the keyword index while
        this thread embeds the query and scans the vectors, the longer half, so it starts
        at once and nothing waits for it to be handed back (ADR 0078). They overlap less
        than the two threads suggest: the keyword half gives the GIL up only for moments
        (each SQLite step), so the vector half runs beside it mostly inside its own long
        numpy calls, and a hybrid search costs nearly the sum of the halves (ADR 0078).
        The chunks come without their texts: only the kept notes' are read (ADR 0076)."""
        if not self.keyword_on_pool:  # as before ADR 0078 (the bench alternates the two)
            nearest = _HALVES.submit(self._nearest, semantic, account_id, query, limit)
            try:
                keyword = self.index.search(account_id, pool, now=self.clock())
            except BaseException:
                nearest.cancel()
                raise
            return keyword, nearest.result()
        words = _HALVES.submit(self.index.search, account_id, pool, now=self.clock())
        chunks = self._nearest(semantic, account_id, query, limit)
        return words.result(), chunks

    @staticmethod
    def _nearest(
        semantic: SemanticSearch, account_id: str, query: SearchQuery, limit: int
    ) -> list[VectorHit] | None:
        try:
            return semantic.nearest(account_id, query, limit, texts=False)
        except ServiceUnavailable:
            return None

    def _empty(self, account_id: str) -> bool:
        account = self.store.get_account(account_id)
        return account is not None and account.note_count == 0

    def _hits(
        self,
        account_id: str,
        query: SearchQuery,
        kept: Sequence[Fused],
        keyword: Sequence[SearchHit],
        chunks: Sequence[VectorHit],
    ) -> list[SearchHit]:
        by_path = {hit.path: hit for hit in keyword}
        chunk_of = {(c.path, c.chunk_index): c for c in chunks}
        # Notes only the vectors found: their title and tags from storage, in one read.
        missing = [f.path for f in kept if f.path not in by_path]
        summaries: dict[str, NoteSummary] = {}
        if missing:
            summaries = {s.path: s for s in self.store.get_summaries(account_id, missing)}
        hits: list[SearchHit] = []
        for fused in kept:
            matched = tuple(
                _matched(chunk_of[(fused.path, i)])
                for i in fused.chunks
                if (fused.path, i) in chunk_of
            )
            found = by_path.get(fused.path)
            wants_snippet = query.snippets and bool(matched)
            if found is not None:
                snippet = found.snippet or (_snippet(matched[0].text) if wants_snippet else "")
                hits.append(replace(found, score=fused.score, snippet=snippet, chunks=matched))
                continue
            summary = summaries.get(fused.path)
            if summary is None or not matched:
                continue  # deleted, moved or rewritten since its vectors were read
            hits.append(
                SearchHit(
                    note_id=summary.id,
                    path=summary.path,
                    title=summary.title,
                    tags=summary.tags,
                    score=fused.score,
                    snippet=_snippet(matched[0].text) if wants_snippet else "",
                    updated_at=summary.updated_at,
                    chunks=matched,
                )
            )
        return hits


def _matched(hit: VectorHit) -> MatchedChunk:
    return MatchedChunk(heading=hit.heading, offset=hit.offset, length=hit.length, text=hit.text)


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= SNIPPET_CHARS:
        return flat
    head = flat[:SNIPPET_CHARS]
    space = head.rfind(" ")
    return (head[:space] if space > SNIPPET_CHARS // 2 else head) + "…"
