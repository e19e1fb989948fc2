"""Balance, usage reports and per-key gateway settings through the REST API."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from memvault.domain.models import UsageRecord
from memvault.errors import PaymentRequired
from tests.api.helpers import error_of
from tests.support.servers import LiveServer

DAY = 86_400


@pytest.fixture
def admin(live_server: LiveServer) -> Iterator[httpx.Client]:
    with live_server.client() as client:
        yield client


def make_key(admin: httpx.Client, **body: Any) -> dict[str, Any]:
    r = admin.post("/v1/keys", json={"name": "gw", **body})
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


def record(server: LiveServer, key_id: str, started_at: float, **fields: Any) -> None:
    server.services.billing.record_usage(
        UsageRecord(
            id=uuid.uuid4().hex,
            account_id="local",
            key_id=key_id,
            model="gpt-4o",
            api_format="openai",
            input_tokens=fields.get("input_tokens", 1000),
            output_tokens=200,
            rounds=fields.get("rounds", 1),
            memory_calls=fields.get("memory_calls", {}),
            recalled_notes=2,
            injected_tokens=300,
            cost_micros=fields.get("cost_micros", 4_500),
            status=200,
            outcome="ok",
            started_at=started_at,
            duration_ms=800,
            overhead_ms=12,
        )
    )


def day(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%d")


# ---------------------------------------------------------------------- balance
def test_a_new_account_is_unmetered(admin: httpx.Client) -> None:
    r = admin.get("/v1/balance")
    assert r.status_code == 200
    assert r.json() == {"balance_micros": None, "balance_usd": None, "held_micros": 0}


def test_admin_sets_adds_and_unmeters_the_balance(admin: httpx.Client) -> None:
    r = admin.post("/v1/balance", json={"set_micros": 5_000_000})
    assert r.status_code == 200, r.text
    assert r.json() == {"balance_micros": 5_000_000, "balance_usd": "$5.000000", "held_micros": 0}
    r = admin.post("/v1/balance", json={"add_micros": -250_000})
    assert r.json()["balance_micros"] == 4_750_000
    assert r.json()["balance_usd"] == "$4.750000"
    assert admin.get("/v1/balance").json()["balance_micros"] == 4_750_000
    r = admin.post("/v1/balance", json={"set_micros": None})
    assert r.json()["balance_micros"] is None


def test_any_key_reads_the_balance_but_only_admins_change_it(
    live_server: LiveServer, admin: httpx.Client
) -> None:
    admin.post("/v1/balance", json={"set_micros": 42})
    plain = make_key(admin)
    with live_server.client(plain["secret"]) as c:
        assert c.get("/v1/balance").json()["balance_micros"] == 42
        error_of(c.post("/v1/balance", json={"add_micros": 1_000_000}), 403, "admin_required")
    assert admin.get("/v1/balance").json()["balance_micros"] == 42


def test_a_correction_past_the_balance_is_a_400(admin: httpx.Client) -> None:
    admin.post("/v1/balance", json={"set_micros": 1_000})
    error_of(
        admin.post("/v1/balance", json={"add_micros": -1_001}), 400, "balance_would_go_negative"
    )
    assert admin.get("/v1/balance").json()["balance_micros"] == 1_000
    assert admin.post("/v1/balance", json={"add_micros": -1_000}).json()["balance_micros"] == 0


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({}, 400, "invalid_balance_change"),
        ({"add_micros": -1}, 400, "balance_would_go_negative"),
        ({"set_micros": 1, "add_micros": 1}, 400, "invalid_balance_change"),
        ({"add_micros": None}, 400, "invalid_balance_change"),
        ({"add_micros": "5"}, 400, "invalid_input"),
        ({"add_micros": 1.5}, 400, "invalid_input"),
        ({"set_micros": 2**60}, 400, "invalid_input"),
        ({"credit": 5}, 400, "invalid_input"),
        ({"set_micros": -1}, 400, "invalid_amount"),
        ({"set_micros": -(2**53)}, 400, "invalid_amount"),
    ],
)
def test_bad_balance_changes_are_typed_errors(
    admin: httpx.Client, body: dict[str, Any], status: int, code: str
) -> None:
    error_of(admin.post("/v1/balance", json=body), status, code)
    assert admin.get("/v1/balance").json()["balance_micros"] is None


def test_balance_needs_a_key(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.url) as anon:
        error_of(anon.get("/v1/balance"), 401)
        error_of(anon.get("/v1/usage"), 401)


# ---------------------------------------------------------------------- usage
def test_usage_by_day_and_key(live_server: LiveServer, admin: httpx.Client) -> None:
    other = make_key(admin)
    me = admin.get("/v1/me").json()["key"]
    now = live_server.clock()
    record(live_server, me["id"], now - DAY, memory_calls={"memory_search": 2}, rounds=2)
    record(live_server, me["id"], now - DAY + 60, memory_calls={"memory_write": 1})
    record(live_server, other["id"], now, cost_micros=1_000_000)

    r = admin.get("/v1/usage")
    assert r.status_code == 200, r.text
    body = r.json()
    today = day(now)
    assert body["to"] == today
    assert body["from"] == (datetime.fromisoformat(today) - timedelta(days=29)).strftime("%Y-%m-%d")
    rows = {(d["day"], d["key_id"]): d for d in body["days"]}
    assert set(rows) == {(day(now - DAY), me["id"]), (today, other["id"])}
    mine = rows[(day(now - DAY), me["id"])]
    assert mine["requests"] == 2
    assert mine["input_tokens"] == 2000 and mine["output_tokens"] == 400
    assert mine["rounds"] == 3
    assert mine["memory_calls"] == {"memory_search": 2, "memory_write": 1}
    assert mine["recalled_notes"] == 4 and mine["injected_tokens"] == 600
    assert mine["cost_micros"] == 9_000 and mine["cost_usd"] == "$0.009000"
    totals = body["totals"]
    assert totals["requests"] == 3
    assert totals["cost_micros"] == 1_009_000 and totals["cost_usd"] == "$1.009000"

    only_other = admin.get("/v1/usage", params={"key_id": other["id"]}).json()
    assert [d["key_id"] for d in only_other["days"]] == [other["id"]]
    yesterday = admin.get("/v1/usage", params={"from": day(now - DAY), "to": day(now - DAY)})
    assert yesterday.json()["totals"]["requests"] == 2


def test_a_non_admin_key_sees_only_its_own_usage(
    live_server: LiveServer, admin: httpx.Client
) -> None:
    plain = make_key(admin)
    me = admin.get("/v1/me").json()["key"]
    now = live_server.clock()
    record(live_server, me["id"], now)
    record(live_server, plain["id"], now, input_tokens=7)
    with live_server.client(plain["secret"]) as c:
        body = c.get("/v1/usage").json()
        assert [d["key_id"] for d in body["days"]] == [plain["id"]]
        assert body["totals"]["input_tokens"] == 7
        assert c.get("/v1/usage", params={"key_id": plain["id"]}).status_code == 200
        error_of(c.get("/v1/usage", params={"key_id": me["id"]}), 403, "admin_required")


def test_usage_of_an_unknown_key_is_404(admin: httpx.Client) -> None:
    error_of(admin.get("/v1/usage", params={"key_id": "nope"}), 404, "key_not_found")


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"from": "2026-13-01"}, "invalid_date"),
        ({"to": "yesterday"}, "invalid_date"),
        ({"from": "2026-1-1"}, "invalid_date"),
        ({"from": "2026-03-02", "to": "2026-03-01"}, "invalid_date_range"),
        ({"from": "2024-01-01", "to": "2025-01-01"}, "invalid_date_range"),  # 367 days
    ],
)
def test_bad_usage_ranges_are_400(admin: httpx.Client, params: dict[str, str], code: str) -> None:
    error_of(admin.get("/v1/usage", params=params), 400, code)


def test_a_full_year_range_is_allowed(admin: httpx.Client) -> None:
    r = admin.get("/v1/usage", params={"from": "2024-01-01", "to": "2024-12-31"})  # 366 days
    assert r.status_code == 200, r.text
    assert r.json()["days"] == [] and r.json()["totals"]["requests"] == 0


# ---------------------------------------------------------------------- key settings
def test_key_settings_default_and_can_be_set_at_creation(admin: httpx.Client) -> None:
    plain = make_key(admin)
    assert (plain["recall_notes"], plain["recall_tokens"]) == (5, 2000)
    assert plain["spend_cap_micros"] is None and plain["spent_micros"] == 0
    tuned = make_key(admin, recall_notes=20, recall_tokens=100, spend_cap_micros=0)
    assert (tuned["recall_notes"], tuned["recall_tokens"], tuned["spend_cap_micros"]) == (
        20,
        100,
        0,
    )
    listed = {k["id"]: k for k in admin.get("/v1/keys").json()}
    assert listed[tuned["id"]]["recall_notes"] == 20


def test_patch_changes_settings_and_null_removes_the_cap(admin: httpx.Client) -> None:
    key = make_key(admin, recall=True, spend_cap_micros=1_000)
    r = admin.patch(f"/v1/keys/{key['id']}", json={"recall_tokens": 4000})
    assert r.status_code == 200, r.text
    assert r.json()["recall_tokens"] == 4000
    assert r.json()["spend_cap_micros"] == 1_000  # left out: kept
    assert r.json()["recall"] is True
    r = admin.patch(f"/v1/keys/{key['id']}", json={"spend_cap_micros": None, "tools": True})
    assert r.json()["spend_cap_micros"] is None and r.json()["tools"] is True
    assert r.json()["recall_tokens"] == 4000


@pytest.mark.parametrize(
    "body",
    [
        {"recall_notes": 0},
        {"recall_notes": 21},
        {"recall_tokens": 99},
        {"recall_tokens": 32_001},
        {"spend_cap_micros": -1},
        {"recall_notes": "5"},
        {"recall_notes": None},
    ],
)
def test_bad_key_settings_are_refused(admin: httpx.Client, body: dict[str, Any]) -> None:
    key = make_key(admin)
    if body != {"recall_notes": None}:
        error_of(admin.post("/v1/keys", json={"name": "bad", **body}), 400, "invalid_input")
    r = admin.patch(f"/v1/keys/{key['id']}", json=body)
    if body == {"recall_notes": None}:
        assert r.status_code == 200 and r.json()["recall_notes"] == 5  # null: unchanged
    else:
        error_of(r, 400, "invalid_input")
    assert admin.get("/v1/keys").json()[-1]["recall_notes"] == 5


def test_spent_shows_in_listings_and_patching_the_cap_takes_effect(
    live_server: LiveServer, admin: httpx.Client
) -> None:
    key = make_key(admin, spend_cap_micros=10_000)
    api_key = live_server.services.accounts.get_key("local", key["id"])
    billing = live_server.services.billing
    billing.settle(billing.reserve(api_key, 8_000), 7_500)
    listed = {k["id"]: k for k in admin.get("/v1/keys").json()}
    assert listed[key["id"]]["spent_micros"] == 7_500
    with live_server.client(key["secret"]) as c:
        assert c.get("/v1/me").json()["key"]["spent_micros"] == 7_500
    with pytest.raises(PaymentRequired):
        billing.reserve(api_key, 3_000)
    # Raising the cap through PATCH lets the key spend again.
    admin.patch(f"/v1/keys/{key['id']}", json={"spend_cap_micros": 20_000})
    raised = live_server.services.accounts.get_key("local", key["id"])
    billing.reserve(raised, 12_000)


def test_a_revoked_keys_settings_cannot_change(admin: httpx.Client) -> None:
    key = make_key(admin)
    admin.delete(f"/v1/keys/{key['id']}")
    error_of(admin.patch(f"/v1/keys/{key['id']}", json={"recall_notes": 3}), 409, "key_revoked")
