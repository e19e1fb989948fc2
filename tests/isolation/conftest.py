"""The tenant-isolation suite runs on both backends (the root conftest's ``backend``), at
the service layer and over HTTP. Budgets and sign-in limits are lifted, so every one of
the attacker's attempts reaches the isolation it tests (never a 429 instead)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.container import Services, build_services
from tests.gateway.conftest import gateway_overrides, upstream, upstream_server
from tests.support.backends import backend_settings, seed_sqlite
from tests.support.clock import FakeClock
from tests.support.servers import LiveServer, serve
from tests.support.upstream import ScriptedUpstream

__all__ = ["upstream", "upstream_server"]

UNLIMITED: dict[str, object] = {
    "budget_burst": 1e6,
    "budget_per_minute": 1e6,
    "sign_in_burst": 1e6,
    "sign_in_per_minute": 1e6,
}


@pytest.fixture
def services(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[Services]:
    with backend_settings(tmp_path, backend, **UNLIMITED) as settings:
        seed_sqlite(settings)
        yield build_services(settings, clock=clock)


@pytest.fixture
def server(
    tmp_path: Path, backend: str, clock: FakeClock, upstream: ScriptedUpstream
) -> Iterator[LiveServer]:
    """memvault on a real server in front of the scripted upstream, on the backend."""
    overrides = gateway_overrides(upstream, **UNLIMITED)
    with backend_settings(tmp_path, backend, **overrides) as settings:
        seed_sqlite(settings)
        yield from serve(build_services(settings, clock=clock), clock)
