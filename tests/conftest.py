"""Shared fixtures: a controllable clock, services per backend, a real uvicorn server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import uvicorn

from memvault.api.app import create_app
from memvault.container import Services, build_services
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller, Surface
from memvault.settings import Settings

# Every backend the contract suite runs against. The AWS backend joins this list.
BACKENDS = ["sqlite"]


class FakeClock:
    """Wall-clock time the test controls (budgets refill, recency decays)."""

    def __init__(self, start: float = 1_780_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def make_settings(tmp_path: Path, backend: str, **overrides: object) -> Settings:
    return Settings(backend=backend, data_dir=tmp_path / "data", **overrides)  # type: ignore[arg-type]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def services(tmp_path: Path, backend: str, clock: FakeClock) -> Services:
    svc = build_services(make_settings(tmp_path, backend), clock=clock)
    svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
    return svc


@pytest.fixture
def user() -> Caller:
    return Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)


@pytest.fixture
def model() -> Caller:
    """A caller whose writes come from a model (screened)."""
    return Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.MCP)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LiveServer:
    url: str
    services: Services
    admin_key: str
    clock: FakeClock

    def client(self, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key or self.admin_key}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60.0)


@pytest.fixture
def live_server(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[LiveServer]:
    """memvault on a real uvicorn server on 127.0.0.1, in a background thread."""
    svc = build_services(make_settings(tmp_path, backend), clock=clock)
    issued = svc.accounts.bootstrap_local()
    assert issued is not None
    port = free_port()
    config = uvicorn.Config(create_app(svc), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", svc, issued.secret, clock)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
