"""REST routes for API keys and the account (admin keys only, except /v1/me)."""

from __future__ import annotations

from fastapi import APIRouter

from memvault.api import schemas
from memvault.api.deps import AdminDep, KeyDep, KeyId, ServicesDep, VaultRoute
from memvault.container import Services
from memvault.domain.models import ApiKey, KeySettings, Limits, Toggles

router = APIRouter(prefix="/v1", tags=["keys and account"], route_class=VaultRoute)


def _out(svc: Services, key: ApiKey) -> schemas.KeyOut:
    return schemas.KeyOut.of(key, svc.billing.key_spent(key.account_id, key.id))


@router.get("/me", response_model=schemas.KeyOut)
def whoami(svc: ServicesDep, key: KeyDep) -> schemas.KeyOut:
    return _out(svc, key)


@router.get("/keys", response_model=list[schemas.KeyOut])
def list_keys(svc: ServicesDep, admin: AdminDep) -> list[schemas.KeyOut]:
    return [_out(svc, k) for k in svc.accounts.list_keys(admin.account_id)]


@router.post("/keys", response_model=schemas.KeyCreatedOut, status_code=201)
def create_key(
    svc: ServicesDep, admin: AdminDep, body: schemas.KeyCreateIn
) -> schemas.KeyCreatedOut:
    issued = svc.accounts.issue_key(
        admin.account_id,
        name=body.name,
        toggles=Toggles(recall=body.recall, tools=body.tools, mcp=body.mcp),
        admin=body.admin,
        settings=KeySettings(
            recall_notes=body.recall_notes,
            recall_tokens=body.recall_tokens,
            spend_cap_micros=body.spend_cap_micros,
        ),
    )
    return schemas.KeyCreatedOut(**schemas.KeyOut.of(issued.key).model_dump(), secret=issued.secret)


@router.patch("/keys/{key_id}", response_model=schemas.KeyOut)
def update_key(
    svc: ServicesDep, admin: AdminDep, key_id: KeyId, body: schemas.TogglesIn
) -> schemas.KeyOut:
    current = svc.accounts.get_key(admin.account_id, key_id)
    toggles = Toggles(
        recall=current.toggles.recall if body.recall is None else body.recall,
        tools=current.toggles.tools if body.tools is None else body.tools,
        mcp=current.toggles.mcp if body.mcp is None else body.mcp,
    )
    sent = body.model_fields_set
    settings = KeySettings(
        recall_notes=current.recall_notes if body.recall_notes is None else body.recall_notes,
        recall_tokens=current.recall_tokens if body.recall_tokens is None else body.recall_tokens,
        # An explicit null removes the cap; leaving the field out keeps it.
        spend_cap_micros=(
            body.spend_cap_micros if "spend_cap_micros" in sent else current.spend_cap_micros
        ),
    )
    updated = svc.accounts.update_key(
        admin.account_id,
        key_id,
        toggles=toggles,
        settings=settings if settings != current.settings else None,
    )
    return _out(svc, updated)


@router.delete("/keys/{key_id}", response_model=schemas.KeyOut)
def revoke_key(svc: ServicesDep, admin: AdminDep, key_id: KeyId) -> schemas.KeyOut:
    return _out(svc, svc.accounts.revoke(admin.account_id, key_id))


@router.get("/account", response_model=schemas.AccountOut)
def get_account(svc: ServicesDep, key: KeyDep) -> schemas.AccountOut:
    return schemas.AccountOut.of(svc.accounts.get_account(key.account_id))


@router.patch("/account/limits", response_model=schemas.AccountOut)
def set_limits(svc: ServicesDep, admin: AdminDep, body: schemas.LimitsIn) -> schemas.AccountOut:
    current = svc.accounts.get_account(admin.account_id).limits
    limits = Limits(
        max_notes=body.max_notes or current.max_notes,
        max_bytes=body.max_bytes or current.max_bytes,
    )
    return schemas.AccountOut.of(svc.accounts.set_limits(admin.account_id, limits))
