"""Ports: what the services need from the outside world, as typing.Protocols.

Two families of adapters implement them: ``adapters.sqlite`` (embedded, the default)
and ``adapters.aws`` (DynamoDB + S3 + OpenSearch). The contract test suite runs the
same behaviour tests against each, so anything a service relies on is stated here.

Rules every adapter keeps:
- every method takes ``account_id`` and touches nothing outside that account
  (tenant isolation is a filter in every query, never a ranking hint);
- ``NoteStore.commit`` is all-or-nothing: on any exception nothing is visible;
- adapters raise only ``memvault.errors`` types for conditions a user can cause
  (Conflict, NotFound, QuotaExceeded, ServiceUnavailable).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Protocol

from memvault.domain.attachments import (
    ATTACHMENTS_ONLY,
    FileChange,
    FileKind,
    FileUsage,
    StoredFile,
)
from memvault.domain.identity import AuditEvent, Invitation, Member, Role, Session
from memvault.domain.jobs import Job
from memvault.domain.models import (
    Account,
    ApiKey,
    BacklinkSource,
    Balance,
    KeySettings,
    Limits,
    LinkRef,
    Note,
    NoteChange,
    NoteSummary,
    NoteVersion,
    Reservation,
    SearchDefaults,
    SearchDoc,
    SearchHit,
    SearchQuery,
    Toggles,
    UsageRecord,
    VersionInfo,
)
from memvault.domain.profiles import MemoryProfile, ProfileItem, ProfilePatch
from memvault.domain.response_cache import CachedAnswer
from memvault.domain.response_chains import ChainLink


@dataclass(frozen=True, slots=True)
class Page:
    items: list[NoteSummary]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class NoteKey:
    """The identity and content hash of one live note (import planning)."""

    path: str
    version: int
    sha256: str
    size: int


@dataclass(frozen=True, slots=True)
class PriorState:
    """The live note a change replaced, moved or deleted, as it was before the commit."""

    path: str
    version: int
    links: tuple[LinkRef, ...]


@dataclass(frozen=True, slots=True)
class CommitResult:
    """Per change: the note after the commit (None for a delete) and the live note it
    touched before (None when the change created one). Callers need no extra reads."""

    notes: list[Note | None]
    previous: list[PriorState | None]


# ---------------------------------------------------------------------- storage, by aggregate
# One narrow port per concern; a service depends on the ones it calls. An adapter class
# may implement several (the SQLite and DynamoDB stores implement all of them on one
# object, sharing one database or table). New aggregates (members, sessions, memory
# profiles) get a port of their own here rather than widening these (see "identity").
class AccountStore(Protocol):
    """Accounts: their limits and usage counters."""

    def create_account(self, account: Account) -> None: ...
    def get_account(self, account_id: str) -> Account | None: ...
    def set_limits(self, account_id: str, limits: Limits) -> Account: ...


class KeyStore(Protocol):
    """An account's API keys (stored by the hash of their secret)."""

    def put_key(self, key: ApiKey, key_hash: str) -> None: ...
    def key_by_hash(self, key_hash: str) -> ApiKey | None: ...
    def get_key(self, account_id: str, key_id: str) -> ApiKey | None: ...
    def list_keys(self, account_id: str) -> list[ApiKey]: ...
    def update_key(
        self,
        account_id: str,
        key_id: str,
        *,
        toggles: Toggles | None,
        revoked_at: float | None,
        settings: KeySettings | None = None,
    ) -> ApiKey:
        """Change what is not None; a revoked key stays revoked (first revocation wins)."""
        ...


class NoteStore(Protocol):
    """Live notes: reads, listings and the one write primitive, ``commit``.

    Reads look a (normalised) path up by its path key, so under any case, and return
    the note under its stored spelling: paths differing only in case name one note.
    """

    def get_note(self, account_id: str, path: str, *, include_deleted: bool = False) -> Note | None:
        """The live note at ``path``'s key; with ``include_deleted``, when there is none,
        the note deleted last under that key."""
        ...

    def get_notes(self, account_id: str, note_paths: Collection[str]) -> dict[str, Note]:
        """stored path -> note for the live notes at these paths' keys, missing ones left
        out. In one round trip where the backend allows it (recall reads the notes a
        search found this way, before every gateway request it serves)."""
        ...

    def live_paths(self, account_id: str, path_keys: Collection[str]) -> dict[str, str]:
        """path_key -> path of the live notes among ``path_keys`` (missing keys left out)."""
        ...

    def get_summaries(self, account_id: str, note_paths: Collection[str]) -> list[NoteSummary]:
        """Summaries of the live notes at these paths' keys, in path-key order."""
        ...

    def list_notes(
        self, account_id: str, *, folder: str, tag: str | None, cursor: str | None, limit: int
    ) -> Page:
        """Live notes under ``folder`` (normalised prefix), ordered by path.

        ``tag`` matches case-insensitively, nested tags included (``a`` matches ``a/b``).
        """
        ...

    def recent_notes(self, account_id: str, *, limit: int) -> list[NoteSummary]: ...
    def tag_counts(self, account_id: str) -> dict[str, int]: ...
    def iter_notes(self, account_id: str) -> Iterator[Note]:
        """Every live note with its markdown, in path order (export, reindex)."""
        ...

    def note_keys(self, account_id: str) -> dict[str, NoteKey]:
        """path_key -> NoteKey for every live note (import planning, link counts)."""
        ...

    def commit(self, account_id: str, changes: Sequence[NoteChange], *, now: float) -> CommitResult:
        """Apply every change or none, by the rules of ``domain.write_plan``. Raises
        Conflict on a version mismatch or an occupied move target, NotFound when a
        move/delete names no live note, QuotaExceeded when the vault would grow past its
        account's limits."""
        ...


