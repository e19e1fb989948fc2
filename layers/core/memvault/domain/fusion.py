"""Hybrid search: keyword hits and nearest chunks fused into one 0-1 score. Pure: no I/O.

Every backend answers the two halves the same way (``SearchIndex.search`` scores notes by
domain.ranking, ``VectorIndex.nearest`` gives chunks with their cosine similarity), and
the fusion, the recency boost of the semantic half and the ``min_score`` cut-off happen
here, once, in the service, so the two backends rank and cut alike (ADR 0027).

The two halves, each on a 0-1 scale that means the same for every query and vault:

- **keyword** ``k = score / SCORE_MAX``: the keyword score (domain.ranking, recency and
  links already in it) stretched to 0-1 (0.65 for a note holding every query term once
  at average length).
- **semantic** ``s = x / (x + SIM_HALF) × boost`` with ``x = max(0, cos)`` of the note's
  best chunk (plus SECOND_CHUNK_WEIGHT of its second best: a note that says it twice
  holds it more). Saturated as the keyword score is: a chunk at cosine SIM_HALF scores
  one half, unrelated text (cosine near 0 for the local model on short notes) near 0, and
  no chunk more than 1 / (1 + SIM_HALF) = 0.8. A linear map between two cosines ranked
  as well on LoCoMo but put short paraphrases (cosine 0.25-0.3) under any useful cut-off,
  while chat transcripts (every chunk alike, 0.3-0.5) sat above it.
  ``boost = multiplier(updated, 0, now) / (1 + RECENCY_WEIGHT)``: domain.ranking's
  recency, from 0.8 for an old note to 1 for one edited now, as the keyword half has it
  (links are the keyword half's alone: chunks do not carry them).

Three fusions, measured against each other by bench/retrieval.py on LoCoMo (ADR 0027):

- **either** (the default): ``score = 1 - (1 - k) × (1 - s)``, each half 0 for a note it
  did not find: a note strong on either half scores high, one found by both higher
  still. A fixed ``min_score`` keeps its meaning for every query (both halves are
  absolute), and a note only one half found is not halved by the other's silence.
- **blend**: ``score = w × k + (1 - w) × s``: as good a ranking at its best weight, but a
  note found by one half alone can never pass a cut-off above that half's weight (with
  0.4, hybrid lost a fifth of the answers on LoCoMo).
- **rrf** (reciprocal rank fusion): ``Σ 1 / (RRF_K + rank)`` over the halves, divided by
  its most (first in both) so it is 0-1. Ranks only: a cut-off on it says where a note
  came, not how well it matched; and it ranked worst of the three.

Semantic search alone is the semantic half (``k`` weighted 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from memvault.domain.ranking import RECENCY_WEIGHT, SCORE_MAX, multiplier


class SearchMode(StrEnum):
    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"


class Fusion(StrEnum):
    EITHER = "either"
    BLEND = "blend"
    RRF = "rrf"


# The cosine at which the semantic half is one half (the local model: short paraphrases
# 0.25-0.43, unrelated short notes below 0.07; LoCoMo sessions, answering chunks 0.31-0.60
# and others 0.20-0.47, 10th-90th percentile).
SIM_HALF = 0.25
SECOND_CHUNK_WEIGHT = 0.3
KEYWORD_WEIGHT = 0.5  # the blend's (Fusion.BLEND)
RRF_K = 60
# The relevance cut-off when a caller gives none (agent-memory-backends: qmd_min_score).
DEFAULT_MIN_SCORE = 0.4


@dataclass(frozen=True, slots=True)
class KeywordHit:
    """One note the keyword half found: its domain.ranking score (0 to SCORE_MAX)."""

    path: str
    score: float


@dataclass(frozen=True, slots=True)
class ChunkMatch:
    """One chunk the semantic half found."""

    path: str
    chunk_index: int
    similarity: float  # cosine, -1..1
    updated_at: float


@dataclass(frozen=True, slots=True)
class Fused:
    path: str
    score: float  # 0-1
    keyword: float  # the keyword half, 0-1 (0 when it did not find the note)
    semantic: float  # the semantic half, 0-1
    chunks: tuple[int, ...]  # the note's matched chunk indexes, best first (may be empty)


def keyword_part(score: float) -> float:
    return min(1.0, max(0.0, score / SCORE_MAX))


def similarity_part(similarity: float) -> float:
    """0 for cosine 0 or less, ½ at SIM_HALF, 0.8 at cosine 1: below 1, as every score."""
    x = max(0.0, similarity)
    return x / (x + SIM_HALF)


def recency_boost(updated_at: float, now: float) -> float:
    """domain.ranking's recency factor on its own, as a share of its most (0.8-1)."""
    return multiplier(updated_at, 0, now) / (1.0 + RECENCY_WEIGHT)


class Keyworded(Protocol):
    """What fusing reads of a keyword hit (``KeywordHit``, or a ``SearchHit`` itself)."""

    @property
    def path(self) -> str: ...
    @property
    def score(self) -> float: ...


