"""Shared fixtures: a controllable clock, services per backend, a real uvicorn server."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import fastapi.dependencies.models
import httpx
import pytest
import uvicorn

from memvault.adapters.aws.search import OpenSearchIndex
from memvault.adapters.aws.search import make_client as make_search_client
from memvault.api.app import create_app
from memvault.container import Services, build_services
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller, Surface
from memvault.settings import Settings
from tests.aws_env import REGION, create_resources, serial_moto
from tests.opensearch_node import opensearch_url, require_reason

# Every backend the contract suite runs against: embedded SQLite, and AWS as DynamoDB +
# S3 on moto plus a real local OpenSearch node (scripts/opensearch/start.sh).
BACKENDS = ["sqlite", "aws"]


class FakeClock:
    """Wall-clock time the test controls (budgets refill, recency decays)."""

    def __init__(self, start: float = 1_780_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


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


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def make_settings(tmp_path: Path, backend: str, **overrides: object) -> Settings:
    return Settings(backend=backend, data_dir=tmp_path / "data", **overrides)  # type: ignore[arg-type]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def require_opensearch() -> str:
    """The local node's URL; without one the AWS tier is skipped, or fails under CI."""
    url = opensearch_url()
    if url is None:
        reason = f"the AWS tier needs the local OpenSearch node: {require_reason()}"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return url


@contextmanager
def aws_settings(tmp_path: Path, **overrides: object) -> Iterator[Settings]:
    """A fresh table and bucket on moto and a fresh index on the real node."""
    url = require_opensearch()
    with serial_moto():
        table, bucket = create_resources()
        settings = make_settings(
            tmp_path,
            "aws",
            aws_region=REGION,
            table=table,
            bucket=bucket,
            opensearch_url=url,
            opensearch_auth="none",
            opensearch_index=f"memvault-test-{uuid.uuid4().hex[:12]}",
            opensearch_refresh="true",
            **overrides,
        )
        index = OpenSearchIndex(
            make_search_client(url, auth="none", region=None, timeout=30.0),
            settings.opensearch_index,
        )
        index.create_index()
        try:
            yield settings
        finally:
            index.drop_index()


@contextmanager
def backend_settings(tmp_path: Path, backend: str, **overrides: object) -> Iterator[Settings]:
    if backend == "aws":
        with aws_settings(tmp_path, **overrides) as settings:
            yield settings
    else:
        yield make_settings(tmp_path, backend, **overrides)


@pytest.fixture
def services(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[Services]:
    with backend_settings(tmp_path, backend) as settings:
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
    with backend_settings(tmp_path, backend) as settings:
        yield from serve(build_services(settings, clock=clock), clock)


def serve(svc: Services, clock: FakeClock) -> Iterator[LiveServer]:
    """memvault on a real uvicorn server on 127.0.0.1, in a background thread."""
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
