"""Value objects shared by services, ports and adapters. Plain data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

MiB = 1024 * 1024

# A note's markdown may be at most this many bytes (UTF-8). 1 MB, counted in binary units.
MAX_NOTE_BYTES = 1 * MiB
# How many versions of one note are kept; older ones are dropped on write.
VERSIONS_KEPT = 50


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-account vault capacity. Defaults are the product's; each account may differ."""

    max_notes: int = 25_000
    max_bytes: int = 512 * MiB  # notes and files (attachments, .obsidian/) together
    max_files: int = 25_000  # attachments and configuration files (domain.attachments)
    max_file_bytes: int = 100 * MiB  # one attachment or configuration file


@dataclass(frozen=True, slots=True)
class SearchDefaults:
    """An organisation's defaults for search and recall (ADR 0050): used where a request
    (or, for recall, the key) names none; None leaves the deployment's (MEMVAULT_SEARCH_MODE;
    the mode's own cut-off, domain.fusion.DEFAULT_MIN_SCORE for semantic and hybrid)."""

    mode: str | None = None  # "keyword" | "semantic" | "hybrid"
    min_score: float | None = None  # 0-1, for every mode


@dataclass(frozen=True, slots=True)
class Account:
    id: str
    name: str
    created_at: float
    limits: Limits = field(default_factory=Limits)
    note_count: int = 0
    total_bytes: int = 0
    # Counts the commits that changed the vault's notes (writes, moves, deletes, imports,
    # and an import rolled back). What was recalled for a message holds while it stays.
    revision: int = 0
    search: SearchDefaults = field(default_factory=SearchDefaults)


@dataclass(frozen=True, slots=True)
class Toggles:
    """What a key gets on top of the vault REST API. Off unless turned on."""

    recall: bool = False
    tools: bool = False
    mcp: bool = False


@dataclass(frozen=True, slots=True)
class ApiKey:
    id: str
    account_id: str
    name: str
    prefix: str  # the first characters of the secret, safe to show in listings
    toggles: Toggles
    admin: bool
    created_at: float
    revoked_at: float | None = None
    # Gateway settings, per key (see KeySettings for their ranges).
    recall_notes: int = 5
    recall_tokens: int = 2000
    spend_cap_micros: int | None = None  # None: no cap
    memory_tokens: int = 1500  # the memory profile block's budget (x-mem-id)
    recall_mode: str | None = None  # recall's search mode; None: the vault's default
    cache_ttl_seconds: int | None = None  # the response cache: None off, else its TTL
    # The member the key belongs to (None only for a key stored before members existed,
    # until the upgrade gives it to its organisation's first owner).
    member_id: str | None = None
    # False: the key is bound to no vault (memory that is on says so; REST and MCP refuse).
    vault: bool = True
    # False once its owner is disabled or removed: the key stops working at once.
    owner_active: bool = True

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    @property
    def settings(self) -> KeySettings:
        return KeySettings(
            recall_notes=self.recall_notes,
            recall_tokens=self.recall_tokens,
            spend_cap_micros=self.spend_cap_micros,
            memory_tokens=self.memory_tokens,
            recall_mode=self.recall_mode,
            cache_ttl_seconds=self.cache_ttl_seconds,
        )


@dataclass(frozen=True, slots=True)
class KeySettings:
    """A key's gateway settings as one value (what stores write and services validate)."""

    recall_notes: int = 5  # how many notes recall puts ahead of the last message, 1..20
    recall_tokens: int = 2000  # the recall block's token budget, 100..32000
    spend_cap_micros: int | None = None  # the most the key may spend, in micro-USD
    # The memory profile block's token budget (guardrails are never counted), 100..32000.
    memory_tokens: int = 1500
    # Recall's search mode for this key: keyword, semantic, hybrid, or None for the vault's
    # default (MEMVAULT_SEARCH_MODE; hybrid when vectors are on).
    recall_mode: str | None = None
    # The gateway's response cache for this key (domain.response_cache): None, off (the
    # default; ``x-cache: on`` still asks per request, with the default TTL); else on,
    # each answer kept this many seconds, 1..604800.
    cache_ttl_seconds: int | None = None