class VersionStore(Protocol):
    """A note's kept versions (the newest ``VERSIONS_KEPT``), and forgetting them. A path
    names the history of the live note at its path key, else of the note deleted last
    under that key (as NoteStore's reads, under any case)."""

    def list_versions(self, account_id: str, path: str) -> list[VersionInfo]:
        """Newest first. Works for soft-deleted notes until they are purged."""
        ...

    def get_version(self, account_id: str, path: str, version: int) -> NoteVersion | None: ...
    def purge_note(self, account_id: str, path: str) -> bool:
        """Forget the soft-deleted notes under ``path``'s key and their history. False
        when there is none."""
        ...


class LinkStore(Protocol):
    """Raw link material; the resolution rules live in domain.links."""

    def links_to(self, account_id: str, target_keys: Collection[str]) -> list[BacklinkSource]: ...
    def paths_by_name(self, account_id: str, name_keys: Collection[str]) -> dict[str, list[str]]:
        """name_key -> paths of live notes with that file name."""
        ...

    def all_links(self, account_id: str) -> list[BacklinkSource]: ...


class SearchOutbox(Protocol):
    """Notes whose indexing failed, to retry."""

    def queue_reindex(self, account_id: str, note_paths: Collection[str]) -> None: ...
    def queued_reindex(self, account_id: str, limit: int = 1000) -> list[str]: ...
    def is_queued_reindex(self, account_id: str, path: str) -> bool:
        """Whether ``path`` waits in the account's outbox: one key lookup, whatever the
        outbox's length (a note's vector status asks on every read)."""
        ...

    def unqueue_reindex(self, account_id: str, note_paths: Collection[str]) -> None: ...
    def accounts_with_queued_reindex(self) -> list[str]: ...
    def oldest_queued_at(self) -> float | None:
        """When (epoch seconds) the longest-waiting outbox of any account got its first
        queued note since it was last empty; None when every outbox is empty. What the
        queue-age metric reports."""
        ...


class RetentionSweep(Protocol):
    """The scheduled sweep's storage side (services.retention)."""

    def purge_deleted_before(self, cutoff: float, limit: int = 500) -> int:
        """Forget up to ``limit`` notes, of every account, deleted before ``cutoff``, with
        their history (oldest first where the store can order them). Returns how many."""
        ...


# ---------------------------------------------------------------------- identity
# Organisations (the accounts above), their members, invitations, sessions and audit log.
# Sign-in addresses, invitation tokens and session secrets are looked up across every
# organisation (a person signs in before anyone knows their organisation); everything
# else is confined to one ``account_id`` like the vault.
class OrganisationStore(Protocol):
    """Organisations as a directory: the operator's list, and renaming one."""

    def list_organisations(self) -> list[Account]:
        """Every organisation, oldest first."""
        ...

    def rename_organisation(self, account_id: str, name: str) -> Account:
        """Raises NotFound (account_not_found)."""
        ...

    def list_organisation(self, account_id: str) -> None:
        """Make sure the directory lists this existing organisation (idempotent; the
        upgrade of an account made before the directory existed)."""
        ...

    def set_search_defaults(self, account_id: str, defaults: SearchDefaults) -> Account:
        """Store the organisation's default search mode and min_score (None fields: the
        deployment's). Raises NotFound (account_not_found)."""
        ...


