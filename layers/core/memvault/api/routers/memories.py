"""REST routes for memory profiles (memIDs) and their items. Thin: who may do what is
services.profiles' (through domain.policy). Every route takes a Bearer key with the admin
toggle or a dashboard session (both resolve to the same member); ``{memory}`` is a slug
or the memory's id."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Response
from pydantic import BaseModel, ConfigDict, Field

from memvault.api.deps import ManagerDep, ServicesDep, VaultRoute
from memvault.container import Services
from memvault.domain.profiles import (
    MAX_DESCRIPTION_CHARS,
    MAX_ITEM_CHARS,
    MAX_KEY_CHARS,
    MAX_NAME_CHARS,
    MAX_RETENTION_DAYS,
    MAX_SLUG_CHARS,
    ItemType,
    MemoryProfile,
    ProfileItem,
    ProfilePatch,
)
from memvault.services.profiles import MemoryDetail

router = APIRouter(prefix="/v1", tags=["memory profiles"], route_class=VaultRoute)

MemoryRef = Annotated[str, Path(max_length=64, description="The memory's slug or id.")]
ItemId = Annotated[str, Path(max_length=64)]
STRICT_IN = ConfigDict(extra="forbid", strict=True)
Retention = Annotated[int | None, Field(ge=1, le=MAX_RETENTION_DAYS)]


class MemoryCreateIn(BaseModel):
    model_config = STRICT_IN
    slug: str = Field(
        min_length=1,
        max_length=MAX_SLUG_CHARS,
        description="The memID sent in x-mem-id: immutable, [A-Za-z0-9._:-], not UUID-shaped.",
    )
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)
    retention_days: Retention = None


class MemoryPatchIn(BaseModel):
    """Only the fields sent change; ``retention_days: null`` keeps items forever again."""

    model_config = STRICT_IN
    name: str | None = Field(default=None, min_length=1, max_length=MAX_NAME_CHARS)
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION_CHARS)
    retention_days: Retention = None
    active: bool | None = None


class ItemIn(BaseModel):
    model_config = STRICT_IN
    item_type: Literal["guardrail", "preference", "fact"]
    text: str = Field(min_length=1, max_length=MAX_ITEM_CHARS)
    key: str | None = Field(default=None, min_length=1, max_length=MAX_KEY_CHARS)


class ItemPatchIn(BaseModel):
    model_config = STRICT_IN
    item_type: Literal["guardrail", "preference", "fact"] | None = None
    text: str | None = Field(default=None, min_length=1, max_length=MAX_ITEM_CHARS)
    key: str | None = Field(default=None, min_length=1, max_length=MAX_KEY_CHARS)


class MemoryOut(BaseModel):
    id: str
    slug: str
    name: str
    description: str
    owner_member_id: str
    owner: str | None = Field(description="The owner's address or name.")
    attachable: bool = Field(
        description="True when the caller's own keys can attach it (x-mem-id matches the"
        " calling key's owner only)."
    )
    active: bool
    retention_days: int | None
    item_count: int
    item_counts: dict[str, int] = Field(
        description="Current items by type (expired ones not counted), every type present."
    )
    created_at: float
    updated_at: float


class ItemOut(BaseModel):
    id: str
    item_type: str
    text: str
    key: str | None
    created_at: float
    updated_at: float
    expires_at: float | None = Field(description="null: the item never expires.")
    embedded: bool = Field(description="A fact with a stored embedding.")


class MemoryDetailOut(MemoryOut):
    items: list[ItemOut]


class MemoryListOut(BaseModel):
    memories: list[MemoryOut]
    next_cursor: str | None


def _owners(svc: Services, account_id: str) -> dict[str, str]:
    return {m.id: m.email or m.name for m in svc.store.list_members(account_id)}


def memory_out(
    profile: MemoryProfile, attachable: bool, counts: dict[str, int], owners: dict[str, str]
) -> dict[str, object]:
    return {
        "id": profile.id,
        "slug": profile.slug,
        "name": profile.name,
        "description": profile.description,
        "owner_member_id": profile.owner_member_id,
        "owner": owners.get(profile.owner_member_id),
        "attachable": attachable,
        "active": profile.active,
        "retention_days": profile.retention_days,
        "item_count": profile.item_count,
        "item_counts": counts,
        "created_at": profile.created_at,
        "updated_at": profile.updated_at,
    }


def item_out(svc: Services, profile: MemoryProfile, item: ProfileItem) -> ItemOut:
    return ItemOut(
        id=item.id,
        item_type=item.item_type.value,
        text=item.text,
        key=item.key,
        created_at=item.created_at,
        updated_at=item.updated_at,
        expires_at=svc.profiles.expires_at(profile, item),
        embedded=item.vector is not None,
    )


def detail_out(svc: Services, detail: MemoryDetail) -> MemoryDetailOut:
    owners = _owners(svc, detail.profile.account_id)
    return MemoryDetailOut(
        **memory_out(detail.profile, detail.attachable, detail.item_counts, owners),
        items=[item_out(svc, detail.profile, i) for i in detail.items],
    )


@router.post("/memories", response_model=MemoryDetailOut, status_code=201)
def create_memory(svc: ServicesDep, who: ManagerDep, body: MemoryCreateIn) -> MemoryDetailOut:
    """A memory of one's own."""
    profile = svc.profiles.create(
        who,
        slug=body.slug,
        name=body.name,
        description=body.description,
        retention_days=body.retention_days,
    )
    return detail_out(svc, svc.profiles.get(who, profile.id))


