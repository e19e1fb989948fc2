"""Heading-aware chunks of a note, for embedding (pure: no I/O).

A note's body is cut at its headings into sections, and a section longer than
``max_tokens`` into chunks at line, then sentence, then word boundaries; consecutive chunks
of one section share about ``overlap`` tokens. Every chunk records the nearest heading
above it, its character offset and length in the note's markdown (``markdown[offset:
offset + length] == text``), and the text that is embedded: the note's title, path and
heading as a context prefix, then the chunk. Chunks cover every non-blank character of the
body (the markdown after its frontmatter); an empty body still gets one chunk (offset at
the body, length 0), so a note with only a title is findable by meaning too.

Tokens are counted as words and punctuation marks (``\\w+|[^\\w\\s]``): a model's tokenizer
gives a few more, which the default bounds leave room for.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import NamedTuple

from memvault.domain.markdown import split_frontmatter

DEFAULT_MAX_TOKENS = 128
DEFAULT_OVERLAP = 32

_TOKEN_RE = re.compile(r"\w+|[^\w\s]")
# The same on ASCII text: \s of str patterns also holds \x1c-\x1f, which ASCII's does not.
_ASCII_TOKEN_RE = re.compile(r"\w+|[^\w\s\x1c-\x1f]", re.ASCII)
_HEADING_RE = re.compile(r"[ ]{0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE_RE = re.compile(r"[ ]{0,3}(`{3,}|~{3,})")
# A sentence ends at . ! or ? followed by a space; the space stays with the sentence.
_SENTENCE_END_RE = re.compile(r"[.!?]+\s+")
_WORD_RE = re.compile(r"\S+\s*")
# What a fence or heading line starts with (up to three spaces first).
_MARKS = frozenset(" #`~")


@dataclass(frozen=True, slots=True)
class Chunk:
    index: int
    heading: str  # the nearest heading above the chunk ("" before the first one)
    offset: int  # in the note's markdown
    length: int
    text: str  # markdown[offset:offset + length]
    embed_text: str  # title, path and heading as context, then the text
    tokens: int


# ASCII text's characters by class, for counting its tokens without a regex: "a" a word
# character ([A-Za-z0-9_]), " " a space (ASCII's \s and \x1c-\x1f), "." any other (a
# mark, a token of its own).
_CLASSES = bytes(
    ord("a")
    if chr(c).isascii() and (chr(c).isalnum() or chr(c) == "_")
    else ord(" ")
    if chr(c) in " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"
    else ord(".")
    for c in range(256)
)


def count_tokens(text: str) -> int:
    if text.isascii():
        return _ascii_tokens(text.encode("ascii").translate(_CLASSES), 0, len(text))
    return len(_TOKEN_RE.findall(text))


def _ascii_tokens(classes: bytes, start: int, end: int) -> int:
    """The tokens of the ASCII text whose character classes (``_CLASSES``) are
    ``classes[start:end]``: the same count as ``_ASCII_TOKEN_RE``'s matches, as each
    mark and each run of word characters (one starts the text or follows a space or a
    mark). Three to four times faster than the matches (ADR 0067)."""
    count = classes.count
    return (
        count(b".", start, end)
        + count(b" a", start, end)
        + count(b".a", start, end)
        + (start < end and classes[start] == 97)  # a word character ("a") first
    )


class _Unit(NamedTuple):
    # A tuple: a note has dozens of units, and a frozen dataclass's __init__ cost a fifth of
    # chunking (ADR 0062).
    start: int  # in the body
    end: int
    tokens: int
    cut: bool = False  # cut inside a run of word characters (its tokens may not add up)


def _sections(body: str) -> list[tuple[str, int, int]]:
    """(heading, start, end) per section; a heading line starts its section. Lines inside a
    fenced code block are never headings."""
    sections: list[tuple[str, int, int]] = []
    heading, start = "", 0
    fence: str | None = None
    pos = 0
    for line in body.splitlines(keepends=True):
        if line[0] not in _MARKS:  # neither a fence nor a heading, inside a fence or not
            pos += len(line)
            continue
        bare = line.rstrip("\r\n")
        fence_match = _FENCE_RE.match(bare)
        if fence is not None:
            closes = (
                fence_match is not None
                and fence_match.group(1)[0] == fence[0]
                and len(fence_match.group(1)) >= len(fence)
                and not bare.strip().strip(fence[0])
            )
            if closes:
                fence = None
        elif fence_match:
            fence = fence_match.group(1)
        else:
            match = _HEADING_RE.match(bare)
            if match:
                if pos > start:
                    sections.append((heading, start, pos))
                heading, start = match.group(2).strip(), pos
        pos += len(line)
    if pos > start or not sections:
        sections.append((heading, start, pos))
    return sections


def _split_long(body: str, start: int, end: int, max_tokens: int) -> list[_Unit]:
    """A line too long for one chunk, cut into sentences, and sentences into words."""
    units: list[_Unit] = []
    cuts = [m.end() for m in _SENTENCE_END_RE.finditer(body, start, end)]
    bounds = [start, *(cut for cut in cuts if start < cut < end), end]
    for s_start, s_end in itertools.pairwise(bounds):
        tokens = count_tokens(body[s_start:s_end])
        if tokens <= max_tokens:
            units.append(_Unit(s_start, s_end, tokens))
            continue
        for word in _WORD_RE.finditer(body, s_start, s_end):
            # A "word" past the bound (a long run of punctuation) is cut by characters.
            w_start, w_end = word.start(), word.end()
            while w_start < w_end:
                piece_end = w_end
                while count_tokens(body[w_start:piece_end]) > max_tokens:
                    piece_end = w_start + max(1, (piece_end - w_start) // 2)
                piece = count_tokens(body[w_start:piece_end])
                units.append(_Unit(w_start, piece_end, piece, cut=True))
                w_start = piece_end
    return units


def _units(
    body: str, start: int, end: int, max_tokens: int, classes: bytes | None = None
) -> list[_Unit]:
    """The lines of ``body[start:end]`` as units, a line too long cut. ``classes``: an
    ASCII body's character classes (``_CLASSES``), which count each line's tokens in
    place: a line starts after a line break or at the body's start, both of which
    ``count_tokens`` takes as a run's start too (ADR 0079)."""
    units: list[_Unit] = []
    pos = start
    new = tuple.__new__  # a unit made without NamedTuple's Python-level __new__
    for line in body[start:end].splitlines(keepends=True):
        line_end = pos + len(line)
        tokens = count_tokens(line) if classes is None else _ascii_tokens(classes, pos, line_end)
        if tokens <= max_tokens:
            units.append(new(_Unit, (pos, line_end, tokens, False)))
        else:
            units.extend(_split_long(body, pos, line_end, max_tokens))
        pos = line_end
    return units


