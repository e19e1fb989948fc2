"""Which proxy the upstream client uses: the environment's, read once when it starts."""

from __future__ import annotations

import pytest

from memvault.gateway.upstream import UpstreamClient, _env_proxy
from memvault.settings import Settings

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def test_without_proxy_variables_providers_are_called_directly() -> None:
    assert _env_proxy("https://api.openai.com/v1") is None


def test_the_proxy_for_the_provider_s_scheme_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://plain-proxy.internal:3128")
    assert _env_proxy("https://api.openai.com/v1") == "http://proxy.internal:3128"
    assert _env_proxy("http://models.internal:8000/v1") == "http://plain-proxy.internal:3128"


def test_all_proxy_serves_any_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALL_PROXY", "http://proxy.internal:3128")
    assert _env_proxy("https://api.anthropic.com") == "http://proxy.internal:3128"


def test_no_proxy_hosts_are_called_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,.internal.example")
    assert _env_proxy("https://models.internal.example/v1") is None
    assert _env_proxy("https://localhost:8443/v1") is None
    assert _env_proxy("https://api.openai.com/v1") == "http://proxy.internal:3128"


def test_each_provider_gets_its_own_proxy_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "models.local")
    client = UpstreamClient(
        Settings(
            openai_base_url="https://api.openai.com/v1",
            anthropic_base_url="https://models.local/anthropic",
        )
    )
    assert client.upstreams["openai"].proxy == "http://proxy.internal:3128"
    assert client.upstreams["anthropic"].proxy is None
