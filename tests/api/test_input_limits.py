"""Every string a client sends that memvault stores, logs or echoes has a length limit,
and a string over it is refused with 400 ``invalid_input`` naming the field."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memvault.services.transfer import MAX_ENTRY_NAME_BYTES
from memvault.services.vault import MAX_CURSOR_CHARS, MAX_QUERY_CHARS, MAX_TAG_CHARS
from tests.api.helpers import error_of, url

MAX_KEY_ID_CHARS = 64


@pytest.fixture
def c(live_server: Any) -> Iterator[httpx.Client]:
    with live_server.client() as client:
        yield client


@pytest.mark.parametrize(
    ("method", "path", "params", "message"),
    [
        (
            "GET",
            "/v1/search",
            {"q": "x" * (MAX_QUERY_CHARS + 1)},
            f"q: must be at most {MAX_QUERY_CHARS}",
        ),
        (
            "GET",
            "/v1/search",
            {"q": "x", "tag": "t" * (MAX_TAG_CHARS + 1)},
            f"tag: must be at most {MAX_TAG_CHARS}",
        ),
        (
            "GET",
            "/v1/notes",
            {"tag": "t" * (MAX_TAG_CHARS + 1)},
            f"tag: must be at most {MAX_TAG_CHARS}",
        ),
        (
            "GET",
            "/v1/notes",
            {"cursor": "c" * (MAX_CURSOR_CHARS + 1)},
            f"cursor: must be at most {MAX_CURSOR_CHARS}",
        ),
        (
            "PATCH",
            "/v1/keys/" + "k" * (MAX_KEY_ID_CHARS + 1),
            {},
            f"key_id: must be at most {MAX_KEY_ID_CHARS}",
        ),
        (
            "DELETE",
            "/v1/keys/" + "k" * (MAX_KEY_ID_CHARS + 1),
            {},
            f"key_id: must be at most {MAX_KEY_ID_CHARS}",
        ),
        ("GET", "/v1/usage", {"from": "2026-01-01" + "x" * 100}, "from: must be at most 10"),
        ("GET", "/v1/usage", {"to": "9" * 1000}, "to: must be at most 10"),
        (
            "GET",
            "/v1/usage",
            {"key_id": "k" * (MAX_KEY_ID_CHARS + 1)},
            f"key_id: must be at most {MAX_KEY_ID_CHARS}",
        ),
    ],
)
def test_strings_over_their_limit_are_400(
    c: httpx.Client, method: str, path: str, params: dict[str, str], message: str
) -> None:
    kwargs: dict[str, Any] = {"params": params}
    if method == "PATCH":
        kwargs["json"] = {"recall": True}
    error = error_of(c.request(method, path, **kwargs), 400, "invalid_input")
    assert error["message"].startswith(message), error


def test_strings_at_their_limit_are_fine(c: httpx.Client) -> None:
    assert c.get("/v1/search", params={"q": "x" * MAX_QUERY_CHARS}).status_code == 200
    assert c.get("/v1/notes", params={"tag": "t" * MAX_TAG_CHARS}).status_code == 200
    error_of(c.delete("/v1/keys/" + "k" * MAX_KEY_ID_CHARS), 404, "key_not_found")


def test_paths_and_move_targets_are_refused_past_512_bytes(c: httpx.Client) -> None:
    long = "x" * 600 + ".md"
    error = error_of(c.put(url(long), json={"markdown": "x"}), 400, "invalid_path")
    assert "512 bytes" in error["message"] and len(error["message"]) < 200
    assert c.put(url("a.md"), json={"markdown": "x"}).status_code == 201
    error = error_of(c.post(url("a.md", "/move"), json={"to": long}), 400, "invalid_path")
    assert len(error["message"]) < 200
    error_of(c.get("/v1/notes", params={"folder": "f" * 600}), 400, "invalid_path")


def test_an_unsupported_content_type_is_not_echoed_whole(c: httpx.Client) -> None:
    r = c.put(url("a.md"), content=b"x", headers={"Content-Type": "application/" + "x" * 4000})
    error = error_of(r, 400, "unsupported_media_type")
    assert len(error["message"]) < 300


def _zip(names: list[str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name in names:
            zf.writestr(name, "note")
    return buffer.getvalue()


@pytest.mark.parametrize(
    "name",
    [
        "a/" * (MAX_ENTRY_NAME_BYTES // 2) + "x.md",  # a note's path, too long to be one
        "attachments/" + "p" * MAX_ENTRY_NAME_BYTES + ".png",  # skipped, so listed back
    ],
)
def test_an_import_entry_name_over_its_limit_is_400(c: httpx.Client, name: str) -> None:
    archive = _zip(["ok.md", name])
    r = c.post("/v1/import", content=archive, headers={"Content-Type": "application/zip"})
    error = error_of(r, 400, "invalid_input")
    assert f"at most {MAX_ENTRY_NAME_BYTES} bytes" in error["message"]
    assert len(error["message"]) < 300
    assert c.get("/v1/notes").json()["notes"] == []  # nothing was imported


def test_import_entry_names_at_their_limit_are_read(c: httpx.Client) -> None:
    # In a dot-folder, so it is skipped once read (an attachment's path is capped at 512).
    name = ".trash/" + "p" * (MAX_ENTRY_NAME_BYTES - len(".trash/.png")) + ".png"
    assert len(name.encode()) == MAX_ENTRY_NAME_BYTES
    r = c.post(
        "/v1/import", content=_zip(["ok.md", name]), headers={"Content-Type": "application/zip"}
    )
    assert r.status_code == 200, r.text
    assert r.json()["skipped_files"] == [name]
