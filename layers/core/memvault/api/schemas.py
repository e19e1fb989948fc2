"""Pydantic models for the REST API's request and response bodies."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from memvault.domain import markdown as md
from memvault.domain.models import (
    Account,
    ApiKey,
    Balance,
    Note,
    NoteSummary,
    SearchHit,
    UsageDay,
    UsageReport,
    VersionInfo,
)
from memvault.domain.pricing import usd


def iso(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=UTC)


class NoteSummaryOut(BaseModel):
    id: str
    path: str
    title: str
    tags: list[str]
    version: int
    size: int
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, note: NoteSummary) -> NoteSummaryOut:
        return cls(
            id=note.id,
            path=note.path,
            title=note.title,
            tags=list(note.tags),
            version=note.version,
            size=note.size,
            created_at=iso(note.created_at),
            updated_at=iso(note.updated_at),
        )


class LinkOut(BaseModel):
    target: str
    heading: str | None
    alias: str | None
    embed: bool


class OutgoingLinkOut(LinkOut):
    # How it is written: "wikilink" ([[...]]), "markdown" ([text](Note.md)) or "property"
    # (a [[...]] in a frontmatter value).
    kind: str
    # The note (or attachment) it reaches by Obsidian's rules in the vault as it is now;
    # null when it dangles (no such note, or a path that climbs out of the vault).
    path: str | None


class NoteOut(NoteSummaryOut):
    markdown: str
    frontmatter: dict[str, Any]
    frontmatter_error: str | None
    links: list[LinkOut]
    # Whether the note is searchable by meaning yet: "indexed" (its chunks are embedded
    # with the configured model), "pending" (waiting in the outbox, or embedded with an
    # older model) or "off" (embeddings are off, or the backend has no vector index).
    vector_status: Literal["indexed", "pending", "off"]

    @classmethod
    def of_note(
        cls, note: Note, vector_status: Literal["indexed", "pending", "off"] = "off"
    ) -> NoteOut:
        parsed = md.parse_note(note.path, note.markdown)
        return cls(
            **NoteSummaryOut.of(note.summary()).model_dump(),
            vector_status=vector_status,
            markdown=note.markdown,
            frontmatter=parsed.frontmatter,
            frontmatter_error=parsed.frontmatter_error,
            links=[
                LinkOut(target=x.target, heading=x.heading, alias=x.alias, embed=x.embed)
                for x in parsed.links
            ],
        )


class WriteOut(BaseModel):
    note: NoteSummaryOut
    changed: bool
    message: str


class NoteList(BaseModel):
    notes: list[NoteSummaryOut]
    next_cursor: str | None


# Request bodies are validated strictly: "yes" is not a boolean and "5" is not a number,
# so a client's type mistake is a 400 (invalid_input) rather than a guess.
STRICT_IN = ConfigDict(extra="forbid", strict=True)

# The largest count a limit may be set to (fits every storage integer, and JSON numbers).
MAX_LIMIT_VALUE = 2**53


def _unicode_text(value: str) -> str:
    """JSON can spell an unpaired surrogate ("\\ud800"); it is not text and cannot be stored."""
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise ValueError("contains an unpaired surrogate (not valid Unicode text)")
    return value


UnicodeText = Annotated[str, AfterValidator(_unicode_text)]


class PutNoteIn(BaseModel):
    model_config = STRICT_IN
    markdown: UnicodeText


class AppendIn(BaseModel):
    model_config = STRICT_IN
    text: UnicodeText = Field(min_length=1)


class MoveIn(BaseModel):
    model_config = STRICT_IN
    to: str = Field(min_length=1)


class VersionOut(BaseModel):
    version: int
    path: str
    size: int
    sha256: str
    created_at: datetime

    @classmethod
    def of(cls, info: VersionInfo) -> VersionOut:
        return cls(
            version=info.version,
            path=info.path,
            size=info.size,
            sha256=info.sha256,
            created_at=iso(info.created_at),
        )


class VersionDetailOut(VersionOut):
    markdown: str


class SearchHitOut(BaseModel):
    id: str
    path: str
    title: str
    tags: list[str]
    # The one score every surface reports (REST, CLI, memory tools, MCP): domain.ranking.
    score: float = Field(
        ge=0.0,
        le=1.0,
        description=(
            "Relevance from 0 to 1, comparable across queries: 0.5 when the note holds each"
            " searched word once at average length, more when it holds them more often, in"
            " its title, in a shorter note, or is recent or linked to; below 1 always."
        ),
    )
    snippet: str
    updated_at: datetime
    chunk: ChunkOut | None = Field(
        default=None,
        description=(
            "Semantic and hybrid searches: the passage that matched best (its heading and"
            " where it starts in the note body, to read around it); null for keyword hits."
        ),
    )

    @classmethod
    def of(cls, hit: SearchHit) -> SearchHitOut:
        best = hit.chunks[0] if hit.chunks else None
        return cls(
            id=hit.note_id,
            path=hit.path,
            title=hit.title,
            tags=list(hit.tags),
            score=hit.score,
            snippet=hit.snippet,
            updated_at=iso(hit.updated_at),
            chunk=ChunkOut(heading=best.heading, offset=best.offset, length=best.length)
            if best
            else None,
        )


class ChunkOut(BaseModel):
    heading: str
    offset: int
    length: int


class SearchOut(BaseModel):
    query: str
    # The mode that ran, and why it is not the one asked for (vectors off, not indexed).
    mode: Literal["keyword", "semantic", "hybrid"] = "keyword"
    fallback: str | None = None
    results: list[SearchHitOut]


class ImportOut(BaseModel):
    created: int
    updated: int
    unchanged: int
    skipped: int
    skipped_files: list[str]
    # Attachments and .obsidian/ configuration files (ADR 0043).
    files_created: int = 0
    files_updated: int = 0
    files_unchanged: int = 0
    config_files: int = 0  # of the files, those under .obsidian/


# A streamed import (POST /v1/import with Accept: application/x-ndjson) answers one of
# these per line: progress events, then exactly one result or error event, last.
class ImportProgressEvent(BaseModel):
    phase: Literal["parsing", "committing", "indexing"]
    done: int
    total: int


class ImportResultEvent(BaseModel):
    result: ImportOut


class ErrorDetail(BaseModel):
    type: str
    code: str
    message: str


class ImportErrorEvent(BaseModel):
    """The error body an unstreamed import answers (its ``type`` says the kind of error;
    the status is the stream's, 200)."""

    error: ErrorDetail


# Gateway settings of a key (ranges mirror services.accounts.check_key_settings).
RecallNotes = Annotated[
    int, Field(ge=1, le=20, description="Notes recall puts ahead of the last message.")
]
RecallTokens = Annotated[
    int, Field(ge=100, le=32_000, description="Token budget of the recall block.")
]
CacheTtl = Annotated[
    int, Field(ge=1, le=7 * 24 * 3600, description="Seconds a cached answer is kept.")
]
SpendCap = Annotated[
    int,
    Field(ge=0, le=MAX_LIMIT_VALUE, description="Most the key may spend, micro-USD (null: none)."),
]


class TogglesIn(BaseModel):
    """PATCH /v1/keys/{id}: what is sent changes; ``spend_cap_micros: null`` removes the cap."""

    model_config = STRICT_IN
    recall: bool | None = None
    tools: bool | None = None
    mcp: bool | None = None
    recall_notes: RecallNotes | None = None
    recall_tokens: RecallTokens | None = None
    spend_cap_micros: SpendCap | None = None
    memory_tokens: RecallTokens | None = None
    # "default" goes back to the vault's default mode; leaving it out keeps the key's.
    recall_mode: Literal["keyword", "semantic", "hybrid", "default"] | None = None
    cache: bool | None = None  # the response cache on or off (leaving it out keeps it)
    cache_ttl_seconds: CacheTtl | None = None


class KeyCreateIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, str_strip_whitespace=True)
    name: str = Field(min_length=1, max_length=100)
    recall: bool = False
    tools: bool = False
    mcp: bool = False
    admin: bool = Field(
        default=False,
        description="Acts with its owner's role in management (keys, members, billing);"
        " off: the vault only.",
    )
    vault: bool = Field(default=True, description="Bound to the organisation's vault.")
    recall_notes: RecallNotes = 5
    recall_tokens: RecallTokens = 2000
    spend_cap_micros: SpendCap | None = None
    memory_tokens: RecallTokens = Field(
        default=1500, description="The memory profile block's token budget (x-mem-id)."
    )
    recall_mode: Literal["keyword", "semantic", "hybrid"] | None = Field(
        default=None, description="Recall's search mode; null: the vault's default."
    )
    cache: bool = Field(
        default=False, description="Answer repeated requests from the response cache."
    )
    cache_ttl_seconds: CacheTtl = 3600


