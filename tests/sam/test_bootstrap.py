"""`memvault bootstrap`: the first account and admin key of a deployed stack, once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memvault.cli.bootstrap import account_id_for, table_from_stack
from memvault.cli.main import app
from memvault.container import build_services
from memvault.settings import get_settings
from tests.support.backends import aws_settings


@pytest.fixture
def stack_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    with aws_settings(tmp_path) as settings:
        monkeypatch.setenv("MEMVAULT_BACKEND", "aws")
        monkeypatch.setenv("MEMVAULT_AWS_REGION", str(settings.aws_region))
        monkeypatch.setenv("MEMVAULT_TABLE", settings.table)
        get_settings.cache_clear()
        try:
            yield settings
        finally:
            get_settings.cache_clear()


def test_bootstrap_prints_a_working_admin_key_once(stack_env: Any) -> None:
    runner = CliRunner()
    first = runner.invoke(app, ["bootstrap", "--name", "Acme Labs"])
    assert first.exit_code == 0, first.output
    secret = first.stdout.strip()
    assert secret.startswith("mvk_")

    services = build_services(stack_env)
    key = services.accounts.authenticate(secret)
    assert key.account_id == "acme-labs" and key.admin
    # The organisation's first owner holds it, and can sign in with it.
    caller, _ = services.callers.for_key(secret)
    assert caller.role == "owner" and caller.manage
    assert services.sessions.sign_in_key(secret).member.id == key.member_id
    assert (key.toggles.recall, key.toggles.tools, key.toggles.mcp) == (True, True, True)
    assert services.store.get_account("acme-labs").name == "Acme Labs"  # type: ignore[union-attr]

    again = runner.invoke(app, ["bootstrap", "--name", "Acme Labs"])
    assert again.exit_code == 2
    assert "exists" in again.stderr and "mvk_" not in again.stdout
    assert len(services.accounts.list_keys("acme-labs")) == 1


def test_bootstrap_refuses_the_embedded_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_BACKEND", "sqlite")
    get_settings.cache_clear()
    try:
        done = CliRunner().invoke(app, ["bootstrap", "--name", "x"])
    finally:
        get_settings.cache_clear()
    assert done.exit_code == 2 and "--stack" in done.stderr


class _Stacks:
    def __init__(self, outputs: list[dict[str, str]]) -> None:
        self.outputs = outputs

    def describe_stacks(self, StackName: str) -> dict[str, Any]:
        return {"Stacks": [{"StackName": StackName, "Outputs": self.outputs}]}


def test_table_from_stack_outputs() -> None:
    found = table_from_stack(
        "memvault", _Stacks([{"OutputKey": "NotesTableName", "OutputValue": "t-1"}])
    )
    assert found == "t-1"
    with pytest.raises(ValueError, match="NotesTableName"):
        table_from_stack("other", _Stacks([]))


def test_account_ids_from_names() -> None:
    assert account_id_for("  Acme Labs!  ") == "acme-labs"
    assert account_id_for("été") == "t"
