"""Signing in and out on both backends: passwords, keys, expiry, CSRF, rate limits."""

from __future__ import annotations

import pytest

from memvault.container import Services
from memvault.domain.identity import Role
from memvault.domain.models import Toggles
from memvault.errors import (
    InvalidInput,
    NotFound,
    PermissionDenied,
    RateLimited,
    Unauthenticated,
)
from memvault.services.sessions import csrf_token_for
from tests.support.clock import FakeClock
from tests.support.people import PASSWORD, Org, make_org

ALL = Toggles(recall=True, tools=True, mcp=True)


@pytest.fixture
def org(services: Services) -> Org:
    return make_org(services, "org-a")


def refusal(call: object) -> tuple[str, str]:
    assert callable(call)
    with pytest.raises(Unauthenticated) as refused:
        call()
    return refused.value.code, refused.value.message


def test_every_failed_sign_in_looks_the_same(services: Services, org: Org) -> None:
    sign_in = services.sessions.sign_in_password
    services.members.change_member(org.owner.caller, org.admin.member.id, disabled=True)
    no_password = services.members.create_organisation(
        "Keys only", owner_email="keys@only.test", account_id="keys-only"
    )
    answers = {
        refusal(lambda: sign_in(org.member.email, "wrong password, long enough")),
        refusal(lambda: sign_in("nobody@nowhere.test", PASSWORD)),
        refusal(lambda: sign_in("not an address", PASSWORD)),
        refusal(lambda: sign_in(org.admin.email, PASSWORD)),  # disabled
        refusal(lambda: sign_in(no_password.owner.email or "", PASSWORD)),  # no password yet
    }
    assert answers == {("invalid_credentials", "the email address or password is not right")}
    # The address is case-insensitive.
    assert sign_in(org.member.email.upper(), PASSWORD).member.id == org.member.member.id


def test_sign_in_attempts_are_limited_per_address_and_per_client(
    services: Services, org: Org, clock: FakeClock
) -> None:
    sign_in = services.sessions.sign_in_password
    burst = int(services.settings.sign_in_burst)
    for _ in range(burst):
        with pytest.raises(Unauthenticated):
            sign_in(org.member.email, "wrong password, long enough", client="10.0.0.1")
    with pytest.raises(RateLimited) as limited:
        sign_in(org.member.email, PASSWORD, client="10.0.0.2")  # even the right one, now
    assert limited.value.code == "sign_in_rate_limited" and limited.value.retry_after > 0
    # Another address from the same client still has attempts; time refills the first.
    assert sign_in(org.admin.email, PASSWORD, client="10.0.0.1")
    clock.advance(60)
    assert sign_in(org.member.email, PASSWORD, client="10.0.0.2")
    # Per client: three times the per-address burst, whatever the addresses.
    for i in range(3 * burst):
        with pytest.raises(Unauthenticated):
            sign_in(f"x{i}@nowhere.test", PASSWORD, client="10.0.0.3")
    with pytest.raises(RateLimited):
        sign_in(org.owner.email, PASSWORD, client="10.0.0.3")


def test_sign_in_with_a_key_needs_its_admin_toggle(services: Services, org: Org) -> None:
    started = services.sessions.sign_in_key(org.member.key.secret)
    assert started.member.id == org.member.member.id and started.session.method == "api_key"
    caller = services.callers.for_session(started.secret, csrf_token=None, unsafe=False)
    assert (caller.member_id, caller.role, caller.manage) == (org.member.member.id, "member", True)
    with pytest.raises(PermissionDenied) as refused:
        services.sessions.sign_in_key(org.member.vault_key.secret)
    assert refused.value.code == "admin_required"
    with pytest.raises(Unauthenticated):
        services.sessions.sign_in_key("mvk_not-a-key")


def test_a_key_and_a_session_resolve_to_the_same_member(services: Services, org: Org) -> None:
    for person in org.people.values():
        by_key, by_session = person.key_caller, person.caller
        assert (by_key.account_id, by_key.member_id, by_key.role) == (
            by_session.account_id,
            by_session.member_id,
            by_session.role,
        )
        assert by_key.key_id == person.key.key.id and by_session.session_id is not None


