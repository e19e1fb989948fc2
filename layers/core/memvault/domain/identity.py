"""Who people are in an organisation: members, their roles, invitations, sessions, audit.

An **organisation** is what the code has always called an account (``models.Account``):
it owns the vault, the balance, the limits and the budgets. A **member** is one person
in one organisation; every API key belongs to exactly one member (its owner). Plain
data, no I/O; what each role may do is ``domain.policy``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum

from memvault.errors import InvalidInput

MAX_EMAIL = 254  # RFC 5321's path limit
MAX_MEMBER_NAME = 100
# Something that looks like an address: one @, a dot in the domain, no spaces. Mail is
# never sent; the address is a sign-in name a person recognises.
_EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


class Role(StrEnum):
    OWNER = "owner"
    ADMIN = "admin"
    MEMBER = "member"


ROLES: tuple[Role, ...] = (Role.OWNER, Role.ADMIN, Role.MEMBER)


# The first owner an organisation gets when it is made without one (the embedded first
# start, `memvault bootstrap`, the upgrade of an account made before members existed).
# The id is derived from the organisation's, so two processes upgrading one account at
# once make the same member, once.
FOUNDER_NAME = "owner"


def founder_id(account_id: str) -> str:
    return "f" + hashlib.sha256(f"founder\x1f{account_id}".encode()).hexdigest()[:15]


def parse_role(value: str) -> Role:
    try:
        return Role(value)
    except ValueError:
        raise InvalidInput(
            f"role must be one of owner, admin, member (got {value!r})", code="invalid_role"
        ) from None


def email_key(email: str) -> str:
    """The folded form two addresses are compared by (case-insensitive, NFC)."""
    return unicodedata.normalize("NFC", email.strip()).casefold()


def check_email(email: str) -> str:
    """The address as given, trimmed; refused when it cannot be one."""
    value = unicodedata.normalize("NFC", email.strip())
    if len(value) > MAX_EMAIL or not _EMAIL_RE.fullmatch(value):
        raise InvalidInput("that is not an email address", code="invalid_email")
    return value


def check_member_name(name: str) -> str:
    value = name.strip()
    if not value or len(value) > MAX_MEMBER_NAME or not value.isprintable():
        raise InvalidInput(
            f"a name must be 1 to {MAX_MEMBER_NAME} printable characters",
            code="invalid_member_name",
        )
    return value


@dataclass(frozen=True, slots=True)
class Member:
    """A person in one organisation. ``email`` is None for an owner made by the embedded
    first start, ``memvault bootstrap`` or the upgrade of an account made before members
    existed: they sign in with their key, and may add an address later."""

    id: str
    account_id: str
    email: str | None
    name: str
    role: Role
    created_at: float
    disabled_at: float | None = None
    has_password: bool = False

    @property
    def active(self) -> bool:
        return self.disabled_at is None


@dataclass(frozen=True, slots=True)
class Invitation:
    """An offer to join an organisation with a role; its token is stored hashed."""

    id: str
    account_id: str
    email: str
    role: Role
    invited_by: str  # member id
    created_at: float
    expires_at: float


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in person: server-side, revocable, with an idle and an absolute expiry."""

    id: str
    account_id: str
    member_id: str
    created_at: float
    last_seen_at: float
    expires_at: float  # absolute: created_at + the maximum session length
    method: str  # "password" | "api_key": how it was signed in
    client: str = ""  # the client address at sign-in
    user_agent: str = ""


class AuditKind(StrEnum):
    SIGN_IN = "sign_in"
    SIGN_IN_FAILED = "sign_in_failed"
    SIGN_OUT = "sign_out"
    SESSION_ENDED = "session_ended"
    PASSWORD_CHANGED = "password_changed"
    PROFILE_CHANGED = "profile_changed"
    INVITATION_CREATED = "invitation_created"
    INVITATION_REVOKED = "invitation_revoked"
    INVITATION_ACCEPTED = "invitation_accepted"
    ROLE_CHANGED = "role_changed"
    MEMBER_DISABLED = "member_disabled"
    MEMBER_ENABLED = "member_enabled"
    MEMBER_REMOVED = "member_removed"
    KEY_CREATED = "key_created"
    KEY_REVOKED = "key_revoked"
    ORG_CREATED = "org_created"
    ORG_RENAMED = "org_renamed"
    SEARCH_DEFAULTS_CHANGED = "search_defaults_changed"  # the organisation's mode/min_score
    MEMORY_DELETED = "memory_deleted"  # a memory profile erased (its id and owner only)


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One identity event. Never a secret, a password or note content: ids, roles, the
    method and the client address only."""

    id: str
    account_id: str
    at: float
    kind: AuditKind
    actor_member_id: str | None = None
    actor_key_id: str | None = None
    target_id: str | None = None  # the member, key, invitation or session acted on
    detail: dict[str, str] = field(default_factory=dict)
    client: str = ""
