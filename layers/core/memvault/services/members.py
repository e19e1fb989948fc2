"""Members and invitations: who is in an organisation, with which role, and joining it.

Every decision about who may do what is ``domain.policy``'s; this module applies it and
keeps the rules that are about state rather than rights: an organisation keeps an active
owner (checked again atomically by the store), a removed member's keys are revoked and
their sessions ended, a disabled member's sessions end (their keys stop at once through
``ApiKey.owner_active``), an invitation's token is shown once, stored hashed, expires and
works once. Passwords are hashed with argon2id and never logged.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from memvault.domain.identity import (
    AuditKind,
    Invitation,
    Member,
    Role,
    check_email,
    check_member_name,
    email_key,
)
from memvault.domain.models import Account, Toggles
from memvault.domain.policy import Action, Target, allowed, require
from memvault.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from memvault.ports import IdentityStorage, PasswordHasher
from memvault.services.accounts import AccountService, IssuedKey, hash_key
from memvault.services.audit import AuditService
from memvault.services.context import Caller
from memvault.services.sessions import MAX_PASSWORD, SessionService, StartedSession

INVITATION_PREFIX = "mvi_"
DAY_SECONDS = 86_400.0


def target_of(member: Member) -> Target:
    return Target(member_id=member.id, role=member.role)


def member_not_found(member_id: str) -> NotFound:
    return NotFound(f"no member {member_id!r} in this organisation", code="member_not_found")


@dataclass(frozen=True, slots=True)
class IssuedInvitation:
    invitation: Invitation
    token: str  # shown to the inviter once; only its hash is kept


@dataclass(frozen=True, slots=True)
class CreatedOrganisation:
    account: Account
    owner: Member
    key: IssuedKey | None  # the owner's first key, to print once


class MemberService:
    def __init__(
        self,
        store: IdentityStorage,
        accounts: AccountService,
        sessions: SessionService,
        audit: AuditService,
        hasher: PasswordHasher,
        clock: Callable[[], float],
        *,
        invitation_days: float,
        password_min_length: int,
    ) -> None:
        self.store = store
        self.accounts = accounts
        self.sessions = sessions
        self.audit = audit
        self.hasher = hasher
        self.clock = clock
        self.invitation_seconds = invitation_days * DAY_SECONDS
        self.password_min_length = password_min_length

    # ------------------------------------------------------------------ rules
    def check_password(self, password: str) -> str:
        if not self.password_min_length <= len(password) <= MAX_PASSWORD or not password.strip():
            raise InvalidInput(
                f"a password must be {self.password_min_length} to {MAX_PASSWORD} characters",
                code="weak_password",
            )
        return password

    def _member(self, account_id: str, member_id: str) -> Member:
        member = self.store.get_member(account_id, member_id)
        if member is None:
            raise member_not_found(member_id)
        return member

    def _other_active_owner(self, member: Member) -> bool:
        return any(
            m.role is Role.OWNER and m.active and m.id != member.id
            for m in self.store.list_members(member.account_id)
        )

    # ------------------------------------------------------------------ members
    def me(self, actor: Caller) -> Member:
        if actor.member_id is None:
            raise NotFound("this key belongs to no member", code="member_not_found")
        return self._member(actor.account_id, actor.member_id)

    def list_members(self, actor: Caller) -> list[Member]:
        """Owners and admins see everyone; a member sees themself."""
        require(actor, Action.LIST_MEMBERS, Target(member_id=actor.member_id))
        found = self.store.list_members(actor.account_id)
        return [m for m in found if allowed(actor, Action.LIST_MEMBERS, target_of(m))]

    def get_member(self, actor: Caller, member_id: str) -> Member:
        member = self._member(actor.account_id, member_id)
        require(actor, Action.LIST_MEMBERS, target_of(member))
        return member

    def change_member(
        self,
        actor: Caller,
        member_id: str,
        *,
        role: Role | None = None,
        disabled: bool | None = None,
    ) -> Member:
        member = self._member(actor.account_id, member_id)
        new_role = role if role is not None and role is not member.role else None
        flip = disabled is not None and disabled == member.active
        if new_role is not None:
            require(actor, Action.CHANGE_ROLE, target_of(member))
        if flip:
            require(actor, Action.DISABLE_MEMBER, target_of(member))
        if new_role is None and not flip:
            require(actor, Action.LIST_MEMBERS, target_of(member))
            return member
        updated = self.store.update_member(
            actor.account_id,
            member_id,
            role=new_role,
            disabled_at=self.clock() if flip and disabled else None,
            enable=flip and not disabled,
        )
        if new_role is not None:
            self.audit.record(
                actor.account_id,
                AuditKind.ROLE_CHANGED,
                actor=actor,
                target_id=member_id,
                detail={"from": member.role.value, "to": new_role.value},
            )
        if flip:
            if disabled:
                self.sessions.end_member_sessions(actor.account_id, member_id)
            kind = AuditKind.MEMBER_DISABLED if disabled else AuditKind.MEMBER_ENABLED
            self.audit.record(actor.account_id, kind, actor=actor, target_id=member_id)
        return updated

    def remove_member(self, actor: Caller, member_id: str) -> Member:
        """Revoke their keys, end their sessions, forget them (their usage stays)."""
        member = self._member(actor.account_id, member_id)
        require(actor, Action.REMOVE_MEMBER, target_of(member))
        if member.role is Role.OWNER and member.active and not self._other_active_owner(member):
            raise Conflict(
                "the organisation must keep an active owner; make another member owner first",
                code="last_owner",
            )
        for key in self.store.list_keys(actor.account_id):
            if key.member_id == member_id and key.active:
                self.accounts.revoke(actor.account_id, key.id, owner_leaving=True)
        self.sessions.end_member_sessions(actor.account_id, member_id)
        removed = self.store.remove_member(actor.account_id, member_id)
        self.audit.record(
            actor.account_id,
            AuditKind.MEMBER_REMOVED,
            actor=actor,
            target_id=member_id,
            detail={"role": member.role.value},
        )
        return removed

    # ------------------------------------------------------------------ oneself
    def update_profile(
        self,
        actor: Caller,
        *,
        name: str | None = None,
        email: str | None = None,
        current_password: str | None = None,
    ) -> Member:
        """One's display name and sign-in address (a new address needs the current
        password when one is set: it is how the account would be taken over)."""
        require(actor, Action.MANAGE_SELF, Target(member_id=actor.member_id))
        member = self.me(actor)
        if email is not None:
            email = check_email(email)
            if email_key(email) == email_key(member.email or ""):
                email = None
            elif member.has_password:
                self._check_current(member, current_password)
        updated = self.store.update_member(
            actor.account_id,
            member.id,
            name=check_member_name(name) if name is not None else None,
            email=email,
        )
        self.audit.record(
            actor.account_id,
            AuditKind.PROFILE_CHANGED,
            actor=actor,
            target_id=member.id,
            detail={"fields": ",".join(f for f, v in (("name", name), ("email", email)) if v)},
        )
        return updated

    def _check_current(self, member: Member, current: str | None) -> None:
        stored = self.store.password_hash(member.account_id, member.id)
        if stored is None:
            return
        if not current or not self.hasher.verify(stored, current[:MAX_PASSWORD]):
            raise PermissionDenied(
                "the current password is not right", code="current_password_required"
            )

    def change_password(self, actor: Caller, *, current: str | None, new: str) -> int:
        """Set a new password (the current one is needed when there is one) and end every
        other session of the member; how many ended."""
        require(actor, Action.MANAGE_SELF, Target(member_id=actor.member_id))
        member = self.me(actor)
        self._check_current(member, current)
        self.store.set_password_hash(
            actor.account_id, member.id, self.hasher.hash(self.check_password(new))
        )
        ended = self.sessions.end_member_sessions(
            actor.account_id, member.id, keep=actor.session_id
        )
        self.audit.record(
            actor.account_id, AuditKind.PASSWORD_CHANGED, actor=actor, target_id=member.id
        )
        return ended

    # ------------------------------------------------------------------ invitations
    def invite(self, actor: Caller, email: str, role: Role) -> IssuedInvitation:
        require(actor, Action.INVITE, Target(role=role))
        email = check_email(email)
        # Only this organisation is looked at: another's members are no business of an
        # inviter here (an address taken elsewhere is refused when the invitation is used).
        folded = email_key(email)
        if any(
            email_key(m.email or "") == folded for m in self.store.list_members(actor.account_id)
        ):
            raise Conflict("a member of the organisation has that address", code="member_exists")
        now = self.clock()
        token = INVITATION_PREFIX + secrets.token_urlsafe(32)
        invitation = Invitation(
            id=uuid.uuid4().hex[:16],
            account_id=actor.account_id,
            email=email,
            role=role,
            invited_by=actor.member_id or "",
            created_at=now,
            expires_at=now + self.invitation_seconds,
        )
        self.store.put_invitation(invitation, hash_key(token))
        self.audit.record(
            actor.account_id,
            AuditKind.INVITATION_CREATED,
            actor=actor,
            target_id=invitation.id,
            detail={"role": role.value, "email": email},
        )
        return IssuedInvitation(invitation, token)

    def list_invitations(self, actor: Caller) -> list[Invitation]:
        require(actor, Action.LIST_INVITATIONS)
        return self.store.list_invitations(actor.account_id)

    def revoke_invitation(self, actor: Caller, invitation_id: str) -> None:
        invitation = self.store.get_invitation(actor.account_id, invitation_id)
        if invitation is None:
            raise NotFound(f"no invitation {invitation_id!r}", code="invitation_not_found")
        require(actor, Action.REVOKE_INVITATION, Target(role=invitation.role))
        if self.store.delete_invitation(actor.account_id, invitation_id):
            self.audit.record(
                actor.account_id,
                AuditKind.INVITATION_REVOKED,
                actor=actor,
                target_id=invitation_id,
            )

    def accept_invitation(
        self, token: str, *, name: str, password: str, client: str = "", user_agent: str = ""
    ) -> StartedSession:
        """Join with the invitation's address and role, and sign in."""
        self.sessions.limit_attempts(client=client)
        invitation = self.store.invitation_by_token(hash_key(token.strip()))
        if invitation is None or invitation.expires_at <= self.clock():
            raise NotFound(
                "the invitation is not valid: it expired, was used or was revoked",
                code="invitation_not_found",
            )
        member = Member(
            id=uuid.uuid4().hex[:16],
            account_id=invitation.account_id,
            email=invitation.email,
            name=check_member_name(name),
            role=invitation.role,
            created_at=self.clock(),
            has_password=True,
        )
        self.store.accept_invitation(
            invitation, member, password_hash=self.hasher.hash(self.check_password(password))
        )
        self.audit.record(
            invitation.account_id,
            AuditKind.INVITATION_ACCEPTED,
            member_id=member.id,
            target_id=invitation.id,
            detail={"role": invitation.role.value},
            client=client,
        )
        return self.sessions.start(member, "password", client=client, user_agent=user_agent)

    def expire_invitations(self) -> int:
        return self.store.expire_invitations(self.clock())

    # ------------------------------------------------------------------ organisations
    def create_organisation(
        self,
        name: str,
        *,
        owner_email: str | None,
        owner_name: str | None = None,
        account_id: str | None = None,
        password: str | None = None,
        with_key: bool = True,
    ) -> CreatedOrganisation:
        """A new organisation with its first owner (and, ``with_key``, the owner's first
        admin key): the operator's ``memvault orgs create`` and ``POST /v1/signup``."""
        name = name.strip()
        if not name or len(name) > 100 or not name.isprintable():
            raise InvalidInput(
                "an organisation name must be 1 to 100 characters", code="invalid_name"
            )
        email = check_email(owner_email) if owner_email is not None else None
        if email is not None and self.store.member_by_email(email) is not None:
            raise Conflict("a member already signs in with that address", code="email_taken")
        hashed = self.hasher.hash(self.check_password(password)) if password is not None else None
        account = self.accounts.create_account(name, account_id=account_id)
        owner = Member(
            id=uuid.uuid4().hex[:16],
            account_id=account.id,
            email=email,
            name=check_member_name(owner_name or (email or "owner").split("@")[0]),
            role=Role.OWNER,
            created_at=self.clock(),
            has_password=hashed is not None,
        )
        self.store.create_member(owner, password_hash=hashed)
        key = None
        if with_key:
            key = self.accounts.issue_key(
                account.id,
                name="admin",
                toggles=Toggles(recall=True, tools=True, mcp=True),
                admin=True,
                member_id=owner.id,
            )
        self.audit.record(
            account.id, AuditKind.ORG_CREATED, member_id=owner.id, target_id=account.id
        )
        return CreatedOrganisation(account, owner, key)

    def sign_up(
        self,
        organisation: str,
        *,
        email: str,
        name: str,
        password: str,
        client: str = "",
        user_agent: str = "",
    ) -> StartedSession:
        """POST /v1/signup (only with MEMVAULT_SIGNUP=open): an organisation, its owner,
        signed in."""
        self.sessions.limit_attempts(client=client, email=email)
        created = self.create_organisation(
            organisation, owner_email=email, owner_name=name, password=password, with_key=False
        )
        return self.sessions.start(created.owner, "password", client=client, user_agent=user_agent)
