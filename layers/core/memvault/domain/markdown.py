"""Reading Obsidian-flavoured markdown: frontmatter, title, tags and wikilinks.

Pure functions, no I/O. Tags and links come from "prose" only: text outside the
frontmatter, fenced code blocks and inline code spans. One scanner finds the prose
spans so tags, links and link rewriting all agree on what counts. Everything is
linear in the size of the note (notes can be 1 MB): line-by-line loops and regexes
that cannot backtrack catastrophically.
"""

from __future__ import annotations

import base64
import datetime
import math
import re
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import yaml

from memvault.domain import paths
from memvault.errors import InvalidInput

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "SEARCH_BODY_LIMIT_BYTES",
    "ParsedNote",
    "WikiLink",
    "body_for_search",
    "parse_note",
    "retarget_links",
    "rewrite_links",
    "split_frontmatter",
    "truncate_utf8",
    "unique_link_keys",
]

SEARCH_BODY_LIMIT_BYTES = 256 * 1024

# Converting YAML to JSON-friendly values expands aliases; a "billion laughs" document
# is tiny as YAML but explodes when expanded, so the expansion is budgeted.
_FRONTMATTER_NODE_BUDGET = 100_000

# Pure-Python YAML parses ~100 KB/s on dense input; real frontmatter is a few KB, so a
# larger block is kept as text but not parsed, bounding the cost of any single write.
MAX_FRONTMATTER_BYTES = 32 * 1024


@dataclass(frozen=True, slots=True)
class WikiLink:
    """One ``[[target#heading|alias]]`` occurrence; fields are the text as written."""

    target: str
    heading: str | None
    alias: str | None
    embed: bool
    # "wikilink" ([[...]] in the body), "markdown" ([text](Note.md)) or "property"
    # ([[...]] inside a frontmatter value): all resolve by the same rules (domain.links).
    kind: str = "wikilink"

    @property
    def target_key(self) -> str:
        """The form compared with ``paths.link_key`` / ``paths.name_key`` to resolve."""
        folded = paths.fold(self.target.strip())
        return folded.removesuffix(paths.NOTE_SUFFIX).strip()

    @property
    def has_folder(self) -> bool:
        """A folder-qualified target resolves by exact path only."""
        return "/" in self.target


@dataclass(frozen=True, slots=True)
class ParsedNote:
    """What the vault indexes about a note; ``body`` is the markdown after the frontmatter."""

    frontmatter_text: str | None
    frontmatter: dict[str, object]
    frontmatter_error: str | None
    body: str
    title: str
    tags: tuple[str, ...]
    links: tuple[WikiLink, ...]


# --------------------------------------------------------------------------- frontmatter


def _fence_line(line: str) -> str:
    return line.rstrip(" \t\r")


def _split(markdown: str) -> tuple[str | None, int]:
    """(YAML text, offset where the body starts)."""
    first_end = markdown.find("\n")
    if first_end == -1 or _fence_line(markdown[:first_end]) != "---":
        return None, 0
    start = first_end + 1
    pos = start
    while True:
        end = markdown.find("\n", pos)
        line_end = len(markdown) if end == -1 else end
        if _fence_line(markdown[pos:line_end]) in ("---", "..."):
            return markdown[start:pos], line_end if end == -1 else end + 1
        if end == -1:
            return None, 0  # never closed: it was not frontmatter
        pos = end + 1


def split_frontmatter(markdown: str) -> tuple[str | None, str]:
    """(raw YAML between the ``---`` fences, body after the closing fence) or (None, all).

    A leading BOM is content, so a BOM-prefixed note has no frontmatter.
    """
    yaml_text, body_start = _split(markdown)
    return yaml_text, markdown[body_start:]


def body_for_search(markdown: str) -> str:
    """The note without its frontmatter block."""
    return split_frontmatter(markdown)[1]


class _TooComplex(Exception):
    """Frontmatter that loads but is unreasonable to expand (alias bombs, cycles)."""


