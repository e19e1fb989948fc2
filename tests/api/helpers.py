"""Helpers shared by the REST API tests."""

from __future__ import annotations

from urllib.parse import quote

import httpx


def url(path: str, suffix: str = "") -> str:
    """The note's URL the way a client builds it (what the CLI does): percent-encoded."""
    return "/v1/notes/" + quote(path, safe="/") + suffix


def error_of(response: httpx.Response, status: int, code: str | None = None) -> dict[str, str]:
    """Asserts the status and the exact error shape; returns the error object."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"]
    error = body["error"]
    assert set(error) == {"type", "code", "message"}
    assert all(isinstance(v, str) and v for v in error.values())
    if code is not None:
        assert error["code"] == code, error
    return dict(error)
