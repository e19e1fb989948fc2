"""Members, invitations, roles, keys by role and the audit log, on both backends, through
the services (the policy is theirs, so this is where it is proven)."""

from __future__ import annotations

import pytest

from memvault.container import Services
from memvault.domain.identity import AuditKind, Role
from memvault.domain.models import KeySettings, Limits, Toggles
from memvault.errors import Conflict, NotFound, PermissionDenied, Unauthenticated
from memvault.services.retention import DAY_SECONDS
from tests.support.clock import FakeClock
from tests.support.people import PASSWORD, Org, make_org


@pytest.fixture
def org(services: Services) -> Org:
    return make_org(services, "org-a")


def code_of(call: object) -> str:
    assert callable(call)
    with pytest.raises((PermissionDenied, Conflict, NotFound, Unauthenticated)) as refused:
        call()
    return str(refused.value.code)


# ---------------------------------------------------------------------------- addresses
def test_an_address_is_unique_across_organisations_whatever_its_case(
    services: Services, org: Org
) -> None:
    with pytest.raises(Conflict) as taken:
        services.members.create_organisation(
            "Other", owner_email="OWNER@Org-A.test", account_id="org-b", password=PASSWORD
        )
    assert taken.value.code == "email_taken"
    other = make_org(services, "org-b")
    # An invitation to an address taken elsewhere fails when it is used, and leaves the
    # invitation (all or nothing) and nobody made.
    issued = services.members.invite(other.owner.caller, "Admin@ORG-A.test", Role.MEMBER)
    with pytest.raises(Conflict) as again:
        services.members.accept_invitation(issued.token, name="Dup", password=PASSWORD)
    assert again.value.code == "email_taken"
    assert [i.id for i in services.members.list_invitations(other.owner.caller)] == [
        issued.invitation.id
    ]
    assert len(services.members.list_members(other.owner.caller)) == 3
    # Inviting a member of one's own organisation is refused at once.
    assert (
        code_of(lambda: services.members.invite(org.owner.caller, "MEMBER@org-a.test", Role.ADMIN))
        == "member_exists"
    )


def test_a_member_changes_their_name_and_address(services: Services, org: Org) -> None:
    caller = org.member.caller
    assert (
        code_of(lambda: services.members.update_profile(caller, email="new@org-a.test"))
        == "current_password_required"
    )
    updated = services.members.update_profile(
        caller, name="Mia", email="New@Org-A.test", current_password=PASSWORD
    )
    assert (updated.name, updated.email) == ("Mia", "New@Org-A.test")
    assert services.sessions.sign_in_password("new@org-a.test", PASSWORD).member.id == updated.id
    with pytest.raises(Unauthenticated):
        services.sessions.sign_in_password(org.member.email, PASSWORD)
    # The old address is free again, the new one taken.
    assert (
        code_of(
            lambda: services.members.update_profile(
                org.admin.caller, email="NEW@org-a.test", current_password=PASSWORD
            )
        )
        == "email_taken"
    )


# ---------------------------------------------------------------------------- invitations
def test_an_invitation_is_stored_hashed_works_once_and_expires(
    services: Services, org: Org, clock: FakeClock
) -> None:
    issued = services.members.invite(org.admin.caller, "new@org-a.test", Role.ADMIN)
    assert issued.token.startswith("mvi_")
    assert issued.invitation.expires_at == clock() + 7 * DAY_SECONDS
    listed = services.members.list_invitations(org.owner.caller)
    assert [(i.email, i.role) for i in listed] == [("new@org-a.test", Role.ADMIN)]
    assert services.store.invitation_by_token(issued.token) is None  # only its hash is kept

    joined = services.members.accept_invitation(issued.token, name="Newt", password=PASSWORD)
    assert (joined.member.role, joined.member.email) == (Role.ADMIN, "new@org-a.test")
    assert (
        services.callers.for_session(joined.secret, csrf_token=None, unsafe=False).role == "admin"
    )
    with pytest.raises(NotFound) as used:
        services.members.accept_invitation(issued.token, name="Again", password=PASSWORD)
    assert used.value.code == "invitation_not_found"
    assert services.members.list_invitations(org.owner.caller) == []

    late = services.members.invite(org.owner.caller, "late@org-a.test", Role.MEMBER)
    clock.advance(7 * DAY_SECONDS + 1)
    with pytest.raises(NotFound):
        services.members.accept_invitation(late.token, name="Late", password=PASSWORD)

    # (The sessions have ended by now: keys act for their owners.)
    revoked = services.members.invite(org.owner.key_caller, "gone@org-a.test", Role.MEMBER)
    services.members.revoke_invitation(org.admin.key_caller, revoked.invitation.id)
    with pytest.raises(NotFound):
        services.members.accept_invitation(revoked.token, name="Gone", password=PASSWORD)


