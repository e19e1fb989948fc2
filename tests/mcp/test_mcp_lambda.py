"""/mcp under the Lambda adapter (Mangum) the function will use, invoked many times in one
warm process: each invocation runs the ASGI lifespan again, which is exactly what the
SDK's session manager cannot survive; memvault's stateless endpoint must not care."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mangum import Mangum
from mcp_types.version import LATEST_PROTOCOL_VERSION

from memvault.api.app import create_app
from memvault.container import Services, build_services
from memvault.domain.models import Toggles
from memvault.mcp.http import create_mcp_app
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller
from memvault.tools import TOOL_NAMES
from tests.mcp.helpers import INIT_PARAMS, rpc
from tests.support.backends import BACKENDS, backend_settings
from tests.support.clock import FakeClock


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Both backends here (the MCP conftest pins the HTTP surface's tests to SQLite)."""
    return str(request.param)


HOST = "abc123.execute-api.eu-west-1.amazonaws.com"
Invoke = Callable[..., tuple[int, dict[str, str], Any]]


def rest_proxy_event(
    body: dict[str, Any] | None,
    *,
    key: str,
    method: str = "POST",
    path: str = "/mcp",
    version: str | None = None,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    """An API Gateway REST API (v1) proxy event, as Lambda hands it to the function."""
    headers = {
        "Host": HOST,
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {key}",
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Port": "443",
    }
    if version:
        headers["MCP-Protocol-Version"] = version
    headers.update(extra or {})
    return {
        "resource": "/{proxy+}",
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": None,
        "multiValueQueryStringParameters": None,
        "pathParameters": {"proxy": path.lstrip("/")},
        "stageVariables": None,
        "requestContext": {
            "resourcePath": "/{proxy+}",
            "httpMethod": method,
            "path": f"/prod{path}",
            "stage": "prod",
            "requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
            "identity": {"sourceIp": "203.0.113.7"},
        },
        "body": json.dumps(body) if body is not None else None,
        "isBase64Encoded": False,
    }


@pytest.fixture
def mcp_services(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[tuple[Services, str]]:
    """Services as the function builds them, answering for the API Gateway host."""
    with backend_settings(tmp_path, backend, mcp_allowed_hosts=HOST) as settings:
        svc = build_services(settings, clock=clock)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        issued = svc.accounts.issue_key(LOCAL_ACCOUNT_ID, name="lambda", toggles=Toggles(mcp=True))
        yield svc, issued.secret


def handler_for(app: Any) -> Invoke:
    # lifespan="auto", the default: the app's lifespan runs around every invocation.
    handler = Mangum(app, lifespan="auto")
    context = SimpleNamespace(function_name="memvault-mcp", aws_request_id="req")

    def invoke(body: dict[str, Any] | None, **kwargs: Any) -> tuple[int, dict[str, str], Any]:
        reply = handler(rest_proxy_event(body, **kwargs), context)
        text = reply["body"]
        if reply.get("isBase64Encoded"):
            text = base64.b64decode(text).decode("utf-8")
        parsed = json.loads(text) if text else None
        return reply["statusCode"], {k.lower(): v for k, v in reply["headers"].items()}, parsed

    return invoke


@pytest.mark.parametrize("which", ["full app", "mcp function"])
def test_sequential_invocations_in_one_warm_process(
    mcp_services: tuple[Services, str], which: str
) -> None:
    svc, key = mcp_services
    app = create_app(svc) if which == "full app" else create_mcp_app(svc)
    invoke = handler_for(app)

    # 1. initialize (2025-06-18, as desktop clients send it)
    status, headers, reply = invoke(
        rpc("initialize", {**INIT_PARAMS, "protocolVersion": "2025-06-18"}), key=key
    )
    assert status == 200, reply
    assert reply["result"]["protocolVersion"] == "2025-06-18"
    assert "mcp-session-id" not in headers
    # 2. the initialized notification
    status, _, reply = invoke(
        rpc("notifications/initialized", id=None), key=key, version="2025-06-18"
    )
    assert (status, reply) == (202, None)
    # 3. tools/list
    status, _, reply = invoke(rpc("tools/list", id=2), key=key, version="2025-06-18")
    assert status == 200
    assert [t["name"] for t in reply["result"]["tools"]] == list(TOOL_NAMES)
    # 4.. tools/call, many times, each a fresh invocation
    write = {
        "name": "memory_write",
        "arguments": {"path": "lambda.md", "markdown": "# Lambda\n\ncold starts"},
    }
    status, _, reply = invoke(rpc("tools/call", write, id=3), key=key, version="2025-06-18")
    assert reply["result"] == {
        "content": [{"type": "text", "text": "Created lambda.md (version 1)."}],
        "isError": False,
    }
    for n in range(10):
        search = {"name": "memory_search", "arguments": {"query": "cold starts"}}
        status, _, reply = invoke(
            rpc("tools/call", search, id=10 + n), key=key, version="2025-06-18"
        )
        assert status == 200
        assert "1. lambda.md — Lambda" in reply["result"]["content"][0]["text"]
    # The newest protocol version too: server/discover, then an enveloped call.
    meta = {
        "io.modelcontextprotocol/protocolVersion": LATEST_PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    status, _, reply = invoke(
        rpc("server/discover", {"_meta": meta}, id=30),
        key=key,
        version=LATEST_PROTOCOL_VERSION,
        extra={"Mcp-Method": "server/discover"},
    )
    assert status == 200, reply
    assert LATEST_PROTOCOL_VERSION in reply["result"]["supportedVersions"]
    read = {"name": "memory_read", "arguments": {"path": "lambda.md"}, "_meta": meta}
    status, _, reply = invoke(
        rpc("tools/call", read, id=31),
        key=key,
        version=LATEST_PROTOCOL_VERSION,
        extra={"Mcp-Method": "tools/call", "Mcp-Name": "memory_read"},
    )
    assert status == 200, reply
    assert reply["result"]["content"][0]["text"].endswith("cold starts")
    # Refusals come back the same way under the adapter.
    status, headers, reply = invoke(rpc("tools/list", id=40), key="mvk_wrong", version="2025-06-18")
    assert status == 401 and headers["www-authenticate"].startswith("Bearer")
    status, headers, reply = invoke(None, key=key, method="GET")
    assert status == 405 and headers["allow"] == "POST"
    status, _, reply = invoke(rpc("tools/list", id=41), key=key, extra={"Host": "evil.example"})
    assert status == 421


def test_any_instance_answers_any_request(mcp_services: tuple[Services, str]) -> None:
    """Initialize on one function instance, then call tools on others: nothing is shared."""
    svc, key = mcp_services
    instances = [handler_for(create_mcp_app(svc)) for _ in range(3)]
    status, _, reply = instances[0](
        rpc("initialize", {**INIT_PARAMS, "protocolVersion": "2025-11-25"}), key=key
    )
    assert status == 200
    for n in range(9):
        invoke = instances[n % 3]
        call = {"name": "memory_append", "arguments": {"path": "shared.md", "text": f"line {n}"}}
        status, _, reply = invoke(rpc("tools/call", call, id=n), key=key, version="2025-11-25")
        assert status == 200 and not reply["result"]["isError"], reply
    note = svc.vault.read(Caller(account_id=LOCAL_ACCOUNT_ID), "shared.md")
    assert note.markdown == "\n".join(f"line {n}" for n in range(9))