def _json_key(key: object, budget: list[int], active: set[int]) -> str:
    value = _jsonable(key, budget, active)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def _jsonable(value: object, budget: list[int], active: set[int]) -> object:
    """YAML values as JSON-friendly ones (dates -> ISO strings...), budgeted, cycle-safe."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooComplex("frontmatter is too complex (too many values once aliases expand)")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        # NaN/Infinity are not JSON; keep them readable rather than drop them.
        return value if math.isfinite(value) else str(value)
    if isinstance(value, datetime.date):  # datetime.datetime included
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, list | tuple | set | dict):
        if id(value) in active:
            raise _TooComplex("frontmatter refers to itself (recursive alias)")
        active.add(id(value))
        try:
            if isinstance(value, dict):
                return {
                    _json_key(k, budget, active): _jsonable(v, budget, active)
                    for k, v in value.items()
                }
            items = [_jsonable(v, budget, active) for v in value]
            return sorted(items, key=repr) if isinstance(value, set) else items
        finally:
            active.discard(id(value))
    return str(value)


_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load_frontmatter(yaml_text: str) -> tuple[dict[str, object], str | None]:
    if len(yaml_text.encode("utf-8", "surrogatepass")) > MAX_FRONTMATTER_BYTES:
        return {}, f"frontmatter is larger than {MAX_FRONTMATTER_BYTES // 1024} KiB; not parsed"
    try:
        # The safe loader only (no arbitrary Python objects), in libyaml's C build when
        # PyYAML has it: about 7x faster, which dominates a large import.
        loaded = yaml.load(yaml_text, Loader=_SAFE_LOADER)
    except yaml.MarkedYAMLError as exc:
        where = ""
        if exc.problem_mark is not None:
            # +2: marks are 0-based and the opening fence is line 1 of the note.
            where = f" (line {exc.problem_mark.line + 2})"
        problem = exc.problem or exc.context or "syntax error"
        return {}, f"invalid YAML frontmatter: {problem}{where}"
    except RecursionError:
        return {}, "frontmatter is nested too deeply"
    except Exception as exc:  # user data: no failure of the YAML library may fail the note
        # e.g. ValueError for "2024-13-45", which the date resolver accepts but cannot build.
        return {}, f"invalid YAML frontmatter: {exc}"[:200]
    if loaded is None:
        return {}, None
    if not isinstance(loaded, dict):
        return {}, f"frontmatter is not a mapping (got {type(loaded).__name__})"
    try:
        converted = _jsonable(loaded, [_FRONTMATTER_NODE_BUDGET], set())
    except _TooComplex as exc:
        return {}, str(exc)
    except RecursionError:
        return {}, "frontmatter is nested too deeply"
    assert isinstance(converted, dict)
    return converted, None


# --------------------------------------------------------------------------- prose scanner

# Up to any indentation and blockquote markers: lenient, so text that looks like a fence
# is treated as code (fewer false tags) rather than the reverse.
_FENCE_OPEN_RE = re.compile(r"(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})(.*)")
_FENCE_CLOSE_RE = re.compile(r"(?:[ \t]*>)*[ \t]*(`{3,}|~{3,})[ \t]*")
_HEADING_RE = re.compile(r"(?:[ \t]*>)*[ \t]*#{1,6}(?:[ \t\r]|$)")
_H1_RE = re.compile(r" {0,3}#(?:[ \t]+(.*)|$)")
_BLANK_LINES_RE = re.compile(r"(?:[ \t>]*\r?\n)+")
_BACKTICKS_RE = re.compile(r"`+")
_WIKILINK_RE = re.compile(r"!?\[\[([^\[\]\n]*)\]\]")
# [text](dest "title") or [text](<dest with spaces>): the inline link forms a vault uses.
_MARKDOWN_LINK_RE = re.compile(
    r"(?P<bang>!?)\[(?P<text>[^\[\]\n]*)\]\(\s*"
    r"(?:<(?P<angle>[^<>\n]*)>|(?P<bare>[^()\s<>]+))"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_TAG_CHARS_RE = re.compile(r"[\w/\-]+")
_TAG_LIST_SEP_RE = re.compile(r"[,\s]+")
# The lookbehind pins the scheme to the start of a word, which keeps the scan linear.
_URL_RE = re.compile(r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://\S*")


@dataclass(frozen=True, slots=True)
class _Prose:
    start: int
    end: int
    heading: bool  # on an ATX heading line: links count, tags do not


@dataclass(frozen=True, slots=True)
class _Scan:
    prose: list[_Prose]
    title: str | None  # first level-1 heading outside code


def _h1_text(line: str) -> str | None:
    match = _H1_RE.match(line)
    if match is None:
        return None
    text = (match.group(1) or "").strip(" \t")
    # An optional closing run of '#' ("# Title ##") is not part of the title; "C#" is.
    unclosed = text.rstrip("#")
    if unclosed == "" or unclosed[-1] in " \t":
        text = unclosed
    return text.strip()


def _without_code_spans(text: str, start: int, end: int, heading: bool) -> Iterator[_Prose]:
    """Split a block into prose pieces around inline code spans.

    A run of n backticks opens a span closed by the next run of exactly n; an
    unmatched run is literal. Runs are bucketed by length so pairing stays linear.
    """
    runs = [(m.start(), m.end()) for m in _BACKTICKS_RE.finditer(text, start, end)]
    if not runs:
        yield _Prose(start, end, heading)
        return
    # A wikilink that opens in prose keeps the backticks inside it as text
    # ([[Filters#`wikilink`|wikilink]] is one link, as Obsidian reads it).
    wikilinks = [
        (m.start(), m.end()) for m in _WIKILINK_RE.finditer(text, start, end) if "`" in m.group()
    ]
    by_length: dict[int, list[int]] = {}
    for index, (run_start, run_end) in enumerate(runs):
        by_length.setdefault(run_end - run_start, []).append(index)
    cursor: dict[int, int] = dict.fromkeys(by_length, 0)
    prose_start = start
    index = 0
    link_index = 0
    while index < len(runs):
        run_start, run_end = runs[index]
        while link_index < len(wikilinks) and wikilinks[link_index][1] <= run_start:
            link_index += 1
        if link_index < len(wikilinks) and prose_start <= wikilinks[link_index][0] < run_start:
            index += 1  # inside a wikilink that began in prose: literal
            continue
        length = run_end - run_start
        candidates = by_length[length]
        pos = cursor[length]
        while pos < len(candidates) and candidates[pos] <= index:
            pos += 1
        cursor[length] = pos
        if pos == len(candidates):
            index += 1  # literal backticks
            continue
        closer = candidates[pos]
        if run_start > prose_start:
            yield _Prose(prose_start, run_start, heading)
        prose_start = runs[closer][1]
        index = closer + 1
    if end > prose_start:
        yield _Prose(prose_start, end, heading)


def _scan(markdown: str, start: int) -> _Scan:
    """Prose spans of ``markdown[start:]`` (absolute offsets) and the first H1."""
    prose: list[_Prose] = []
    title: str | None = None
    fence: tuple[str, int] | None = None  # (char, length) of the open code fence
    block_start = -1  # start of the current paragraph, -1 when none
    block_end = -1

    def flush() -> None:
        nonlocal block_start
        if block_start != -1:
            prose.extend(_without_code_spans(markdown, block_start, block_end, False))
            block_start = -1

    pos = start
    length = len(markdown)
    while pos < length:
        newline = markdown.find("\n", pos)
        line_end = length if newline == -1 else newline
        next_pos = length if newline == -1 else newline + 1
        line = markdown[pos:line_end]
        stripped = line.lstrip(" \t>")
        first = stripped[:1]
        if fence is not None:
            if first == fence[0]:
                match = _FENCE_CLOSE_RE.fullmatch(line.rstrip("\r"))
                if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= fence[1]:
                    fence = None
        elif stripped in ("", "\r"):
            flush()  # blank line: paragraph boundary; skip the whole run of them at once
            blanks = _BLANK_LINES_RE.match(markdown, next_pos)
            next_pos = blanks.end() if blanks else next_pos
        elif first in ("`", "~", "#"):
            opener = _FENCE_OPEN_RE.match(line) if first != "#" else None
            if opener and not (opener.group(1)[0] == "`" and "`" in opener.group(2)):
                flush()
                fence = (opener.group(1)[0], len(opener.group(1)))
            elif first == "#" and _HEADING_RE.match(line):
                flush()
                if title is None:
                    title = _h1_text(line.rstrip("\r")) or None
                prose.extend(_without_code_spans(markdown, pos, line_end, True))
            else:
                block_start = pos if block_start == -1 else block_start
                block_end = line_end
        else:
            block_start = pos if block_start == -1 else block_start
            block_end = line_end
        pos = next_pos
    flush()
    return _Scan(prose, title)


# --------------------------------------------------------------------------- links


@dataclass(frozen=True, slots=True)
class _LinkAt:
    link: WikiLink
    start: int  # the whole ``![[...]]``
    end: int
    target_start: int  # the target text only (what a rewrite replaces)
    target_end: int


def _link_at(markdown: str, match: re.Match[str]) -> _LinkAt | None:
    inner_start = match.start(1)
    inner = match.group(1)
    pipe = inner.find("|")
    if pipe == -1:
        target_part, alias = inner, None
    else:
        # "\|" is how a pipe is written inside a markdown table; it still separates.
        target_part = inner[: pipe - 1] if pipe > 0 and inner[pipe - 1] == "\\" else inner[:pipe]
        alias = inner[pipe + 1 :]
    target, hash_sign, heading = target_part.partition("#")
    if not target.strip():
        return None  # [[#Heading]] points inside the same note, not at a note
    link = WikiLink(
        target=target,
        heading=heading if hash_sign else None,
        alias=alias,
        embed=markdown[match.start()] == "!",
    )
    return _LinkAt(link, match.start(), match.end(), inner_start, inner_start + len(target))


def _markdown_link_at(markdown: str, match: re.Match[str]) -> _LinkAt | None:
    """``[text](Note.md#Heading)`` / ``![alt](file.png)`` to a vault file, or None for a
    URL (any scheme), a same-note anchor (``#x``) or an empty destination."""
    if match.group("angle") is not None:
        dest, dest_start = match.group("angle"), match.start("angle")
    else:
        dest, dest_start = match.group("bare"), match.start("bare")
    path_part, hash_sign, heading = dest.partition("#")
    if not path_part.strip() or _SCHEME_RE.match(path_part):
        return None
    link = WikiLink(
        target=urllib.parse.unquote(path_part),
        heading=urllib.parse.unquote(heading) if hash_sign else None,
        alias=match.group("text"),
        embed=match.group("bang") == "!",
        kind="markdown",
    )
    return _LinkAt(link, match.start(), match.end(), dest_start, dest_start + len(path_part))


def _links_in(markdown: str, spans: list[_Prose]) -> Iterator[_LinkAt]:
    for span in spans:
        found_links: list[_LinkAt] = []
        for match in _WIKILINK_RE.finditer(markdown, span.start, span.end):
            found = _link_at(markdown, match)
            if found is not None:
                found_links.append(found)
        if "](" in markdown[span.start : span.end]:
            taken = [
                (m.start(), m.end()) for m in _WIKILINK_RE.finditer(markdown, span.start, span.end)
            ]
            for match in _MARKDOWN_LINK_RE.finditer(markdown, span.start, span.end):
                if any(a < match.end() and match.start() < b for a, b in taken):
                    continue  # "[[x]](y)": the wikilink wins
                found = _markdown_link_at(markdown, match)
                if found is not None:
                    found_links.append(found)
            found_links.sort(key=lambda f: f.start)
        yield from found_links


def _property_links(markdown: str) -> Iterator[_LinkAt]:
    """Wikilinks written inside frontmatter values (``related: "[[Home]]"``), as Obsidian
    reads links in properties."""
    first_end = markdown.find("\n")
    yaml_text, body_start = _split(markdown)
    if yaml_text is None or "[[" not in yaml_text:
        return
    for match in _WIKILINK_RE.finditer(markdown, first_end + 1, body_start):
        found = _link_at(markdown, match)
        if found is not None:
            link = found.link
            yield _LinkAt(
                WikiLink(link.target, link.heading, link.alias, link.embed, kind="property"),
                found.start,
                found.end,
                found.target_start,
                found.target_end,
            )


def unique_link_keys(parsed: ParsedNote) -> tuple[str, ...]:
    """Distinct ``target_key`` values of a note's links, in order of first appearance."""
    return tuple(dict.fromkeys(link.target_key for link in parsed.links))


_FORBIDDEN_IN_TARGET = frozenset("[]|#\\`\n\r")


def rewrite_links(
    markdown: str, should_rewrite: Callable[[WikiLink], bool], new_target: str
) -> str:
    """Point selected links at ``new_target`` (see ``retarget_links``)."""
    return retarget_links(markdown, lambda link: new_target if should_rewrite(link) else None)


def retarget_links(markdown: str, new_target: Callable[[WikiLink], str | None]) -> str:
    """Give each link the target ``new_target(link)`` returns (None: leave it); every
    other byte is kept.

    Only the target text changes: ``!``, ``#heading`` and ``|alias`` (or ``\\|alias``)
    stay. Wikilinks in the body and in frontmatter values, and markdown links to vault
    files, are rewritten; code is never touched. A markdown link keeps its form: a
    ``.md`` suffix when it had one, spaces written ``%20`` unless it was in ``<...>``.
    A new wikilink target must be writable inside a wikilink (no ``[ ] | # \\`` backtick
    or newline), else ``InvalidInput``.
    """
    _, body_start = _split(markdown)
    found_links = [
        *_property_links(markdown),
        *_links_in(markdown, _scan(markdown, body_start).prose),
    ]
    pieces: list[str] = []
    last = 0
    for found in found_links:
        target = new_target(found.link)
        if target is None:
            continue
        pieces.append(markdown[last : found.target_start])
        pieces.append(_written_target(markdown, found, target))
        last = found.target_end
    if not pieces:
        return markdown
    pieces.append(markdown[last:])
    return "".join(pieces)


def _written_target(markdown: str, found: _LinkAt, target: str) -> str:
    if found.link.kind != "markdown":
        if not target.strip() or any(ch in _FORBIDDEN_IN_TARGET for ch in target):
            raise InvalidInput(
                f"cannot write {target!r} as a wikilink target "
                "(empty, or contains one of [ ] | # \\ ` or a newline)",
                code="invalid_link_target",
            )
        return target
    if paths.fold(found.link.target).endswith(paths.NOTE_SUFFIX):
        target += paths.NOTE_SUFFIX
    in_angles = markdown[found.target_start - 1 : found.target_start] == "<"
    return target if in_angles else urllib.parse.quote(target, safe="/!$&'*+,;=:@~")


# --------------------------------------------------------------------------- tags


def _accept_tag(body: str) -> str | None:
    """The stored spelling of a run of tag characters, or None (``#1984`` is not a tag)."""
    tag = body.rstrip("/")
    if not tag or tag.isdigit():
        return None
    return unicodedata.normalize("NFC", tag)


def _frontmatter_tag(raw: str) -> str | None:
    """Frontmatter tags obey the inline rules, so every tag can also be written inline."""
    body = raw.lstrip("#")
    return _accept_tag(body) if _tag_end(body, 0, len(body)) == len(body) else None


def _frontmatter_tags(frontmatter: dict[str, object]) -> Iterator[str]:
    for key in ("tags", "tag"):
        value = frontmatter.get(key)
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, str | int | float) and not isinstance(item, bool):
                for piece in _TAG_LIST_SEP_RE.split(str(item)):
                    tag = _frontmatter_tag(piece)
                    if tag is not None:
                        yield tag


def _masked(markdown: str, span: _Prose) -> list[tuple[int, int]]:
    """Ranges inside a prose span where a ``#`` is never a tag: wikilinks and URLs."""
    ranges = [(m.start(), m.end()) for m in _WIKILINK_RE.finditer(markdown, span.start, span.end)]
    ranges += [(m.start(), m.end()) for m in _URL_RE.finditer(markdown, span.start, span.end)]
    ranges.sort()
    return ranges


def _starts_tag(markdown: str, pos: int) -> bool:
    if pos == 0:
        return True
    before = markdown[pos - 1]
    if before == "(":
        return pos < 2 or markdown[pos - 2] != "]"  # not a link destination "](#anchor)"
    return before.isspace()


def _tag_end(markdown: str, pos: int, end: int) -> int:
    """End of the run of tag characters starting at ``pos`` (regex for speed, then marks)."""
    while True:
        match = _TAG_CHARS_RE.match(markdown, pos, end)
        if match is not None:
            pos = match.end()
        # \w has no combining marks (needed by e.g. Devanagari), so they are checked apart.
        if pos < end and unicodedata.category(markdown[pos])[0] == "M":
            pos += 1
            continue
        return pos


def _inline_tags(markdown: str, spans: list[_Prose]) -> Iterator[str]:
    for span in spans:
        pos = markdown.find("#", span.start, span.end)
        if span.heading or pos == -1:
            continue
        masked = _masked(markdown, span)
        mask_index = 0
        while pos != -1:
            while mask_index < len(masked) and masked[mask_index][1] <= pos:
                mask_index += 1
            if mask_index < len(masked) and masked[mask_index][0] <= pos:
                pos = markdown.find("#", masked[mask_index][1], span.end)
                continue
            end = pos + 1
            if _starts_tag(markdown, pos):
                end = _tag_end(markdown, end, span.end)
                if end > pos + 1:
                    yield markdown[pos + 1 : end]
            pos = markdown.find("#", end, span.end)


# --------------------------------------------------------------------------- notes


def _title_from(frontmatter: dict[str, object]) -> str | None:
    value = frontmatter.get("title")
    if isinstance(value, bool):
        value = "true" if value else "false"
    if isinstance(value, str | int | float):
        text = str(value).strip()
        return text or None
    return None


def parse_note(path: str, markdown: str) -> ParsedNote:
    """Everything the vault indexes about a note. Never fails on content: bad YAML is
    reported in ``frontmatter_error`` and the note stays valid."""
    yaml_text, body_start = _split(markdown)
    if yaml_text is None:
        frontmatter: dict[str, object] = {}
        error = None
    else:
        frontmatter, error = _load_frontmatter(yaml_text)
    scan = _scan(markdown, body_start)

    tags: dict[str, str] = {}
    for tag in _frontmatter_tags(frontmatter):
        tags.setdefault(paths.fold(tag), tag)
    seen: set[str] = set()  # raw spellings already handled: repeats are common and cheap
    for raw in _inline_tags(markdown, scan.prose):
        if raw not in seen:
            seen.add(raw)
            accepted = _accept_tag(raw)
            if accepted is not None:
                tags.setdefault(paths.fold(accepted), accepted)

    return ParsedNote(
        frontmatter_text=yaml_text,
        frontmatter=frontmatter,
        frontmatter_error=error,
        body=markdown[body_start:],
        title=_title_from(frontmatter) or scan.title or paths.stem(path),
        tags=tuple(tags.values()),
        links=tuple(
            found.link for found in (*_property_links(markdown), *_links_in(markdown, scan.prose))
        ),
    )


def truncate_utf8(text: str, max_bytes: int) -> str:
    """At most ``max_bytes`` of UTF-8, cut on a character boundary."""
    if max_bytes <= 0:
        return ""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    cut = max_bytes
    while cut > 0 and data[cut] & 0xC0 == 0x80:  # back off a continuation byte
        cut -= 1
    return data[:cut].decode("utf-8", "surrogatepass")