class MemberStore(Protocol):
    """An organisation's members, their sign-in addresses and password hashes.

    Every organisation keeps at least one active owner: a change or removal that would
    leave none raises Conflict(last_owner), decided atomically with the write.
    """

    def create_member(self, member: Member, *, password_hash: str | None = None) -> None:
        """Raises Conflict(email_taken) when a member of any organisation has the address
        (compared folded), Conflict(member_exists) when the id is taken."""
        ...

    def get_member(self, account_id: str, member_id: str) -> Member | None: ...
    def member_by_email(self, email: str) -> Member | None:
        """The member, of whichever organisation, whose address folds to ``email``'s."""
        ...

    def list_members(self, account_id: str) -> list[Member]:
        """Oldest first."""
        ...

    def update_member(
        self,
        account_id: str,
        member_id: str,
        *,
        role: Role | None = None,
        disabled_at: float | None = None,
        enable: bool = False,
        name: str | None = None,
        email: str | None = None,
    ) -> Member:
        """Change what is given (``disabled_at`` disables, ``enable`` enables again). A
        disable or enable reaches the member's keys at once (``ApiKey.owner_active``).
        Raises NotFound (member_not_found), Conflict (last_owner, email_taken)."""
        ...

    def remove_member(self, account_id: str, member_id: str) -> Member:
        """Forget the member and free their address. Their keys are left as they are (the
        service revokes them first). Raises NotFound, Conflict(last_owner)."""
        ...

    def password_hash(self, account_id: str, member_id: str) -> str | None: ...
    def set_password_hash(self, account_id: str, member_id: str, password_hash: str) -> None:
        """Raises NotFound (member_not_found)."""
        ...

    def give_keys(self, account_id: str, member_id: str, key_ids: Collection[str]) -> None:
        """Make ``member_id`` the owner of these keys (the upgrade of keys stored before
        members existed)."""
        ...


class InvitationStore(Protocol):
    """Invitations to join an organisation, found by the hash of their token."""

    def put_invitation(self, invitation: Invitation, token_hash: str) -> None: ...
    def invitation_by_token(self, token_hash: str) -> Invitation | None: ...
    def get_invitation(self, account_id: str, invitation_id: str) -> Invitation | None: ...
    def list_invitations(self, account_id: str) -> list[Invitation]:
        """Oldest first, expired ones included until they are swept."""
        ...

    def delete_invitation(self, account_id: str, invitation_id: str) -> bool:
        """False when there was none."""
        ...

    def accept_invitation(
        self, invitation: Invitation, member: Member, *, password_hash: str
    ) -> None:
        """Consume the invitation and create the member, all or nothing. Raises
        Conflict(invitation_used) when it is gone, Conflict(email_taken)."""
        ...

    def expire_invitations(self, now: float, limit: int = 1000) -> int:
        """Forget invitations past their expiry; how many (0 where a TTL does it)."""
        ...


class SessionStore(Protocol):
    """Signed-in sessions, found by the hash of their cookie's secret."""

    def put_session(self, session: Session, secret_hash: str) -> None: ...
    def session_by_hash(self, secret_hash: str) -> Session | None: ...
    def list_sessions(self, account_id: str, member_id: str) -> list[Session]:
        """The member's sessions, oldest first, expired ones included until swept."""
        ...

    def touch_session(self, secret_hash: str, now: float) -> None:
        """Note activity (the idle expiry counts from it); a missing session is ignored."""
        ...

    def delete_session(self, account_id: str, session_id: str) -> bool: ...
    def delete_member_sessions(
        self, account_id: str, member_id: str, *, keep: str | None = None
    ) -> int:
        """End every session of the member but ``keep``; how many ended."""
        ...

    def expire_sessions(self, now: float, limit: int = 1000) -> int:
        """Forget sessions past their absolute expiry (0 where a TTL does it)."""
        ...


class AuditLog(Protocol):
    """Identity events per organisation, kept as long as usage records."""

    def record_event(self, event: AuditEvent, *, expires_at: float) -> None: ...
    def events(
        self, account_id: str, *, limit: int, before: tuple[float, str] | None = None
    ) -> list[AuditEvent]:
        """Newest first; ``before`` (time, id) continues a listing after its last event."""
        ...

    def expire_events(self, now: float, limit: int = 10_000) -> int:
        """Delete events past their retention (0 where a TTL does it)."""
        ...


