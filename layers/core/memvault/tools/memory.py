"""The six memory tools: names, descriptions, input schemas and one executor.

Every surface that hands these tools to a model (MCP, and the gateway's tool
rounds) takes them from here, so their names, schemas and behaviour are identical
wherever a model meets them. The executor calls ``VaultService`` and nothing else:
budgets, size limits, quotas and write screening are the service's, shared with REST,
and a ``Caller`` whose surface is a model's (``Surface.MCP``, ``Surface.TOOLS``) has its
writes screened there.

``run_tool`` never raises for anything a model or a user can cause: bad arguments,
refusals and failures come back as a ``ToolResult`` with ``is_error=True`` and a message
the model can read and act on (rephrase, wait, pick another path).

Descriptions and schemas are byte-stable: they are module constants, computed once,
so a prompt that carries them caches well and a test can pin them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memvault.container import Services
from memvault.domain import attachments as attachment_rules
from memvault.domain import paths
from memvault.domain.attachments import is_note_path
from memvault.domain.models import MiB, NoteSummary
from memvault.errors import InvalidInput, MemvaultError, RateLimited, ServiceUnavailable
from memvault.services.context import Caller

log = logging.getLogger("memvault.tools")

# ---------------------------------------------------------------------- limits
# A memory_search answers at most this many notes (the vault allows 100 per query;
# a model's context is better served by a short list and a memory_read).
MAX_SEARCH_LIMIT: Final = 20
DEFAULT_SEARCH_LIMIT: Final = 5
# A memory_list page.
MAX_LIST_LIMIT: Final = 200
DEFAULT_LIST_LIMIT: Final = 50
# A memory_read returns at most this many characters of markdown per call; a longer
# note is read in parts with ``offset``.
MAX_READ_CHARS: Final = 100_000
# A relation label of memory_link.
MAX_RELATION_CHARS: Final = 200
# The gateway's tool rounds (see the vault-gateway spec): rounds per request, calls per
# round, and note-write bytes summed over a whole request (``WriteAllowance``).
MAX_TOOL_ROUNDS: Final = 4
MAX_CALLS_PER_ROUND: Final = 8
MAX_WRITE_BYTES_PER_REQUEST: Final = 4 * MiB

LINK_UNSAFE = frozenset("[]|#^")

VAULT_INSTRUCTIONS: Final = (
    "You have a memory vault: the user's markdown notes (YAML frontmatter, [[wikilinks]],"
    " #tags, folders by path). Search it with memory_search before answering questions"
    " about the user, their projects or earlier decisions, and read a note in full with"
    " memory_read. Save what is worth remembering with memory_write (a new note, or a"
    " note replaced whole) or memory_append (add to a note), connect related notes with"
    " memory_link, and browse with memory_list. Notes are the user's: write facts and"
    " decisions, never instructions to yourself."
)

# ---------------------------------------------------------------------- descriptions
SEARCH_DESCRIPTION: Final = (
    "Search the memory vault (the user's markdown notes) by words and meaning. Returns the best"
    " matching notes first, each with its path, title, tags, a score from 0 to 1 (0.5: the"
    " note holds each searched word once; comparable across searches) and a snippet in"
    " which the matching words are marked. Use it before answering anything that earlier"
    " notes may cover, then memory_read a note for its full text."
)
READ_DESCRIPTION: Final = (
    "Read one note of the memory vault: its markdown exactly as stored, with its version."
    f" A note longer than {MAX_READ_CHARS} characters is returned in parts: call again"
    " with the offset the answer gives."
)
WRITE_DESCRIPTION: Final = (
    "Create a note in the memory vault, or replace a note's whole markdown (the previous"
    " text stays in the note's version history). Paths are folders and a file name ending"
    " in .md, e.g. 'projects/Launch plan.md'. Give expected_version to write only if the"
    " note is still at that version (0: only if it does not exist yet). To add to a note"
    " without rewriting it, use memory_append."
)
APPEND_DESCRIPTION: Final = (
    "Append text to the end of a note in the memory vault, on its own line; the note is"
    " created when it does not exist yet. Use it for journals, logs and adding a fact to"
    " an existing note."
)
LINK_DESCRIPTION: Final = (
    "Link two notes of the memory vault: appends a line with a [[wikilink]] to the target"
    " at the end of the source note, e.g. 'See also: [[Launch plan]]', or with your"
    " relation instead of 'See also' (e.g. 'Depends on'). Both notes must exist. A source"
    " that already links to the target is left unchanged."
)
LIST_DESCRIPTION: Final = (
    "List the notes of the memory vault by path (path, title and tags; no content),"
    " optionally under one folder or with one tag. Answers one page at a time: when more"
    " notes follow, call again with the cursor the answer gives."
)


# ---------------------------------------------------------------------- arguments
class _Args(BaseModel):
    # Unknown arguments are refused, so a misnamed one ("content" for "markdown") is
    # reported to the model instead of silently dropped.
    model_config = ConfigDict(extra="forbid")


class SearchArgs(_Args):
    query: str = Field(
        min_length=1, max_length=4096, description="Words to search for, e.g. 'beta launch date'."
    )
    folder: str = Field(
        default="", description="Only notes under this folder, e.g. 'projects/'. Default: all."
    )
    tag: str | None = Field(
        default=None, description="Only notes with this tag (nested tags included), e.g. 'work'."
    )
    limit: int = Field(
        default=DEFAULT_SEARCH_LIMIT,
        ge=1,
        le=MAX_SEARCH_LIMIT,
        description=f"How many notes at most (1 to {MAX_SEARCH_LIMIT}).",
    )
    mode: Literal["keyword", "semantic", "hybrid"] | None = Field(
        default=None,
        description=(
            "keyword (the words themselves), semantic (by meaning) or hybrid (both)."
            " Default: hybrid when the vault has vectors, else keyword."
        ),
    )
    min_score: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="Leave out notes scoring below this (semantic and hybrid: 0.4 by default).",
    )


class ReadArgs(_Args):
    path: str = Field(min_length=1, description="The note's path, e.g. 'projects/Launch plan.md'.")
    offset: int = Field(
        default=0, ge=0, description="Start at this character (for long notes). Default 0."
    )


class WriteArgs(_Args):
    path: str = Field(min_length=1, description="The note's path, e.g. 'projects/Launch plan.md'.")
    markdown: str = Field(description="The note's whole new markdown (at most 1 MB).")
    expected_version: int | None = Field(
        default=None,
        ge=0,
        description="Write only if the note is at this version; 0: only if it does not exist.",
    )


class AppendArgs(_Args):
    path: str = Field(min_length=1, description="The note's path, e.g. 'journal/2026-05.md'.")
    text: str = Field(min_length=1, description="The text to add at the end, on its own line.")


class LinkArgs(_Args):
    source: str = Field(min_length=1, description="Path of the note that gets the link.")
    target: str = Field(min_length=1, description="Path of the note to link to.")
    relation: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_RELATION_CHARS,
        description="The words before the link, e.g. 'Depends on'. Default 'See also'.",
    )


class ListArgs(_Args):
    folder: str = Field(
        default="", description="Only notes under this folder, e.g. 'projects/'. Default: all."
    )
    tag: str | None = Field(default=None, description="Only notes with this tag.")
    cursor: str | None = Field(
        default=None, description="The cursor a previous page gave, for the next page."
    )
    limit: int = Field(
        default=DEFAULT_LIST_LIMIT,
        ge=1,
        le=MAX_LIST_LIMIT,
        description=f"Notes per page (1 to {MAX_LIST_LIMIT}).",
    )
    attachments: bool = Field(
        default=False,
        description="List the vault's attachments (images, PDFs, audio...) instead of notes.",
    )


def _clean_schema(node: Any) -> Any:
    """A pydantic JSON schema made lean for a model: no titles, no null branches.

    ``X | None`` fields become plain ``X`` (leaving them out is how a model says
    "none"), and a ``None`` default is dropped.
    """
    if isinstance(node, list):
        return [_clean_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _clean_schema(schema) for name, schema in value.items()}
        else:
            out[key] = _clean_schema(value)
    branches = out.get("anyOf")
    if isinstance(branches, list):
        kept = [b for b in branches if b != {"type": "null"}]
        if len(kept) == 1 and len(kept) < len(branches):
            del out["anyOf"]
            out = {**kept[0], **out}
    if "default" in out and out["default"] is None:
        del out["default"]
    return out


# ---------------------------------------------------------------------- results
@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call gives back: text for the model, data for programs."""

    text: str
    is_error: bool = False
    data: dict[str, Any] | None = None


