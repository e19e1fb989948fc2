"""REST routes for the organisation itself (its name; limits and balance are in keys and
billing). Thin: the rules are services.org's."""

from __future__ import annotations

from fastapi import APIRouter

from memvault.api import identity_schemas as ids
from memvault.api.deps import ActorDep, ManagerDep, ServicesDep, VaultRoute

router = APIRouter(prefix="/v1", tags=["organisation and members"], route_class=VaultRoute)


@router.get("/org", response_model=ids.OrgOut)
def get_org(svc: ServicesDep, who: ActorDep) -> ids.OrgOut:
    return ids.OrgOut.of_org(svc.org.organisation(who))


@router.patch("/org", response_model=ids.OrgOut)
def rename_org(svc: ServicesDep, who: ManagerDep, body: ids.OrgPatchIn) -> ids.OrgOut:
    """Owners: rename the organisation."""
    return ids.OrgOut.of_org(svc.org.rename(who, body.name))
