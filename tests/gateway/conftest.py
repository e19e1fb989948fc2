"""Fixtures for the gateway tests: a scripted upstream and memvault in front of it.

memvault runs on a real uvicorn server on 127.0.0.1 and the tests talk to it with the
official openai and anthropic SDKs; the upstream is ``tests.support.upstream.ScriptedUpstream``,
the one stand-in (no model provider is reachable here).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import anthropic
import openai
import pytest

from memvault.container import build_services
from memvault.domain.models import Toggles, UsageRecord
from tests.support.backends import backend_settings, seed_sqlite
from tests.support.clock import FakeClock
from tests.support.servers import LiveServer, serve
from tests.support.upstream import ScriptedUpstream

UPSTREAM_OPENAI_KEY = "sk-upstream-openai"
UPSTREAM_ANTHROPIC_KEY = "sk-ant-upstream"


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[ScriptedUpstream]:
    with ScriptedUpstream() as server:
        yield server


@pytest.fixture
def upstream(upstream_server: ScriptedUpstream) -> Iterator[ScriptedUpstream]:
    upstream_server.reset()
    yield upstream_server
    upstream_server.reset()


def gateway_overrides(upstream: ScriptedUpstream, **extra: object) -> dict[str, object]:
    return {
        "openai_base_url": upstream.base_url + "/v1",
        "anthropic_base_url": upstream.base_url,
        "openai_api_key": UPSTREAM_OPENAI_KEY,
        "anthropic_api_key": UPSTREAM_ANTHROPIC_KEY,
        "upstream_read_timeout": 3.0,
        "upstream_connect_timeout": 2.0,
        "stream_keepalive_seconds": 0.05,
        **extra,
    }


@pytest.fixture
def gateway(
    tmp_path: Path, backend: str, clock: FakeClock, upstream: ScriptedUpstream
) -> Iterator[LiveServer]:
    """memvault in front of the scripted upstream, on the test's backend."""
    with backend_settings(tmp_path, backend, **gateway_overrides(upstream)) as settings:
        seed_sqlite(settings)
        yield from serve(build_services(settings, clock=clock), clock)


@pytest.fixture
def sqlite_gateway(
    tmp_path: Path, clock: FakeClock, upstream: ScriptedUpstream
) -> Iterator[LiveServer]:
    """For protocol behaviour that involves no storage: the embedded backend only."""
    with backend_settings(tmp_path, "sqlite", **gateway_overrides(upstream)) as settings:
        seed_sqlite(settings)
        yield from serve(build_services(settings, clock=clock), clock)


def issue_key(
    server: LiveServer, *, recall: bool = False, tools: bool = False, **settings: object
) -> str:
    issued = server.services.accounts.issue_key(
        "local", name="gateway-test", toggles=Toggles(recall=recall, tools=tools)
    )
    if settings:
        key = issued.key
        server.services.accounts.set_key_settings(
            key.account_id,
            key.id,
            replace(key.settings, **settings),  # type: ignore[arg-type]
        )
    return issued.secret


def openai_client(server: LiveServer, key: str, **options: object) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.url + "/v1", api_key=key, max_retries=0, timeout=20.0, **options
    )  # type: ignore[arg-type]


def async_openai_client(server: LiveServer, key: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.url + "/v1", api_key=key, max_retries=0, timeout=20.0)


def anthropic_client(server: LiveServer, key: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key=key, max_retries=0, timeout=20.0)


def async_anthropic_client(server: LiveServer, key: str) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=server.url, api_key=key, max_retries=0, timeout=20.0)


def wait_for_usage(server: LiveServer, count: int) -> list[UsageRecord]:
    """The account's usage records once ``count`` exist (they are written after the answer)."""
    deadline = time.monotonic() + 10
    while True:
        found = server.services.ledger.usage_between("local", "2000-01-01", "2999-12-31")
        if len(found) >= count:
            return found
        assert time.monotonic() < deadline, f"expected {count} usage records, found {len(found)}"
        time.sleep(0.05)
