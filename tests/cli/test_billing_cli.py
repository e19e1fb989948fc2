"""`memvault balance`, `memvault usage` and the keys' gateway options, end to end: the
command line (in process, see tests.cli.helpers) against a live server. The ledger
itself is covered on both backends by tests/contract/test_ledger.py; here the server
runs on SQLite, and for the usage report (this command group's AWS smoke) on AWS too."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memvault.domain.models import UsageRecord
from tests.cli.helpers import ServerCli
from tests.support.backends import BACKENDS
from tests.support.servers import LiveServer


@pytest.fixture
def backend() -> str:
    return "sqlite"


Cli = ServerCli


@pytest.fixture
def cli(live_server: LiveServer, tmp_path: Path) -> Cli:
    return Cli(live_server, tmp_path)


def test_balance_show_set_add_and_unmeter(cli: Cli) -> None:
    assert cli.ok("balance").startswith("unmetered")
    assert cli.json("balance")["balance_micros"] is None
    assert cli.json("balance", "--set", "25")["balance_micros"] == 25_000_000
    assert cli.json("balance", "--add", "$2.50")["balance_micros"] == 27_500_000
    assert cli.json("balance", "--add", "-0.000001")["balance_micros"] == 27_499_999
    assert cli.ok("balance").startswith("balance $27.499999; $0.000000 held")
    assert cli.json("balance", "--unmetered")["balance_micros"] is None


def test_balance_refusals(cli: Cli, live_server: LiveServer) -> None:
    assert "one of --set, --add" in cli.failed("balance", "--set", "1", "--add", "1")
    assert "amount in USD" in cli.failed("balance", "--add", "ten")
    assert "amount in USD" in cli.failed("balance", "--set", "1.1234567")
    cli.json("balance", "--set", "1")
    refused = cli.failed("balance", "--add", "-1.000001")
    assert "balance_would_go_negative (400)" in refused and "below zero" in refused
    assert cli.json("balance")["balance_micros"] == 1_000_000
    cli.json("balance", "--unmetered")
    plain = cli.json("keys", "create", "plain")["secret"]
    assert cli.ok("balance", key=plain).startswith("unmetered")  # any key may look
    assert "admin_required (403)" in cli.failed("balance", "--set", "5", key=plain)


def test_keys_create_and_toggle_gateway_settings(cli: Cli) -> None:
    created = cli.json(
        "keys",
        "create",
        "bot",
        "--recall-notes",
        "8",
        "--recall-tokens",
        "4000",
        "--spend-cap",
        "5",
    )
    assert (created["recall_notes"], created["recall_tokens"]) == (8, 4000)
    assert created["spend_cap_micros"] == 5_000_000
    key_id = created["id"]

    line = cli.ok("keys", "toggle", key_id, "--spend-cap", "0.25").strip()
    assert line == (
        f"{key_id} (bot): recall off, tools off, mcp off; recall 8 notes within 4000 tokens,"
        " spend cap $0.250000"
    )
    removed = cli.json("keys", "toggle", key_id, "--spend-cap", "none", "--recall-notes", "3")
    assert removed["spend_cap_micros"] is None and removed["recall_notes"] == 3

    listing = cli.ok("keys", "list")
    # The key's row in the second table (gateway settings).
    row = [line.split() for line in listing.splitlines() if line.strip().startswith(key_id)][-1]
    assert row[1:] == ["3", "4000", "none", "$0.000000"]  # recall size, no cap, nothing spent
    assert "invalid_input (400)" in cli.failed("keys", "toggle", key_id, "--recall-notes", "0")
    assert "amount in USD" in cli.failed("keys", "create", "x", "--spend-cap", "lots")
    assert "nothing to change" in cli.failed("keys", "toggle", key_id)


def _record(server: LiveServer, key_id: str, started_at: float) -> None:
    server.services.billing.record_usage(
        UsageRecord(
            id=uuid.uuid4().hex,
            account_id="local",
            key_id=key_id,
            model="gpt-4o-mini",
            api_format="anthropic",
            input_tokens=1_000,
            output_tokens=50,
            rounds=2,
            memory_calls={"memory_search": 1},
            recalled_notes=3,
            injected_tokens=400,
            cost_micros=180,
            status=200,
            outcome="ok",
            started_at=started_at,
            duration_ms=900,
            overhead_ms=10,
        )
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_usage_table_and_json(cli: Cli, live_server: LiveServer) -> None:
    plain = cli.json("keys", "create", "plain")
    # Listing order is the backend's (AWS lists by key id): find the admin key by its flag.
    [admin_id] = [k["id"] for k in cli.json("keys", "list") if k["admin"]]
    now = live_server.clock()
    _record(live_server, admin_id, now)
    _record(live_server, plain["id"], now)
    today = datetime.fromtimestamp(now, tz=UTC).strftime("%Y-%m-%d")

    report = cli.json("usage")
    assert report["to"] == today and report["totals"]["requests"] == 2
    assert report["totals"]["cost_usd"] == "$0.000360"
    only = cli.json("usage", "--from", today, "--to", today, "--key-id", plain["id"])
    assert [d["key_id"] for d in only["days"]] == [plain["id"]]
    table = cli.ok("usage")
    assert today in table and plain["id"] in table and "$0.000360" in table

    mine = cli.json("usage", key=plain["secret"])
    assert mine["totals"]["requests"] == 1
    assert "admin_required (403)" in cli.failed("usage", "--key-id", admin_id, key=plain["secret"])
    assert "YYYY-MM-DD" in cli.failed("usage", "--from", "last week")
    assert "invalid_date_range (400)" in cli.failed(
        "usage", "--from", "2024-01-01", "--to", "2025-06-01"
    )