class MemoryProfileStore(Protocol):
    """Memory profiles (memIDs) and their items, per organisation; a fact's vector is
    stored with its item, so deleting a memory removes everything of it in one place.
    Every change to a memory or its items moves its ``revision``."""

    def create_profile(self, profile: MemoryProfile) -> None:
        """Raises Conflict(memory_exists) when its owner has a memory of that slug."""
        ...

    def get_profile(self, account_id: str, memory_id: str) -> MemoryProfile | None: ...
    def profiles_by_slug(self, account_id: str, slug: str) -> list[MemoryProfile]:
        """Every member's memory of that slug (management by slug), oldest first."""
        ...

    def owned_profiles(
        self, account_id: str, owner_member_id: str, slugs: Collection[str]
    ) -> dict[str, MemoryProfile]:
        """slug -> the owner's memory of that slug, missing ones left out; in one round
        trip (the gateway asks before every request that sends ``x-mem-id``)."""
        ...

    def list_profiles(
        self, account_id: str, *, owner_member_id: str | None = None
    ) -> list[MemoryProfile]:
        """The organisation's memories (or one owner's), by slug then id."""
        ...

    def update_profile(
        self, account_id: str, memory_id: str, patch: ProfilePatch, *, now: float
    ) -> MemoryProfile:
        """Raises NotFound(memory_not_found)."""
        ...

    def delete_profile(self, account_id: str, memory_id: str) -> bool:
        """Forget the memory, its items and their vectors; False when there was none."""
        ...

    def list_items(self, account_id: str, memory_id: str) -> list[ProfileItem]:
        """The memory's items, oldest first (then by id)."""
        ...

    def count_items(
        self, account_id: str, profiles: Sequence[MemoryProfile], *, now: float
    ) -> dict[str, dict[str, int]]:
        """memory id -> its current items (``domain.profiles.is_current`` under its own
        retention) by type, every type present: for a listing page, in one query."""
        ...

    def get_item(self, account_id: str, memory_id: str, item_id: str) -> ProfileItem | None: ...
    def add_item(
        self, account_id: str, item: ProfileItem, *, max_items: int, now: float
    ) -> MemoryProfile:
        """Add ``item`` to its memory, atomically with the count check. Raises
        NotFound(memory_not_found), QuotaExceeded(memory_item_limit) at ``max_items``."""
        ...

    def update_item(self, account_id: str, item: ProfileItem, *, now: float) -> MemoryProfile:
        """Replace the stored item of that id. Raises NotFound(memory_item_not_found)."""
        ...

    def delete_item(self, account_id: str, memory_id: str, item_id: str, *, now: float) -> bool: ...
    def profiles_with_retention(self, limit: int = 10_000) -> list[MemoryProfile]:
        """Memories of every organisation whose ``retention_days`` is set (the sweep)."""
        ...

    def delete_items_created_before(
        self, account_id: str, memory_id: str, cutoff: float, *, now: float
    ) -> int:
        """Forget the memory's preferences and facts created before ``cutoff`` (never its
        guardrails); how many."""
        ...


class PasswordHasher(Protocol):
    """A slow, salted password hash (argon2id in ``adapters.passwords``)."""

    def hash(self, password: str) -> str: ...
    def verify(self, password_hash: str, password: str) -> bool: ...


# What one service's single store argument must offer: unions of the narrow ports above,
# never a method of their own (Python has no intersection type to say it inline).
class AccountDirectory(AccountStore, KeyStore, MemberStore, Protocol):
    """services.accounts: accounts, their keys, and the members who own the keys."""


class IdentityStorage(
    AccountStore,
    KeyStore,
    MemberStore,
    InvitationStore,
    SessionStore,
    AuditLog,
    OrganisationStore,
    Protocol,
):
    """services.members, services.sessions, services.audit: people and their access."""


class LinkedNotes(NoteStore, LinkStore, Protocol):
    """services.links: link resolution reads live notes and their links."""


class IndexedNotes(NoteStore, LinkStore, SearchOutbox, Protocol):
    """services.indexing: what it reindexes, whose links it follows, and its outbox."""


class VaultStorage(NoteStore, VersionStore, LinkStore, SearchOutbox, AccountStore, Protocol):
    """services.vault, with the link graph and index sync it builds; services.transfer
    reads the account's usage through it."""


class VaultStore(
    AccountStore,
    KeyStore,
    NoteStore,
    VersionStore,
    LinkStore,
    SearchOutbox,
    RetentionSweep,
    OrganisationStore,
    MemberStore,
    InvitationStore,
    SessionStore,
    AuditLog,
    Protocol,
):
    """Every storage port at once: what the composition root (container.py) builds."""


class SearchIndex(Protocol):
    def upsert(self, account_id: str, docs: Sequence[SearchDoc]) -> None: ...
    def delete(self, account_id: str, paths: Collection[str]) -> None: ...
    def set_inbound(self, account_id: str, counts: Mapping[str, int]) -> None:
        """Update the inbound-link count of already indexed notes (missing paths ignored)."""
        ...

    def search(self, account_id: str, query: SearchQuery, *, now: float) -> list[SearchHit]: ...
    def clear(self, account_id: str) -> None: ...


# ---------------------------------------------------------------------- embeddings and vectors
@dataclass(frozen=True, slots=True)
class Embeddings:
    """One embedder call's answer: a unit-length vector per input text, in input order."""

    model: str  # stored with every vector: vectors of two models are never compared
    dimension: int
    vectors: list[list[float]]
    input_tokens: int  # what the provider bills (the local model reports its own count)
    cost_micros: int = 0  # priced by the adapter from the price table (0 for the local model)


