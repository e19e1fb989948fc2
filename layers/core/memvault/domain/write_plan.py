"""The rules of a note write, decided once for every backend. Plain data, no I/O.

A store gathers the state a change needs (the live note at the change's path key, the
latest deleted note under that key, the note at a move's destination) as the small
values below, asks this module what the change does and what it costs, and applies the
decision in its own transaction. Refusals are raised here, as the ``memvault.errors``
the caller sees; a store never words one itself.

The rules:

- a put to a path whose live note is spelt differently (case only) is refused: paths
  differing only in case name the same note;
- the expected version, when given, must be the live one (``domain.versions``);
- identical markdown (same SHA-256) writes nothing: no version, no cost;
- a put to a deleted note's path (under any case) revives that note, so its history
  continues, under the put's spelling;
- moves and deletes need a live note at exactly their path; a move onto a path key
  held by another live note is refused; a move keeps the version and costs nothing;
- each new version of a note drops the one ``VERSIONS_KEPT`` before it;
- a commit is refused when it would grow the vault past a limit. Only growth is
  refused: lowering a limit below current usage must not block edits that shrink or
  keep the vault's size.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from memvault.domain import paths
from memvault.domain.models import VERSIONS_KEPT, Limits, MoveNote, Note, PutNote
from memvault.domain.versions import check_expected
from memvault.errors import Conflict, NotFound, QuotaExceeded


# ---------------------------------------------------------------------- state a store gathers
@dataclass(frozen=True, slots=True)
class LiveNote:
    """What a write needs to know of a live note."""

    id: str
    path: str
    version: int
    size: int
    sha256: str
    created_at: float


@dataclass(frozen=True, slots=True)
class DeletedNote:
    """The latest soft-deleted note under a path key (its tombstone), whose history a put
    revives."""

    id: str
    version: int
    created_at: float


@dataclass(frozen=True, slots=True)
class Usage:
    """An account's counters before a commit."""

    note_count: int
    total_bytes: int


# ---------------------------------------------------------------------- decisions
@dataclass(frozen=True, slots=True)
class Cost:
    """How a change moves the account's counters (negative frees capacity)."""

    notes: int = 0
    bytes: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.notes + other.notes, self.bytes + other.bytes)


FREE = Cost()


class PutKind(StrEnum):
    CREATE = "create"  # a new note, version 1
    REPLACE = "replace"  # a new version of the live note
    REVIVE = "revive"  # the deleted note at this path comes back, its history continues
    UNCHANGED = "unchanged"  # identical markdown: nothing is written


@dataclass(frozen=True, slots=True)
class PutDecision:
    kind: PutKind
    note_id: str
    version: int  # the version the note is at after the put
    created_at: float
    cost: Cost
    # Versions up to this one fall out of the kept VERSIONS_KEPT (None: nothing to trim).
    # Each new version pushes out exactly this one; older ones went with earlier writes.
    trim_version: int | None = None

    @property
    def writes(self) -> bool:
        """Whether the put writes a version (False for identical markdown)."""
        return self.kind is not PutKind.UNCHANGED

    def note(self, change: PutNote, *, now: float) -> Note:
        """The note as this put writes it (not for UNCHANGED: the stored note stands)."""
        assert self.writes, "an unchanged put writes no note"
        return Note(
            id=self.note_id,
            path=change.path,
            title=change.title,
            tags=tuple(change.tags),
            version=self.version,
            size=change.size,
            created_at=self.created_at,
            updated_at=content_time(change, now),
            markdown=change.markdown,
            sha256=change.sha256,
        )


@dataclass(frozen=True, slots=True)
class MoveDecision:
    note_id: str
    new_key: str  # the path key the note lives under afterwards
    cost: Cost = FREE  # a move keeps the note, its version and its size


@dataclass(frozen=True, slots=True)
class DeleteDecision:
    note_id: str
    cost: Cost


# ---------------------------------------------------------------------- the rules
def new_note_id() -> str:
    return uuid.uuid4().hex


