"""Tenant isolation at the service layer, on both backends, as an attacker would try it:
every one of organisation B's people, through each way in (session, admin key, vault
key, and as a model over MCP and the gateway's tools), calls every service with A's
paths and ids. Every attempt is refused or sees nothing of A; the probe counts attempts
and leaks and fails on one leak; A's state is exactly as before."""

from __future__ import annotations

import io
import zipfile
from dataclasses import replace
from datetime import date, timedelta

from memvault.container import Services
from memvault.domain.identity import Role
from memvault.domain.models import KeySettings, Limits, Toggles
from memvault.services.context import Caller, Surface
from memvault.services.recall import RecallService
from memvault.tools import run_tool
from tests.isolation.world import A_PATHS, HIDDEN, SEARCH, Probe, World, build_world


def _vault_attempts(world: World, probe: Probe, name: str, who: Caller) -> None:
    services = world.services
    vault, transfer = services.vault, services.transfer
    for path in A_PATHS:
        sent = [path]
        probe.attempt(f"{name} read {path}", lambda p=path: vault.read(who, p), sent)
        probe.attempt(f"{name} versions {path}", lambda p=path: vault.versions(who, p), sent)
        probe.attempt(f"{name} version 1 {path}", lambda p=path: vault.version(who, p, 1), sent)
        probe.attempt(f"{name} backlinks {path}", lambda p=path: vault.backlinks(who, p), sent)
        probe.attempt(f"{name} outgoing {path}", lambda p=path: vault.outgoing(who, p), sent)
    probe.attempt(f"{name} read_many", lambda: vault.read_many(who, list(A_PATHS)), A_PATHS)
    probe.attempt(
        f"{name} list", lambda: vault.list_notes(who, folder="", tag=None, cursor=None, limit=500)
    )
    probe.attempt(
        f"{name} list secret/",
        lambda: vault.list_notes(who, folder="secret", tag=None, cursor=None, limit=500),
    )
    probe.attempt(
        f"{name} list by tag",
        lambda: vault.list_notes(who, folder="", tag=HIDDEN, cursor=None, limit=500),
        [HIDDEN],
    )
    probe.attempt(f"{name} recent", lambda: vault.recent(who, limit=100))
    probe.attempt(f"{name} tags", lambda: vault.tags(who))
    for words in (SEARCH, f"{SEARCH} launch", "plan", "other"):
        probe.attempt(
            f"{name} search {words}", lambda w=words: vault.search(who, w, limit=50), [words]
        )

    def exported() -> bytes:
        out = io.BytesIO()
        transfer.export_zip(who, out)
        return out.getvalue()

    probe.attempt(f"{name} export", exported)
    probe.attempt(f"{name} windows-unsafe", lambda: transfer.windows_unsafe(who))
    recaller = RecallService(vault)
    probe.attempt(
        f"{name} recall",
        lambda: recaller.recall(
            who,
            f"what about the {SEARCH} launch plan",
            max_notes=20,
            token_budget=32_000,
            vault_revision=0,
        ),
        [SEARCH],
    )
    # The memory tools, as a model through this key (MCP and the gateway share them).
    for surface in (Surface.MCP, Surface.TOOLS):
        model = replace(who, surface=surface)

        def tool_call(tool: str, arguments: dict[str, object], model: Caller = model) -> str:
            return run_tool(services, model, tool, arguments).text

        calls = [
            ("memory_search", {"query": SEARCH, "limit": 20}),
            ("memory_list", {"limit": 200}),
            ("memory_list", {"folder": "secret"}),
            *[("memory_read", {"path": p}) for p in A_PATHS],
            ("memory_link", {"source": "mine.md", "target": "secret/plan.md"}),
        ]
        for tool, arguments in calls:
            probe.attempt(
                f"{name} {surface} {tool} {arguments}",
                lambda t=tool, a=arguments: tool_call(t, a),
                [str(v) for v in arguments.values()],
            )


def _writes_into_own_vault(world: World, probe: Probe, name: str, who: Caller) -> None:
    """Writes at A's paths land in B's vault (A's state is checked afterwards)."""
    vault, transfer = world.services.vault, world.services.transfer
    probe.attempt(
        f"{name} append", lambda: vault.append(who, "secret/plan.md", "b was here"), A_PATHS
    )
    probe.attempt(f"{name} restore", lambda: vault.restore(who, "secret/plan.md", 1), A_PATHS)
    probe.attempt(
        f"{name} move",
        lambda: vault.move(who, "Other.md", f"moved-{name}.md".replace(" ", "-")),
        A_PATHS,
    )
    probe.attempt(f"{name} delete", lambda: vault.delete(who, "gone.md"), A_PATHS)
    probe.attempt(f"{name} purge", lambda: vault.purge(who, "gone.md"), A_PATHS)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("secret/plan.md", "# imported by B")
    probe.attempt(
        f"{name} import", lambda: transfer.import_zip(who, io.BytesIO(archive.getvalue())), A_PATHS
    )


