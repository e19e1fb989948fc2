"""The search ranking function, shared by every search backend.

Every number in it is computed from the searching account's own notes, and from nothing
else: no score or ranking an account observes depends on another account's data.

    relevance = Σ_t idf(t) × F_t × (k1 + 1) / (F_t + k1 × (1 − b + b × D / avgdl))
    final     = relevance × (1 + RECENCY_WEIGHT × recency + LINK_WEIGHT × links)
    score     = final / (final + Σ_t idf(t))

- ``t`` runs over the query's terms (domain.query.search_terms; recall's searches leave
  out the account's common terms, domain.query.select_terms) that at least one of the
  account's notes holds: a term no note holds adds nothing to any note and is dropped.
- ``F_t`` is how often the note holds ``t``, each occurrence weighted by its field:
  FIELD_WEIGHTS (title 3, path and tags 2, body 1; body cut to its first 256 KiB).
- ``D`` is the note's length in tokens over those four fields plus LENGTH_OFFSET (the one
  marker token every note carries on SQLite, counted on both backends alike), and
  ``avgdl`` the mean ``D`` of the account's notes.
- ``idf(t) = ln((N − n_t + 0.5) / (n_t + 0.5))`` with ``N`` the account's notes and
  ``n_t`` those holding ``t``; IDF_FLOOR where that is not positive (a term in half the
  notes or more tells them apart least).
- ``k1`` = BM25_K1 = 1.2 and ``b`` = BM25_B = 0.75.

``relevance`` is BM25 as SQLite's FTS5 ``bm25()`` computes it (weighted frequencies summed
before saturation, one document length over all fields). The SQLite index evaluates it
with ``bm25()`` itself over a table of the account's own notes; the OpenSearch index
evaluates ``term_relevance`` in a Painless script from per-account statistics (an index
shared by every account would otherwise lend each one the shard's). Both then apply the
same multiplier and the same ``score``; they differ only in how text is split into tokens
(FTS5's porter tokenizer keeps English stop words, OpenSearch's ``english`` analyzer
drops them and strips possessives), so equal text scores equal where tokens agree.

The multiplier: ``recency = 1 / (1 + age_days / RECENCY_HALF_LIFE_DAYS)`` (1 for a note
edited now, ½ after one half-life, tending to 0; hyperbolic rather than exponential so
every engine can evaluate it with plain arithmetic) and ``links = n / (n + LINK_SATURATION)``
for n inbound links (0 for none, ½ at LINK_SATURATION, tending to 1). Both are bounded, so
the multiplier stays within [1, MAX_MULTIPLIER] = [1, 1.5]: a note can never outrank one
whose relevance is 1.5× its own. Relevance dominates; recency and links break near-ties.
Results are ordered by ``final`` (then path); ``score`` rises with it.

The score, on every surface (REST, CLI, memory tools, MCP), is ``final`` saturated by the
query's own weight, so one fixed cutoff means the same for every query and every vault:

- ``final / Σ idf`` is an idf-weighted mean over the query's terms of how strongly the
  note holds each (``F(k1 + 1) / (F + K)`` is 1 for one body occurrence in a note of
  average length, and below k1 + 1 = 2.2 however often), times the multiplier. Raw BM25
  has no such scale: it grows with the vault's size and the terms' rarity, and in a vault
  of one or two notes every idf is the floor, so the only match scored 2.1e-6.
- ``score`` is 0.5 when the note holds every term of the query once at average length
  (multiplier 1); higher when it holds them more often, in the title, in a shorter note,
  or is recent or linked; lower when it holds only some of them (with n equally rare
  terms, a note holding one of them once scores about 1 / (n + 1)). It never reaches 1:
  the most a note can get is SCORE_MAX = 3.3 / 4.3 ≈ 0.767 (every term infinitely often,
  multiplier 1.5). A cutoff of 0.4 keeps the notes holding, on the idf-weighted average,
  two thirds of the query once at average length.

OpenSearch reproduction: each term is a ``script_score`` over a ``multi_match`` whose
fields' similarity returns ``boost × freq`` (so its score is ``F_t``), returning
``term_relevance`` from per-account ``idf`` and ``avgdl`` and the note's token counts; a
``function_score`` multiplies their sum by the multiplier (``RANKING_SCRIPT``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

SECONDS_PER_DAY = 86_400.0

# BM25 field weights: a hit in the title counts three times a hit in the body.
FIELD_WEIGHTS: dict[str, float] = {"path": 2.0, "title": 3.0, "tags": 2.0, "body": 1.0}

# FTS5's bm25() constants (fixed in SQLite's source; OpenSearch is given the same).
BM25_K1 = 1.2
BM25_B = 0.75
# The idf of a term in half the notes or more (FTS5's: "roughly the same as a term that
# appears in just over half of set of 5,000,000 documents").
IDF_FLOOR = 1e-6
# Tokens every note counts beyond its fields': the SQLite table's marker column (one
# token in every row, weight 0, which lets recall's frequent terms score without
# matching). OpenSearch adds the same, so D and avgdl agree.
LENGTH_OFFSET = 1

RECENCY_WEIGHT = 0.25
RECENCY_HALF_LIFE_DAYS = 30.0
LINK_WEIGHT = 0.25
LINK_SATURATION = 5.0

MAX_MULTIPLIER = 1.0 + RECENCY_WEIGHT + LINK_WEIGHT

# ``final / Σ idf`` at which the score is ½.
SCORE_SATURATION = 1.0
# The most ``final / Σ idf`` can be, and the score that gives.
MAX_RELATIVE = (BM25_K1 + 1.0) * MAX_MULTIPLIER
SCORE_MAX = MAX_RELATIVE / (MAX_RELATIVE + SCORE_SATURATION)


def idf(notes: int, holding: int) -> float:
    """A term's weight in an account of ``notes`` notes, ``holding`` of which hold it
    (FTS5's formula and floor, in the same double arithmetic)."""
    value = math.log((notes - holding + 0.5) / (holding + 0.5))
    return value if value > 0.0 else IDF_FLOOR


def average_length(notes: int, tokens: int) -> float:
    """``avgdl`` of an account: ``tokens`` is the sum of its notes' D (offsets included)."""
    return float(tokens) / float(notes)


def term_relevance(weight: float, freq: float, length: float, avg_length: float) -> float:
    """One term's share of the relevance: ``weight`` its idf, ``freq`` its field-weighted
    frequency F in the note, ``length`` the note's D. The operations and their order are
    FTS5's bm25(); the OpenSearch script repeats them."""
    return weight * (
        (freq * (BM25_K1 + 1.0)) / (freq + BM25_K1 * (1 - BM25_B + BM25_B * length / avg_length))
    )


def query_weight(weights: Iterable[float]) -> float:
    """Σ idf over the query's searched terms that some note holds: what ``score`` divides by."""
    return math.fsum(weights) * SCORE_SATURATION


def score(final: float, weight: float) -> float:
    """The 0-1 score of a hit whose final score is ``final``, for a query of ``weight``."""
    if final <= 0.0 or weight <= 0.0:
        return 0.0
    return final / (final + weight)


def recency(updated_at: float, now: float) -> float:
    age_days = max(0.0, now - updated_at) / SECONDS_PER_DAY
    return 1.0 / (1.0 + age_days / RECENCY_HALF_LIFE_DAYS)


def link_factor(inbound_links: int) -> float:
    n = max(0, inbound_links)
    return n / (n + LINK_SATURATION)


def multiplier(updated_at: float, inbound_links: int, now: float) -> float:
    return (
        1.0 + RECENCY_WEIGHT * recency(updated_at, now) + LINK_WEIGHT * link_factor(inbound_links)
    )


def final_score(relevance: float, updated_at: float, inbound_links: int, now: float) -> float:
    return relevance * multiplier(updated_at, inbound_links, now)
