"""Value objects shared by services, ports and adapters. Plain data, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

MiB = 1024 * 1024

# A note's markdown may be at most this many bytes (UTF-8). 1 MB, counted in binary units.
MAX_NOTE_BYTES = 1 * MiB
# How many versions of one note are kept; older ones are dropped on write.
VERSIONS_KEPT = 50


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-account vault capacity. Defaults are the product's; each account may differ."""

    max_notes: int = 25_000
    max_bytes: int = 512 * MiB


@dataclass(frozen=True, slots=True)
class Account:
    id: str
    name: str
    created_at: float
    limits: Limits = field(default_factory=Limits)
    note_count: int = 0
    total_bytes: int = 0


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

    @property
    def active(self) -> bool:
        return self.revoked_at is None


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

    @property
    def size(self) -> int:
        return len(self.markdown.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class MoveNote:
    """Move a live note (and its history) to a new path; the target must be free."""

    path: str
    new_path: str
    expected_version: int | None = None


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


@dataclass(frozen=True, slots=True)
class SearchHit:
    note_id: str
    path: str
    title: str
    tags: tuple[str, ...]
    score: float
    snippet: str
    updated_at: float
