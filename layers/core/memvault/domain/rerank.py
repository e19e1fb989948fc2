"""Recall's second stage: the search's best notes reordered by their best passage. Pure.

A note's search score (keyword, semantic or fused, 0-1) judges it whole. Recall's notes
are often long (a chat session, meeting minutes), and a message asks about a few lines
of one: a long note that holds the words everywhere at low density can outrank the note
whose five lines are about exactly that. So recall asks the search for a pool deeper than
the notes it places (services.recall.RERANK_POOL), reads them (it reads its notes anyway),
and orders them by

    score + PASSAGE_WEIGHT × passage,

``passage`` being the best BM25 of a window of WINDOW_LINES consecutive non-blank lines
of the note's body, divided by the query's idf sum (so 0-1-ish and comparable across
queries, as ranking.score is), scaled between NAME_FLOOR and 1 by the share of the
message's names (capitalised words not starting a sentence: people, places, titles) the
note holds anywhere: the window about the topic should be in a note about its people.
The statistics (idf, average window length) are those of the pool's windows: a term in
every window of the pool tells them apart least. Terms are
domain.query.search_terms less question words and pronouns, which a conversational
message is full of and which say nothing of its topic; a term of PREFIX_CHARS or more
matches words it starts (domain.passages' crude stem: "painted" holds "paint").

Measured on the LoCoMo dev split (ADR 0051): the recall path, hybrid, one vault per
conversation, recall@5 / MRR 0.879 / 0.796 before, 0.904 / 0.849 with this.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from memvault.domain.markdown import split_frontmatter
from memvault.domain.passages import PREFIX_CHARS
from memvault.domain.query import search_terms

WINDOW_LINES = 5
PASSAGE_WEIGHT = 0.7
# A note holding none of the message's names keeps this share of its passage score.
NAME_FLOOR = 0.5
K1 = 1.2
B = 0.75

# Words of a question that say nothing of what it is about (interrogatives, auxiliaries,
# personal pronouns); domain.query already drops Lucene's English stop set.
QUESTION_WORDS = frozenset(
    [
        "what",
        "when",
        "where",
        "who",
        "whom",
        "whose",
        "why",
        "how",
        "which",
        "did",
        "does",
        "do",
        "done",
        "doing",
        "has",
        "have",
        "had",
        "having",
        "would",
        "could",
        "should",
        "can",
        "may",
        "might",
        "must",
        "shall",
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "you",
        "your",
        "yours",
        "yourself",
        "he",
        "him",
        "his",
        "himself",
        "she",
        "her",
        "hers",
        "herself",
        "we",
        "us",
        "our",
        "ours",
        "ourselves",
        "them",
        "its",
        "itself",
        "themselves",
    ]
)

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str
    score: float  # the search's, 0-1
    markdown: str


@dataclass(frozen=True, slots=True)
class Ranked:
    path: str
    score: float  # the search's
    passage: float  # the best window's, 0-1-ish (0: no window holds a query term)
    offset: int  # the best window in the note's markdown (0, 0 when none)
    length: int

    @property
    def rank_score(self) -> float:
        return self.score + PASSAGE_WEIGHT * self.passage


def _stem(word: str) -> str:
    return word[:PREFIX_CHARS] if len(word) >= PREFIX_CHARS else word


def query_names(text: str) -> set[str]:
    """The stems of the message's capitalised words that do not start a sentence (names,
    places, titles: "Caroline", "Chicago", "LGBTQ"), question words left out."""
    names: set[str] = set()
    for index, match in enumerate(_WORD.finditer(text)):
        word = match.group()
        if index == 0 or not word[:1].isupper():
            continue
        before = text[max(0, match.start() - 16) : match.start()]
        if "\n" in before or before.rstrip()[-1:] in {".", "!", "?", ":", ";"}:
            continue  # a sentence or a line starts here
        folded = word.casefold()
        if folded not in QUESTION_WORDS:
            names.add(_stem(folded))
    return names


def query_stems(text: str) -> list[str]:
    """The message's topic terms, stemmed: search_terms less QUESTION_WORDS (all of them
    when nothing else is left)."""
    terms = search_terms(text)
    topical = [t for t in terms if t not in QUESTION_WORDS] or terms
    return list(dict.fromkeys(_stem(t) for t in topical))


@dataclass(frozen=True, slots=True)
class _Note:
    """A note's body lines and where the query's stems are in them."""

    lines: list[tuple[int, int, int]]  # (start, end, words) of each non-blank body line
    held: dict[int, dict[str, int]]  # line index -> stem -> count (lines holding any)

    @property
    def windows(self) -> int:
        return max(1, len(self.lines) - WINDOW_LINES + 1) if self.lines else 0

    def lengths(self) -> list[int]:
        """Each window's words, by its first line (a sliding sum)."""
        words = [w for _, _, w in self.lines]
        out, running = [], sum(words[:WINDOW_LINES])
        for start in range(self.windows):
            out.append(running)
            if start + WINDOW_LINES < len(words):
                running += words[start + WINDOW_LINES] - words[start]
        return out

    def window_counts(self) -> dict[str, list[int]]:
        """Per stem the note holds, how many times each window holds it (by first line)."""
        out: dict[str, list[int]] = {}
        size, windows = len(self.lines), self.windows
        for stem in {stem for found in self.held.values() for stem in found}:
            per_line = [0] * size
            for line, found in self.held.items():
                per_line[line] = found.get(stem, 0)
            running = sum(per_line[:WINDOW_LINES])
            sums = [0] * windows
            for start in range(windows):
                sums[start] = running
                if start + WINDOW_LINES < size:
                    running += per_line[start + WINDOW_LINES] - per_line[start]
            out[stem] = sums
        return out


