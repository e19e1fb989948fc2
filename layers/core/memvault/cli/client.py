"""A small HTTP client for the memvault REST API, used by the CLI.

The CLI talks to the server (never to the database behind its back) so that budgets,
screening and limits are the server's, shared with every other surface.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, BinaryIO
from urllib.parse import quote

import httpx

from memvault.errors import MemvaultError, RateLimited, ServiceUnavailable

class ApiError(MemvaultError):
    """An error answer from the server, carrying its status, type and code."""

    def __init__(self, status: int, type_: str, code: str, message: str) -> None:
        super().__init__(message, code=code)
        self.status = status
        self.type = type_


def note_url(path: str, suffix: str = "") -> str:
    return "/v1/notes/" + quote(path, safe="/") + suffix


class Client:
    def __init__(self, base_url: str, api_key: str | None, timeout: float = 300.0) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout)

    def close(self) -> None:
        self.http.close()

    def _check(self, response: httpx.Response) -> httpx.Response:
        if response.status_code < 400:
            return response
        try:
            err = response.json()["error"]
            type_, code, message = err["type"], err["code"], err["message"]
        except (ValueError, KeyError, TypeError):
            type_, code, message = "http_error", "http_error", response.text[:200]
        if response.status_code == 429:
            raise RateLimited(message, retry_after=float(response.headers.get("Retry-After", 1)))
        raise ApiError(response.status_code, type_, code, message)

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return self._check(self.http.request(method, url, **kwargs))
        except httpx.TransportError as exc:
            raise ServiceUnavailable(
                f"cannot reach memvault at {self.http.base_url} ({exc.__class__.__name__});"
                " is `memvault serve` running?",
                code="server_unreachable",
            ) from exc

    def json(self, method: str, url: str, **kwargs: Any) -> Any:
        return self.request(method, url, **kwargs).json()

    # ------------------------------------------------------------------ transfer
    def upload(self, fh: BinaryIO, size: int, progress: Callable[[int], None]) -> Any:
        def chunks() -> Iterator[bytes]:
            while data := fh.read(256 * 1024):
                progress(len(data))
                yield data

        return self.json(
            "POST",
            "/v1/import",
            content=chunks(),
            headers={"Content-Type": "application/zip", "Content-Length": str(size)},
        )

    def download(self, out: BinaryIO, on_start: Callable[[int | None], None],
                 progress: Callable[[int], None]) -> int:
        try:
            with self.http.stream("GET", "/v1/export") as response:
                if response.status_code >= 400:
                    response.read()
                    self._check(response)
                length = response.headers.get("Content-Length")
                on_start(int(length) if length else None)
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    progress(len(chunk))
                return int(response.headers.get("X-Memvault-Notes", "0"))
        except httpx.TransportError as exc:
            raise ServiceUnavailable(
                f"cannot reach memvault at {self.http.base_url}", code="server_unreachable"
            ) from exc
