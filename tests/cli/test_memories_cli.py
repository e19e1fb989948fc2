"""`memvault memories`: the command line in process against a live server, on both
backends (the group's one AWS run is this test's second parameter)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.helpers import Result, clean_env, invoke_memvault
from tests.support.backends import BACKENDS
from tests.support.servers import LiveServer


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def run(server: LiveServer, cwd: Path, *args: str) -> Result:
    env = clean_env(MEMVAULT_API_KEY=server.admin_key)
    return invoke_memvault(*args, "--url", server.url, env=env, cwd=cwd)


def ok(server: LiveServer, cwd: Path, *args: str) -> str:
    result = run(server, cwd, *args)
    assert result.code == 0, str(result)
    return result.stdout


def as_json(server: LiveServer, cwd: Path, *args: str) -> Any:
    return json.loads(ok(server, cwd, *args, "--json"))


def test_create_add_items_show_retention_list_and_delete(
    live_server: LiveServer, tmp_path: Path
) -> None:
    s, d = live_server, tmp_path
    assert "x-mem-id: user-7" in ok(s, d, "memories", "create", "user-7", "--name", "Ana")
    ok(s, d, "memories", "add-item", "user-7", "Use metric units.", "--guardrail")
    ok(s, d, "memories", "add-item", "user-7", "Brief answers.", "--preference", "tone")
    fact = as_json(s, d, "memories", "add-item", "user-7", "Has a dog, Pixel.", "--fact")
    assert fact["item_type"] == "fact" and fact["embedded"] is True
    both = run(s, d, "memories", "add-item", "user-7", "x", "--fact", "--guardrail")
    assert both.code == 2 and "exactly one" in both.stderr
    shown = as_json(s, d, "memories", "show", "user-7")
    assert shown["item_counts"] == {"guardrail": 1, "preference": 1, "fact": 1}
    human = ok(s, d, "memories", "show", "user-7")
    assert "Use metric units." in human and "never" in human
    assert as_json(s, d, "memories", "retention", "user-7", "30")["retention_days"] == 30
    assert "forever" in ok(s, d, "memories", "retention", "user-7", "none")
    listed = as_json(s, d, "memories", "list")["memories"]
    assert [m["slug"] for m in listed] == ["user-7"]
    assert "user-7" in ok(s, d, "memories", "list", "--q", "ana")
    ok(s, d, "memories", "delete", "user-7")
    missing = run(s, d, "memories", "show", "user-7")
    assert missing.code != 0 and "memory_not_found" in missing.stderr


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_keys_take_a_memory_budget(live_server: LiveServer, tmp_path: Path) -> None:
    made = as_json(live_server, tmp_path, "keys", "create", "app", "--memory-tokens", "600")
    assert made["memory_tokens"] == 600
    changed = as_json(live_server, tmp_path, "keys", "toggle", made["id"], "--memory-tokens", "900")
    assert changed["memory_tokens"] == 900