class KeyOut(BaseModel):
    id: str
    name: str
    prefix: str
    recall: bool
    tools: bool
    mcp: bool
    admin: bool
    created_at: datetime
    revoked_at: datetime | None
    recall_notes: int
    recall_tokens: int
    spend_cap_micros: int | None
    memory_tokens: int = Field(description="The memory profile block's token budget.")
    recall_mode: str | None = Field(
        default=None, description="Recall's search mode; null: the vault's default."
    )
    cache: bool = Field(default=False, description="Whether the response cache is on.")
    cache_ttl_seconds: int | None = Field(
        default=None, description="Seconds a cached answer is kept (null: cache off)."
    )
    spent_micros: int = Field(description="What the key has spent (settled), micro-USD.")
    member_id: str | None = Field(description="The member the key belongs to.")
    owner: str | None = Field(description="Its owner's email address, or name without one.")
    vault: bool = Field(description="Bound to the organisation's vault.")

    @classmethod
    def of(cls, key: ApiKey, spent_micros: int = 0, owner: str | None = None) -> KeyOut:
        return cls(
            id=key.id,
            name=key.name,
            prefix=key.prefix,
            recall=key.toggles.recall,
            tools=key.toggles.tools,
            mcp=key.toggles.mcp,
            admin=key.admin,
            created_at=iso(key.created_at),
            revoked_at=iso(key.revoked_at) if key.revoked_at is not None else None,
            recall_notes=key.recall_notes,
            recall_tokens=key.recall_tokens,
            spend_cap_micros=key.spend_cap_micros,
            memory_tokens=key.memory_tokens,
            recall_mode=key.recall_mode,
            cache=key.cache_ttl_seconds is not None,
            cache_ttl_seconds=key.cache_ttl_seconds,
            spent_micros=spent_micros,
            member_id=key.member_id,
            owner=owner,
            vault=key.vault,
        )