def _pack(units: list[_Unit], max_tokens: int, overlap: int) -> list[tuple[int, int]]:
    """(first unit, last unit + 1) per chunk: greedy up to ``max_tokens``; the next chunk
    starts far enough back to repeat at most ``overlap`` tokens, and always moves on."""
    spans: list[tuple[int, int]] = []
    first = 0
    while first < len(units):
        total, last = 0, first
        while last < len(units) and total + units[last].tokens <= max_tokens:
            total += units[last].tokens
            last += 1
        last = max(last, first + 1)
        spans.append((first, last))
        if last >= len(units):
            break
        back, shared = last, 0
        while back - 1 > first and shared + units[back - 1].tokens <= overlap:
            back -= 1
            shared += units[back].tokens
        first = back
    return spans


# A chunk before it is made a ``Chunk``: heading, context (title, path and heading), start
# and end in the body, tokens.
Span = tuple[str, str, int, int, int]


def chunk_spans(
    body: str,
    *,
    title: str,
    path: str,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    overlap: int = DEFAULT_OVERLAP,
) -> list[Span]:
    """``chunk_body``'s chunks as spans of ``body`` with their context, no text copied: a
    bulk drain embeds a chunk as its context and its text (ADR 0079). The chunk of an
    empty body is ``("", title and path, 0, 0, 0)``, its embedded text the context alone."""
    if max_tokens < 1 or not 0 <= overlap < max_tokens:
        raise ValueError("need max_tokens >= 1 and 0 <= overlap < max_tokens")
    spans: list[Span] = []
    isspace = str.isspace
    # An ASCII body's character classes, once: each line's tokens counted in place.
    classes = body.encode("ascii").translate(_CLASSES) if body.isascii() else None
    for heading, section_start, section_end in _sections(body):
        units = [
            u
            for u in _units(body, section_start, section_end, max_tokens, classes)
            if u.end > u.start
        ]
        context = "\n".join(part for part in (title, path, heading) if part)
        for first, last in _pack(units, max_tokens, overlap):
            chosen = units[first:last]
            start, end = chosen[0].start, chosen[-1].end
            # Blank edges are left out: the chunk starts and ends on text.
            while start < end and isspace(body[start]):
                start += 1
            while end > start and isspace(body[end - 1]):
                end -= 1
            if start == end:
                continue
            # Whole units' tokens add up (no token spans a line, sentence or word
            # boundary); a unit cut inside a word is counted again.
            tokens = (
                count_tokens(body[start:end])
                if any(u.cut for u in chosen)
                else sum(u.tokens for u in chosen)
            )
            spans.append((heading, context, start, end, tokens))
    if not spans:
        spans.append(("", "\n".join(part for part in (title, path) if part), 0, 0, 0))
    return spans


def chunk_body(
    body: str,
    *,
    title: str,
    path: str,
    base: int = 0,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    overlap: int = DEFAULT_OVERLAP,
) -> list[Chunk]:
    """The chunks of ``body``; offsets are ``base`` plus the offset in ``body``."""
    chunks: list[Chunk] = []
    for index, (heading, context, start, end, tokens) in enumerate(
        chunk_spans(body, title=title, path=path, max_tokens=max_tokens, overlap=overlap)
    ):
        text = body[start:end]
        chunks.append(
            Chunk(
                index=index,
                heading=heading,
                offset=base + start,
                length=end - start,
                text=text,
                embed_text=f"{context}\n\n{text}" if context and text else context or text,
                tokens=tokens,
            )
        )
    return chunks


def chunk_note(
    markdown: str,
    *,
    title: str,
    path: str,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    overlap: int = DEFAULT_OVERLAP,
) -> list[Chunk]:
    """The chunks of a note's body (its markdown after the frontmatter), with offsets in
    the whole markdown, so ``markdown[offset:offset + length] == text``."""
    _, body = split_frontmatter(markdown)
    return chunk_body(
        body,
        title=title,
        path=path,
        base=len(markdown) - len(body),
        max_tokens=max_tokens,
        overlap=overlap,
    )
