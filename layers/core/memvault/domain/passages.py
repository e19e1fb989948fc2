"""The passages of a note that hold a query's words, for recall. Pure: no I/O.

A semantic or hybrid search names the chunks that matched; a note found by its words
alone (keyword mode, vectors off, or a hybrid hit the vectors did not reach) has none. So
that such a note, too, is recalled by what matched rather than by its head, its body (the
markdown after the frontmatter) is cut into windows of whole lines of about WINDOW_CHARS
(a heading always starts one, and names it), and the windows are ranked by the query
terms they hold (domain.query.search_terms), each weighted by how rare it is among the
note's windows (a term in every window tells them apart least), ties to the earlier one.

A term matches a word that equals it or, for terms of PREFIX_CHARS or more, shares its
first PREFIX_CHARS characters: a crude stem ("painted" holds "paint", "adoption" holds
"adopt"; "went" does not hold "go"). Windows are cut by characters, not by chunking's
token counts: this runs for every long note recall places, before each gateway request
(one pass over the note, about a tenth of domain.chunking's cost).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from memvault.domain.markdown import split_frontmatter

PREFIX_CHARS = 4
MAX_PASSAGES = 2
WINDOW_CHARS = 700

_HEADING = re.compile(r"[ ]{0,3}#{1,6}[ \t]+(.*?)[ \t#]*$")


@dataclass(frozen=True, slots=True)
class Span:
    heading: str
    offset: int  # in the note's markdown
    length: int


def _stem(word: str) -> str:
    return word[:PREFIX_CHARS] if len(word) >= PREFIX_CHARS else word


def windows(markdown: str) -> list[Span]:
    """The body's windows, in order: whole lines, about WINDOW_CHARS each, a heading
    starting a new one; each names the nearest heading above it."""
    body = split_frontmatter(markdown)[1]
    base = len(markdown) - len(body)
    spans: list[Span] = []
    heading, start, end, pos = "", -1, -1, 0
    for line in body.splitlines(keepends=True):
        found = _HEADING.match(line.rstrip("\r\n"))
        text_end = pos + len(line.rstrip("\r\n"))
        if found or (start >= 0 and text_end - start > WINDOW_CHARS):
            if start >= 0:
                spans.append(Span(heading, base + start, end - start))
            start = -1
            if found:
                heading = found.group(1)
        if line.strip():
            if start < 0:
                start = pos
            end = text_end
        pos += len(line)
    if start >= 0:
        spans.append(Span(heading, base + start, end - start))
    return spans


def keyword_passages(
    markdown: str, *, terms: Sequence[str], limit: int = MAX_PASSAGES
) -> list[Span]:
    """The windows of the note holding the most of ``terms`` (best first), at most
    ``limit``; none when no window holds any, or the note is a single window."""
    if not terms:
        return []
    spans = windows(markdown)
    if len(spans) < 2:
        return []
    stems = sorted({_stem(term.casefold()) for term in terms}, key=len, reverse=True)
    # One pattern for every term: a stem starts a word (a short term is the whole word).
    alternatives = "|".join(
        re.escape(stem) + (r"\w*" if len(stem) >= PREFIX_CHARS else r"\b") for stem in stems
    )
    pattern = re.compile(rf"\b(?:{alternatives})", re.IGNORECASE)
    starts = [span.offset for span in spans]
    held: list[set[str]] = [set() for _ in spans]
    for match in pattern.finditer(markdown, spans[0].offset):
        stem = _stem(match.group().casefold())
        held[bisect_right(starts, match.start()) - 1].add(stem)
    counts: dict[str, int] = {}
    for found in held:
        for stem in found:
            counts[stem] = counts.get(stem, 0) + 1
    weight = {stem: math.log(1.0 + len(spans) / n) for stem, n in counts.items()}
    scored = sorted(
        ((sum(weight[s] for s in found), -index) for index, found in enumerate(held) if found),
        reverse=True,
    )
    return [spans[-neg] for _, neg in scored[:limit]]