class KeyCreatedOut(KeyOut):
    secret: str = Field(description="The key itself. Shown this once; only a hash is kept.")


# ---------------------------------------------------------------------- balance and usage
class BalanceIn(BaseModel):
    """Exactly one of: ``set_micros`` (null makes the account unmetered) or ``add_micros``
    (negative for corrections)."""

    model_config = STRICT_IN
    set_micros: int | None = Field(default=None, ge=-MAX_LIMIT_VALUE, le=MAX_LIMIT_VALUE)
    add_micros: int | None = Field(default=None, ge=-MAX_LIMIT_VALUE, le=MAX_LIMIT_VALUE)


class BalanceOut(BaseModel):
    balance_micros: int | None = Field(description="null: unmetered (nothing is refused).")
    balance_usd: str | None
    held_micros: int = Field(description="Held by requests in flight (already deducted).")

    @classmethod
    def of(cls, balance: Balance) -> BalanceOut:
        micros = balance.balance_micros
        return cls(
            balance_micros=micros,
            balance_usd=usd(micros) if micros is not None else None,
            held_micros=balance.held_micros,
        )


class UsageDayOut(BaseModel):
    day: str | None = None
    key_id: str | None = None
    requests: int
    input_tokens: int
    output_tokens: int
    rounds: int
    memory_calls: dict[str, int]
    recalled_notes: int
    injected_tokens: int
    injected_tokens_est: dict[str, int] = Field(
        description="memvault's own count of what it added, by source: the vault recall"
        " block and the memory profile blocks (an estimate, not a charge)."
    )
    memory_search_embed: dict[str, int] = Field(
        description="The fact-search embedding calls of memory profiles: calls and"
        " cost_micros (included in cost_micros)."
    )
    cache: dict[str, int] = Field(
        default_factory=dict,
        description="Requests answered from the response cache (hits) and the upstream"
        " tokens they saved (saved_tokens); a hit costs nothing.",
    )
    embeddings: dict[str, int] = Field(
        default_factory=dict,
        description="Embedding calls (usage records with api_format 'embeddings': notes"
        " indexed, search queries, memory profile facts): calls and cost_micros, both"
        " included in requests and cost_micros.",
    )
    cost_micros: int
    cost_usd: str

    @classmethod
    def of(cls, row: UsageDay) -> UsageDayOut:
        return cls(
            day=row.day or None,
            key_id=row.key_id or None,
            requests=row.requests,
            input_tokens=row.input_tokens,
            output_tokens=row.output_tokens,
            rounds=row.rounds,
            memory_calls=dict(row.memory_calls),
            recalled_notes=row.recalled_notes,
            injected_tokens=row.injected_tokens,
            injected_tokens_est={
                "recall": row.injected_recall_tokens,
                "profile": row.injected_profile_tokens,
            },
            memory_search_embed={
                "calls": row.search_embed_calls,
                "cost_micros": row.search_embed_micros,
            },
            cache={"hits": row.cache_hits, "saved_tokens": row.cache_saved_tokens},
            embeddings={"calls": row.embedding_calls, "cost_micros": row.embedding_micros},
            cost_micros=row.cost_micros,
            cost_usd=usd(row.cost_micros),
        )


