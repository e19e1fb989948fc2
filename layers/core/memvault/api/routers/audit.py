"""REST route for the identity audit log (owners and admins; services.audit)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from memvault.api import identity_schemas as ids
from memvault.api.deps import ManagerDep, ServicesDep, VaultRoute

router = APIRouter(prefix="/v1", tags=["organisation and members"], route_class=VaultRoute)


@router.get("/audit", response_model=ids.AuditOut)
def audit(
    svc: ServicesDep,
    who: ManagerDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    cursor: Annotated[str | None, Query(max_length=100)] = None,
) -> ids.AuditOut:
    """Identity events, newest first: sign-ins (and failed ones), invitations, role
    changes, removals, keys made and revoked. Kept as long as usage records."""
    page = svc.audit.events(who, limit=limit, cursor=cursor)
    return ids.AuditOut(
        events=[ids.AuditEventOut.of(e) for e in page.events], next_cursor=page.next_cursor
    )
