"""Accounts and keys stored before organisations and members existed: the account becomes
an organisation, and its keys, admin or not, become keys of its first owner, toggles kept.

SQLite upgrades when the database is opened; DynamoDB when an old key first
authenticates or when `memvault reindex` runs the upgrade (``AccountService.upgrade``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.store import SqliteVaultStore
from memvault.container import Services, build_services
from memvault.domain.identity import FOUNDER_NAME, Role, founder_id
from memvault.domain.models import Toggles
from memvault.services.accounts import LOCAL_ACCOUNT_ID as LOCAL
from memvault.services.accounts import hash_key
from tests.contract.test_key_settings_migration import OLD_SCHEMA
from tests.support.backends import make_settings
from tests.support.clock import FakeClock

# The tables as the release before organisations made them (gateway settings included).
SETTINGS_COLUMNS = """
ALTER TABLE api_keys ADD COLUMN recall_notes INTEGER NOT NULL DEFAULT 5;
ALTER TABLE api_keys ADD COLUMN recall_tokens INTEGER NOT NULL DEFAULT 2000;
ALTER TABLE api_keys ADD COLUMN spend_cap_micros INTEGER;
ALTER TABLE accounts ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
"""


def _old_database(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_SCHEMA + SETTINGS_COLUMNS)
        conn.execute(
            "INSERT INTO accounts (id, name, created_at, max_notes, max_bytes)"
            " VALUES ('local', 'local', 1.0, 10, 100)"
        )
        conn.execute(
            "INSERT INTO accounts (id, name, created_at, max_notes, max_bytes)"
            " VALUES ('acme', 'Acme', 2.0, 10, 100)"
        )
        for key_id, account, admin, toggles, secret in (
            ("k-admin", "local", 1, (1, 1, 1), "mvk_admin"),
            ("k-bot", "local", 0, (1, 0, 1), "mvk_bot"),
            ("k-acme", "acme", 1, (0, 0, 0), "mvk_acme"),
        ):
            conn.execute(
                "INSERT INTO api_keys (id, account_id, name, prefix, key_hash, recall, tools,"
                " mcp, admin, created_at, revoked_at) VALUES (?, ?, ?, 'mvk_', ?, ?, ?, ?, ?, 3.0,"
                " NULL)",
                (key_id, account, key_id, hash_key(secret), *toggles, admin),
            )
    conn.close()


def test_an_old_sqlite_database_becomes_organisations_with_their_first_owners(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = make_settings(tmp_path, "sqlite")
    settings.sqlite_path.parent.mkdir(parents=True)
    _old_database(settings.sqlite_path)

    services = build_services(settings, clock=clock)
    for account in ("local", "acme"):
        members = services.store.list_members(account)
        assert [(m.id, m.name, m.role, m.email) for m in members] == [
            (founder_id(account), FOUNDER_NAME, Role.OWNER, None)
        ]
    keys = {k.id: k for k in services.store.list_keys(LOCAL)}
    assert {k.member_id for k in keys.values()} == {founder_id(LOCAL)}
    assert keys["k-admin"].toggles == Toggles(recall=True, tools=True, mcp=True)
    assert keys["k-bot"].toggles == Toggles(recall=True, mcp=True) and not keys["k-bot"].admin

    # The admin key keeps its powers through its owner being owner; the other stays a
    # vault key of the same owner.
    admin, _ = services.callers.for_key("mvk_admin")
    assert (admin.role, admin.manage) == (Role.OWNER, True)
    bot, _ = services.callers.for_key("mvk_bot")
    assert (bot.member_id, bot.role, bot.manage) == (founder_id(LOCAL), Role.OWNER, False)
    assert [k.id for k in services.keys.list_keys(admin)] == ["k-admin", "k-bot"]
    assert {o.id for o in services.store.list_organisations()} == {"local", "acme"}
    # The owner signs in with the key and sets a password.
    started = services.sessions.sign_in_key("mvk_admin")
    owner = services.callers.for_session(started.secret, csrf_token=None, unsafe=False)
    services.members.change_password(owner, current=None, new="a long enough passphrase")

    # Opened again (a restart): nothing is made twice, nothing changes.
    again = SqliteVaultStore(Database(settings.sqlite_path))
    assert [m.id for m in again.list_members(LOCAL)] == [founder_id(LOCAL)]
    assert again.get_member(LOCAL, founder_id(LOCAL)).has_password  # type: ignore[union-attr]


@pytest.fixture
def backend() -> str:
    return "aws"


def test_old_dynamodb_items_are_upgraded_when_their_keys_authenticate(
    services: Services,
) -> None:
    admin = services.accounts.issue_key(
        LOCAL, name="old admin", toggles=Toggles(mcp=True), admin=True
    )
    bot = services.accounts.issue_key(LOCAL, name="old bot", toggles=Toggles(recall=True))
    table = services.store.table  # type: ignore[attr-defined]
    # As stored before members: no owner on the key records, no member items, no
    # directory entry.
    for issued in (admin, bot):
        for pk, sk in ((f"A#{LOCAL}", f"K#{issued.key.id}"), (f"H#{hash_key(issued.secret)}", "H")):
            table.update(
                Key={"pk": {"S": pk}, "sk": {"S": sk}},
                UpdateExpression="REMOVE member_id, vault, owner_disabled",
            )
    for pk, sk in (
        (f"A#{LOCAL}", f"MB#{founder_id(LOCAL)}"),
        (f"A#{LOCAL}", "MEMBERS"),
        ("ORGS", LOCAL),
    ):
        table.client.delete_item(TableName=table.name, Key={"pk": {"S": pk}, "sk": {"S": sk}})
    services.store.forget_keys()  # type: ignore[attr-defined]
    assert services.store.list_members(LOCAL) == []
    assert services.store.get_key(LOCAL, bot.key.id).member_id is None  # type: ignore[union-attr]
    assert services.store.list_organisations() == []

    key = services.accounts.authenticate(admin.secret)
    assert key.member_id == founder_id(LOCAL) and key.toggles == Toggles(mcp=True)
    owners = services.store.list_members(LOCAL)
    assert [(m.id, m.role) for m in owners] == [(founder_id(LOCAL), Role.OWNER)]
    # Every key of the account went to that owner at once, toggles kept.
    old_bot = services.store.get_key(LOCAL, bot.key.id)
    assert old_bot is not None and old_bot.member_id == founder_id(LOCAL)
    assert old_bot.toggles == Toggles(recall=True) and old_bot.vault
    caller, _ = services.callers.for_key(admin.secret)
    assert (caller.role, caller.manage) == (Role.OWNER, True)
    # The last-owner counter came with the owner: the owner cannot be demoted alone.
    with pytest.raises(Exception) as refused:
        services.store.update_member(LOCAL, founder_id(LOCAL), role=Role.MEMBER)
    assert getattr(refused.value, "code", "") == "last_owner"
    # And `memvault reindex` lists the organisation in the directory.
    assert services.accounts.upgrade(LOCAL) == 0
    services.store.list_organisation(LOCAL)
    assert [o.id for o in services.store.list_organisations()] == [LOCAL]