class UsageOut(BaseModel):
    from_: str = Field(serialization_alias="from")
    to: str
    days: list[UsageDayOut]
    totals: UsageDayOut
    tracked_since: str = Field(
        description="The first UTC day whose usage records (and their attribution) are"
        " still kept; older ones are past the retention."
    )

    @classmethod
    def of(cls, report: UsageReport) -> UsageOut:
        return cls(
            from_=report.from_day,
            to=report.to_day,
            tracked_since=report.tracked_since,
            days=[UsageDayOut.of(d) for d in report.days],
            totals=UsageDayOut.of(report.totals),
        )


class LimitsIn(BaseModel):
    model_config = STRICT_IN
    max_notes: int | None = Field(default=None, ge=1, le=MAX_LIMIT_VALUE)
    max_bytes: int | None = Field(default=None, ge=1, le=MAX_LIMIT_VALUE)
    max_files: int | None = Field(default=None, ge=1, le=MAX_LIMIT_VALUE)
    max_file_bytes: int | None = Field(default=None, ge=1, le=MAX_LIMIT_VALUE)


class AccountOut(BaseModel):
    id: str
    name: str
    max_notes: int
    max_bytes: int
    max_files: int
    max_file_bytes: int
    note_count: int
    total_bytes: int

    @classmethod
    def of(cls, account: Account) -> AccountOut:
        return cls(
            id=account.id,
            name=account.name,
            max_notes=account.limits.max_notes,
            max_bytes=account.limits.max_bytes,
            max_files=account.limits.max_files,
            max_file_bytes=account.limits.max_file_bytes,
            note_count=account.note_count,
            total_bytes=account.total_bytes,
        )


# ---------------------------------------------------------------------- export
class WindowsUnsafeOut(BaseModel):
    path: str
    reason: str = Field(description="Why Windows cannot make a file of that name.")


class WindowsUnsafeList(BaseModel):
    """GET /v1/export/windows-unsafe: the notes an export holds under names Windows cannot
    extract (device names, ``<>:"|?*``, a trailing dot or space, over 255 characters).
    They are exported as they are; move them to extract the archive there whole."""

    count: int
    notes: list[WindowsUnsafeOut]
