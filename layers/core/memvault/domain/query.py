"""Turning a user's search text into engine-neutral terms.

User text is never passed to an engine as query syntax: it is split into word terms
here, and each adapter quotes or escapes the terms in its own engine's syntax. Terms
are OR-ed (BM25 rewards notes matching more of them), so a whole sentence, such as the
last user message used for recall, still finds the notes that share its key words.
English stop words are dropped, as OpenSearch's English analyzer does, unless the text
has nothing else (so a search for "the who" still searches).
"""

from __future__ import annotations

import re
import unicodedata

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
