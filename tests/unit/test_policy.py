"""domain.policy: every role x action, on one's own things, a colleague's and an owner's.

The expected answers are written out here a second time, as the issue states them, so a
change to the table that breaks a rule fails here rather than passing unnoticed.
"""

from __future__ import annotations

import pytest

from memvault.domain.identity import Role
from memvault.domain.policy import TABLE, Action, Target, allowed, require
from memvault.errors import PermissionDenied
from memvault.services.context import Caller

OWNER, ADMIN, MEMBER = Role.OWNER, Role.ADMIN, Role.MEMBER


def actor(role: Role, *, manage: bool = True) -> Caller:
    return Caller(account_id="org", member_id="me", key_id="my-key", role=role, manage=manage)


# What is acted on: nothing in particular, my own, a colleague (a member or an admin) and
# an owner colleague. A key target carries its owner; a role target the role at stake.
NOTHING = Target()
MINE = Target(member_id="me", key_id="my-key", role=MEMBER)
COLLEAGUE = Target(member_id="them", key_id="their-key", role=MEMBER)
ADMIN_COLLEAGUE = Target(member_id="them", key_id="their-key", role=ADMIN)
OWNER_COLLEAGUE = Target(member_id="boss", key_id="boss-key", role=OWNER)
TARGETS = {
    "nothing": NOTHING,
    "mine": MINE,
    "colleague": COLLEAGUE,
    "admin": ADMIN_COLLEAGUE,
    "owner": OWNER_COLLEAGUE,
}

# action -> role -> the targets it is allowed on ("vault key": a key without the admin
# toggle, of an owner; it owns only itself).
ALL = set(TARGETS)
OWN = {"mine"}
NOT_OWNERS = {"mine", "colleague", "admin"}  # "mine" is a member's role here
NONE: set[str] = set()
EXPECTED: dict[Action, dict[str, set[str]]] = {
    Action.READ_ORG: {"owner": ALL, "admin": ALL, "member": ALL, "vault key": ALL},
    Action.RENAME_ORG: {"owner": ALL, "admin": NONE, "member": NONE, "vault key": NONE},
    Action.READ_BALANCE: {"owner": ALL, "admin": ALL, "member": ALL, "vault key": ALL},
    Action.CHANGE_BILLING: {"owner": ALL, "admin": NONE, "member": NONE, "vault key": NONE},
    Action.CHANGE_LIMITS: {"owner": ALL, "admin": NONE, "member": NONE, "vault key": NONE},
    # The organisation's default search mode and min_score (issue 19): owners and admins.
    Action.CHANGE_SEARCH: {"owner": ALL, "admin": ALL, "member": NONE, "vault key": NONE},
    Action.READ_USAGE: {"owner": ALL, "admin": ALL, "member": OWN, "vault key": OWN},
    Action.LIST_MEMBERS: {"owner": ALL, "admin": ALL, "member": OWN, "vault key": NONE},
    Action.CHANGE_ROLE: {"owner": ALL, "admin": NONE, "member": NONE, "vault key": NONE},
    Action.DISABLE_MEMBER: {"owner": ALL, "admin": NONE, "member": NONE, "vault key": NONE},
    Action.REMOVE_MEMBER: {
        "owner": ALL,
        "admin": NOT_OWNERS,
        "member": NONE,
        "vault key": NONE,
    },
    Action.INVITE: {"owner": ALL, "admin": NOT_OWNERS, "member": NONE, "vault key": NONE},
    Action.LIST_INVITATIONS: {"owner": ALL, "admin": ALL, "member": NONE, "vault key": NONE},
    Action.REVOKE_INVITATION: {
        "owner": ALL,
        "admin": NOT_OWNERS,
        "member": NONE,
        "vault key": NONE,
    },
    Action.CREATE_KEY: {"owner": OWN, "admin": OWN, "member": OWN, "vault key": NONE},
    Action.LIST_KEYS: {"owner": ALL, "admin": ALL, "member": OWN, "vault key": NONE},
    Action.UPDATE_KEY: {"owner": ALL, "admin": OWN, "member": OWN, "vault key": NONE},
    Action.REVOKE_KEY: {"owner": ALL, "admin": ALL, "member": OWN, "vault key": NONE},
    Action.READ_AUDIT: {"owner": ALL, "admin": ALL, "member": NONE, "vault key": NONE},
    Action.MANAGE_SELF: {"owner": OWN, "admin": OWN, "member": OWN, "vault key": NONE},
    # Memory profiles: owners and admins read every memory; owners edit any; admins may
    # delete a colleague's memory but not edit it; members manage their own.
    Action.READ_MEMORY: {"owner": ALL, "admin": ALL, "member": OWN, "vault key": NONE},
    Action.CREATE_MEMORY: {"owner": OWN, "admin": OWN, "member": OWN, "vault key": NONE},
    Action.EDIT_MEMORY: {"owner": ALL, "admin": OWN, "member": OWN, "vault key": NONE},
    Action.DELETE_MEMORY: {"owner": ALL, "admin": ALL, "member": OWN, "vault key": NONE},
    # Import and export jobs (ADR 0041): an import changes the whole vault, so not from a
    # member's session; a job is read by whoever may see its starter's.
    Action.IMPORT_VAULT: {"owner": ALL, "admin": ALL, "member": NONE, "vault key": ALL},
    Action.EXPORT_VAULT: {"owner": ALL, "admin": ALL, "member": ALL, "vault key": ALL},
    Action.READ_JOB: {"owner": ALL, "admin": ALL, "member": OWN, "vault key": OWN},
    # A large file's upload is finished by whoever began it, or an owner or admin.
    Action.FINISH_UPLOAD: {"owner": ALL, "admin": ALL, "member": OWN, "vault key": OWN},
}
ACTORS = {
    "owner": actor(OWNER),
    "admin": actor(ADMIN),
    "member": actor(MEMBER),
    "vault key": actor(OWNER, manage=False),
}
CASES = [
    (action, who, target)
    for action in Action
    for who in ACTORS
    for target in TARGETS
    # "nothing" only matters for the rules that need no target
    if target != "nothing" or EXPECTED[action][who] in (ALL, NONE)
]