def test_who_may_invite_whom(services: Services, org: Org) -> None:
    members = services.members
    assert members.invite(org.owner.caller, "o2@org-a.test", Role.OWNER).invitation.role == "owner"
    assert code_of(lambda: members.invite(org.admin.caller, "o3@org-a.test", Role.OWNER)) == (
        "owner_required"
    )
    assert members.invite(org.admin.caller, "a2@org-a.test", Role.ADMIN).invitation.role == "admin"
    for who in (org.member.caller, org.owner.vault_caller):
        assert code_of(lambda who=who: members.invite(who, "m@org-a.test", Role.MEMBER)) == (
            "admin_required"
        )
    assert code_of(lambda: members.list_invitations(org.member.caller)) == "admin_required"
    owner_invite = next(
        i for i in members.list_invitations(org.owner.caller) if i.role is Role.OWNER
    )
    assert code_of(lambda: members.revoke_invitation(org.admin.caller, owner_invite.id)) == (
        "owner_required"
    )


def test_a_weak_password_is_refused(services: Services, org: Org) -> None:
    issued = services.members.invite(org.owner.caller, "weak@org-a.test", Role.MEMBER)
    with pytest.raises(Exception) as refused:
        services.members.accept_invitation(issued.token, name="Weak", password="short")
    assert getattr(refused.value, "code", "") == "weak_password"
    # Refused before anything was used up.
    assert services.members.accept_invitation(issued.token, name="Weak", password=PASSWORD)


# ---------------------------------------------------------------------------- roles
def test_listing_members_by_role(services: Services, org: Org) -> None:
    everyone = {org.owner.member.id, org.admin.member.id, org.member.member.id}
    for who in (org.owner, org.admin):
        assert {m.id for m in services.members.list_members(who.caller)} == everyone
    assert [m.id for m in services.members.list_members(org.member.caller)] == [
        org.member.member.id
    ]
    assert code_of(lambda: services.members.list_members(org.member.vault_caller)) == (
        "admin_required"
    )
    assert code_of(lambda: services.members.get_member(org.member.caller, org.owner.member.id)) == (
        "admin_required"
    )


def test_only_an_owner_changes_roles_and_an_owner_always_remains(
    services: Services, org: Org
) -> None:
    members, owner = services.members, org.owner
    admin_id, member_id = org.admin.member.id, org.member.member.id
    assert code_of(lambda: members.change_member(org.admin.caller, member_id, role=Role.ADMIN)) == (
        "owner_required"
    )
    assert code_of(
        lambda: members.change_member(owner.caller, owner.member.id, role=Role.ADMIN)
    ) == ("last_owner")
    assert code_of(lambda: members.change_member(owner.caller, owner.member.id, disabled=True)) == (
        "last_owner"
    )
    assert code_of(lambda: members.remove_member(owner.caller, owner.member.id)) == "last_owner"

    promoted = members.change_member(owner.caller, member_id, role=Role.OWNER)
    assert promoted.role is Role.OWNER
    # The promotion applies to the member's very next request, through key or session.
    assert org.member.caller.role == "owner" and org.member.key_caller.role == "owner"
    services.org.set_limits(org.member.key_caller, Limits(max_notes=10))
    # Now the first owner may step down, and the second may not.
    assert members.change_member(owner.caller, owner.member.id, role=Role.MEMBER).role == "member"
    assert code_of(
        lambda: members.change_member(org.member.caller, member_id, role=Role.ADMIN)
    ) == ("last_owner")
    assert members.get_member(org.member.caller, admin_id).role is Role.ADMIN


