"""Request and response bodies of the identity routes: the organisation, members,
invitations, sessions, the caller (/v1/me) and the audit log. Never a password hash, a
key or session secret (except the one a route makes, shown once)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from memvault.api.schemas import AccountOut, KeyOut, iso
from memvault.domain.identity import AuditEvent, Invitation, Member, Session
from memvault.domain.models import Account

STRICT_IN = ConfigDict(extra="forbid", strict=True)
RoleName = Literal["owner", "admin", "member"]
Password = Annotated[str, Field(min_length=1, max_length=1024)]
Email = Annotated[str, Field(min_length=3, max_length=254)]
Name = Annotated[str, Field(min_length=1, max_length=100)]


class OrgOut(AccountOut):
    created_at: datetime
    search_mode: Literal["keyword", "semantic", "hybrid"] | None = Field(
        description="The default mode of search and recall where the request (or for"
        " recall the key) names none; null: the deployment's (hybrid when vectors are on)."
    )
    min_score: float | None = Field(
        description="The default relevance cut-off (0-1) of search and recall in every mode;"
        " null: the mode's own (0.4 for semantic and hybrid, none for keyword)."
    )

    @classmethod
    def of_org(cls, account: Account) -> OrgOut:
        return cls(
            **AccountOut.of(account).model_dump(),
            created_at=iso(account.created_at),
            search_mode=account.search.mode,
            min_score=account.search.min_score,
        )


class OrgPatchIn(BaseModel):
    """PATCH /v1/org: what is sent changes. ``name``: owners; ``search_mode`` and
    ``min_score``: owners and admins ("default" or null: back to the deployment's)."""

    model_config = STRICT_IN
    name: Name | None = None
    search_mode: Literal["keyword", "semantic", "hybrid", "default"] | None = None
    min_score: Annotated[float, Field(ge=0.0, le=1.0)] | None = None


class MemberOut(BaseModel):
    id: str
    email: str | None
    name: str
    role: RoleName
    created_at: datetime
    disabled_at: datetime | None
    has_password: bool

    @classmethod
    def of(cls, member: Member) -> MemberOut:
        return cls(
            id=member.id,
            email=member.email,
            name=member.name,
            role=member.role.value,
            created_at=iso(member.created_at),
            disabled_at=iso(member.disabled_at) if member.disabled_at is not None else None,
            has_password=member.has_password,
        )


class MemberPatchIn(BaseModel):
    """PATCH /v1/members/{id} (owners): what is sent changes."""

    model_config = STRICT_IN
    role: RoleName | None = None
    disabled: bool | None = None


class ProfileIn(BaseModel):
    """PATCH /v1/me: one's name and sign-in address (a new address needs the current
    password when one is set)."""

    model_config = STRICT_IN
    name: Name | None = None
    email: Email | None = None
    current_password: Password | None = None


class PasswordIn(BaseModel):
    model_config = STRICT_IN
    current_password: Password | None = None
    new_password: Password


class PasswordOut(BaseModel):
    changed: bool
    sessions_ended: int


class InvitationIn(BaseModel):
    model_config = STRICT_IN
    email: Email
    role: RoleName = "member"


class InvitationOut(BaseModel):
    id: str
    email: str
    role: RoleName
    invited_by: str
    created_at: datetime
    expires_at: datetime

    @classmethod
    def of(cls, invitation: Invitation) -> InvitationOut:
        return cls(
            id=invitation.id,
            email=invitation.email,
            role=invitation.role.value,
            invited_by=invitation.invited_by,
            created_at=iso(invitation.created_at),
            expires_at=iso(invitation.expires_at),
        )


class InvitationCreatedOut(InvitationOut):
    token: str = Field(description="The invitation's token. Shown this once; only a hash is kept.")


class AcceptIn(BaseModel):
    model_config = STRICT_IN
    token: Annotated[str, Field(min_length=1, max_length=200)]
    name: Name
    password: Password


class SignInIn(BaseModel):
    """Either ``email`` and ``password``, or ``api_key`` (a key with its admin toggle on)."""

    model_config = STRICT_IN
    email: Email | None = None
    password: Password | None = None
    api_key: Annotated[str, Field(min_length=1, max_length=200)] | None = None


class SignUpIn(BaseModel):
    model_config = STRICT_IN
    organisation: Name
    email: Email
    name: Name
    password: Password


class SessionOut(BaseModel):
    id: str
    created_at: datetime
    last_seen_at: datetime
    expires_at: datetime = Field(description="The latest it can last, active or not.")
    method: str
    client: str
    user_agent: str
    current: bool

    @classmethod
    def of(cls, session: Session, current_id: str | None = None) -> SessionOut:
        return cls(
            id=session.id,
            created_at=iso(session.created_at),
            last_seen_at=iso(session.last_seen_at),
            expires_at=iso(session.expires_at),
            method=session.method,
            client=session.client,
            user_agent=session.user_agent,
            current=session.id == current_id,
        )


class SignedInOut(BaseModel):
    """A new session: its cookie is set on the answer; the CSRF token is for unsafe
    requests (send it back in x-csrf-token)."""

    session: SessionOut
    member: MemberOut
    organisation: OrgOut
    csrf_token: str


class MeOut(BaseModel):
    auth: Literal["key", "session"] = Field(description="How this request authenticated.")
    member: MemberOut | None
    role: RoleName | None
    organisation: OrgOut
    key: KeyOut | None = Field(description="The key used (null for a session).")
    session: SessionOut | None = Field(description="The session used (null for a key).")
    csrf_token: str | None = Field(description="The session's CSRF token (null for a key).")


class AuditEventOut(BaseModel):
    id: str
    at: datetime
    kind: str
    actor_member_id: str | None
    actor_key_id: str | None
    target_id: str | None
    detail: dict[str, str]
    client: str

    @classmethod
    def of(cls, event: AuditEvent) -> AuditEventOut:
        return cls(
            id=event.id,
            at=iso(event.at),
            kind=event.kind.value,
            actor_member_id=event.actor_member_id,
            actor_key_id=event.actor_key_id,
            target_id=event.target_id,
            detail=dict(event.detail),
            client=event.client,
        )


class AuditOut(BaseModel):
    events: list[AuditEventOut]
    next_cursor: str | None
