"""Who may use /mcp: a memvault key with its mcp toggle on, from an allowed Host/Origin."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault.container import build_services
from memvault.mcp.http import HostPolicy
from tests.mcp.conftest import issue_key
from tests.mcp.helpers import MODES, connect_error, initialize, post, rpc, run
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.servers import LiveServer, serve

LIST = rpc("tools/call", {"name": "memory_list", "arguments": {}})


def refusal(response_json: dict[str, object]) -> dict[str, object]:
    error = response_json["error"]
    assert isinstance(error, dict)
    return error


@pytest.mark.parametrize(
    ("authorization", "code", "message"),
    [
        (None, "missing_api_key", "an API key is required (Authorization: Bearer <key>)"),
        ("Bearer mvk_not_a_real_key", "invalid_api_key", "the API key is not valid"),
        ("Basic dXNlcjpwYXNz", "malformed_authorization", "must be 'Bearer <key>'"),
    ],
)
def test_no_or_bad_key_is_401_with_www_authenticate(
    live_server: LiveServer, authorization: str | None, code: str, message: str
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = post(live_server.url, LIST, key=None, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer ")
    error = refusal(response.json())
    assert response.json()["jsonrpc"] == "2.0"
    assert error["data"] == {"type": "authentication_error", "code": code, "status": 401}
    assert message in str(error["message"])


def test_a_revoked_key_is_401(live_server: LiveServer) -> None:
    key = issue_key(live_server, mcp=True)
    assert initialize(live_server.url, key, "2025-06-18").status_code == 200
    svc = live_server.services
    key_id = svc.accounts.authenticate(key).id
    svc.accounts.revoke("local", key_id)
    response = initialize(live_server.url, key, "2025-06-18")
    assert response.status_code == 401
    assert refusal(response.json())["data"]["code"] == "revoked_api_key"  # type: ignore[index]


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_client_reports_a_missing_key(live_server: LiveServer, mode: str) -> None:
    async def main() -> str:
        return await connect_error(live_server.url, None, mode=mode)

    assert run(main) == "an API key is required (Authorization: Bearer <key>)"


def test_a_key_without_mcp_is_403_and_says_so(live_server: LiveServer) -> None:
    key = issue_key(live_server, recall=True, tools=True)  # everything but mcp
    response = initialize(live_server.url, key, "2025-06-18")
    assert response.status_code == 403
    error = refusal(response.json())
    assert error["data"] == {"type": "permission_error", "code": "mcp_disabled", "status": 403}
    assert str(error["message"]).startswith("MCP is turned off for this key")
    assert "www-authenticate" not in response.headers
    # The key itself is good: REST answers it, and turning mcp on lets it in at once.
    with live_server.client(key) as rest:
        assert rest.get("/v1/notes").status_code == 200
        key_id = rest.get("/v1/me").json()["key"]["id"]
    with live_server.client() as admin:
        assert admin.patch(f"/v1/keys/{key_id}", json={"mcp": True}).status_code == 200
    assert initialize(live_server.url, key, "2025-06-18").status_code == 200


@pytest.mark.parametrize("mode", MODES)
def test_the_sdk_client_reports_mcp_off(live_server: LiveServer, mode: str) -> None:
    key = issue_key(live_server, tools=True)

    async def main() -> str:
        return await connect_error(live_server.url, key, mode=mode)

    assert run(main).startswith("MCP is turned off for this key")


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({"Host": "evil.example"}, 421, "invalid_host"),
        ({"Host": "127.0.0.1.evil.example"}, 421, "invalid_host"),
        ({"Origin": "http://evil.example"}, 403, "invalid_origin"),
        ({"Origin": "null"}, 403, "invalid_origin"),
    ],
)
def test_dns_rebinding_protection_is_on(
    live_server: LiveServer, headers: dict[str, str], status: int, code: str
) -> None:
    response = post(live_server.url, LIST, key=live_server.admin_key, headers=headers)
    assert response.status_code == status
    assert refusal(response.json())["data"]["code"] == code  # type: ignore[index]


def test_a_local_browser_origin_is_allowed(live_server: LiveServer) -> None:
    for origin in ("http://localhost:6274", "http://127.0.0.1:3000"):
        response = post(
            live_server.url, LIST, key=live_server.admin_key, headers={"Origin": origin}
        )
        assert response.status_code == 200, origin


def test_allowed_hosts_are_configurable(tmp_path: Path, backend: str, clock: FakeClock) -> None:
    """Behind API Gateway or a custom domain, the Host is the gateway's name."""
    with backend_settings(
        tmp_path,
        backend,
        mcp_allowed_hosts="mcp.example.com, abc123.execute-api.eu-west-1.amazonaws.com",
        mcp_allowed_origins="https://app.example.org",
    ) as settings:
        for server in serve(build_services(settings, clock=clock), clock):
            key = server.admin_key
            for host in ("mcp.example.com", "abc123.execute-api.eu-west-1.amazonaws.com:443"):
                assert post(server.url, LIST, key=key, headers={"Host": host}).status_code == 200
            assert post(server.url, LIST, key=key).status_code == 421  # 127.0.0.1 is not listed
            origin = {"Host": "mcp.example.com", "Origin": "https://app.example.org"}
            assert post(server.url, LIST, key=key, headers=origin).status_code == 200
            origin["Origin"] = "https://other.example.org"
            assert post(server.url, LIST, key=key, headers=origin).status_code == 403


def test_host_policy_rules() -> None:
    policy = HostPolicy.parse("localhost, 127.0.0.1, [::1], api.example.com:8443", "")
    assert policy.host_allowed("localhost")
    assert policy.host_allowed("LOCALHOST:8080")
    assert policy.host_allowed("[::1]:9000")
    assert policy.host_allowed("api.example.com:8443")
    assert not policy.host_allowed("api.example.com")  # an entry with a port is exact
    assert not policy.host_allowed("api.example.com:9999")
    assert not policy.host_allowed("localhost:abc")
    assert not policy.host_allowed("localhost.evil.com")
    assert not policy.host_allowed(None)
    assert policy.origin_allowed(None)
    assert policy.origin_allowed("http://localhost:5173")
    assert not policy.origin_allowed("file://")
