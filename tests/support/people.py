"""Organisations with a member of every role, for the identity tests (contract, REST,
isolation): each person has a password, a session, a key with the admin toggle (acts with
their role) and a vault key (no admin toggle), and a Caller for each."""

from __future__ import annotations

from dataclasses import dataclass

from memvault.container import Services
from memvault.domain.identity import Member, Role
from memvault.domain.models import Account, Toggles
from memvault.services.accounts import IssuedKey
from memvault.services.context import Caller
from memvault.services.sessions import StartedSession

PASSWORD = "correct horse battery staple"
ALL_TOGGLES = Toggles(recall=True, tools=True, mcp=True)


@dataclass(frozen=True)
class Person:
    member: Member
    key: IssuedKey  # admin toggle on: acts with the member's role
    vault_key: IssuedKey  # admin toggle off: the vault only
    session: StartedSession
    services: Services

    @property
    def email(self) -> str:
        assert self.member.email is not None
        return self.member.email

    @property
    def caller(self) -> Caller:
        """As the signed-in session (an unsafe request with its CSRF token)."""
        return self.services.callers.for_session(
            self.session.secret, csrf_token=self.session.csrf_token, unsafe=True
        )

    @property
    def key_caller(self) -> Caller:
        return self.services.callers.for_key(self.key.secret)[0]

    @property
    def vault_caller(self) -> Caller:
        return self.services.callers.for_key(self.vault_key.secret)[0]


@dataclass(frozen=True)
class Org:
    account: Account
    owner: Person
    admin: Person
    member: Person

    @property
    def id(self) -> str:
        return self.account.id

    @property
    def people(self) -> dict[str, Person]:
        return {"owner": self.owner, "admin": self.admin, "member": self.member}


def _person(services: Services, member: Member, session: StartedSession) -> Person:
    caller = services.callers.for_session(
        session.secret, csrf_token=session.csrf_token, unsafe=True
    )
    key = services.keys.create_key(
        caller, name=f"{member.role}-admin", toggles=ALL_TOGGLES, admin=True
    )
    vault_key = services.keys.create_key(caller, name=f"{member.role}-vault", toggles=ALL_TOGGLES)
    return Person(member=member, key=key, vault_key=vault_key, session=session, services=services)


def make_org(services: Services, org_id: str) -> Org:
    """Organisation ``org_id`` with owner@, admin@ and member@<org_id>.test."""
    created = services.members.create_organisation(
        f"Org {org_id}",
        owner_email=f"owner@{org_id}.test",
        owner_name="Olive Owner",
        account_id=org_id,
        password=PASSWORD,
        with_key=False,
    )
    owner_session = services.sessions.sign_in_password(f"owner@{org_id}.test", PASSWORD)
    owner = _person(services, created.owner, owner_session)
    joined = {}
    for role in (Role.ADMIN, Role.MEMBER):
        issued = services.members.invite(owner.caller, f"{role}@{org_id}.test", role)
        joined[role] = services.members.accept_invitation(
            issued.token, name=f"{role.value.title()} Person", password=PASSWORD
        )
    return Org(
        account=created.account,
        owner=owner,
        admin=_person(services, joined[Role.ADMIN].member, joined[Role.ADMIN]),
        member=_person(services, joined[Role.MEMBER].member, joined[Role.MEMBER]),
    )