def _identity_attempts(world: World, probe: Probe, name: str, who: Caller) -> None:
    services = world.services
    ids = world.a_ids()
    members, keys, sessions, org = services.members, services.keys, services.sessions, services.org
    for member_id in ids["member"]:
        sent = [member_id]
        probe.attempt(f"{name} get member", lambda m=member_id: members.get_member(who, m), sent)
        probe.attempt(
            f"{name} role",
            lambda m=member_id: members.change_member(who, m, role=Role.MEMBER),
            sent,
        )
        probe.attempt(
            f"{name} disable",
            lambda m=member_id: members.change_member(who, m, disabled=True),
            sent,
        )
        probe.attempt(f"{name} remove", lambda m=member_id: members.remove_member(who, m), sent)
    for key_id in ids["key"]:
        sent = [key_id]
        probe.attempt(f"{name} get key", lambda k=key_id: keys.get_key(who, k), sent)
        probe.attempt(
            f"{name} toggle key", lambda k=key_id: keys.update_key(who, k, toggles=Toggles()), sent
        )
        probe.attempt(
            f"{name} cap key",
            lambda k=key_id: keys.update_key(who, k, settings=KeySettings(spend_cap_micros=1)),
            sent,
        )
        probe.attempt(f"{name} revoke key", lambda k=key_id: keys.revoke_key(who, k), sent)
        today = date.fromtimestamp(services.billing.clock())
        probe.attempt(
            f"{name} usage of key",
            lambda k=key_id, t=today: org.usage(
                who, from_day=t - timedelta(days=2), to_day=t, key_id=k
            ),
            sent,
        )
    for session_id in ids["session"]:
        probe.attempt(
            f"{name} end session", lambda s=session_id: sessions.end_session(who, s), [session_id]
        )
    for invitation_id in ids["invitation"]:
        probe.attempt(
            f"{name} revoke invitation",
            lambda i=invitation_id: members.revoke_invitation(who, i),
            [invitation_id],
        )
    today = date.fromtimestamp(services.billing.clock())
    probe.attempt(f"{name} members", lambda: members.list_members(who))
    probe.attempt(f"{name} invitations", lambda: members.list_invitations(who))
    probe.attempt(f"{name} keys", lambda: keys.list_keys(who))
    probe.attempt(f"{name} sessions", lambda: sessions.list_sessions(who))
    probe.attempt(f"{name} audit", lambda: services.audit.events(who, limit=500))
    probe.attempt(f"{name} org", lambda: org.organisation(who))
    probe.attempt(f"{name} balance", lambda: org.balance(who))
    probe.attempt(
        f"{name} usage", lambda: org.usage(who, from_day=today - timedelta(days=2), to_day=today)
    )
    probe.attempt(f"{name} me", lambda: members.me(who))
    # Changing one's own organisation never reaches A's.
    probe.attempt(f"{name} rename", lambda: org.rename(who, "B renamed"))
    probe.attempt(f"{name} limits", lambda: org.set_limits(who, Limits(max_notes=5)))
    probe.attempt(f"{name} balance set", lambda: org.set_balance(who, 1))
    probe.attempt(
        f"{name} invite A's address", lambda: members.invite(who, world.a.member.email, Role.ADMIN)
    )


def test_no_service_lets_one_organisation_see_or_touch_another(services: Services) -> None:
    world = build_world(services)
    before = world.snapshot()
    probe = world.probe()
    for name, who in world.b_actors().items():
        _vault_attempts(world, probe, name, who)
        _identity_attempts(world, probe, name, who)
    for name, who in world.b_actors().items():
        _writes_into_own_vault(world, probe, name, who)
    probe.assert_no_leaks(at_least=9 * 90)
    assert world.snapshot() == before, "organisation A changed under B's attempts"
    # The probe does see A's secrets where they belong (it is not blind).
    control = world.probe()
    control.attempt(
        "A reads its plan", lambda: services.vault.read(world.a.member.caller, "secret/plan.md")
    )
    control.attempt(
        "A lists its members", lambda: services.members.list_members(world.a.admin.caller)
    )
    assert len(control.leaks) == 2


def test_a_sign_in_never_crosses_organisations(services: Services) -> None:
    """An address signs in to its own organisation; a key or session of B is B's."""
    world = build_world(services)
    probe = world.probe()
    for person in world.b.people.values():
        started = services.sessions.sign_in_password(person.email, "correct horse battery staple")
        caller = services.callers.for_session(started.secret, csrf_token=None, unsafe=False)
        probe.seen("B session", repr((started.member, started.session, caller)))
        assert caller.account_id == world.b.id
        for key in (person.key, person.vault_key):
            caller, found = services.callers.for_key(key.secret)
            probe.seen("B key", repr((caller, found)))
            assert caller.account_id == world.b.id
    # A's session with B's CSRF token is refused: tokens are per session.
    a_session = world.a.member.session
    probe.attempt(
        "A's cookie with B's token",
        lambda: services.callers.for_session(
            a_session.secret, csrf_token=world.b.member.session.csrf_token, unsafe=True
        ),
    )
    probe.assert_no_leaks(at_least=10)
    assert probe.refused == 1
