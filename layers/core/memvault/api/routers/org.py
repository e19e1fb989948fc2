"""REST routes for the organisation itself (its name and default search settings; limits
and balance are in keys and billing). Thin: the rules are services.org's."""

from __future__ import annotations

from fastapi import APIRouter

from memvault.api import identity_schemas as ids
from memvault.api.deps import ActorDep, ManagerDep, ServicesDep, VaultRoute

router = APIRouter(prefix="/v1", tags=["organisation and members"], route_class=VaultRoute)


@router.get("/org", response_model=ids.OrgOut)
def get_org(svc: ServicesDep, who: ActorDep) -> ids.OrgOut:
    return ids.OrgOut.of_org(svc.org.organisation(who))


@router.patch("/org", response_model=ids.OrgOut)
def update_org(svc: ServicesDep, who: ManagerDep, body: ids.OrgPatchIn) -> ids.OrgOut:
    """Owners: rename the organisation. Owners and admins: its default search mode and
    min_score for search and recall ("default" or null: the deployment's)."""
    sent = body.model_fields_set
    search = None
    if sent & {"search_mode", "min_score"}:
        current = svc.org.organisation(who).search
        mode = body.search_mode if "search_mode" in sent else current.mode
        search = (
            None if mode == "default" else mode,
            body.min_score if "min_score" in sent else current.min_score,
        )
    name = body.name if "name" in sent else None
    return ids.OrgOut.of_org(svc.org.update(who, name=name, search=search))
