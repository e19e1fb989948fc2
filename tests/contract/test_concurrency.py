"""Concurrent writers and budget takers: conditional writes and buckets hold under races."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from memvault.container import Services
from memvault.errors import Conflict, RateLimited
from memvault.services.context import Caller


def test_two_writers_with_the_same_if_match_never_both_win(
    services: Services, user: Caller
) -> None:
    services.vault.write(user, "n.md", "base")

    def attempt(i: int) -> str:
        try:
            services.vault.write(user, "n.md", f"writer {i}", expected_version=1)
            return "won"
        except Conflict:
            return "conflict"

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(attempt, range(8)))
    assert outcomes.count("won") == 1
    note = services.vault.read(user, "n.md")
    assert note.version == 2
    winner = next(i for i, o in enumerate(outcomes) if o == "won")
    assert note.markdown == f"writer {winner}"


def test_concurrent_appends_lose_nothing(services: Services, user: Caller) -> None:
    services.vault.write(user, "log.md", "start")

    def append(i: int) -> None:
        services.vault.append(user, "log.md", f"line {i}")  # unpinned: retried inside

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(append, range(12)))
    lines = services.vault.read(user, "log.md").markdown.splitlines()
    assert sorted(lines[1:]) == sorted(f"line {i}" for i in range(12))


def test_budget_bucket_is_exact_under_concurrency(services: Services, user: Caller) -> None:
    services.vault.write(user, "n.md", "fig")  # spends one write, not a search

    def search(_: int) -> bool:
        try:
            services.vault.search(user, "fig")
            return True
        except RateLimited:
            return False

    with ThreadPoolExecutor(max_workers=8) as pool:
        allowed = sum(pool.map(search, range(100)))
    assert allowed == 60
