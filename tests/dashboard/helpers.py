"""Building what the browser tests look at: notes through the REST API, archives."""

from __future__ import annotations

import io
import zipfile

import httpx

from tests.support.servers import LiveServer


def put(server: LiveServer, path: str, markdown: str) -> int:
    with server.client() as http:
        r = http.put(
            f"/v1/notes/{path}", content=markdown, headers={"Content-Type": "text/markdown"}
        )
        assert r.status_code in (200, 201), r.text
        return int(r.headers["ETag"].strip('"'))


def read(server: LiveServer, path: str) -> dict[str, object]:
    with server.client() as http:
        r = http.get(f"/v1/notes/{path}")
        assert r.status_code == 200, r.text
        data: dict[str, object] = r.json()
        return data


def note_count(server: LiveServer) -> int:
    with server.client() as http:
        return len(http.get("/v1/notes", params={"limit": 500}).json()["notes"])


def archive(files: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for name, body in files.items():
            z.writestr(name, body)
    return buffer.getvalue()


def client(server: LiveServer, key: str | None = None) -> httpx.Client:
    return server.client(key)
