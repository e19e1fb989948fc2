"""Malformed or unexpected JSON-RPC on /mcp gets a clear JSON-RPC error, never a crash."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types.version import LATEST_PROTOCOL_VERSION

from memvault.domain.models import MAX_NOTE_BYTES
from tests.mcp.helpers import post, rpc
from tests.support.servers import LiveServer

V = "2025-06-18"


@pytest.mark.parametrize(
    ("body", "code", "message", "echo_id"),
    [
        (b"{not json", -32700, "Parse error: the request body is not valid JSON", None),
        (b"", -32700, "Parse error: the request body is not valid JSON", None),
        (b"\xff\xfe{}", -32700, "Parse error: the request body is not valid JSON", None),
        (
            [rpc("tools/list", id=1), rpc("tools/list", id=2)],
            -32600,
            "Invalid Request: batches are not supported; send one JSON-RPC message per POST",
            None,
        ),
        ("tools/list", -32600, "Invalid Request: the body must be a JSON object", None),
        (
            {"id": 1, "method": "tools/list"},
            -32600,
            "Invalid Request: 'jsonrpc' must be \"2.0\"",
            1,
        ),
        ({"jsonrpc": "1.0", "id": 1, "method": "x"}, -32600, "'jsonrpc' must be \"2.0\"", 1),
        ({"jsonrpc": "2.0", "id": 7}, -32600, "Invalid Request: 'method' is missing", 7),
        (
            {"jsonrpc": "2.0", "id": 1, "method": 5},
            -32600,
            "'method' must be a non-empty string",
            1,
        ),
        (
            {"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": [1]},
            -32600,
            "Invalid Request: 'params' must be an object",
            "a",
        ),
        (
            {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
            -32600,
            "'id' must be a string or an integer",
            None,
        ),
        (
            {"jsonrpc": "2.0", "id": True, "method": "tools/list"},
            -32600,
            "'id' must be a string or an integer",
            None,
        ),
    ],
)
def test_a_malformed_message_is_a_400_with_a_clear_error(
    live_server: LiveServer, body: Any, code: int, message: str, echo_id: Any
) -> None:
    response = post(live_server.url, body, key=live_server.admin_key, version=V)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    reply = response.json()
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == echo_id
    assert reply["error"]["code"] == code
    assert message in reply["error"]["message"]


def test_an_unknown_method_is_method_not_found(live_server: LiveServer) -> None:
    response = post(
        live_server.url, rpc("notes/delete", id=3), key=live_server.admin_key, version=V
    )
    assert response.status_code == 200  # handshake era: the error travels in the body
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32601, "message": "Method not found", "data": "notes/delete"},
    }


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"arguments": {}}, "Invalid params for tools/call: name: Field required"),
        ({"name": 42}, "Invalid params for tools/call: name: "),
    ],
)
def test_bad_params_say_which_param(live_server: LiveServer, params: Any, fragment: str) -> None:
    response = post(
        live_server.url, rpc("tools/call", params), key=live_server.admin_key, version=V
    )
    error = response.json()["error"]
    assert error["code"] == -32602
    assert fragment in error["message"]


def test_tool_arguments_that_are_not_an_object(live_server: LiveServer) -> None:
    body = rpc("tools/call", {"name": "memory_list", "arguments": "folder=x"})
    error = post(live_server.url, body, key=live_server.admin_key, version=V).json()["error"]
    assert error["code"] == -32602
    assert "arguments" in error["message"]


def test_notifications_and_responses_are_accepted_with_202(live_server: LiveServer) -> None:
    for body in (
        rpc("notifications/initialized", id=None),
        rpc("notifications/cancelled", {"requestId": 1}, id=None),
        {"jsonrpc": "2.0", "id": 1, "result": {}},
    ):
        response = post(live_server.url, body, key=live_server.admin_key, version=V)
        assert response.status_code == 202, body
        assert response.content == b""


def test_a_modern_request_without_its_envelope_is_refused(live_server: LiveServer) -> None:
    response = post(
        live_server.url,
        rpc("tools/list", {}),
        key=live_server.admin_key,
        version=LATEST_PROTOCOL_VERSION,
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32602
    assert "io.modelcontextprotocol/protocolVersion" in error["message"]


def test_an_unknown_protocol_version_is_refused(live_server: LiveServer) -> None:
    response = post(
        live_server.url, rpc("tools/list", {}), key=live_server.admin_key, version="1999-01-01"
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] in (-32602, -32022)


@pytest.mark.parametrize(
    ("headers", "status", "code"),
    [
        ({"Content-Type": "text/plain"}, 415, "unsupported_media_type"),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"),
        ({"Accept": "text/html"}, 406, "not_acceptable"),
    ],
)
def test_wrong_content_type_or_accept(
    live_server: LiveServer, headers: dict[str, str], status: int, code: str
) -> None:
    response = post(
        live_server.url, rpc("tools/list"), key=live_server.admin_key, version=V, headers=headers
    )
    assert response.status_code == status
    assert response.json()["error"]["data"]["code"] == code


def test_no_accept_header_is_fine(live_server: LiveServer) -> None:
    """curl sends Accept: */*; some clients send none: both mean anything goes."""
    for accept in ("*/*", ""):
        response = post(
            live_server.url,
            rpc("tools/list"),
            key=live_server.admin_key,
            version=V,
            headers={"Accept": accept},
        )
        assert response.status_code == 200, accept


def test_an_oversized_body_is_413(live_server: LiveServer) -> None:
    huge = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"'
        + b"a" * (9 * MAX_NOTE_BYTES)
        + b'"}}'
    )
    response = post(live_server.url, huge, key=live_server.admin_key, version=V)
    assert response.status_code == 413
    assert response.json()["error"]["data"]["code"] == "request_too_large"


def test_the_server_keeps_answering_after_bad_requests(live_server: LiveServer) -> None:
    for body in (b"{", b"[]", b"null", b'{"jsonrpc":"2.0"}'):
        assert post(live_server.url, body, key=live_server.admin_key, version=V).status_code == 400
    response = post(live_server.url, rpc("tools/list"), key=live_server.admin_key, version=V)
    assert response.status_code == 200
    assert len(response.json()["result"]["tools"]) == 6
