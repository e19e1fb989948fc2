"""Keys and accounts stored before the gateway settings and the vault revision existed
keep working, with the defaults."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memvault.adapters.aws.keys import QUOTA_SHARDS, quota_sk
from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.store import SqliteVaultStore
from memvault.container import Services
from memvault.domain.models import KeySettings, Limits, Toggles
from memvault.errors import QuotaExceeded
from memvault.services.accounts import LOCAL_ACCOUNT_ID as LOCAL
from memvault.services.accounts import AccountService, hash_key
from memvault.services.context import Caller
from memvault.services.vault import build_put
from tests.support.clock import FakeClock

# The api_keys and accounts tables as the first release created them.
OLD_SCHEMA = """
CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at REAL NOT NULL,
    max_notes INTEGER NOT NULL,
    max_bytes INTEGER NOT NULL,
    note_count INTEGER NOT NULL DEFAULT 0,
    total_bytes INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    recall INTEGER NOT NULL,
    tools INTEGER NOT NULL,
    mcp INTEGER NOT NULL,
    admin INTEGER NOT NULL,
    created_at REAL NOT NULL,
    revoked_at REAL
);
CREATE INDEX api_keys_by_account ON api_keys(account_id, created_at);
"""


def test_an_old_sqlite_database_opens_and_its_keys_get_the_defaults(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_SCHEMA)
        conn.execute("INSERT INTO accounts VALUES ('local', 'local', 1.0, 10, 100, 0, 0)")
        conn.execute(
            "INSERT INTO api_keys VALUES ('k1', 'local', 'old', 'mvk_abc', ?, 1, 0, 0, 1, 2.0,"
            " NULL)",
            (hash_key("mvk_secret"),),
        )
    conn.close()

    store = SqliteVaultStore(Database(path))
    accounts = AccountService(store, clock)
    key = accounts.authenticate("mvk_secret")
    assert (key.id, key.admin, key.toggles) == ("k1", True, Toggles(recall=True))
    assert key.settings == KeySettings()  # 5 notes, 2000 tokens, no cap

    changed = accounts.set_key_settings(LOCAL, "k1", KeySettings(3, 500, 1_000))
    assert changed.settings == KeySettings(3, 500, 1_000)
    # Opening it again (a restart) migrates nothing twice and keeps the change.
    again = SqliteVaultStore(Database(path)).get_key(LOCAL, "k1")
    assert again is not None and again.settings == KeySettings(3, 500, 1_000)
    new = accounts.issue_key(LOCAL, name="new", toggles=Toggles())
    assert new.key.settings == KeySettings()


@pytest.fixture
def backend() -> str:
    return "aws"


def test_an_old_dynamodb_key_item_reads_with_the_defaults(services: Services) -> None:
    issued = services.accounts.issue_key(LOCAL, name="old", toggles=Toggles(mcp=True))
    table = services.store.table  # type: ignore[attr-defined]
    # Strip the new attributes from both records, as a key written before them looks.
    for pk, sk in ((f"A#{LOCAL}", f"K#{issued.key.id}"), (f"H#{hash_key(issued.secret)}", "H")):
        table.update(
            Key={"pk": {"S": pk}, "sk": {"S": sk}},
            UpdateExpression="REMOVE recall_notes, recall_tokens, spend_cap_micros",
        )
    key = services.accounts.authenticate(issued.secret)
    assert key.settings == KeySettings() and key.toggles == Toggles(mcp=True)
    assert services.accounts.get_key(LOCAL, key.id).settings == KeySettings()


def test_an_old_sqlite_account_gets_a_revision_that_moves(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.executescript(OLD_SCHEMA)
        conn.execute("INSERT INTO accounts VALUES ('local', 'local', 1.0, 10, 100, 0, 0)")
    conn.close()
    store = SqliteVaultStore(Database(path))
    before = store.get_account(LOCAL)
    assert before is not None and before.revision == 0
    store.commit(LOCAL, [build_put("n.md", "x")], now=5.0)
    after = store.get_account(LOCAL)
    assert after is not None and after.revision == 1


def test_an_old_dynamodb_account_item_reads_revision_zero_then_moves(services: Services) -> None:
    table = services.store.table  # type: ignore[attr-defined]
    table.update(
        Key={"pk": {"S": f"A#{LOCAL}"}, "sk": {"S": "ACCOUNT"}}, UpdateExpression="REMOVE revision"
    )
    account = services.store.get_account(LOCAL)
    assert account is not None and account.revision == 0
    services.vault.write(Caller(account_id=LOCAL), "n.md", "x")
    account = services.store.get_account(LOCAL)
    assert account is not None and account.revision == 1


def test_an_account_item_stored_before_quota_shards_keeps_its_counters_and_quota(
    services: Services,
) -> None:
    table = services.store.table  # type: ignore[attr-defined]
    user = Caller(account_id=LOCAL)
    services.accounts.set_limits(LOCAL, Limits(max_notes=3, max_bytes=10_000))
    services.vault.write(user, "a.md", "aaaa")
    services.vault.write(user, "b.md", "bb")
    # As stored before shards: the counters and headroom on the account item, no shards.
    before = services.store.get_account(LOCAL)
    assert before is not None
    for shard in range(QUOTA_SHARDS):
        table.client.delete_item(
            TableName=table.name, Key={"pk": {"S": f"A#{LOCAL}"}, "sk": {"S": quota_sk(shard)}}
        )
    table.update(
        Key={"pk": {"S": f"A#{LOCAL}"}, "sk": {"S": "ACCOUNT"}},
        UpdateExpression="SET note_count = :n, total_bytes = :b, notes_free = :nf,"
        " bytes_free = :bf, revision = :r",
        ExpressionAttributeValues={
            ":n": {"N": "2"},
            ":b": {"N": "6"},
            ":nf": {"N": "1"},
            ":bf": {"N": "9994"},
            ":r": {"N": "7"},
        },
    )
    old = services.store.get_account(LOCAL)
    assert old is not None and (old.note_count, old.total_bytes, old.revision) == (2, 6, 7)
    services.vault.write(user, "c.md", "c")  # moves the headroom into shards, then writes
    with pytest.raises(QuotaExceeded):
        services.vault.write(user, "d.md", "d")
    services.vault.delete(user, "a.md")
    after = services.store.get_account(LOCAL)
    assert after is not None
    assert (after.note_count, after.total_bytes) == (2, 3)
    assert after.revision > 7
    services.accounts.set_limits(LOCAL, Limits(max_notes=4, max_bytes=10_000))
    services.vault.write(user, "d.md", "d")
    services.vault.write(user, "e.md", "e")
    with pytest.raises(QuotaExceeded):
        services.vault.write(user, "f.md", "f")
