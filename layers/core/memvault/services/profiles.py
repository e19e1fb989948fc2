"""Memory profiles (memIDs): managing them, and attaching them to a gateway request.

Management (REST, the CLI) goes through ``domain.policy``: owners and admins read every
memory of the organisation, owners edit any, admins may delete a colleague's but not
edit it, members manage their own. Item text is screened like a model's vault write (it
is injected into prompts); facts are embedded when added or edited, a billed embedding
call recorded in usage (``memory_fact_embed``).

At request time (``attach``) only the calling key's own owner's memories resolve; a slug
that is missing, inactive or someone else's, or a failing lookup, is skipped silently:
nothing here ever fails a request. Facts are scored against the latest user message
with one embedding call per request (``memory_search_embed``), by cosine over the
vectors stored with the items. What a memory brings is loaded once per revision and
kept in an in-process memo (its facts as one float32 matrix), so a request attaching 16
memories of 1,000 facts each costs one batched read of 16 small records, one embedding
and 16 matrix-vector products.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

import numpy as np
import numpy.typing as npt

from memvault.domain.identity import AuditKind
from memvault.domain.memo import Memo, text_digest
from memvault.domain.models import ApiKey
from memvault.domain.policy import Action, Target, allowed, require, unrestricted
from memvault.domain.profiles import (
    DAY_SECONDS,
    DEFAULT_TOKEN_BUDGET,
    MAX_FACTS,
    MAX_ITEMS,
    AttachedMemory,
    Composition,
    ItemType,
    MemoryProfile,
    ProfileItem,
    ProfilePatch,
    ScoredFact,
    check_description,
    check_item,
    check_name,
    check_retention,
    check_slug,
    compose,
    count_current,
    expires_at,
    is_current,
    is_uuid_shaped,
)
from memvault.domain.screening import screen_text
from memvault.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    PermissionDenied,
    QuotaExceeded,
    Unprocessable,
)
from memvault.ports import Embedder, Embeddings, MemoryProfileStore
from memvault.services.audit import AuditService
from memvault.services.context import Caller
from memvault.services.embedding import EmbeddingService
from memvault.tokens import count_tokens as default_count_tokens

log = logging.getLogger("memvault.profiles")

FACT_EMBED: Final = "memory_fact_embed"
SEARCH_EMBED: Final = "memory_search_embed"
MAX_QUERY_CHARS: Final = 2_000
MAX_PAGE: Final = 200
# Loaded memories kept per process: a memory of 1,000 facts at 256 dimensions is 1 MB.
LOADED_MEMO_ENTRIES: Final = 64
LINE_MEMO_ENTRIES: Final = 16_384


@dataclass(frozen=True, slots=True)
class MemoryListing:
    profile: MemoryProfile
    attachable: bool  # the caller's own keys can attach it (it is the caller's)
    item_counts: dict[str, int]  # current items by type, as MemoryDetail counts them


@dataclass(frozen=True, slots=True)
class MemoryPage:
    rows: list[MemoryListing]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class MemoryDetail:
    profile: MemoryProfile
    items: list[ProfileItem]  # current items only, oldest first
    item_counts: dict[str, int]
    attachable: bool


@dataclass(frozen=True, slots=True)
class Attachment:
    """What the attached memories give one request (``composition`` None: nothing)."""

    composition: Composition | None = None
    embeddings: Embeddings | None = None  # the request's one search embedding, if made

    @property
    def applied(self) -> tuple[str, ...]:
        return self.composition.applied if self.composition else ()


@dataclass(slots=True)
class _Loaded:
    """A memory's items as request time needs them, for one revision."""

    guardrails: list[tuple[float, str]] = field(default_factory=list)  # (created, text)
    preferences: list[tuple[float, str, str]] = field(default_factory=list)  # created, key
    fact_texts: list[str] = field(default_factory=list)
    fact_created: npt.NDArray[np.float64] = field(
        default_factory=lambda: np.zeros(0, dtype=np.float64)
    )
    matrix: npt.NDArray[np.float32] | None = None  # one unit row per fact (same model)
    model: str | None = None