class Embedder(Protocol):
    """Turns text into vectors (adapters.embeddings: local static model, OpenAI-compatible
    upstream, Amazon Bedrock). Raises ``ServiceUnavailable`` when the model cannot answer;
    callers treat vectors as derived data and never refuse a write because of it."""

    @property
    def model(self) -> str: ...
    @property
    def dimension(self) -> int: ...
    def embed(self, texts: Sequence[str]) -> Embeddings: ...


@dataclass(frozen=True, slots=True)
class ChunkVector:
    """One embedded chunk of a live note, as the vector index stores it."""

    note_id: str
    path: str
    chunk_index: int
    heading: str  # the nearest heading above the chunk ("" before the first heading)
    offset: int  # character offset of the chunk in the note body
    length: int
    text: str  # the chunk text (what a passage-level recall injects)
    tags: tuple[str, ...]  # the note's tags, so a tag filter runs inside the k-NN query
    # Floats in order: a list, or a float32 ``memoryview`` of a worker's bytes
    # (services.vector_workers), which SQLite stores without a copy to Python floats.
    vector: Sequence[float]
    model: str
    updated_at: float


@dataclass(frozen=True, slots=True)
class PackedChunks:
    """A note's chunks as a bulk drain's workers hand them over (services.vector_workers):
    their spans and one float32 buffer holding their vectors, row after row. The SQLite
    index stores them without a ``ChunkVector`` each (ADR 0067)."""

    note: Note
    model: str
    spans: Sequence[tuple[int, str, int, int]]  # (chunk index, heading, offset, length)
    vectors: bytes  # len(spans) float32 rows of one dimension

    def chunk_vectors(self) -> list[ChunkVector]:
        note, floats = self.note, memoryview(self.vectors).cast("f")
        width = len(floats) // max(1, len(self.spans))
        return [
            ChunkVector(
                note_id=note.id,
                path=note.path,
                chunk_index=index,
                heading=heading,
                offset=offset,
                length=length,
                text=note.markdown[offset : offset + length],
                tags=note.tags,
                vector=floats[n * width : (n + 1) * width],
                model=self.model,
                updated_at=note.updated_at,
            )
            for n, (index, heading, offset, length) in enumerate(self.spans)
        ]


@dataclass(frozen=True, slots=True)
class VectorHit:
    note_id: str
    path: str
    chunk_index: int
    heading: str
    offset: int
    length: int
    text: str
    similarity: float  # cosine similarity, -1..1
    updated_at: float


class VectorIndex(Protocol):
    """Chunk vectors per account (SQLite store on the embedded backend, OpenSearch k-NN on
    AWS). The account filter and the model filter are inside every query."""

    def upsert_chunks(self, account_id: str, path: str, chunks: Sequence[ChunkVector]) -> None:
        """Replace every chunk stored for ``path`` by ``chunks`` (empty: remove the note)."""
        ...

    def upsert_notes(self, account_id: str, notes: Mapping[str, Sequence[ChunkVector]]) -> None:
        """``upsert_chunks`` for several notes at once (path -> its chunks): what an import
        or a re-embed calls, since an index round trip per note (OpenSearch waits for a
        refresh) would take about a second a note."""
        ...

    def upsert_packed(self, account_id: str, notes: Sequence[PackedChunks]) -> None:
        """``upsert_notes`` for notes whose chunks came packed from a bulk drain's workers."""
        ...

    def delete_notes(self, account_id: str, paths: Collection[str]) -> None: ...
    def nearest(
        self,
        account_id: str,
        vector: Sequence[float],
        *,
        model: str,
        limit: int,
        folder: str = "",
        tag: str | None = None,
        texts: bool = True,
    ) -> list[VectorHit]:
        """The ``limit`` chunks nearest ``vector``, best first. ``texts=False``: the hits
        may carry only their path, chunk index, similarity and time (what fusing needs;
        note id, heading and text empty, offset and length 0), and ``with_texts`` fills
        in the ones a caller keeps (ADR 0076)."""
        ...

    def with_texts(self, account_id: str, model: str, hits: Sequence[VectorHit]) -> list[VectorHit]:
        """``hits`` (from ``nearest``, in their order) whole: note id, heading, offset,
        length and text; a hit whose note was rewritten or removed since is left out."""
        ...

    def indexed_models(self, account_id: str) -> dict[str, int]:
        """Chunk count per model name stored for the account (to spot a model change)."""
        ...

    def holds_model(self, account_id: str, model: str) -> bool:
        """Whether the account holds any chunk of ``model``: what a search asks before
        it uses vectors, so it must not count them (a million rows at 100k notes)."""
        ...

    def indexed_paths(self, account_id: str, paths: Collection[str]) -> dict[str, str]:
        """path -> the model its chunks were embedded with, for those of ``paths`` that have
        chunks (paths without any are left out; a note whose chunks mix models, which a
        re-embed in progress can leave, reports any one of them). A note's vector status."""
        ...

    def clear(self, account_id: str) -> None: ...


