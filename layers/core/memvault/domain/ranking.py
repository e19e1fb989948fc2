"""The search ranking function, shared by every search backend.

    score = relevance × (1 + RECENCY_WEIGHT × recency + LINK_WEIGHT × links)

- ``relevance`` is the engine's BM25 score (positive, higher is better) computed over
  the fields path, title, tags and body with FIELD_WEIGHTS, body cut to its first
  256 KiB. SQLite's ``bm25()`` is negated to get it; OpenSearch's ``_score`` is it.
- ``recency = 1 / (1 + age_days / RECENCY_HALF_LIFE_DAYS)``: 1 for a note edited now,
  ½ after one half-life, tending to 0. Hyperbolic rather than exponential so every
  engine can evaluate it with plain arithmetic (an SQL expression, a Painless script).
- ``links = n / (n + LINK_SATURATION)`` for n inbound links: 0 for none, ½ at
  LINK_SATURATION, tending to 1.

Both boosts are bounded, so the multiplier stays within [1, 1 + RECENCY_WEIGHT +
LINK_WEIGHT] = [1, 1.5]: a note can never outrank one whose relevance is 1.5× its own,
whatever its age or popularity. Relevance dominates; recency and links break near-ties.

OpenSearch reproduction: a ``function_score`` query with ``boost_mode: multiply`` and a
``script_score`` returning the bracketed multiplier from the doc's ``updated_at`` (epoch
seconds) and ``inbound_links`` fields, with ``now`` passed as a script parameter.
"""

from __future__ import annotations

SECONDS_PER_DAY = 86_400.0

# BM25 field weights: a hit in the title counts three times a hit in the body.
FIELD_WEIGHTS: dict[str, float] = {"path": 2.0, "title": 3.0, "tags": 2.0, "body": 1.0}

RECENCY_WEIGHT = 0.25
RECENCY_HALF_LIFE_DAYS = 30.0
LINK_WEIGHT = 0.25
LINK_SATURATION = 5.0

MAX_MULTIPLIER = 1.0 + RECENCY_WEIGHT + LINK_WEIGHT


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
