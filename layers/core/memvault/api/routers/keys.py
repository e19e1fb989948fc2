"""REST routes for API keys and the account's limits (who may do what: services.keys and
services.org, through domain.policy; /v1/me is in routers.sessions)."""

from __future__ import annotations

from fastapi import APIRouter

from memvault.api import schemas
from memvault.api.deps import ActorDep, KeyId, ManagerDep, ServicesDep, VaultRoute
from memvault.container import Services
from memvault.domain.models import ApiKey, KeySettings, Limits, Toggles
from memvault.domain.response_cache import DEFAULT_TTL_SECONDS

router = APIRouter(prefix="/v1", tags=["keys and account"], route_class=VaultRoute)


def key_out(svc: Services, key: ApiKey, owners: dict[str, str] | None = None) -> schemas.KeyOut:
    """A key as the API shows it, with what it spent and its owner's address or name."""
    if owners is None:
        member = svc.store.get_member(key.account_id, key.member_id) if key.member_id else None
        owners = {member.id: member.email or member.name} if member else {}
    return schemas.KeyOut.of(
        key, svc.billing.key_spent(key.account_id, key.id), owners.get(key.member_id or "")
    )


@router.get("/keys", response_model=list[schemas.KeyOut])
def list_keys(svc: ServicesDep, who: ManagerDep) -> list[schemas.KeyOut]:
    """Every key of the organisation for owners and admins; a member's own otherwise."""
    owners = {m.id: m.email or m.name for m in svc.store.list_members(who.account_id)}
    return [key_out(svc, k, owners) for k in svc.keys.list_keys(who)]


@router.post("/keys", response_model=schemas.KeyCreatedOut, status_code=201)
def create_key(
    svc: ServicesDep, who: ManagerDep, body: schemas.KeyCreateIn
) -> schemas.KeyCreatedOut:
    """A key of one's own; its secret is shown this once."""
    issued = svc.keys.create_key(
        who,
        name=body.name,
        toggles=Toggles(recall=body.recall, tools=body.tools, mcp=body.mcp),
        admin=body.admin,
        settings=KeySettings(
            recall_notes=body.recall_notes,
            recall_tokens=body.recall_tokens,
            spend_cap_micros=body.spend_cap_micros,
            memory_tokens=body.memory_tokens,
            recall_mode=body.recall_mode,
            cache_ttl_seconds=body.cache_ttl_seconds if body.cache else None,
        ),
        vault=body.vault,
    )
    shown = key_out(svc, issued.key).model_dump()
    return schemas.KeyCreatedOut(**shown, secret=issued.secret)


@router.patch("/keys/{key_id}", response_model=schemas.KeyOut)
def update_key(
    svc: ServicesDep, who: ManagerDep, key_id: KeyId, body: schemas.TogglesIn
) -> schemas.KeyOut:
    current = svc.keys.get_key(who, key_id)
    toggles = Toggles(
        recall=current.toggles.recall if body.recall is None else body.recall,
        tools=current.toggles.tools if body.tools is None else body.tools,
        mcp=current.toggles.mcp if body.mcp is None else body.mcp,
    )
    sent = body.model_fields_set
    settings = KeySettings(
        recall_notes=current.recall_notes if body.recall_notes is None else body.recall_notes,
        recall_tokens=current.recall_tokens if body.recall_tokens is None else body.recall_tokens,
        memory_tokens=current.memory_tokens if body.memory_tokens is None else body.memory_tokens,
        recall_mode=(
            current.recall_mode
            if body.recall_mode is None
            else None
            if body.recall_mode == "default"
            else body.recall_mode
        ),
        # An explicit null removes the cap; leaving the field out keeps it.
        spend_cap_micros=(
            body.spend_cap_micros if "spend_cap_micros" in sent else current.spend_cap_micros
        ),
        cache_ttl_seconds=_cache_ttl(current.cache_ttl_seconds, body.cache, body.cache_ttl_seconds),
    )
    updated = svc.keys.update_key(
        who,
        key_id,
        toggles=toggles,
        settings=settings if settings != current.settings else None,
    )
    return key_out(svc, updated)


def _cache_ttl(current: int | None, cache: bool | None, ttl: int | None) -> int | None:
    """The key's cache TTL after a patch: ``cache`` turns it on (with ``ttl``, else the one
    it had, else the default) or off; a ``ttl`` alone changes it when on, or turns it on."""
    if cache is False:
        return None
    if cache is None and ttl is None:
        return current
    return ttl or current or DEFAULT_TTL_SECONDS


@router.delete("/keys/{key_id}", response_model=schemas.KeyOut)
def revoke_key(svc: ServicesDep, who: ManagerDep, key_id: KeyId) -> schemas.KeyOut:
    return key_out(svc, svc.keys.revoke_key(who, key_id))


@router.get("/account", response_model=schemas.AccountOut)
def get_account(svc: ServicesDep, who: ActorDep) -> schemas.AccountOut:
    return schemas.AccountOut.of(svc.org.organisation(who))


@router.patch("/account/limits", response_model=schemas.AccountOut)
def set_limits(svc: ServicesDep, who: ManagerDep, body: schemas.LimitsIn) -> schemas.AccountOut:
    current = svc.org.organisation(who).limits
    limits = Limits(
        max_notes=body.max_notes or current.max_notes,
        max_bytes=body.max_bytes or current.max_bytes,
        max_files=body.max_files or current.max_files,
        max_file_bytes=body.max_file_bytes or current.max_file_bytes,
    )
    return schemas.AccountOut.of(svc.org.set_limits(who, limits))
