"""REST routes for members and invitations. Thin: who may do what is services.members'
(through domain.policy)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response

from memvault.api import identity_schemas as ids
from memvault.api.deps import ManagerDep, ServicesDep, VaultRoute
from memvault.api.routers.sessions import signed_in
from memvault.domain.identity import Role
from memvault.http_edge import client_address

router = APIRouter(prefix="/v1", tags=["organisation and members"], route_class=VaultRoute)

Id = Annotated[str, Path(max_length=64)]


@router.get("/members", response_model=list[ids.MemberOut])
def list_members(svc: ServicesDep, who: ManagerDep) -> list[ids.MemberOut]:
    """Owners and admins: everyone in the organisation; a member: themself."""
    return [ids.MemberOut.of(m) for m in svc.members.list_members(who)]


@router.patch("/members/{member_id}", response_model=ids.MemberOut)
def change_member(
    svc: ServicesDep, who: ManagerDep, member_id: Id, body: ids.MemberPatchIn
) -> ids.MemberOut:
    """Owners: change a member's role, or disable (and enable) them."""
    member = svc.members.change_member(
        who,
        member_id,
        role=Role(body.role) if body.role is not None else None,
        disabled=body.disabled,
    )
    return ids.MemberOut.of(member)


@router.delete("/members/{member_id}", status_code=204)
def remove_member(svc: ServicesDep, who: ManagerDep, member_id: Id) -> Response:
    """Owners, or admins for anyone but an owner: their keys are revoked and their
    sessions end at once."""
    svc.members.remove_member(who, member_id)
    return Response(status_code=204)


@router.post("/invitations", response_model=ids.InvitationCreatedOut, status_code=201)
def invite(svc: ServicesDep, who: ManagerDep, body: ids.InvitationIn) -> ids.InvitationCreatedOut:
    """Owners invite with any role, admins as admin or member. The token is shown this
    once and works once, until it expires."""
    issued = svc.members.invite(who, body.email, Role(body.role))
    shown = ids.InvitationOut.of(issued.invitation).model_dump()
    return ids.InvitationCreatedOut(**shown, token=issued.token)


@router.get("/invitations", response_model=list[ids.InvitationOut])
def list_invitations(svc: ServicesDep, who: ManagerDep) -> list[ids.InvitationOut]:
    return [ids.InvitationOut.of(i) for i in svc.members.list_invitations(who)]


@router.delete("/invitations/{invitation_id}", status_code=204)
def revoke_invitation(svc: ServicesDep, who: ManagerDep, invitation_id: Id) -> Response:
    svc.members.revoke_invitation(who, invitation_id)
    return Response(status_code=204)


@router.post("/invitations/accept", response_model=ids.SignedInOut, status_code=201)
def accept_invitation(
    svc: ServicesDep, request: Request, response: Response, body: ids.AcceptIn
) -> ids.SignedInOut:
    """Join with the invitation's address and role, and sign in (the session cookie)."""
    started = svc.members.accept_invitation(
        body.token,
        name=body.name,
        password=body.password,
        client=client_address(request),
        user_agent=request.headers.get("user-agent", ""),
    )
    return signed_in(svc, request, response, started)
