"""Turning a user's search text into engine-neutral terms.

User text is never passed to an engine as query syntax: it is split into word terms
here, and each adapter quotes or escapes the terms in its own engine's syntax. Terms
are OR-ed (BM25 rewards notes matching more of them), so a whole sentence, such as the
last user message used for recall, still finds the notes that share its key words.
English stop words are dropped, as OpenSearch's English analyzer does, unless the text
has nothing else (so a search for "the who" still searches).

Recall searches a whole message, whose common words (found in a large share of the
vault) say little about which note it means, yet cost the most to match: both engines
visit every note holding a term they search. A search with ``skip_common_terms`` leaves
such terms out (``without_common_terms``): a cutoff frequency like that of Lucene's
common-terms query, except that common terms are dropped rather than only scored. Under
SQLite's BM25 a term in half the notes or more adds nothing to relevance anyway (its IDF
is floored near zero), so only terms between a quarter and half of the vault change the
ranking, and little: their weight is a fraction of a distinctive term's.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

MAX_TERMS = 64

# Lucene's English stop set, the one OpenSearch's `english` analyzer uses.
ENGLISH_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)

_WORD = re.compile(r"\w+", re.UNICODE)


def search_terms(text: str) -> list[str]:
    """Distinct lower-cased word terms of ``text``, stop words dropped, at most MAX_TERMS."""
    words = _WORD.findall(unicodedata.normalize("NFC", text).casefold())
    distinct = list(dict.fromkeys(w for w in words if w.strip("_")))
    meaningful = [w for w in distinct if w not in ENGLISH_STOP_WORDS]
    return (meaningful or distinct)[:MAX_TERMS]


# A term found in more than this share of the account's notes is common...
COMMON_TERM_SHARE = 0.25
# ...provided it is in more than this many: below that, matching it costs next to nothing,
# so a small vault is always searched for every term.
COMMON_TERM_FLOOR = 100


def common_term_cutoff(total_notes: int) -> int:
    """The most of an account's notes a term may be found in and still not be common."""
    return max(COMMON_TERM_FLOOR, int(total_notes * COMMON_TERM_SHARE))


def without_common_terms(
    terms: Sequence[str], note_counts: Mapping[str, int], cutoff: int
) -> list[str]:
    """The ``terms`` found in at least one and at most ``cutoff`` notes; when none is,
    the common ones (a search for only common words still finds what holds them).

    A term no note holds adds nothing to any note's relevance, so leaving it out changes
    no result; it only saves the engine the work of looking for it in every match.
    """
    kept = [term for term in terms if 0 < note_counts.get(term, 0) <= cutoff]
    return kept or [term for term in terms if note_counts.get(term, 0) > cutoff]
