"""memory_search's mode and min_score as the gateway runs the tool (tools.run_tool): the
answer's data names the mode that ran, any fallback and each hit's matched chunk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.container import Services, build_services
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller, Surface
from memvault.services.hybrid import FALLBACK_OFF
from memvault.tools import run_tool
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock

GATEWAY = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.TOOLS, key_id="k1")
USER = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)
STORAGE = (
    "# Storage\n\nAfter comparing options the team settled on PostgreSQL; MySQL lacked the JSON"
    " columns and SQLite the concurrent writers.\n"
)
PARAPHRASE = "which database did we choose"


def seeded(services: Services) -> Services:
    services.vault.write(USER, "decisions/storage.md", STORAGE)
    services.vault.write(USER, "notes/cooking.md", "# Cooking\n\nBake the sourdough long.\n")
    return services


def test_the_tool_searches_by_meaning_and_says_where_it_matched(services: Services) -> None:
    seeded(services)
    result = run_tool(services, GATEWAY, "memory_search", {"query": PARAPHRASE})
    assert not result.is_error
    assert result.data["mode"] == "hybrid" and "fallback" not in result.data
    [hit] = result.data["results"]
    assert hit["path"] == "decisions/storage.md"
    assert hit["chunk"]["heading"] == "Storage" and isinstance(hit["chunk"]["offset"], int)

    keyword = run_tool(services, GATEWAY, "memory_search", {"query": PARAPHRASE, "mode": "keyword"})
    assert keyword.data["results"] == [] and keyword.data["mode"] == "keyword"
    everything = run_tool(
        services,
        GATEWAY,
        "memory_search",
        {"query": PARAPHRASE, "mode": "semantic", "min_score": 0.0},
    )
    assert [h["path"] for h in everything.data["results"]] == [
        "decisions/storage.md",
        "notes/cooking.md",
    ]


@pytest.mark.parametrize("arguments", [{"mode": "vector"}, {"min_score": 1.01}, {"min_score": "x"}])
def test_bad_options_are_refused_results(services: Services, arguments: dict[str, object]) -> None:
    result = run_tool(services, GATEWAY, "memory_search", {"query": "sourdough", **arguments})
    assert result.is_error and result.text.startswith("refused (invalid_arguments)")
    assert next(iter(arguments)) in result.text


@pytest.fixture
def vectors_off(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[Services]:
    with backend_settings(tmp_path, backend, embeddings="off") as settings:
        svc = build_services(settings, clock=clock)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        yield svc


def test_with_vectors_off_the_tool_says_it_searched_by_keyword(vectors_off: Services) -> None:
    seeded(vectors_off)
    result = run_tool(
        vectors_off, GATEWAY, "memory_search", {"query": "sourdough", "mode": "hybrid"}
    )
    assert result.data["mode"] == "keyword" and result.data["fallback"] == FALLBACK_OFF
    assert FALLBACK_OFF in result.text and "notes/cooking.md" in result.text
    assert result.data["results"][0]["chunk"] is None