@dataclass(frozen=True, slots=True)
class LinkRef:
    """One distinct outgoing wikilink target of a note, as stored for backlink queries."""

    target_key: str  # casefolded target without .md (see domain.paths.link_key)
    has_folder: bool  # "folder/Note" resolves by exact path only


@dataclass(frozen=True, slots=True)
class NoteSummary:
    """What listings return: everything but the markdown."""

    id: str
    path: str
    title: str
    tags: tuple[str, ...]
    version: int
    size: int
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class Note:
    id: str
    path: str
    title: str
    tags: tuple[str, ...]
    version: int
    size: int
    created_at: float
    updated_at: float
    markdown: str
    sha256: str
    deleted_at: float | None = None

    def summary(self) -> NoteSummary:
        return NoteSummary(
            id=self.id,
            path=self.path,
            title=self.title,
            tags=self.tags,
            version=self.version,
            size=self.size,
            created_at=self.created_at,
            updated_at=self.updated_at,
        )


@dataclass(frozen=True, slots=True)
class VersionInfo:
    version: int
    path: str  # where the note lived when this version was written
    size: int
    sha256: str
    created_at: float


@dataclass(frozen=True, slots=True)
class NoteVersion:
    info: VersionInfo
    markdown: str


# --- Changes: the one write primitive. Every write (put, append, move, delete, restore,
# import) becomes a list of changes that storage applies all-or-nothing.


