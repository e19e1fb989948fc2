"""Shared fixtures: a controllable clock, services per backend, memvault on a real server.

The helpers behind them live in ``tests.support`` (also used by bench/); this file only
turns them into fixtures. Hypothesis profiles are chosen here too (see below).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from pathlib import Path

import fastapi.dependencies.models
import pytest

from memvault.container import Services, build_services
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller, Surface
from tests.support.backends import BACKENDS, backend_settings, seed_sqlite
from tests.support.clock import FakeClock
from tests.support.hypothesis import load_profiles
from tests.support.servers import LiveServer, serve
from tests.support.slowest import SLOWEST
from tests.support.tls import share_default_tls_context

load_profiles()
share_default_tls_context()


@pytest.fixture(autouse=True)
def forget_fastapi_endpoint_caches() -> Iterator[None]:
    """Lets each test's app, and the Services its endpoints close over, be freed.

    FastAPI memoizes facts about endpoint functions in module-level caches (4,096
    entries each) that hold the functions. A process builds one app in production, but
    every test here builds its own, so without this each test's services (boto3
    clients, connections, moto state) stayed alive: 7 GB by the end of the suite, and
    full collections of 10 s and more that stalled the live servers mid-test.
    """
    yield
    for value in vars(fastapi.dependencies.models).values():
        cache_clear = getattr(value, "cache_clear", None)
        if callable(cache_clear):
            cache_clear()


@pytest.fixture(autouse=True)
def forget_closed_log_streams() -> Iterator[None]:
    """Drops memvault's log handler once the stream it writes to has closed.

    ``configure_logging`` (memvault.observability) gives the ``memvault`` logger one
    handler on ``sys.stderr`` as it is then, once per process. When that first happens
    inside an in-process CLI run (typer's CliRunner) or under ``capsys``, the stream is
    closed when that test ends, and every later log line (a live server's request log)
    printed "--- Logging error ---" into whatever stderr a later test was reading: the
    CLI tests that check stderr failed after tests/sam/test_handlers.py on one worker.
    The next ``configure_logging`` installs a handler on the stream of its time.
    """
    yield
    root = logging.getLogger("memvault")
    for handler in list(root.handlers):
        stream = getattr(handler, "stream", None)
        if getattr(handler, "_memvault", False) and getattr(stream, "closed", False):
            root.removeHandler(handler)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def services(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[Services]:
    with backend_settings(tmp_path, backend) as settings:
        seed_sqlite(settings)
        svc = build_services(settings, clock=clock)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        yield svc


@pytest.fixture
def user() -> Caller:
    return Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)


@pytest.fixture
def model() -> Caller:
    """A caller whose writes come from a model (screened)."""
    return Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.MCP)


@pytest.fixture
def live_server(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[LiveServer]:
    with backend_settings(tmp_path, backend) as settings:
        seed_sqlite(settings)
        yield from serve(build_services(settings, clock=clock), clock)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests first, all on one worker; then the slowest tests
    (``tests.support.slowest``).

    The browser tests spend most of their time waiting on Chromium (on the dashboard
    tests' own clock: 97 s of wall for 43 s of CPU, Chromium's included). Run last on
    every worker, as they were, they left the cores idle at the end of the run; run
    first as one xdist group (``scripts/test.sh`` passes ``--dist loadgroup``), one
    worker waits on the browser while the other two keep the cores busy, and the
    browser starts once instead of once a worker.

    Playwright's sync API runs an asyncio event loop on the main thread while its
    browser is open, and a test that starts a loop of its own meanwhile (asyncio.run:
    the MCP and async SDK clients) would fail. The browser is package-scoped
    (``tests/dashboard/conftest.py``), so it closes, and its loop with it, after the
    group's last test, before that worker's next test.
    """
    rank = {nodeid: n for n, nodeid in enumerate(SLOWEST)}
    browser_group = pytest.mark.xdist_group("browser")

    def order(item: pytest.Item) -> tuple[bool, int]:
        nodeid = item.nodeid.replace("\\", "/")
        return "tests/dashboard/" not in nodeid, rank.get(nodeid, len(rank))

    for item in items:
        if "tests/dashboard/" in item.nodeid.replace("\\", "/"):
            item.add_marker(browser_group)
    items.sort(key=order)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything imported and collected by now lives until the process ends: frozen, the
    garbage collector stops walking it, and it collects the young generation every
    10,000 allocations instead of 700 (ADR 0065).

    Each test builds an app, services and their cycles, so a worker runs a full
    collection every dozen tests or so, and each walked the ~200,000 objects of the
    modules, fixtures and test items too: 7.2 s of the 30 s of CPU of
    tests/api/test_rest_errors.py went to the collector, 3.7 s with this. What a test
    leaves behind is still collected as before; only when, and what is walked, changed.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