@dataclass(frozen=True, slots=True)
class BudgetDecision:
    allowed: bool
    remaining: float
    retry_after: float  # seconds until one unit is available (0 when allowed)


class RateLimiter(Protocol):
    def take(
        self, account_id: str, bucket: str, *, now: float, cost: float = 1.0
    ) -> BudgetDecision:
        """Atomically take ``cost`` units from the account's ``bucket`` if available."""
        ...


# ---------------------------------------------------------------------- the gateway's ledger
class Ledger(Protocol):
    """Balances, holds, key spend and usage records. Money is integer micro-USD.

    ``reserve`` and ``settle`` are atomic: two reservations racing for the last of a
    balance (or of a key's cap) never both pass, and settling twice changes nothing.
    """

    def get_balance(self, account_id: str) -> Balance: ...
    def set_balance(self, account_id: str, balance_micros: int | None) -> Balance:
        """None makes the account unmetered."""
        ...

    def add_balance(self, account_id: str, delta_micros: int) -> Balance:
        """Credit (or, negative, correct) a metered balance; an unmetered account becomes
        metered starting from zero. A correction that would take the balance below zero
        changes nothing and raises InvalidInput (``balance_would_go_negative``), checked
        atomically with the write."""
        ...

    def reserve(
        self,
        account_id: str,
        key_id: str,
        amount_micros: int,
        *,
        spend_cap_micros: int | None,
        now: float,
        expires_at: float,
    ) -> Reservation:
        """Hold ``amount_micros``: deducted from a metered balance and added to the key's
        spend. Raises PaymentRequired (insufficient_balance, spend_cap_exceeded)."""
        ...

    def settle(self, reservation: Reservation, cost_micros: int) -> bool:
        """Replace the hold by the actual cost. False when it was already settled."""
        ...

    def release_expired(self, now: float, limit: int = 1000) -> int:
        """Settle holds past their expiry at their held amount; how many were settled."""
        ...

    def key_spent(self, account_id: str, key_id: str) -> int:
        """What the key has spent (settled), in micros."""
        ...

    def key_held(self, account_id: str, key_id: str) -> int: ...
    def record_usage(self, record: UsageRecord, *, expires_at: float) -> None: ...
    def usage_between(
        self, account_id: str, from_day: str, to_day: str, key_id: str | None = None
    ) -> list[UsageRecord]:
        """Records whose UTC day (YYYY-MM-DD) is within [from_day, to_day], by start time."""
        ...

    def expire_usage(self, now: float, limit: int = 10_000) -> int:
        """Delete usage records past their retention; how many were deleted."""
        ...


# ---------------------------------------------------------------------- the response cache
class ResponseCache(Protocol):
    """Gateway answers by request digest, per organisation (domain.response_cache).
    Bounded: an organisation's entries past ``max_bytes`` are evicted oldest first;
    expired entries are never returned."""

    def get(self, account_id: str, digest: str, *, now: float) -> CachedAnswer | None: ...
    def put(
        self, account_id: str, digest: str, answer: CachedAnswer, *, expires_at: float
    ) -> None: ...
    def clear(self, account_id: str) -> int:
        """Erase every entry of the organisation; how many there were."""
        ...


# ---------------------------------------------------------------------- Responses chains
class ResponseChainStore(Protocol):
    """Where a response id a client got continues upstream, per organisation
    (domain.response_chains, ADR 0045). Bounded: past ``max_links`` an organisation's
    oldest links are dropped; expired links are never returned."""

    def get(self, account_id: str, response_id: str, *, now: float) -> ChainLink | None: ...
    def put(self, account_id: str, response_id: str, link: ChainLink, *, expires_at: float) -> None:
        """Store (or replace) the link; ``link.created_at`` orders the oldest first."""
        ...

    def clear(self, account_id: str) -> int:
        """Erase every link of the organisation; how many there were."""
        ...


@dataclass(frozen=True, slots=True)
class FileCommit:
    """What ``AttachmentStore.commit_files`` did: per change, the file before (None when
    there was none) and after (None for a delete)."""

    before: list[StoredFile | None]
    after: list[StoredFile | None]