def plan_put(
    change: PutNote,
    live: LiveNote | None,
    deleted: DeletedNote | None,
    *,
    now: float,
    new_id: Callable[[], str] = new_note_id,
) -> PutDecision:
    """What ``change`` does to the note at its path key.

    ``live``: the live note at ``paths.path_key(change.path)``, None when there is none.
    ``deleted``: the latest deleted note under ``change.path``'s key; only consulted when
    there is no live note (a store need not look it up otherwise).
    """
    if live is not None and live.path != change.path:
        raise Conflict(
            f"a note already exists at {live.path!r}; paths differing only in case"
            " name the same note",
            code="path_case_conflict",
        )
    check_expected(change.path, change.expected_version, live.version if live else None)
    if live is not None:
        if live.sha256 == change.sha256:
            return PutDecision(PutKind.UNCHANGED, live.id, live.version, live.created_at, FREE)
        grows = Cost(0, change.size - live.size)
        return _new_version(PutKind.REPLACE, live.id, live.version, live.created_at, grows)
    if deleted is not None:
        return _new_version(
            PutKind.REVIVE, deleted.id, deleted.version, deleted.created_at, Cost(1, change.size)
        )
    # A note created from an older file was not created after its last change.
    created = min(now, content_time(change, now))
    return _new_version(PutKind.CREATE, new_id(), 0, created, Cost(1, change.size))


def content_time(change: PutNote, now: float) -> float:
    """The note's ``updated_at`` once ``change`` is written: the file's own time when the
    change carries one (an import), else the commit's."""
    return now if change.updated_at is None else change.updated_at


def _new_version(
    kind: PutKind, note_id: str, before: int, created_at: float, cost: Cost
) -> PutDecision:
    version = before + 1
    trimmed = version - VERSIONS_KEPT
    return PutDecision(kind, note_id, version, created_at, cost, trimmed if trimmed >= 1 else None)


def require_live(path: str, expected: int | None, live: LiveNote | None) -> LiveNote:
    """The live note a move or a delete of ``path`` acts on.

    ``live``: the live note at ``path``'s key (or at exactly ``path``), None when none.
    """
    if live is None or live.path != path:
        raise NotFound(f"no note at {path!r}", code="note_not_found")
    check_expected(path, expected, live.version)
    return live


def plan_move(change: MoveNote, live: LiveNote | None, occupant: LiveNote | None) -> MoveDecision:
    """What moving ``change.path`` to ``change.new_path`` does.

    ``occupant``: the live note at ``change.new_path``'s key, None when it is free. When
    the key is the note's own (a change of case only) it may be the note itself, or None.
    """
    note = require_live(change.path, change.expected_version, live)
    if occupant is not None and occupant.id != note.id:
        raise Conflict(f"a note already exists at {occupant.path!r}", code="path_occupied")
    return MoveDecision(note_id=note.id, new_key=paths.path_key(change.new_path))


def plan_delete(path: str, expected: int | None, live: LiveNote | None) -> DeleteDecision:
    """A soft delete: the note leaves the vault's counters, its history stays."""
    note = require_live(path, expected, live)
    return DeleteDecision(note_id=note.id, cost=Cost(-1, -note.size))


# ---------------------------------------------------------------------- quota
def quota_refusal(usage: Usage, limits: Limits, cost: Cost) -> QuotaExceeded | None:
    """The error a commit costing ``cost`` must fail with, or None when it fits."""
    notes = usage.note_count + cost.notes
    if cost.notes > 0 and notes > limits.max_notes:
        return QuotaExceeded(
            f"the vault would hold {notes} notes; its limit is {limits.max_notes}",
            code="vault_note_limit",
        )
    if cost.bytes > 0 and usage.total_bytes + cost.bytes > limits.max_bytes:
        return byte_limit_refusal(usage, limits, cost)
    return None


def byte_limit_refusal(usage: Usage, limits: Limits, cost: Cost) -> QuotaExceeded:
    return QuotaExceeded(
        f"the vault would hold {usage.total_bytes + cost.bytes} bytes of notes; its limit is"
        f" {limits.max_bytes} bytes",
        code="vault_byte_limit",
    )


def check_quota(usage: Usage, limits: Limits, cost: Cost) -> None:
    refusal = quota_refusal(usage, limits, cost)
    if refusal is not None:
        raise refusal