class Chunked(Protocol):
    """What fusing reads of a nearest chunk (``ChunkMatch``, or a vector hit itself)."""

    @property
    def path(self) -> str: ...
    @property
    def chunk_index(self) -> int: ...
    @property
    def similarity(self) -> float: ...
    @property
    def updated_at(self) -> float: ...


def fuse(
    keyword: Sequence[Keyworded],
    chunks: Sequence[Chunked],
    *,
    mode: SearchMode,
    now: float,
    fusion: Fusion = Fusion.EITHER,
    keyword_weight: float = KEYWORD_WEIGHT,
) -> list[Fused]:
    """The notes either half found, best first (ties by path), each scored 0-1.

    ``keyword`` is in the keyword half's rank order; ``chunks`` in any order. In
    SEMANTIC mode the keyword hits are ignored; in KEYWORD mode the chunks are.
    """
    halves = _Halves(keyword, chunks, mode, now, fusion, keyword_weight)
    return [halves.fused(path) for path in halves.order()]


def fuse_kept(
    keyword: Sequence[Keyworded],
    chunks: Sequence[Chunked],
    *,
    mode: SearchMode,
    now: float,
    min_score: float,
    limit: int,
    fusion: Fusion = Fusion.EITHER,
    keyword_weight: float = KEYWORD_WEIGHT,
) -> list[Fused]:
    """``cut(fuse(...), min_score, limit)``, the same hits from the same arithmetic, with
    only the kept made (a search keeps 10 of some 50 notes: ADR 0078)."""
    halves = _Halves(keyword, chunks, mode, now, fusion, keyword_weight)
    scores = halves.scores
    kept = [path for path in halves.order() if scores[path] >= min_score][:limit]
    return [halves.fused(path) for path in kept]


class _Halves:
    """Both halves of one search scored per note, and the fused (clamped) scores."""

    __slots__ = ("by_note", "keyword", "scores", "semantic")

    def __init__(
        self,
        keyword: Sequence[Keyworded],
        chunks: Sequence[Chunked],
        mode: SearchMode,
        now: float,
        fusion: Fusion,
        keyword_weight: float,
    ) -> None:
        if mode is SearchMode.SEMANTIC:
            keyword = ()
        elif mode is SearchMode.KEYWORD:
            chunks = ()
        by_note: dict[str, list[Chunked]] = {}
        for chunk in sorted(chunks, key=lambda c: (-c.similarity, c.path, c.chunk_index)):
            by_note.setdefault(chunk.path, []).append(chunk)
        semantic: dict[str, float] = {}
        for path, found in by_note.items():
            best = similarity_part(found[0].similarity)
            second = similarity_part(found[1].similarity) if len(found) > 1 else 0.0
            value = min(1.0, best + SECOND_CHUNK_WEIGHT * second * (1.0 - best))
            semantic[path] = value * recency_boost(found[0].updated_at, now)
        keyword_scores = {hit.path: keyword_part(hit.score) for hit in keyword}
        paths = list(dict.fromkeys([*keyword_scores, *semantic]))
        if fusion is Fusion.RRF:
            scores = _rrf(list(keyword_scores), semantic, both=bool(keyword) and bool(chunks))
        elif fusion is Fusion.EITHER:
            scores = {
                path: 1.0 - (1.0 - keyword_scores.get(path, 0.0)) * (1.0 - semantic.get(path, 0.0))
                for path in paths
            }
        else:
            weight = keyword_weight if mode is SearchMode.HYBRID else 1.0
            if mode is SearchMode.SEMANTIC:
                weight = 0.0
            scores = {
                path: weight * keyword_scores.get(path, 0.0)
                + (1.0 - weight) * semantic.get(path, 0.0)
                for path in paths
            }
        self.by_note = by_note
        self.keyword = keyword_scores
        self.semantic = semantic
        # In the notes' first-found order (the keyword half's, then the chunks').
        self.scores = {path: min(1.0, max(0.0, scores[path])) for path in paths}

    def order(self) -> list[str]:
        """Every note, best first, ties by path."""
        scores = self.scores
        return sorted(scores, key=lambda path: (-scores[path], path))

    def fused(self, path: str) -> Fused:
        return Fused(
            path=path,
            score=self.scores[path],
            keyword=self.keyword.get(path, 0.0),
            semantic=self.semantic.get(path, 0.0),
            chunks=tuple(c.chunk_index for c in self.by_note.get(path, ())),
        )


def _rrf(keyword_order: list[str], semantic: dict[str, float], *, both: bool) -> dict[str, float]:
    semantic_order = sorted(semantic, key=lambda p: (-semantic[p], p))
    raw: dict[str, float] = {}
    for order in (keyword_order, semantic_order):
        for rank, path in enumerate(order, start=1):
            raw[path] = raw.get(path, 0.0) + 1.0 / (RRF_K + rank)
    top = (2.0 if both else 1.0) / (RRF_K + 1)
    return {path: value / top for path, value in raw.items()}


def cut(fused: Sequence[Fused], min_score: float, limit: int) -> list[Fused]:
    """The hits at or above ``min_score``, at most ``limit``."""
    return [f for f in fused if f.score >= min_score][:limit]