_LINE = re.compile(r"[^\S\n]*\S[^\n]*")  # a non-blank line (no line break in it)


def _read(markdown: str, pattern: re.Pattern[str], stems: Sequence[str]) -> _Note:
    body = split_frontmatter(markdown)[1]
    base = len(markdown) - len(body)
    # Words per line: spaces + 1, near enough for a length norm.
    lines = [
        (base + m.start(), base + m.end(), m.group().count(" ") + 1) for m in _LINE.finditer(body)
    ]
    held: dict[int, dict[str, int]] = {}
    if lines:
        starts = [start for start, _, _ in lines]
        for at_char, stem in _occurrences(markdown, lines[0][0], pattern, stems):
            at = bisect_right(starts, at_char) - 1
            if at_char < lines[at][1]:
                found = held.setdefault(at, {})
                found[stem] = found.get(stem, 0) + 1
    return _Note(lines, held)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _occurrences(
    markdown: str, start: int, pattern: re.Pattern[str], stems: Sequence[str]
) -> list[tuple[int, str]]:
    """Where each stem starts a word from ``start`` on, and which stem (the longest, as the
    pattern's alternation picks it), in order: what ``pattern`` finds, found with one
    ``str.find`` pass per stem over the lower-cased text rather than the case-blind
    alternation tried at every word (a tenth of the time on recall's notes)."""
    lowered = markdown.lower()
    if len(lowered) != len(markdown):  # a character that lower-cases to two: read as before
        return [(m.start(), stems[m.lastindex - 1]) for m in pattern.finditer(markdown, start)]  # type: ignore[operator]
    first: dict[int, int] = {}  # position -> the index of the first (longest) stem there
    for index, stem in enumerate(stems):
        whole_word = len(stem) < PREFIX_CHARS
        at = lowered.find(stem, start)
        while at != -1:
            end = at + len(stem)
            if (
                (at == 0 or not _is_word_char(lowered[at - 1]))
                and not (whole_word and end < len(lowered) and _is_word_char(lowered[end]))
                and at not in first
            ):
                first[at] = index
            at = lowered.find(stem, at + 1)
    return [(at, stems[first[at]]) for at in sorted(first)]


def rerank(query: str, candidates: Sequence[Candidate]) -> list[Ranked]:
    """The candidates ordered by ``score + PASSAGE_WEIGHT × passage`` (ties: the search's
    order), each with its best window."""
    stems = query_stems(query)
    if not stems or not candidates:
        return [Ranked(c.path, c.score, 0.0, 0, 0) for c in candidates]
    # One group per stem (longest first, so a longer stem wins where both start a word):
    # the group that matched names the stem.
    stems = sorted(stems, key=len, reverse=True)
    alternatives = "|".join(
        "(" + re.escape(s) + (r"\w*" if len(s) >= PREFIX_CHARS else r"\b") + ")" for s in stems
    )
    pattern = re.compile(rf"\b(?:{alternatives})", re.IGNORECASE)
    read = [_read(c.markdown, pattern, stems) for c in candidates]
    total = sum(note.windows for note in read)
    lengths = [note.lengths() for note in read]
    average = max(1.0, sum(sum(each) for each in lengths) / total) if total else 1.0
    counts = [note.window_counts() for note in read]
    held: dict[str, int] = {}
    for per_stem in counts:
        for stem, sums in per_stem.items():
            held[stem] = held.get(stem, 0) + sum(1 for n in sums if n)
    idf = {s: math.log(1.0 + (total - n + 0.5) / (n + 0.5)) for s, n in held.items() if n}
    norm = sum(idf.values())
    names = query_names(query) & set(stems)
    name_mass = sum(idf.get(n, 0.0) for n in names)
    ranked: list[tuple[float, int, Ranked]] = []
    for index, (candidate, note) in enumerate(zip(candidates, read, strict=True)):
        best, where = 0.0, (0, 0)
        terms = [(idf[stem], sums) for stem, sums in counts[index].items()]
        for start, length in enumerate(lengths[index]) if terms else ():
            shape = K1 * (1 - B + B * length / average)
            value = 0.0
            for weight, sums in terms:
                f = sums[start]
                if f:
                    value += weight * f * (K1 + 1) / (f + shape)
            if value > best:
                last = min(len(note.lines), start + WINDOW_LINES) - 1
                best = value
                where = (note.lines[start][0], note.lines[last][1] - note.lines[start][0])
        passage = best / norm if norm > 0 else 0.0
        if name_mass > 0:  # scaled by the share of the names (idf-weighted) the note holds
            anywhere = {stem for found in note.held.values() for stem in found}
            held_names = sum(idf.get(n, 0.0) for n in names if n in anywhere) / name_mass
            passage *= NAME_FLOOR + (1.0 - NAME_FLOOR) * held_names
        item = Ranked(candidate.path, candidate.score, passage, where[0], where[1])
        ranked.append((-item.rank_score, index, item))
    ranked.sort()
    return [item for _, _, item in ranked]
