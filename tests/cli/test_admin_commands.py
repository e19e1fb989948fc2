"""`memvault reindex` and `memvault init-search` against the AWS backend, in process
(moto's DynamoDB and S3 live in the test process, the OpenSearch node is real)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from memvault.cli.main import app
from memvault.container import Services, get_services
from memvault.services.context import Caller
from memvault.settings import get_settings


@pytest.fixture
def backend() -> str:
    return "aws"


@pytest.fixture
def aws_env(services: Services, monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    s = services.settings
    for name, value in {
        "MEMVAULT_BACKEND": "aws",
        "MEMVAULT_AWS_REGION": s.aws_region or "",
        "MEMVAULT_TABLE": s.table,
        "MEMVAULT_BUCKET": s.bucket,
        "MEMVAULT_OPENSEARCH_URL": s.opensearch_url or "",
        "MEMVAULT_OPENSEARCH_AUTH": "none",
        "MEMVAULT_OPENSEARCH_INDEX": s.opensearch_index,
        "MEMVAULT_OPENSEARCH_REFRESH": "true",
    }.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    get_services.cache_clear()
    yield services
    get_settings.cache_clear()
    get_services.cache_clear()


def test_reindex_rebuilds_an_aws_accounts_index(aws_env: Services, user: Caller) -> None:
    for i in range(3):
        aws_env.vault.write(user, f"n{i}.md", f"wombat {i}")
    aws_env.index.clear(user.account_id)
    # Keyword search: the text index is what reindex rebuilds (vectors would still answer).
    assert aws_env.vault.search(user, "wombat", mode="keyword") == []
    result = CliRunner().invoke(app, ["reindex", "--account", user.account_id])
    assert result.exit_code == 0, result.output
    assert "reindexed 3 notes of account local" in result.output
    assert len(aws_env.vault.search(user, "wombat", mode="keyword")) == 3


def test_reindex_names_a_missing_account(aws_env: Services) -> None:
    result = CliRunner().invoke(app, ["reindex", "--account", "nobody"])
    assert result.exit_code == 1
    assert "no account 'nobody'" in result.output


def test_init_search_is_idempotent(aws_env: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(app, ["init-search"])
    assert result.exit_code == 0, result.output
    assert "already exists" in result.output
    monkeypatch.setenv("MEMVAULT_OPENSEARCH_INDEX", aws_env.settings.opensearch_index + "-new")
    get_settings.cache_clear()
    try:
        created = CliRunner().invoke(app, ["init-search"])
        assert created.exit_code == 0, created.output
        assert "created" in created.output
    finally:
        aws_env.index.client.indices.delete(index=aws_env.settings.opensearch_index + "-new")
