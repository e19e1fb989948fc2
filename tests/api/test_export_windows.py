"""GET /v1/export on a vault with names Windows cannot extract: every note is exported
under its own name, and the answer says how many Windows would refuse and which."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.helpers import error_of, url

UNSAFE = ["CON.md", "notes/a:b.md", "what?.md"]
SAFE = ["plain.md", "notes/fine.md"]


@pytest.fixture
def c(live_server: Any) -> Iterator[httpx.Client]:
    with live_server.client() as client:
        yield client


def test_export_counts_and_lists_the_entries_windows_cannot_extract(c: httpx.Client) -> None:
    for path in UNSAFE + SAFE:
        assert c.put(url(path), json={"markdown": path}).status_code == 201
    exported = c.get("/v1/export")
    assert exported.status_code == 200
    assert exported.headers["X-Export-Windows-Unsafe"] == "3"
    assert exported.headers["X-Memvault-Notes"] == "5"
    with zipfile.ZipFile(io.BytesIO(exported.content)) as zf:
        assert sorted(zf.namelist()) == sorted(UNSAFE + SAFE)

    listing = c.get("/v1/export/windows-unsafe")
    assert listing.status_code == 200
    body = listing.json()
    assert body["count"] == 3
    assert [n["path"] for n in body["notes"]] == ["CON.md", "notes/a:b.md", "what?.md"]
    assert all(set(n) == {"path", "reason"} and n["reason"] for n in body["notes"])

    # Moving the note away is the fix the listing points at.
    assert c.post(url("CON.md", "/move"), json={"to": "console.md"}).status_code == 200
    assert c.get("/v1/export/windows-unsafe").json()["count"] == 2
    assert c.get("/v1/export").headers["X-Export-Windows-Unsafe"] == "2"


def test_an_empty_vault_reports_nothing(c: httpx.Client) -> None:
    assert c.get("/v1/export").headers["X-Export-Windows-Unsafe"] == "0"
    assert c.get("/v1/export/windows-unsafe").json() == {"count": 0, "notes": []}


def test_the_listing_needs_a_key(live_server: Any) -> None:
    with httpx.Client(base_url=live_server.url) as anon:
        error_of(anon.get("/v1/export/windows-unsafe"), 401, "missing_api_key")
