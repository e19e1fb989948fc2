"""Who may do what in an organisation: the one decision table every service asks.

``allowed(actor, action, target)`` answers from ``TABLE`` below, read row by row: an
action, then what each role may do, and what a key without its admin toggle may do.
``require`` is the same question, raising ``PermissionDenied`` with a code that says
what would have been needed. Routes may check earlier (to answer before a body is read),
but the services always ask here: no surface can skip it.

Rules, for a target (the member, key or invitation acted on):

- ``ANY``: whatever the target;
- ``OWN``: only one's own (a person: their own member record and keys; a key without
  the admin toggle: only itself);
- ``NOT_OWNER``: anything but an owner (an admin may remove an admin, not an owner; may
  invite an admin, not an owner);
- ``NO``: never.

An actor is a member, through one of their keys or a signed-in session. A session and a
key with the admin toggle (``manage``) act with the member's role; any other key is a
vault key: it reads and writes notes as its toggles allow and sees the few things in
the "vault key" column. A disabled or removed member is no actor at all: authentication
refuses them before anything asks here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Protocol

from memvault.domain.identity import Role
from memvault.errors import PermissionDenied


class Rule(Enum):
    ANY = "any"
    OWN = "own"
    NOT_OWNER = "not owner"
    NO = "no"


ANY, OWN, NOT_OWNER, NO = Rule.ANY, Rule.OWN, Rule.NOT_OWNER, Rule.NO


class Action(StrEnum):
    READ_ORG = "org.read"
    RENAME_ORG = "org.rename"
    READ_BALANCE = "billing.read"
    CHANGE_BILLING = "billing.change"  # the balance, and any key's spend cap
    CHANGE_LIMITS = "limits.change"
    CHANGE_SEARCH = "search.change"  # the organisation's default search mode and min_score
    READ_USAGE = "usage.read"  # target: the key whose usage is read
    LIST_MEMBERS = "members.list"  # target: the member listed
    CHANGE_ROLE = "members.role"
    DISABLE_MEMBER = "members.disable"  # and enable again
    REMOVE_MEMBER = "members.remove"  # target: the member and their role
    INVITE = "invitations.create"  # target: the role offered
    LIST_INVITATIONS = "invitations.list"
    REVOKE_INVITATION = "invitations.revoke"  # target: the role offered
    CREATE_KEY = "keys.create"  # target: the member the key is for
    LIST_KEYS = "keys.list"  # target: the key (and its owner)
    UPDATE_KEY = "keys.update"  # toggles and recall settings
    REVOKE_KEY = "keys.revoke"
    READ_AUDIT = "audit.read"
    MANAGE_SELF = "self.manage"  # one's sessions, password, name and address
    # Memory profiles (memIDs); target: the memory's owner. An admin may delete a
    # colleague's (the erasure primitive outlives the colleague) but not edit it.
    READ_MEMORY = "memories.read"
    CREATE_MEMORY = "memories.create"
    EDIT_MEMORY = "memories.edit"  # its fields and its items
    DELETE_MEMORY = "memories.delete"
    # Import and export jobs (ADR 0041). An import changes the whole shared vault at once:
    # owners, admins and vault keys (scripts, the CLI), not a member's session. Target of
    # READ_JOB: who started the job (its member, its key).
    IMPORT_VAULT = "vault.import"
    EXPORT_VAULT = "vault.export"
    READ_JOB = "jobs.read"
    # A large file's upload (POST /v1/files/uploads): completed, or its bytes sent, only
    # by whoever began it (its member, its key), or an owner or admin of the vault.
    FINISH_UPLOAD = "files.upload"


@dataclass(frozen=True, slots=True)
class Permission:
    owner: Rule
    admin: Rule
    member: Rule
    vault_key: Rule  # a key without the admin toggle, whatever its owner's role

    def rule(self, role: Role | None, manage: bool) -> Rule:
        if role is None:
            return NO
        if not manage:
            return self.vault_key
        return {Role.OWNER: self.owner, Role.ADMIN: self.admin, Role.MEMBER: self.member}[role]


# fmt: off
TABLE: dict[Action, Permission] = {
    #                                 owner      admin      member  vault key
    Action.READ_ORG:          Permission(ANY,       ANY,       ANY,    ANY),
    Action.RENAME_ORG:        Permission(ANY,       NO,        NO,     NO),
    Action.READ_BALANCE:      Permission(ANY,       ANY,       ANY,    ANY),
    Action.CHANGE_BILLING:    Permission(ANY,       NO,        NO,     NO),
    Action.CHANGE_LIMITS:     Permission(ANY,       NO,        NO,     NO),
    Action.CHANGE_SEARCH:     Permission(ANY,       ANY,       NO,     NO),
    Action.READ_USAGE:        Permission(ANY,       ANY,       OWN,    OWN),
    Action.LIST_MEMBERS:      Permission(ANY,       ANY,       OWN,    NO),
    Action.CHANGE_ROLE:       Permission(ANY,       NO,        NO,     NO),
    Action.DISABLE_MEMBER:    Permission(ANY,       NO,        NO,     NO),
    Action.REMOVE_MEMBER:     Permission(ANY,       NOT_OWNER, NO,     NO),
    Action.INVITE:            Permission(ANY,       NOT_OWNER, NO,     NO),
    Action.LIST_INVITATIONS:  Permission(ANY,       ANY,       NO,     NO),
    Action.REVOKE_INVITATION: Permission(ANY,       NOT_OWNER, NO,     NO),
    Action.CREATE_KEY:        Permission(OWN,       OWN,       OWN,    NO),
    Action.LIST_KEYS:         Permission(ANY,       ANY,       OWN,    NO),
    Action.UPDATE_KEY:        Permission(ANY,       OWN,       OWN,    NO),
    Action.REVOKE_KEY:        Permission(ANY,       ANY,       OWN,    NO),
    Action.READ_AUDIT:        Permission(ANY,       ANY,       NO,     NO),
    Action.MANAGE_SELF:       Permission(OWN,       OWN,       OWN,    NO),
    Action.READ_MEMORY:       Permission(ANY,       ANY,       OWN,    NO),
    Action.CREATE_MEMORY:     Permission(OWN,       OWN,       OWN,    NO),
    Action.EDIT_MEMORY:       Permission(ANY,       OWN,       OWN,    NO),
    Action.DELETE_MEMORY:     Permission(ANY,       ANY,       OWN,    NO),
    Action.IMPORT_VAULT:      Permission(ANY,       ANY,       NO,     ANY),
    Action.EXPORT_VAULT:      Permission(ANY,       ANY,       ANY,    ANY),
    Action.READ_JOB:          Permission(ANY,       ANY,       OWN,    OWN),
    Action.FINISH_UPLOAD:     Permission(ANY,       ANY,       OWN,    OWN),
}
# fmt: on


class Actor(Protocol):
    """Who acts (``services.context.Caller`` is one)."""

    @property
    def member_id(self) -> str | None: ...
    @property
    def key_id(self) -> str | None: ...
    @property
    def role(self) -> Role | None: ...
    @property
    def manage(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class Target:
    """What an action is on: whose it is (``member_id``; ``key_id`` for a key), and the
    role at stake (the target member's, or the role an invitation offers)."""

    member_id: str | None = None
    key_id: str | None = None
    role: Role | None = None


SELF = Target()  # "on nothing in particular" (rules other than ANY refuse it)


def _own(actor: Actor, target: Target) -> bool:
    if not actor.manage:  # a vault key owns only itself
        return target.key_id is not None and target.key_id == actor.key_id
    return target.member_id is not None and target.member_id == actor.member_id


def _passes(rule: Rule, actor: Actor, target: Target) -> bool:
    if rule is ANY:
        return True
    if rule is OWN:
        return _own(actor, target)
    if rule is NOT_OWNER:
        return target.role is not None and target.role is not Role.OWNER
    return False


def allowed(actor: Actor, action: Action, target: Target = SELF) -> bool:
    """May ``actor`` do ``action`` on ``target``? The table above decides."""
    return _passes(TABLE[action].rule(actor.role, actor.manage), actor, target)


def unrestricted(actor: Actor, action: Action) -> bool:
    """May ``actor`` do ``action`` whatever the target (a listing of everyone's)?"""
    return TABLE[action].rule(actor.role, actor.manage) is ANY


def require(actor: Actor, action: Action, target: Target = SELF) -> None:
    """``allowed``, or PermissionDenied saying what it needs: ``admin_required`` when a
    vault key tries what only a person may, else the least role that could
    (``owner_required``, ``admin_required``), else ``forbidden``."""
    if allowed(actor, action, target):
        return
    if not actor.manage and actor.role is not None:
        raise PermissionDenied(
            "this needs an admin key or a signed-in session; the key used can manage notes only",
            code="admin_required",
        )
    for role in (Role.MEMBER, Role.ADMIN, Role.OWNER):
        rule = TABLE[action].rule(role, True)
        # "Would this role pass?" judged on the same target, as if the actor held it.
        if rule is not NO and role is not actor.role and _passes(rule, actor, target):
            raise PermissionDenied(
                f"this needs the {role} role in the organisation",
                code=f"{role}_required",
            )
    raise PermissionDenied(f"not allowed: {action}", code="forbidden")