@router.get("/memories", response_model=MemoryListOut)
def list_memories(
    svc: ServicesDep,
    who: ManagerDep,
    q: Annotated[str | None, Query(max_length=200, description="Matches slug and name")] = None,
    owner: Annotated[str | None, Query(max_length=64, description="An owner's member id")] = None,
    cursor: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> MemoryListOut:
    """Owners and admins: every memory of the organisation; a member: their own."""
    page = svc.profiles.list_memories(who, q=q, owner=owner, cursor=cursor, limit=limit)
    owners = _owners(svc, who.account_id)
    return MemoryListOut(
        memories=[
            MemoryOut(**memory_out(r.profile, r.attachable, r.item_counts, owners))
            for r in page.rows
        ],
        next_cursor=page.next_cursor,
    )


@router.get("/memories/{memory}", response_model=MemoryDetailOut)
def get_memory(svc: ServicesDep, who: ManagerDep, memory: MemoryRef) -> MemoryDetailOut:
    """The memory with its current items (expired ones are not listed)."""
    return detail_out(svc, svc.profiles.get(who, memory))


@router.patch("/memories/{memory}", response_model=MemoryDetailOut)
def update_memory(
    svc: ServicesDep, who: ManagerDep, memory: MemoryRef, body: MemoryPatchIn
) -> MemoryDetailOut:
    sent = body.model_fields_set
    profile = svc.profiles.update(
        who,
        memory,
        ProfilePatch(
            name=body.name,
            description=body.description,
            active=body.active,
            set_retention="retention_days" in sent,
            retention_days=body.retention_days,
        ),
    )
    return detail_out(svc, svc.profiles.get(who, profile.id))


@router.delete("/memories/{memory}", status_code=204)
def delete_memory(svc: ServicesDep, who: ManagerDep, memory: MemoryRef) -> Response:
    """Erase the memory, its items and their embeddings, irreversibly."""
    svc.profiles.delete(who, memory)
    return Response(status_code=204)


@router.post("/memories/{memory}/items", response_model=ItemOut, status_code=201)
def add_item(svc: ServicesDep, who: ManagerDep, memory: MemoryRef, body: ItemIn) -> ItemOut:
    """A guardrail, a preference (with its key) or a fact (embedded now)."""
    profile, item = svc.profiles.add_item(
        who, memory, item_type=ItemType(body.item_type), text=body.text, key=body.key
    )
    return item_out(svc, profile, item)


@router.patch("/memories/{memory}/items/{item_id}", response_model=ItemOut)
def update_item(
    svc: ServicesDep, who: ManagerDep, memory: MemoryRef, item_id: ItemId, body: ItemPatchIn
) -> ItemOut:
    """Only the fields sent change; a type cannot (delete and re-add)."""
    profile, item = svc.profiles.update_item(
        who,
        memory,
        item_id,
        item_type=ItemType(body.item_type) if body.item_type is not None else None,
        text=body.text,
        key=body.key,
        key_sent="key" in body.model_fields_set,
    )
    return item_out(svc, profile, item)


@router.delete("/memories/{memory}/items/{item_id}", status_code=204)
def delete_item(svc: ServicesDep, who: ManagerDep, memory: MemoryRef, item_id: ItemId) -> Response:
    svc.profiles.delete_item(who, memory, item_id)
    return Response(status_code=204)