def test_a_disabled_member_stops_at_once_and_comes_back_when_enabled(
    services: Services, org: Org
) -> None:
    target = org.member
    assert (
        code_of(
            lambda: services.members.change_member(
                org.admin.caller, target.member.id, disabled=True
            )
        )
        == "owner_required"
    )
    services.members.change_member(org.owner.caller, target.member.id, disabled=True)
    for secret in (target.key.secret, target.vault_key.secret):
        assert code_of(lambda s=secret: services.accounts.authenticate(s)) == "member_disabled"
        assert code_of(lambda s=secret: services.callers.for_key(s)) == "member_disabled"
    assert code_of(lambda: target.caller) == "session_expired"  # its sessions were ended
    assert code_of(lambda: services.sessions.sign_in_password(target.email, PASSWORD)) == (
        "invalid_credentials"
    )
    services.members.change_member(org.owner.caller, target.member.id, disabled=False)
    assert services.accounts.authenticate(target.key.secret).id == target.key.key.id
    assert services.sessions.sign_in_password(target.email, PASSWORD).member.id == target.member.id


def test_removing_a_member_revokes_their_keys_ends_their_sessions_and_frees_the_address(
    services: Services, org: Org
) -> None:
    members = services.members
    assert code_of(lambda: members.remove_member(org.member.caller, org.admin.member.id)) == (
        "admin_required"
    )
    assert code_of(lambda: members.remove_member(org.admin.caller, org.owner.member.id)) == (
        "owner_required"
    )
    members.remove_member(org.admin.caller, org.member.member.id)
    for secret in (org.member.key.secret, org.member.vault_key.secret):
        assert code_of(lambda s=secret: services.accounts.authenticate(s)) == "revoked_api_key"
    assert code_of(lambda: org.member.caller) == "session_expired"
    assert code_of(lambda: members.get_member(org.owner.caller, org.member.member.id)) == (
        "member_not_found"
    )
    # Their keys stay listed, revoked, for the record; the address can be invited again.
    listed = {k.id: k for k in services.keys.list_keys(org.owner.caller)}
    assert listed[org.member.key.key.id].revoked_at is not None
    again = members.invite(org.admin.caller, org.member.email, Role.MEMBER)
    assert members.accept_invitation(again.token, name="Back", password=PASSWORD)
    # An admin may remove an admin; nobody may remove the last owner (above).
    members.remove_member(org.admin.caller, org.admin.member.id)
    assert code_of(lambda: org.admin.key_caller) == "revoked_api_key"


# ---------------------------------------------------------------------------- keys by role
def test_keys_by_role(services: Services, org: Org) -> None:
    keys = services.keys
    own_member = {org.member.key.key.id, org.member.vault_key.key.id}
    assert {k.id for k in keys.list_keys(org.member.caller)} == own_member
    everyone = {k.id for k in keys.list_keys(org.admin.caller)}
    assert own_member < everyone and org.owner.key.key.id in everyone
    assert {k.member_id for k in keys.list_keys(org.owner.caller)} == {
        p.member.id for p in org.people.values()
    }
    assert code_of(lambda: keys.list_keys(org.owner.vault_caller)) == "admin_required"

    made = keys.create_key(org.member.caller, name="mine", toggles=Toggles(recall=True))
    assert made.key.member_id == org.member.member.id and made.key.toggles.recall
    assert keys.update_key(org.member.caller, made.key.id, toggles=Toggles(mcp=True)).toggles.mcp
    # A spend cap is billing: an owner's.
    capped = KeySettings(spend_cap_micros=5_000_000)
    assert code_of(
        lambda: keys.create_key(org.member.caller, name="c", toggles=Toggles(), settings=capped)
    ) == ("owner_required")
    assert code_of(lambda: keys.update_key(org.admin.caller, made.key.id, settings=capped)) == (
        "owner_required"
    )
    assert (
        keys.update_key(org.owner.caller, made.key.id, settings=capped).spend_cap_micros
        == 5_000_000
    )
    # A member's hands are off others' keys; an admin revokes any; only an owner edits them.
    owner_key = org.owner.vault_key.key.id
    assert code_of(lambda: keys.revoke_key(org.member.caller, owner_key)) == "admin_required"
    assert code_of(lambda: keys.update_key(org.admin.caller, owner_key, toggles=Toggles())) == (
        "owner_required"
    )
    assert keys.revoke_key(org.admin.caller, owner_key).revoked_at is not None
    assert keys.revoke_key(org.member.caller, made.key.id).revoked_at is not None
    # A vault key is no management key.
    assert code_of(
        lambda: keys.create_key(org.admin.vault_caller, name="x", toggles=Toggles())
    ) == ("admin_required")


