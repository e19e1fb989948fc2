"""`memvault members`, `memvault orgs` and the owner column of `memvault keys list`: the
command line in process (tests.cli.helpers) against a live server (members), or on the
data directory / a stack's table directly (orgs). One AWS smoke test for the group."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.domain.identity import Role
from memvault.domain.models import Toggles
from tests.cli.helpers import ServerCli, clean_env, invoke_memvault
from tests.support.people import PASSWORD
from tests.support.servers import LiveServer


@pytest.fixture
def backend() -> str:
    return "sqlite"


Cli = ServerCli


@pytest.fixture
def cli(live_server: LiveServer, tmp_path: Path) -> Cli:
    return Cli(live_server, tmp_path)


def test_members_invite_list_role_and_remove(cli: Cli, live_server: LiveServer) -> None:
    invited = cli.json("members", "invite", "ana@local.test", "--role", "admin")
    assert invited["role"] == "admin" and invited["token"].startswith("mvi_")
    human = cli.ok("members", "invite", "bo@local.test")
    assert "invited bo@local.test as member" in human and "mvi_" in human
    joined = live_server.services.members.accept_invitation(
        invited["token"], name="Ana", password=PASSWORD
    )
    listed = cli.json("members", "list")
    assert sorted(m["role"] for m in listed) == ["admin", "owner"]
    table = cli.ok("members", "list")
    assert "ana@local.test" in table and "owner" in table

    changed = cli.json("members", "role", joined.member.id, "member")
    assert changed["role"] == "member"
    assert "is now admin" in cli.ok("members", "role", joined.member.id, "admin")
    assert "say owner, admin or member" in cli.failed("members", "role", joined.member.id, "god")
    owner = next(m for m in live_server.services.store.list_members("local") if m.role == "owner")
    assert "last_owner (409)" in cli.failed("members", "remove", owner.id)
    assert f"removed {joined.member.id}" in cli.ok("members", "remove", joined.member.id)
    assert [m["role"] for m in cli.json("members", "list")] == ["owner"]


def test_a_members_key_cannot_manage_members(cli: Cli, live_server: LiveServer) -> None:
    services = live_server.services
    owner = services.callers.for_key(live_server.admin_key)[0]
    issued = services.members.invite(owner, "m@local.test", Role.MEMBER)
    joined = services.members.accept_invitation(issued.token, name="M", password=PASSWORD)
    as_member = services.callers.for_session(
        joined.secret, csrf_token=joined.csrf_token, unsafe=True
    )
    key = services.keys.create_key(as_member, name="m", toggles=Toggles(), admin=True)
    assert "admin_required (403)" in cli.failed("members", "invite", "x@y.test", key=key.secret)
    assert [m["email"] for m in cli.json("members", "list", key=key.secret)] == ["m@local.test"]
    # keys list shows each key's owner; a member lists only their own.
    mine = cli.json("keys", "list", key=key.secret)
    assert [(k["owner"], k["member_id"]) for k in mine] == [("m@local.test", joined.member.id)]
    everyone = cli.ok("keys", "list")
    assert "m@local.test" in everyone and "owner" in everyone


# ---------------------------------------------------------------------------- orgs (storage)
def _embedded(tmp_path: Path) -> dict[str, str]:
    return clean_env(MEMVAULT_DATA_DIR=str(tmp_path / "data"), MEMVAULT_PASSWORD_HASH_COST="low")


def test_orgs_create_and_list_on_the_embedded_data_directory(tmp_path: Path) -> None:
    env = _embedded(tmp_path)
    made = invoke_memvault(
        "orgs", "create", "Acme Labs", "--owner-email", "boss@acme.test", env=env, cwd=tmp_path
    )
    assert made.code == 0, str(made)
    secret = made.stdout.strip()
    assert secret.startswith("mvk_") and "acme-labs" in made.stderr
    again = invoke_memvault(
        "orgs", "create", "Acme Labs", "--owner-email", "x@acme.test", env=env, cwd=tmp_path
    )
    assert again.code == 2 and "exists" in again.stderr
    taken = invoke_memvault(
        "orgs", "create", "Other", "--owner-email", "BOSS@acme.test", env=env, cwd=tmp_path
    )
    assert taken.code == 2 and "email_taken" in taken.stderr
    listed = invoke_memvault("orgs", "list", "--json", env=env, cwd=tmp_path)
    assert [o["id"] for o in json.loads(listed.stdout)] == ["acme-labs"]

    from memvault.container import build_services
    from memvault.settings import Settings

    services = build_services(Settings(data_dir=tmp_path / "data", password_hash_cost="low"))
    caller, key = services.callers.for_key(secret)
    assert (caller.account_id, caller.role, key.admin) == ("acme-labs", Role.OWNER, True)
    assert services.members.me(caller).email == "boss@acme.test"


@pytest.fixture
def aws_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    from tests.support.backends import aws_settings

    with aws_settings(tmp_path) as settings:
        yield clean_env(
            MEMVAULT_BACKEND="aws",
            MEMVAULT_AWS_REGION=str(settings.aws_region),
            MEMVAULT_TABLE=settings.table,
            MEMVAULT_BUCKET=settings.bucket,
            MEMVAULT_PASSWORD_HASH_COST="low",
            AWS_ACCESS_KEY_ID="testing",
            AWS_SECRET_ACCESS_KEY="testing",
        )


def test_orgs_create_on_a_stacks_table(aws_env: dict[str, str], tmp_path: Path) -> None:
    made = invoke_memvault(
        "orgs",
        "create",
        "Tenant Two",
        "--owner-email",
        "t@two.test",
        "--json",
        env=aws_env,
        cwd=tmp_path,
    )
    assert made.code == 0, str(made)
    created = json.loads(made.stdout)
    assert created["id"] == "tenant-two" and created["key"]["secret"].startswith("mvk_")
    listed = invoke_memvault("orgs", "list", "--json", env=aws_env, cwd=tmp_path)
    assert [o["id"] for o in json.loads(listed.stdout)] == ["tenant-two"]