def test_a_session_ends_when_idle_and_at_its_maximum_age(
    services: Services, org: Org, clock: FakeClock
) -> None:
    settings = services.settings
    idle, longest = settings.session_idle_minutes * 60, settings.session_max_hours * 3600
    started = services.sessions.sign_in_password(org.member.email, PASSWORD)
    while clock() + idle - 60 - started.session.created_at < longest:
        clock.advance(idle - 60)
        services.sessions.authenticate(started.secret)  # activity keeps it alive
    clock.advance(idle - 60)  # still within the idle time, but past the maximum age
    with pytest.raises(Unauthenticated) as ended:
        services.sessions.authenticate(started.secret)
    assert ended.value.code == "session_expired"

    idle_one = services.sessions.sign_in_password(org.member.email, PASSWORD)
    clock.advance(idle + 1)
    with pytest.raises(Unauthenticated):
        services.sessions.authenticate(idle_one.secret)


def test_signing_out_and_ending_ones_sessions(services: Services, org: Org) -> None:
    person = org.member
    other = services.sessions.sign_in_password(person.email, PASSWORD)
    mine = services.sessions.list_sessions(person.caller)
    assert {s.id for s in mine} == {person.session.session.id, other.session.id}
    assert services.sessions.list_sessions(org.owner.caller)[0].member_id == org.owner.member.id
    with pytest.raises(NotFound):  # someone else's session is not one of mine
        services.sessions.end_session(person.caller, org.owner.session.session.id)
    services.sessions.end_session(person.caller, other.session.id)
    with pytest.raises(Unauthenticated):
        services.sessions.authenticate(other.secret)
    services.sessions.sign_out(person.caller)
    with pytest.raises(Unauthenticated):
        services.sessions.authenticate(person.session.secret)
    with pytest.raises(InvalidInput):  # a key is not a session to sign out of
        services.sessions.sign_out(person.key_caller)
    assert services.sessions.authenticate(org.owner.session.secret)  # untouched


def test_changing_the_password_ends_the_other_sessions(services: Services, org: Org) -> None:
    person = org.member
    elsewhere = services.sessions.sign_in_password(person.email, PASSWORD)
    with pytest.raises(PermissionDenied) as wrong:
        services.members.change_password(person.caller, current="not it at all", new="a" * 20)
    assert wrong.value.code == "current_password_required"
    with pytest.raises(InvalidInput):
        services.members.change_password(person.caller, current=PASSWORD, new="short")
    ended = services.members.change_password(
        person.caller, current=PASSWORD, new="another long passphrase"
    )
    assert ended == 1
    with pytest.raises(Unauthenticated):
        services.sessions.authenticate(elsewhere.secret)
    assert services.sessions.authenticate(person.session.secret)  # the one that changed it
    with pytest.raises(Unauthenticated):
        services.sessions.sign_in_password(person.email, PASSWORD)
    assert services.sessions.sign_in_password(person.email, "another long passphrase")


def test_the_first_owner_signs_in_with_their_key_and_sets_a_password(
    services: Services,
) -> None:
    # The local organisation's first owner, made for the key, with no address or password.
    issued = services.accounts.issue_key("local", name="admin", toggles=ALL, admin=True)
    started = services.sessions.sign_in_key(issued.secret)
    owner = services.callers.for_session(started.secret, csrf_token=None, unsafe=False)
    assert owner.role == Role.OWNER
    services.members.change_password(owner, current=None, new="the owner's passphrase")
    services.members.update_profile(
        owner, email="me@local.test", current_password="the owner's passphrase"
    )
    assert services.sessions.sign_in_password("me@local.test", "the owner's passphrase")


def test_a_removed_members_session_stops(services: Services, org: Org) -> None:
    services.members.remove_member(org.owner.caller, org.member.member.id)
    with pytest.raises(Unauthenticated):
        services.sessions.authenticate(org.member.session.secret)


def test_csrf_tokens(services: Services, org: Org) -> None:
    started = org.member.session
    assert started.csrf_token == csrf_token_for(started.secret)
    assert started.csrf_token != csrf_token_for(org.owner.session.secret)
    secret = started.secret
    for token in (None, "", "forged", org.owner.session.csrf_token):
        with pytest.raises(PermissionDenied) as refused:
            services.callers.for_session(secret, csrf_token=token, unsafe=True)
        assert refused.value.code in ("csrf_token_missing", "csrf_token_invalid")
    # A safe request needs none; an unsafe one with the token passes.
    assert services.callers.for_session(secret, csrf_token=None, unsafe=False)
    assert services.callers.for_session(secret, csrf_token=started.csrf_token, unsafe=True)


def test_a_session_secret_is_stored_only_hashed(services: Services, org: Org) -> None:
    assert services.store.session_by_hash(org.member.session.secret) is None