def test_billing_and_limits_are_the_owners(services: Services, org: Org) -> None:
    for who in (org.admin.caller, org.member.caller, org.owner.vault_caller):
        assert code_of(lambda w=who: services.org.set_balance(w, 1_000)) in (
            "owner_required",
            "admin_required",
        )
        assert code_of(lambda w=who: services.org.set_limits(w, Limits(max_notes=3))) in (
            "owner_required",
            "admin_required",
        )
        assert code_of(lambda w=who: services.org.rename(w, "Evil")) in (
            "owner_required",
            "admin_required",
        )
        assert services.org.balance(who).balance_micros is None  # reading is for everyone
    assert services.org.set_balance(org.owner.caller, 2_000).balance_micros == 2_000
    assert services.org.add_balance(org.owner.key_caller, 1_000).balance_micros == 3_000
    assert services.org.rename(org.owner.caller, "Acme").name == "Acme"
    assert services.org.organisation(org.member.vault_caller).name == "Acme"


# ---------------------------------------------------------------------------- audit
def test_the_audit_log_records_identity_events_without_secrets(
    services: Services, org: Org, clock: FakeClock
) -> None:
    with pytest.raises(Unauthenticated):
        services.sessions.sign_in_password(org.member.email, "not the password at all")
    services.members.change_member(org.owner.caller, org.member.member.id, role=Role.ADMIN)
    made = services.keys.create_key(org.admin.caller, name="k", toggles=Toggles())
    services.keys.revoke_key(org.admin.caller, made.key.id)
    services.members.remove_member(org.owner.caller, org.member.member.id)

    page = services.audit.events(org.admin.caller, limit=500)
    kinds = [e.kind for e in page.events]
    for kind in (
        AuditKind.ORG_CREATED,
        AuditKind.SIGN_IN,
        AuditKind.SIGN_IN_FAILED,
        AuditKind.INVITATION_CREATED,
        AuditKind.INVITATION_ACCEPTED,
        AuditKind.ROLE_CHANGED,
        AuditKind.KEY_CREATED,
        AuditKind.KEY_REVOKED,
        AuditKind.MEMBER_REMOVED,
    ):
        assert kind in kinds, kind
    assert [e.at for e in page.events] == sorted((e.at for e in page.events), reverse=True)
    text = repr(page.events)
    for secret in (PASSWORD, org.owner.key.secret, org.owner.session.secret, made.secret):
        assert secret not in text
    role_change = next(e for e in page.events if e.kind is AuditKind.ROLE_CHANGED)
    assert role_change.actor_member_id == org.owner.member.id
    assert role_change.detail == {"from": "member", "to": "admin"}

    first = services.audit.events(org.owner.caller, limit=3)
    rest = services.audit.events(org.owner.caller, limit=500, cursor=first.next_cursor)
    assert [e.id for e in first.events + rest.events] == [e.id for e in page.events]

    clock.advance(services.settings.usage_retention_days * DAY_SECONDS + 1)
    assert services.audit.events(org.owner.key_caller).events == []


def test_a_member_cannot_read_the_audit_log(services: Services, org: Org) -> None:
    for who in (org.member.caller, org.admin.vault_caller):
        assert code_of(lambda w=who: services.audit.events(w)) == "admin_required"


def test_the_sweep_forgets_expired_sessions_invitations_and_events(
    services: Services, org: Org, clock: FakeClock
) -> None:
    services.members.invite(org.owner.caller, "x@org-a.test", Role.MEMBER)
    clock.advance(services.settings.usage_retention_days * DAY_SECONDS + 1)
    swept = (
        services.sessions.expire(),
        services.members.expire_invitations(),
        services.audit.expire(),
    )
    if services.settings.backend == "sqlite":
        assert swept[0] >= 3 and swept[1] == 1 and swept[2] > 5
    else:
        assert swept == (0, 0, 0)  # DynamoDB's TTL removes them
    if services.settings.backend == "sqlite":
        assert services.members.list_invitations(org.owner.key_caller) == []