class AttachmentStore(Protocol):
    """The vault's files that are not notes (attachments and ``.obsidian/``
    configuration, ``domain.attachments``): metadata by path, bytes by content.

    Bytes are staged under their SHA-256 (``stage_blob``) before the commit that
    references them, so a commit never points at missing bytes; a staged blob no commit
    references is an orphan, dropped by ``drop_blobs`` (a failed import's at once, others
    by the sweep after a grace period). ``commit_files`` is all or nothing and checks,
    in its own transaction, the file limit and the byte quota the vault's notes share
    (its bytes count in the account's ``total_bytes``)."""

    def stage_blob(self, account_id: str, sha256: str, data: bytes | IO[bytes]) -> bool:
        """Store the bytes (or a file's, read from where it stands) under their digest;
        True when they were not stored yet."""
        ...

    def read_blob(self, account_id: str, sha256: str) -> bytes: ...
    def open_blob(self, account_id: str, sha256: str) -> IO[bytes]:
        """The bytes as a stream, read as they are sent (close it when done)."""
        ...

    def get_file(self, account_id: str, path: str) -> StoredFile | None:
        """The file at ``path``'s key (case-insensitive, NFC), or None."""
        ...

    def list_files(
        self,
        account_id: str,
        *,
        prefix: str = "",
        kinds: Collection[FileKind] = ATTACHMENTS_ONLY,
        after: str | None = None,
        limit: int = 100,
    ) -> list[StoredFile]:
        """Files whose path starts with ``prefix``, by path, after the path ``after``."""
        ...

    def file_keys(self, account_id: str) -> dict[str, StoredFile]:
        """Every file (both kinds) by path key (``domain.paths.path_key``)."""
        ...

    def file_usage(self, account_id: str) -> FileUsage: ...
    def commit_files(
        self, account_id: str, changes: Sequence[FileChange], *, now: float
    ) -> FileCommit: ...
    def commit_import(
        self,
        account_id: str,
        files: Sequence[FileChange],
        notes: Sequence[NoteChange],
        *,
        now: float,
    ) -> tuple[FileCommit, CommitResult | None]:
        """An import's files and notes (``NoteStore.commit``'s changes, none: None) in
        one all-or-nothing commit, through a crash too: one transaction on SQLite; on
        AWS the file items join the notes' plan (journaled with it when large)."""
        ...

    def files_by_link_key(self, account_id: str, link_keys: Collection[str]) -> dict[str, str]:
        """Attachments whose ``paths.link_key`` is one of these: link key -> path."""
        ...

    def files_by_name(self, account_id: str, name_keys: Collection[str]) -> dict[str, list[str]]:
        """Attachments by file name key (``paths.name_key``): name key -> paths."""
        ...

    def drop_blobs(self, account_id: str, sha256s: Collection[str], *, older_than: float) -> int:
        """Delete those of these blobs no file references and that were staged before
        ``older_than``; returns how many went."""
        ...

    def orphan_blobs(self, account_id: str, *, older_than: float, limit: int = 1000) -> int:
        """Delete the account's stored blobs no file references that were staged before
        ``older_than`` (a crashed import's, an overwritten file's), at most ``limit``;
        returns how many went."""
        ...


# ---------------------------------------------------------------------- import/export jobs
class JobStore(Protocol):
    """Import and export jobs (domain.jobs), per organisation, and each organisation's
    import lease (ADR 0041). ``save`` is conditional on the stored revision being the one
    the job was read at, so two workers never both move a job."""

    def create(self, job: Job) -> None: ...
    def get(self, account_id: str, job_id: str) -> Job | None: ...
    def save(self, job: Job) -> bool:
        """Store ``job`` (its ``revision`` already moved on by one) if the stored one is at
        ``job.revision - 1``; False when another writer moved it first."""
        ...

    def recent(self, account_id: str, limit: int) -> list[Job]:
        """The organisation's jobs, most recently created first."""
        ...

    def delete(self, account_id: str, job_id: str) -> None: ...
    def acquire_lease(self, account_id: str, job_id: str, *, until: float, now: float) -> bool:
        """Take the organisation's import lease for ``job_id`` until ``until``: True when it
        was free, had run out (``until`` of the holder <= ``now``) or is already the job's."""
        ...

    def renew_lease(self, account_id: str, job_id: str, *, until: float) -> bool:
        """Extend the job's lease; False when the job no longer holds it."""
        ...

    def release_lease(self, account_id: str, job_id: str) -> None: ...
    def lease_holder(self, account_id: str, *, now: float) -> str | None:
        """The job holding a live lease, or None."""
        ...

    def signing_key(self) -> bytes:
        """The installation's key for job tokens (made once, kept in storage)."""
        ...

    def unfinished(self) -> list[Job]:
        """Every organisation's queued and running jobs: what a server's start (embedded)
        and the ops schedule (AWS) settle."""
        ...

    def recover_vault(self, account_id: str, *, now: float) -> bool | None:
        """Undo what a killed job's commit left half-written, once that commit's own lock
        has run out (on DynamoDB a journaled bulk commit, ADR 0002; on SQLite a commit is
        one transaction and nothing is ever left). True when something was rolled back,
        False when nothing was left, None while a commit's lock is still live (later)."""
        ...