def test_the_table_covers_every_action() -> None:
    assert set(TABLE) == set(Action) == set(EXPECTED)


@pytest.mark.parametrize(("action", "who", "target"), CASES)
def test_every_role_and_action(action: Action, who: str, target: str) -> None:
    expected = target in EXPECTED[action][who]
    assert allowed(ACTORS[who], action, TARGETS[target]) is expected
    if expected:
        require(ACTORS[who], action, TARGETS[target])
    else:
        with pytest.raises(PermissionDenied):
            require(ACTORS[who], action, TARGETS[target])


def test_the_refusal_says_what_was_needed() -> None:
    def code(who: Caller, action: Action, target: Target = NOTHING) -> str:
        with pytest.raises(PermissionDenied) as refused:
            require(who, action, target)
        return refused.value.code

    assert code(ACTORS["admin"], Action.CHANGE_BILLING) == "owner_required"
    assert code(ACTORS["member"], Action.READ_AUDIT) == "admin_required"
    assert code(ACTORS["admin"], Action.REMOVE_MEMBER, OWNER_COLLEAGUE) == "owner_required"
    assert code(ACTORS["member"], Action.REVOKE_KEY, COLLEAGUE) == "admin_required"
    assert code(ACTORS["member"], Action.UPDATE_KEY, COLLEAGUE) == "owner_required"
    assert code(ACTORS["vault key"], Action.LIST_KEYS) == "admin_required"
    # A key for someone else is no one's to make.
    assert code(ACTORS["owner"], Action.CREATE_KEY, COLLEAGUE) == "forbidden"


def test_no_member_no_rights() -> None:
    nobody = Caller(account_id="org")
    assert not any(allowed(nobody, action, MINE) for action in Action)