@dataclass
class WriteAllowance:
    """Note-write bytes one request may still spend (the gateway: 4 MB per request).

    Pass one per request to ``run_tool``; writes past it are refused before they run.
    MCP passes none: each tools/call is its own request, and a single write is bounded
    by the note size limit.
    """

    limit: int = MAX_WRITE_BYTES_PER_REQUEST
    used: int = field(default=0)

    def check(self, size: int) -> None:
        if self.used + size > self.limit:
            raise InvalidInput(
                f"this request may write at most {self.limit} bytes of notes; {self.used} are"
                f" written and this write adds {size}",
                code="write_allowance_exhausted",
            )

    def spend(self, size: int) -> None:
        self.used += size


Executor = Callable[[Services, Caller, Any, WriteAllowance | None], ToolResult]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One memory tool, as every surface describes it to a model."""

    name: str
    title: str
    description: str
    args: type[_Args]
    read_only: bool
    destructive: bool
    idempotent: bool
    input_schema: dict[str, Any]
    execute: Executor


# ---------------------------------------------------------------------- executors
def _tags(tags: tuple[str, ...] | list[str]) -> str:
    return f" (tags: {', '.join(tags)})" if tags else ""


def _summary(note: NoteSummary) -> dict[str, Any]:
    return {
        "path": note.path,
        "title": note.title,
        "tags": list(note.tags),
        "version": note.version,
        "size": note.size,
        "updated_at": note.updated_at,
    }


def _search(
    svc: Services, caller: Caller, args: SearchArgs, _allowance: WriteAllowance | None
) -> ToolResult:
    outcome = svc.vault.search_outcome(
        caller,
        args.query,
        folder=args.folder,
        tag=args.tag,
        limit=args.limit,
        mode=args.mode,
        min_score=args.min_score,
    )
    hits = outcome.hits
    results = [
        {
            "path": h.path,
            "title": h.title,
            "tags": list(h.tags),
            "score": h.score,
            "snippet": h.snippet,
            "chunk": {"heading": h.chunks[0].heading, "offset": h.chunks[0].offset}
            if h.chunks
            else None,
        }
        for h in hits
    ]
    data: dict[str, Any] = {"query": args.query, "mode": outcome.mode.value, "results": results}
    note = ""
    if outcome.fallback:
        data["fallback"] = outcome.fallback
        note = f" ({outcome.fallback})"
    if not hits:
        return ToolResult(f"No notes match {args.query!r}{note}.", data=data)
    count = f"{len(hits)} note{'s' if len(hits) != 1 else ''}"
    lines = [f"{count} match {args.query!r}, best first ({outcome.mode.value} search){note}:"]
    for n, hit in enumerate(hits, 1):
        # The score is the one every surface reports: 0-1, comparable across queries.
        lines.append(f"{n}. {hit.path} — {hit.title}{_tags(hit.tags)} (score {hit.score:.2f})")
        if hit.chunks:
            best = hit.chunks[0]
            where = f" under {best.heading!r}" if best.heading else ""
            lines.append(f"   matched{where} at offset {best.offset} (memory_read from there)")
        snippet = " ".join(hit.snippet.split())
        if snippet:
            lines.append(f"   {snippet}")
    return ToolResult("\n".join(lines), data=data)


def _read(
    svc: Services, caller: Caller, args: ReadArgs, _allowance: WriteAllowance | None
) -> ToolResult:
    if not is_note_path(args.path):
        return _describe_file(svc, caller, args.path)
    note = svc.vault.read(caller, args.path)
    total = len(note.markdown)
    if args.offset > total or (args.offset == total and total > 0):
        raise InvalidInput(
            f"offset {args.offset} is past the end of {note.path!r} ({total} characters)",
            code="invalid_offset",
        )
    part = note.markdown[args.offset : args.offset + MAX_READ_CHARS]
    end = args.offset + len(part)
    data: dict[str, Any] = {
        **_summary(note.summary()),
        "markdown": part,
        "offset": args.offset,
        "total_chars": total,
        "next_offset": end if end < total else None,
    }
    text = _read_text(note.path, note.version, note.tags, args.offset, part, total)
    return ToolResult(text, data=data)


def _describe_file(svc: Services, caller: Caller, path: str) -> ToolResult:
    """memory_read on an attachment: what it is, never its bytes (ADR 0043)."""
    found = svc.attachments.get(caller, path)
    linked = svc.attachments.linked_from(caller, found.path)
    what = attachment_rules.kind_label(found.content_type)
    data: dict[str, Any] = {
        "path": found.path,
        "kind": found.kind,
        "content_type": found.content_type,
        "size": found.size,
        "updated_at": found.updated_at,
        "linked_from": linked,
    }
    text = f"{found.path} is an attachment: {what} ({found.content_type}), {found.size} bytes."
    if found.kind == "config":
        text = f"{found.path} is part of the vault's Obsidian configuration ({found.size} bytes)."
    if linked:
        text += " Linked or embedded from: " + ", ".join(linked[:20])
        text += f" and {len(linked) - 20} more." if len(linked) > 20 else "."
    else:
        text += " No note links to it."
    return ToolResult(text + " Its contents are not available to read.", data=data)


def _list_files(svc: Services, caller: Caller, args: ListArgs) -> ToolResult:
    prefix = args.folder.strip("/")
    page = svc.attachments.list_files(
        caller, prefix=prefix + "/" if prefix else "", cursor=args.cursor, limit=args.limit
    )
    data = {
        "attachments": [
            {"path": f.path, "content_type": f.content_type, "size": f.size} for f in page.files
        ],
        "next_cursor": page.next_cursor,
    }
    scope = f" under {args.folder!r}" if prefix else ""
    if not page.files:
        return ToolResult(f"No {'more ' if args.cursor else ''}attachments{scope}.", data=data)
    lines = [f"{len(page.files)} attachment{'s' if len(page.files) != 1 else ''}{scope}, by path:"]
    lines += [f"- {f.path} — {f.content_type}, {f.size} bytes" for f in page.files]
    if page.next_cursor:
        lines.append(
            f"More follow: call memory_list again with cursor {page.next_cursor!r}"
            " and attachments true."
        )
    return ToolResult("\n".join(lines), data=data)


def _read_text(
    path: str, version: int, tags: tuple[str, ...] | list[str], offset: int, part: str, total: int
) -> str:
    """A memory_read answer: the part of the note read, and how to read on."""
    end = offset + len(part)
    header = f"{path} (version {version}){_tags(tags)}"
    if offset or end < total:
        header += f", characters {offset} to {end} of {total}"
    text = f"{header}:\n\n{part}"
    if end < total:
        text += f"\n\n[{total - end} more characters: call memory_read with offset {end}]"
    return text


def _write(
    svc: Services, caller: Caller, args: WriteArgs, allowance: WriteAllowance | None
) -> ToolResult:
    size = len(args.markdown.encode("utf-8", "surrogatepass"))
    if allowance is not None:
        allowance.check(size)
    outcome = svc.vault.write(
        caller, args.path, args.markdown, expected_version=args.expected_version
    )
    if allowance is not None:
        allowance.spend(size)
    note = outcome.note
    if outcome.created:
        text = f"Created {note.path} (version {note.version})."
    elif outcome.changed:
        text = f"Saved {note.path} as version {note.version}."
    else:
        text = f"Unchanged: {note.path} already has this markdown (version {note.version})."
    data = {**_summary(note.summary()), "created": outcome.created, "changed": outcome.changed}
    return ToolResult(text, data=data)


def _append(
    svc: Services, caller: Caller, args: AppendArgs, allowance: WriteAllowance | None
) -> ToolResult:
    size = len(args.text.encode("utf-8", "surrogatepass"))
    if allowance is not None:
        allowance.check(size)
    outcome = svc.vault.append(caller, args.path, args.text)
    if allowance is not None:
        allowance.spend(size)
    note = outcome.note
    if outcome.created:
        text = f"Created {note.path} with the text (version {note.version})."
    else:
        text = f"Appended to {note.path}; it is now at version {note.version}."
    data = {**_summary(note.summary()), "created": outcome.created, "changed": True}
    return ToolResult(text, data=data)


def _link(
    svc: Services, caller: Caller, args: LinkArgs, allowance: WriteAllowance | None
) -> ToolResult:
    relation = " ".join((args.relation or "See also").split())
    if not relation:
        raise InvalidInput("the relation is blank", code="invalid_relation")
    source = svc.vault.read(caller, args.source)
    target = svc.vault.read(caller, args.target)
    if paths.path_key(source.path) == paths.path_key(target.path):
        raise InvalidInput("a note cannot link to itself", code="self_link")
    base = {"source": source.path, "target": target.path}
    if any(note.path == source.path for note in svc.vault.backlinks(caller, target.path)):
        return ToolResult(
            f"{source.path} already links to {target.path}; nothing changed.",
            data={**base, "changed": False, "version": source.version},
        )
    # The shortest text that resolves to the target: its name, or its path when another
    # note shares the name.
    link_text = svc.vault.links.link_text_for(caller.account_id, target.path, target.path)
    if LINK_UNSAFE & set(link_text):
        raise InvalidInput(
            f"{target.path!r} cannot be named in a [[wikilink]] (its path has one of"
            f" {''.join(sorted(LINK_UNSAFE))})",
            code="unlinkable_path",
        )
    line = f"{relation}: [[{link_text}]]"
    size = len(line.encode("utf-8", "surrogatepass"))
    if allowance is not None:
        allowance.check(size)
    outcome = svc.vault.append(caller, source.path, line)
    if allowance is not None:
        allowance.spend(size)
    note = outcome.note
    return ToolResult(
        f"Linked {source.path} to {target.path}: appended '{line}' (version {note.version}).",
        data={**base, "changed": True, "line": line, "version": note.version},
    )


def _list(
    svc: Services, caller: Caller, args: ListArgs, _allowance: WriteAllowance | None
) -> ToolResult:
    if args.attachments:
        return _list_files(svc, caller, args)
    page = svc.vault.list_notes(
        caller, folder=args.folder, tag=args.tag, cursor=args.cursor, limit=args.limit
    )
    data = {"notes": [_summary(n) for n in page.items], "next_cursor": page.next_cursor}
    where = []
    if args.folder.strip("/"):
        where.append(f"under {args.folder!r}")
    if args.tag:
        where.append(f"tagged {args.tag!r}")
    scope = (" " + " and ".join(where)) if where else ""
    if not page.items:
        text = f"No notes{scope}."
        if args.cursor:
            text = f"No more notes{scope}."
        return ToolResult(text, data=data)
    count = len(page.items)
    lines = [f"{count} note{'s' if count != 1 else ''}{scope}, by path:"]
    lines += [f"- {n.path} — {n.title}{_tags(n.tags)}" for n in page.items]
    if page.next_cursor:
        lines.append(f"More notes follow: call memory_list again with cursor {page.next_cursor!r}.")
    return ToolResult("\n".join(lines), data=data)


def _spec(
    name: str,
    title: str,
    description: str,
    args: type[_Args],
    execute: Callable[..., ToolResult],
    *,
    read_only: bool,
    destructive: bool = False,
    idempotent: bool = False,
) -> ToolSpec:
    return ToolSpec(
        name=name,
        title=title,
        description=description,
        args=args,
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
        input_schema=_clean_schema(args.model_json_schema()),
        execute=execute,
    )


TOOLS: Final[tuple[ToolSpec, ...]] = (
    _spec(
        "memory_search", "Search memory", SEARCH_DESCRIPTION, SearchArgs, _search, read_only=True
    ),
    _spec("memory_read", "Read a note", READ_DESCRIPTION, ReadArgs, _read, read_only=True),
    _spec(
        "memory_write",
        "Write a note",
        WRITE_DESCRIPTION,
        WriteArgs,
        _write,
        read_only=False,
        destructive=True,
        idempotent=True,
    ),
    _spec(
        "memory_append",
        "Append to a note",
        APPEND_DESCRIPTION,
        AppendArgs,
        _append,
        read_only=False,
    ),
    _spec(
        "memory_link",
        "Link two notes",
        LINK_DESCRIPTION,
        LinkArgs,
        _link,
        read_only=False,
        idempotent=True,
    ),
    _spec("memory_list", "List notes", LIST_DESCRIPTION, ListArgs, _list, read_only=True),
)
TOOLS_BY_NAME: Final[Mapping[str, ToolSpec]] = {spec.name: spec for spec in TOOLS}
TOOL_NAMES: Final[tuple[str, ...]] = tuple(spec.name for spec in TOOLS)


# ---------------------------------------------------------------------- sizing results
class TokenCount(Protocol):
    """What sizing needs of a tokenizer (memvault.tokens.count_tokens is one)."""

    def __call__(self, text: str) -> int: ...

    def token_ends(self, text: str) -> list[int] | None: ...


def _prefix_within(text: str, tokens: int, count: TokenCount) -> str:
    """The longest start of ``text`` that is at most ``tokens`` tokens (about)."""
    if tokens <= 0:
        return ""
    ends = count.token_ends(text)
    if ends is None:  # text the tokenizer cannot take as it is: a token is 2+ characters
        return text[: tokens * 2]
    return text if len(ends) <= tokens else text[: ends[tokens - 1]]


def fit_result(name: str, result: ToolResult, max_tokens: int, count: TokenCount) -> ToolResult:
    """``result`` cut to about ``max_tokens`` tokens, for a model whose request has
    room for no more (the gateway sizes each round's results to what it reserved).

    A memory_read keeps the start of its part and ends with how to read on (the offset
    where the part now ends), so nothing is lost: the model reads the rest in the next
    round. Any other result keeps its start and says how much was left out. A result
    that already fits is returned as it is.
    """
    if count(result.text) <= max_tokens:
        return result
    data = result.data or {}
    markdown = data.get("markdown")
    if name == "memory_read" and not result.is_error and isinstance(markdown, str):
        offset, total = int(data["offset"]), int(data["total_chars"])
        path, version, tags = str(data["path"]), int(data["version"]), data.get("tags") or []

        def read(part: str) -> str:
            return _read_text(path, version, tags, offset, part, total)

        part = _fitted(markdown, read, max_tokens, count)
        end = offset + len(part)
        cut = {**data, "markdown": part, "next_offset": end if end < total else None}
        return ToolResult(read(part), data=cut)
    full = len(result.text)

    def cut_text(kept: str) -> str:
        return (
            f"{kept}\n\n[the rest of this result ({full - len(kept)} more characters) is left"
            " out to fit this request's budget: ask for less, e.g. a smaller limit]"
        )

    kept = _fitted(result.text, cut_text, max_tokens, count)
    return ToolResult(cut_text(kept), is_error=result.is_error, data=result.data)


def _fitted(text: str, frame: Callable[[str], str], max_tokens: int, count: TokenCount) -> str:
    """The longest start of ``text`` whose framed form is within ``max_tokens`` (or none
    at all when even the frame is not). Counts do not quite add where the pieces join, so
    the framed text is counted again and trimmed by what it is over."""
    room = max_tokens - count(frame(""))
    kept = _prefix_within(text, room, count)
    for _ in range(4):
        over = count(frame(kept)) - max_tokens
        if over <= 0 or not kept:
            break
        room -= over
        kept = _prefix_within(kept, room, count)
    return kept


# ---------------------------------------------------------------------- the executor
def _refusal(exc: MemvaultError) -> ToolResult:
    verb = "failed" if isinstance(exc, ServiceUnavailable) else "refused"
    error: dict[str, Any] = {"type": exc.type, "code": exc.code, "message": exc.message}
    if isinstance(exc, RateLimited):
        error["retry_after"] = exc.retry_after
    reason = exc.message.removeprefix("refused: ")
    return ToolResult(f"{verb} ({exc.code}): {reason}", is_error=True, data={"error": error})


def _invalid_arguments(name: str, exc: ValidationError) -> ToolResult:
    problems = []
    for problem in exc.errors(include_url=False)[:5]:
        where = ".".join(str(part) for part in problem.get("loc", ())) or "arguments"
        problems.append(f"{where}: {problem.get('msg', 'invalid')}")
    message = f"invalid arguments for {name}: " + "; ".join(problems)
    error = {"type": "invalid_request", "code": "invalid_arguments", "message": message}
    return ToolResult(
        f"refused (invalid_arguments): {message}", is_error=True, data={"error": error}
    )


def run_tool(
    services: Services,
    caller: Caller,
    name: str,
    arguments: object,
    *,
    allowance: WriteAllowance | None = None,
) -> ToolResult:
    """Run one memory tool call for ``caller``; never raises for the caller's mistakes.

    Blocking (storage and search I/O): call it from a worker thread in async code.
    """
    spec = TOOLS_BY_NAME.get(name)
    if spec is None:
        message = f"there is no memory tool {name!r}; the memory tools are {', '.join(TOOL_NAMES)}"
        error = {"type": "invalid_request", "code": "unknown_tool", "message": message}
        return ToolResult(
            f"refused (unknown_tool): {message}", is_error=True, data={"error": error}
        )
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        message = f"the arguments of {name} must be a JSON object"
        error = {"type": "invalid_request", "code": "invalid_arguments", "message": message}
        return ToolResult(
            f"refused (invalid_arguments): {message}", is_error=True, data={"error": error}
        )
    try:
        args = spec.args.model_validate(dict(arguments))
    except ValidationError as exc:
        return _invalid_arguments(name, exc)
    try:
        return spec.execute(services, caller, args, allowance)
    except MemvaultError as exc:
        log.info(
            "memory tool refused",
            extra={"tool": name, "code": exc.code, "surface": caller.surface.value},
        )
        return _refusal(exc)
    except Exception:
        log.exception("memory tool failed", extra={"tool": name, "surface": caller.surface.value})
        message = "something went wrong on our side; try again later"
        error = {"type": "internal_error", "code": "internal_error", "message": message}
        return ToolResult(
            f"failed (internal_error): {message}", is_error=True, data={"error": error}
        )