def _vector_bytes(vector: Sequence[float]) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


class ProfileService:
    def __init__(
        self,
        store: MemoryProfileStore,
        audit: AuditService,
        embedding: EmbeddingService,
        embedder: Callable[[], Embedder | None],
        clock: Callable[[], float],
        *,
        count_tokens: Callable[[str], int] = default_count_tokens,
        default_token_budget: int = DEFAULT_TOKEN_BUDGET,
    ) -> None:
        self.store = store
        self.audit = audit
        self.embedding = embedding  # bills and records each fact's embedding call
        self._embedder_factory = embedder
        self._embedder: Embedder | None = None
        self._embedder_loaded = False
        self.clock = clock
        self.count_tokens = count_tokens
        self.default_token_budget = default_token_budget
        self._loaded: Memo[str, tuple[int, _Loaded]] = Memo(LOADED_MEMO_ENTRIES)
        self._lines: Memo[bytes, int] = Memo(LINE_MEMO_ENTRIES)

    # ------------------------------------------------------------------ helpers
    @property
    def embedder(self) -> Embedder | None:
        if not self._embedder_loaded:
            self._embedder = self._embedder_factory()
            self._embedder_loaded = True
        return self._embedder

    def _count(self, line: str) -> int:
        digest = text_digest(line)
        found = self._lines.get(digest)
        if found is None:
            found = self.count_tokens(line)
            self._lines.put(digest, found)
        return found

    def _person(self, actor: Caller) -> str:
        if actor.member_id is None:
            raise PermissionDenied(
                "memory profiles belong to people: use a member's key or session",
                code="admin_required",
            )
        return actor.member_id

    def _find(self, actor: Caller, ref: str) -> MemoryProfile:
        """The memory ``ref`` names (its id, or a slug: the caller's own first, then, for
        those who read everyone's, the organisation's one memory of that slug)."""
        require(actor, Action.READ_MEMORY, Target(member_id=actor.member_id))
        profile: MemoryProfile | None = None
        if is_uuid_shaped(ref):
            profile = self.store.get_profile(actor.account_id, ref.replace("-", "").lower())
        elif actor.member_id is not None:
            profile = self.store.owned_profiles(actor.account_id, actor.member_id, [ref]).get(ref)
            if profile is None and unrestricted(actor, Action.READ_MEMORY):
                found = self.store.profiles_by_slug(actor.account_id, ref)
                if len(found) > 1:
                    raise Conflict(
                        f"{len(found)} members have a memory with the slug '{ref}'; name it"
                        " by its id",
                        code="ambiguous_slug",
                    )
                profile = found[0] if found else None
        if profile is None:
            raise NotFound(f"no memory '{ref}'", code="memory_not_found")
        require(actor, Action.READ_MEMORY, Target(member_id=profile.owner_member_id))
        return profile

    def _editable(self, actor: Caller, ref: str) -> MemoryProfile:
        profile = self._find(actor, ref)
        require(actor, Action.EDIT_MEMORY, Target(member_id=profile.owner_member_id))
        return profile

    def _embed_fact(self, actor: Caller, text: str) -> tuple[bytes | None, str | None]:
        """A fact's vector and model, the call billed and recorded; (None, None) when
        embeddings are off or fail (the fact is kept; it will not be selected)."""
        embedder = self.embedder
        if embedder is None:
            return None, None
        started, began = self.clock(), time.perf_counter()
        try:
            out = embedder.embed([text])
        except Exception:
            log.warning("fact embedding failed", extra={"account": actor.account_id})
            return None, None
        self.embedding.record_call(
            actor.account_id,
            actor.key_id or "",
            FACT_EMBED,
            out,
            started=started,
            duration_ms=int((time.perf_counter() - began) * 1000),
            counted_as=FACT_EMBED,
        )
        return _vector_bytes(out.vectors[0]), out.model

    # ------------------------------------------------------------------ memories
    def create(
        self,
        actor: Caller,
        *,
        slug: str,
        name: str,
        description: str = "",
        retention_days: int | None = None,
    ) -> MemoryProfile:
        owner = self._person(actor)
        require(actor, Action.CREATE_MEMORY, Target(member_id=owner))
        now = self.clock()
        profile = MemoryProfile(
            id=uuid.uuid4().hex,
            account_id=actor.account_id,
            owner_member_id=owner,
            slug=check_slug(slug),
            name=check_name(name),
            description=check_description(description),
            retention_days=check_retention(retention_days),
            created_at=now,
            updated_at=now,
        )
        self.store.create_profile(profile)
        return profile

    def list_memories(
        self,
        actor: Caller,
        *,
        q: str | None = None,
        owner: str | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> MemoryPage:
        require(actor, Action.READ_MEMORY, Target(member_id=actor.member_id))
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit: between 1 and {MAX_PAGE}", code="invalid_limit")
        everyone = unrestricted(actor, Action.READ_MEMORY)
        if not everyone:
            if owner is not None and owner != actor.member_id:
                raise PermissionDenied(
                    "only owners and admins list other members' memories",
                    code="admin_required",
                )
            owner = actor.member_id
        rows = self.store.list_profiles(actor.account_id, owner_member_id=owner)
        if q:
            folded = q.casefold()
            rows = [p for p in rows if folded in p.slug.casefold() or folded in p.name.casefold()]
        rows = [p for p in rows if allowed(actor, Action.READ_MEMORY, Target(p.owner_member_id))]
        if cursor:
            after = [i for i, p in enumerate(rows) if p.id == cursor]
            if not after:
                raise InvalidInput("cursor: not one this listing gave", code="invalid_cursor")
            rows = rows[after[0] + 1 :]
        page = rows[:limit]
        more = len(rows) > limit
        counts = self.store.count_items(actor.account_id, page, now=self.clock())
        return MemoryPage(
            rows=[
                MemoryListing(p, p.owner_member_id == actor.member_id, counts[p.id]) for p in page
            ],
            next_cursor=page[-1].id if more and page else None,
        )

    def get(self, actor: Caller, ref: str) -> MemoryDetail:
        profile = self._find(actor, ref)
        return self._detail(actor, profile)

    def _detail(self, actor: Caller, profile: MemoryProfile) -> MemoryDetail:
        now = self.clock()
        items = [
            i
            for i in self.store.list_items(actor.account_id, profile.id)
            if is_current(i, profile.retention_days, now)
        ]
        return MemoryDetail(
            profile=profile,
            items=items,
            item_counts=count_current(((i.item_type, i.created_at) for i in items), None, now),
            attachable=profile.owner_member_id == actor.member_id,
        )

    def expires_at(self, profile: MemoryProfile, item: ProfileItem) -> float | None:
        return expires_at(item, profile.retention_days)

    def update(self, actor: Caller, ref: str, patch: ProfilePatch) -> MemoryProfile:
        profile = self._editable(actor, ref)
        if patch.name is not None:
            check_name(patch.name)
        if patch.description is not None:
            check_description(patch.description)
        if patch.set_retention:
            check_retention(patch.retention_days)
        return self.store.update_profile(actor.account_id, profile.id, patch, now=self.clock())

    def delete(self, actor: Caller, ref: str) -> None:
        """Erase the memory, its items and their vectors, irreversibly; audited (its id
        and owner, never its content)."""
        profile = self._find(actor, ref)
        require(actor, Action.DELETE_MEMORY, Target(member_id=profile.owner_member_id))
        if not self.store.delete_profile(actor.account_id, profile.id):
            raise NotFound(f"no memory '{ref}'", code="memory_not_found")
        self._loaded.put(profile.id, (-1, _Loaded()))
        self.audit.record(
            actor.account_id,
            AuditKind.MEMORY_DELETED,
            actor=actor,
            target_id=profile.id,
            detail={"owner": profile.owner_member_id},
        )

    # ------------------------------------------------------------------ items
    def _screen(self, text: str) -> None:
        verdict = screen_text(text)
        if not verdict.allowed:
            raise Unprocessable(
                verdict.reason or "the text was refused by write screening",
                code="write_screened",
                rule=verdict.rule,
                field="text",
            )

    def add_item(
        self, actor: Caller, ref: str, *, item_type: ItemType, text: str, key: str | None = None
    ) -> tuple[MemoryProfile, ProfileItem]:
        profile = self._editable(actor, ref)
        check_item(item_type, text, key)
        self._screen(text)
        if key is not None:
            self._screen(key)
        if profile.item_count >= MAX_ITEMS:  # checked again, atomically, by the store
            raise_item_limit()
        vector, model = (None, None)
        if item_type is ItemType.FACT:
            vector, model = self._embed_fact(actor, text)
        now = self.clock()
        item = ProfileItem(
            id=uuid.uuid4().hex,
            memory_id=profile.id,
            item_type=item_type,
            text=text,
            key=key,
            created_at=now,
            updated_at=now,
            vector=vector,
            model=model,
        )
        updated = self.store.add_item(actor.account_id, item, max_items=MAX_ITEMS, now=now)
        return updated, item

    def update_item(
        self,
        actor: Caller,
        ref: str,
        item_id: str,
        *,
        item_type: ItemType | None = None,
        text: str | None = None,
        key: str | None = None,
        key_sent: bool = False,
    ) -> tuple[MemoryProfile, ProfileItem]:
        profile = self._editable(actor, ref)
        item = self.store.get_item(actor.account_id, profile.id, item_id)
        if item is None or not is_current(item, profile.retention_days, self.clock()):
            raise NotFound("no such item in this memory", code="memory_item_not_found")
        if item_type is not None and item_type is not item.item_type:
            raise InvalidInput(
                "item_type: an item's type cannot change (it decides how the item is composed"
                " and whether it is embedded); delete it and add a new one",
                code="item_type_immutable",
            )
        new_text = item.text if text is None else text
        new_key = key if key_sent else item.key
        check_item(item.item_type, new_text, new_key)
        if text is not None:
            self._screen(new_text)
        if key_sent and new_key is not None:
            self._screen(new_key)
        vector, model = item.vector, item.model
        embedder = self.embedder
        stale = embedder is not None and item.model != embedder.model
        if item.item_type is ItemType.FACT and (new_text != item.text or stale):
            vector, model = self._embed_fact(actor, new_text)
        now = self.clock()
        changed = replace(
            item, text=new_text, key=new_key, vector=vector, model=model, updated_at=now
        )
        updated = self.store.update_item(actor.account_id, changed, now=now)
        return updated, changed

    def delete_item(self, actor: Caller, ref: str, item_id: str) -> None:
        profile = self._editable(actor, ref)
        if not self.store.delete_item(actor.account_id, profile.id, item_id, now=self.clock()):
            raise NotFound("no such item in this memory", code="memory_item_not_found")

    # ------------------------------------------------------------------ retention
    def sweep_expired(self, now: float) -> int:
        """Delete the preferences and facts past their memory's retention (every
        organisation); guardrails stay. How many were deleted."""
        total = 0
        for profile in self.store.profiles_with_retention():
            if profile.retention_days is None:
                continue
            cutoff = now - profile.retention_days * DAY_SECONDS
            total += self.store.delete_items_created_before(
                profile.account_id, profile.id, cutoff, now=now
            )
        return total

    # ------------------------------------------------------------------ request time
    def token_budget(self, key: ApiKey) -> int:
        """The key's memory block budget (``memory_tokens``, 1,500 by default)."""
        return key.memory_tokens

    def attach(self, key: ApiKey, slugs: Sequence[str], message_text: str | None) -> Attachment:
        """The composition for ``slugs`` (header order) on a request by ``key``. Never
        raises: a memory that cannot be read is left out, as one that does not exist."""
        if not slugs or key.member_id is None:
            return Attachment()
        try:
            found = self.store.owned_profiles(key.account_id, key.member_id, slugs)
        except Exception:
            log.warning("memory profiles unreadable", extra={"account": key.account_id})
            return Attachment()
        now = self.clock()
        resolved: list[tuple[MemoryProfile, _Loaded]] = []
        for slug in slugs:
            profile = found.get(slug)
            if profile is None or not profile.active:
                continue
            try:
                resolved.append((profile, self._load(profile)))
            except Exception:
                log.warning("memory profile unreadable", extra={"account": key.account_id})
        if not resolved:
            return Attachment()
        try:
            facts, embeddings = self._score_facts(key, resolved, message_text, now)
        except Exception:
            log.warning("fact selection failed", extra={"account": key.account_id})
            facts, embeddings = [[] for _ in resolved], None
        attached = []
        for (profile, loaded), scored in zip(resolved, facts, strict=True):
            cutoff = _cutoff(profile, now)
            attached.append(
                AttachedMemory(
                    slug=profile.slug,
                    guardrails=[text for _c, text in loaded.guardrails],
                    preferences=[(k, t) for c, k, t in loaded.preferences if c > cutoff],
                    facts=scored,
                )
            )
        composition = compose(
            attached, token_budget=self.token_budget(key), count_tokens=self._count
        )
        return Attachment(composition=composition, embeddings=embeddings)

    def _load(self, profile: MemoryProfile) -> _Loaded:
        found = self._loaded.get(profile.id)
        if found is not None and found[0] == profile.revision:
            return found[1]
        items = self.store.list_items(profile.account_id, profile.id)
        loaded = _Loaded()
        embedder = self.embedder
        model = embedder.model if embedder is not None else None
        rows: list[bytes] = []
        created: list[float] = []
        for item in items:
            if item.item_type is ItemType.GUARDRAIL:
                loaded.guardrails.append((item.created_at, item.text))
            elif item.item_type is ItemType.PREFERENCE:
                loaded.preferences.append((item.created_at, item.key or "", item.text))
            elif item.vector is not None and item.model == model:
                # Vectors of another model are never compared with this one's.
                loaded.fact_texts.append(item.text)
                rows.append(item.vector)
                created.append(item.created_at)
        if rows:
            loaded.matrix = np.frombuffer(b"".join(rows), dtype=np.float32).reshape(len(rows), -1)
            loaded.fact_created = np.asarray(created, dtype=np.float64)
            loaded.model = model
        self._loaded.put(profile.id, (profile.revision, loaded))
        return loaded

    def _score_facts(
        self,
        key: ApiKey,
        resolved: list[tuple[MemoryProfile, _Loaded]],
        message_text: str | None,
        now: float,
    ) -> tuple[list[list[ScoredFact]], Embeddings | None]:
        """Per memory, its best candidate facts for the message (at most MAX_FACTS each),
        from one embedding call; none when no memory holds embedded facts."""
        empty: list[list[ScoredFact]] = [[] for _ in resolved]
        embedder = self.embedder
        if (
            embedder is None
            or not message_text
            or not message_text.strip()
            or not any(loaded.matrix is not None for _p, loaded in resolved)
        ):
            return empty, None
        out = embedder.embed([message_text[:MAX_QUERY_CHARS]])
        self_query = np.asarray(out.vectors[0], dtype=np.float32)
        scored: list[list[ScoredFact]] = []
        for profile, loaded in resolved:
            if loaded.matrix is None or loaded.matrix.shape[1] != self_query.shape[0]:
                scored.append([])
                continue
            sims = loaded.matrix @ self_query
            if profile.retention_days is not None:
                sims = np.where(loaded.fact_created > _cutoff(profile, now), sims, -math.inf)
            k = min(MAX_FACTS, len(sims))
            best = np.argpartition(-sims, k - 1)[:k] if k < len(sims) else np.arange(len(sims))
            scored.append(
                [
                    ScoredFact(loaded.fact_texts[i], float(sims[i]), int(i))
                    for i in best
                    if math.isfinite(float(sims[i]))
                ]
            )
        return scored, out


def _cutoff(profile: MemoryProfile, now: float) -> float:
    """Items created before this are past the memory's retention (-inf: none are)."""
    if profile.retention_days is None:
        return -math.inf
    return now - profile.retention_days * DAY_SECONDS


def raise_item_limit() -> None:
    raise QuotaExceeded(
        f"a memory holds at most {MAX_ITEMS:,} items; delete some first",
        code="memory_item_limit",
    )
