"""The passages of a note that hold a query's words, for recall. Pure: no I/O.

A semantic or hybrid search names the chunks that matched; a note found by its words
alone (keyword mode, vectors off, or a hybrid hit the vectors did not reach) has none. So
that such a note, too, is recalled by what matched rather than by its head, it is cut
into the same chunks vectors are made of (domain.chunking) and the chunks are ranked by
the query terms they hold (domain.query.search_terms), each weighted by how rare it is
among the note's chunks (a term in every chunk tells them apart least), ties to the
earlier chunk. Terms match a word that equals them or, for terms of PREFIX_CHARS or
more, shares its first PREFIX_CHARS characters (a crude stem: "painted" holds "paint",
"adoption" holds "adopt"; "went" does not hold "go").
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from memvault.domain.chunking import chunk_note

PREFIX_CHARS = 4
MAX_PASSAGES = 2

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Span:
    heading: str
    offset: int  # in the note's markdown
    length: int


def _stem(word: str) -> str:
    return word[:PREFIX_CHARS] if len(word) >= PREFIX_CHARS else word


def keyword_passages(
    markdown: str, *, title: str, path: str, terms: Sequence[str], limit: int = MAX_PASSAGES
) -> list[Span]:
    """The chunks of the note holding the most of ``terms`` (best first), at most
    ``limit``; none when no chunk holds any, or the note is a single chunk."""
    if not terms:
        return []
    chunks = chunk_note(markdown, title=title, path=path)
    if len(chunks) < 2:
        return []
    wanted = {_stem(term): term for term in terms}
    held: list[set[str]] = []
    for chunk in chunks:
        words = _WORD.findall(unicodedata.normalize("NFC", chunk.text).casefold())
        held.append({_stem(w) for w in words} & wanted.keys())
    counts: dict[str, int] = {}
    for found in held:
        for stem in found:
            counts[stem] = counts.get(stem, 0) + 1
    weight = {stem: math.log(1.0 + len(chunks) / n) for stem, n in counts.items()}
    scored = [(sum(weight[s] for s in found), -index) for index, found in enumerate(held) if found]
    scored.sort(reverse=True)
    return [
        Span(chunks[-neg].heading, chunks[-neg].offset, chunks[-neg].length)
        for _, neg in scored[:limit]
    ]