@dataclass(frozen=True, slots=True)
class PutNote:
    """Create, update or revive the note at ``path``.

    ``expected_version``: None means "whatever is there"; 0 means "must not exist yet";
    n means "the live note must be at version n" (If-Match).
    """

    path: str
    markdown: str
    title: str
    tags: tuple[str, ...]
    links: tuple[LinkRef, ...]
    sha256: str
    expected_version: int | None = None
    # When the content last changed, if not at the commit (an imported file's own
    # modification time); the version written is still dated at the commit.
    updated_at: float | None = None

    @property
    def size(self) -> int:
        return len(self.markdown.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class MoveNote:
    """Move a live note (and its history) to a new path; the target must be free."""

    path: str
    new_path: str
    expected_version: int | None = None
    # The note's links keyed from its new folder, when that changes their keys (a
    # relative link, ``[[./b]]``, dangling or not): stored with the move. None: as stored.
    links: tuple[LinkRef, ...] | None = None


@dataclass(frozen=True, slots=True)
class DeleteNote:
    """Soft-delete: the note leaves listings and search, its history stays readable."""

    path: str
    expected_version: int | None = None


NoteChange = PutNote | MoveNote | DeleteNote


@dataclass(frozen=True, slots=True)
class BacklinkSource:
    """A note that links to some target key (raw material for backlink resolution)."""

    source_path: str
    target_key: str
    has_folder: bool


@dataclass(frozen=True, slots=True)
class SearchDoc:
    """What the search index holds for one live note."""

    note_id: str
    path: str
    title: str
    tags: tuple[str, ...]
    body: str  # already cut to the search body limit
    updated_at: float
    inbound_links: int


@dataclass(frozen=True, slots=True)
class SearchQuery:
    text: str
    folder: str = ""  # normalised folder prefix ("" = whole vault, else ends with "/")
    tag: str | None = None
    limit: int = 10
    # Highlighted snippets cost engine work; recall reads the notes themselves instead.
    snippets: bool = True
    # Leave out terms found in a large share of the account's notes (domain.query,
    # without_common_terms): recall's whole-message searches.
    skip_common_terms: bool = False


@dataclass(frozen=True, slots=True)
class MatchedChunk:
    """A passage of a note that a semantic or hybrid search matched (ports.VectorHit)."""

    heading: str  # the nearest heading above it ("" before the first heading)
    offset: int  # character offset in the note's markdown (memory_read's offset)
    length: int
    text: str


@dataclass(frozen=True, slots=True)
class SearchHit:
    note_id: str
    path: str
    title: str
    tags: tuple[str, ...]
    score: float
    snippet: str
    updated_at: float
    # Semantic and hybrid searches: the note's matched chunks, best first (services.hybrid).
    chunks: tuple[MatchedChunk, ...] = ()


# --- Money and usage (the gateway's ledger). Money is integer micro-USD ("micros").


@dataclass(frozen=True, slots=True)
class Balance:
    account_id: str
    balance_micros: int | None  # None: unmetered (nothing is refused for balance)
    held_micros: int  # reserved by requests in flight (already deducted from the balance)


@dataclass(frozen=True, slots=True)
class Reservation:
    """Money held for one gateway request between dispatch and settlement."""

    id: str
    account_id: str
    key_id: str
    amount_micros: int
    created_at: float
    expires_at: float  # past this the sweep settles it at the held amount


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One gateway request, as billed. Never note content or prompt text."""

    id: str
    account_id: str
    key_id: str
    model: str
    api_format: str  # "openai" | "anthropic"
    input_tokens: int  # as reported by upstream, summed over rounds
    output_tokens: int
    rounds: int
    memory_calls: dict[str, int]  # tool name -> calls
    recalled_notes: int
    injected_tokens: int  # an estimate of what recall and tool results added
    cost_micros: int
    status: int  # the HTTP status the client got
    outcome: str  # short code: "ok", "upstream_error", "client_disconnected"...
    started_at: float  # epoch seconds
    duration_ms: int
    overhead_ms: int
    # The tokens are memvault's count, not upstream's: a stream that ended before its
    # usage did (the client hung up, the provider broke off) is billed the prompt as
    # counted when the money was held and the output memvault had received. Records
    # stored before this existed read as False.
    estimated: bool = False
    # Attribution (memory profiles): of injected_tokens, what the vault recall block and
    # the memory profile blocks added, and the request's fact-search embedding call
    # (``memory_search_embed``: calls and cost, included in cost_micros). Records stored
    # before these existed read as 0.
    injected_recall_tokens: int = 0
    injected_profile_tokens: int = 0
    search_embed_calls: int = 0
    search_embed_micros: int = 0
    # A request answered from the response cache (outcome "cache_hit", nothing sent
    # upstream, cost 0): what the cached answer cost upstream in tokens, saved.
    cache_hits: int = 0
    cache_saved_tokens: int = 0

    @property
    def attribution(self) -> dict[str, int]:
        """The attribution fields as one mapping (how the ledgers store them)."""
        return {name: getattr(self, name) for name in ATTRIBUTION_FIELDS}

    @property
    def day(self) -> str:
        """The UTC day the request started, YYYY-MM-DD (reports group by it)."""
        return datetime.fromtimestamp(self.started_at, tz=UTC).strftime("%Y-%m-%d")


@dataclass(frozen=True, slots=True)
class UsageDay:
    """Usage of one key on one UTC day, summed (a usage report row, or the totals)."""

    day: str  # YYYY-MM-DD ("" for totals)
    key_id: str  # "" for totals
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    rounds: int = 0
    memory_calls: dict[str, int] = field(default_factory=dict)
    recalled_notes: int = 0
    injected_tokens: int = 0
    cost_micros: int = 0
    injected_recall_tokens: int = 0
    injected_profile_tokens: int = 0
    search_embed_calls: int = 0
    search_embed_micros: int = 0
    cache_hits: int = 0
    cache_saved_tokens: int = 0
    # Usage records of embedding calls (api_format "embeddings": indexing notes, search
    # queries, memory profile facts), counted within requests and cost_micros.
    embedding_calls: int = 0
    embedding_micros: int = 0


ATTRIBUTION_FIELDS = (
    "injected_recall_tokens",
    "injected_profile_tokens",
    "search_embed_calls",
    "search_embed_micros",
    "cache_hits",
    "cache_saved_tokens",
)


@dataclass(frozen=True, slots=True)
class UsageReport:
    from_day: str
    to_day: str
    days: list[UsageDay]
    totals: UsageDay
    tracked_since: str = ""  # the first UTC day whose records are still kept
