"""Fixtures for the MCP tests: live servers, keys with and without MCP.

The MCP HTTP surface runs on the embedded backend (it is the same code on every
backend); the tools' own tests (test_tools.py) and the Lambda function's
(test_mcp_lambda.py, which calls tools/list and tools/call on AWS) run on both.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.container import build_services
from memvault.domain.models import Toggles
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.servers import LiveServer, serve


@pytest.fixture(params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# Small budgets, so a test can spend one: the clock is a FakeClock, so nothing refills
# until a test advances it.
TIGHT_BUDGET = 3


@pytest.fixture
def tight_server(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[LiveServer]:
    """A live server whose account may write 3 times and search 3 times."""
    with backend_settings(
        tmp_path, backend, budget_burst=float(TIGHT_BUDGET), budget_per_minute=float(TIGHT_BUDGET)
    ) as settings:
        yield from serve(build_services(settings, clock=clock), clock)


def issue_key(server: LiveServer, account_id: str = "local", **toggles: bool) -> str:
    """A fresh key on ``account_id`` with the given toggles (all off unless given)."""
    issued = server.services.accounts.issue_key(account_id, name="test", toggles=Toggles(**toggles))
    return issued.secret