@dataclass(frozen=True, slots=True)
class BlobLink:
    """A URL a client uses without its key: a presigned S3 request."""

    url: str
    headers: dict[str, str]
    expires_at: float


class FileUploads(Protocol):
    """Where one large file's upload waits for its completion (``services.uploads``):
    ``uploads/<account>/<id>`` in the notes bucket, sent by a presigned PUT (``direct``),
    or a folder under the data dir that memvault's own token URL writes. Beside the
    bytes, the upload's record (``meta``: path, declared size, digest, who). Staged
    uploads are never part of the vault: completing one copies its bytes into the
    content-addressed store through ``AttachmentService``; anything left is swept."""

    @property
    def direct(self) -> bool: ...
    def begin(self, account_id: str, upload_id: str, meta: Mapping[str, object]) -> None: ...
    def meta(self, account_id: str, upload_id: str) -> dict[str, object] | None: ...
    def upload_link(
        self,
        account_id: str,
        upload_id: str,
        *,
        size: int,
        content_type: str,
        expires_at: float,
        now: float,
    ) -> BlobLink | None:
        """A presigned PUT of exactly ``size`` bytes, or None when not ``direct``."""
        ...

    def write(
        self, account_id: str, upload_id: str, chunks: Iterator[bytes], *, max_bytes: int
    ) -> int:
        """Embedded: stage the bytes; TooLarge past ``max_bytes`` (nothing kept)."""
        ...

    def size(self, account_id: str, upload_id: str) -> int | None: ...
    def open(self, account_id: str, upload_id: str) -> IO[bytes] | None:
        """The staged bytes as a stream, None when nothing arrived."""
        ...

    def discard(self, account_id: str, upload_id: str) -> None: ...
    def sweep(self, account_id: str, *, older_than: float) -> int:
        """Drop the account's uploads begun before ``older_than``."""
        ...

    def download_link(
        self,
        account_id: str,
        sha256: str,
        *,
        disposition: str,
        content_type: str,
        seconds: int,
        now: float,
    ) -> BlobLink | None:
        """A presigned GET of a stored file's bytes (content-addressed, ``direct`` only)
        answering with these headers; None when memvault serves the bytes itself."""
        ...


class TransferBlobs(Protocol):
    """Where a job's archive is staged: the uploaded zip of an import, the zip an export
    wrote. ``direct`` is True when clients send and fetch blobs straight to storage
    (presigned S3 links); False when memvault itself receives and serves them (embedded:
    ``write_upload`` and ``open_export`` behind a job's token)."""

    @property
    def direct(self) -> bool: ...
    def upload_link(
        self, account_id: str, job_id: str, *, size: int, expires_at: float, now: float
    ) -> BlobLink | None:
        """A presigned PUT of exactly ``size`` bytes, or None when not ``direct``."""
        ...

    def download_link(
        self, account_id: str, job_id: str, *, filename: str, expires_at: float, now: float
    ) -> BlobLink | None: ...
    def write_upload(
        self, account_id: str, job_id: str, chunks: Iterator[bytes], *, max_bytes: int
    ) -> int:
        """Stage an upload from ``chunks``; raises TooLarge past ``max_bytes`` (nothing is
        kept). Returns the size."""
        ...

    def upload_size(self, account_id: str, job_id: str) -> int | None:
        """The staged upload's size, None when there is none."""
        ...

    def open_upload(self, account_id: str, job_id: str) -> IO[bytes]:
        """The staged upload, seekable (close it when done)."""
        ...

    def store_export(self, account_id: str, job_id: str, archive: IO[bytes]) -> int:
        """Stage an export's zip (read from its start); its size."""
        ...

    def open_export(self, account_id: str, job_id: str) -> IO[bytes] | None: ...
    def request_run(self, account_id: str, job_id: str) -> bool:
        """Ask the backend to run the job (on AWS: the trigger object whose event starts
        the job function). False when the caller must run it itself (embedded)."""
        ...

    def redeliver(self, account_id: str, job_id: str) -> bool:
        """Send a queued job's start signal again, its staged archive untouched (on AWS: the
        object copied onto itself, a new Object Created event). False where nothing is
        sent (embedded: the serving process runs queued jobs itself)."""
        ...

    def delete(self, account_id: str, job_id: str) -> None:
        """Remove the job's staged blobs, whatever is there."""
        ...
