"""A small HTTP client for the memvault REST API, used by the CLI.

The CLI talks to the server (never to the database behind its back) so that budgets,
screening and limits are the server's, shared with every other surface.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO
from urllib.parse import quote

import httpx

from memvault.errors import STATUS_BY_ERROR, MemvaultError, RateLimited, ServiceUnavailable

# How long to wait for the server to accept a connection; reads may take longer
# (an import of a large vault), so they get the client's full timeout.
CONNECT_TIMEOUT = 10.0
NDJSON = "application/x-ndjson"

# The status each error type is answered with: a streamed import's error event carries
# the error body alone (the stream's own status is 200).
_STATUS_BY_TYPE: dict[str, int] = {}
for _cls, _status in STATUS_BY_ERROR:
    _STATUS_BY_TYPE.setdefault(_cls.type, _status)


class ApiError(MemvaultError):
    """An error answer from the server, carrying its status, type and code."""

    def __init__(self, status: int, type_: str, code: str, message: str) -> None:
        super().__init__(message, code=code)
        self.status = status
        self.type = type_


def _segment(segment: str) -> str:
    # "." and ".." would be resolved away by URL normalisation (notes/../x.md would
    # silently become x.md); encoded, they reach the server, which refuses them.
    if segment in (".", ".."):
        return segment.replace(".", "%2E")
    return quote(segment, safe="")


def note_url(path: str, suffix: str = "") -> str:
    """The note's URL, every path character kept exactly as given."""
    return "/v1/notes/" + "/".join(_segment(s) for s in path.split("/")) + suffix


class Client:
    def __init__(self, base_url: str, api_key: str | None, timeout: float = 300.0) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
        )

    def close(self) -> None:
        self.http.close()

    def _unreachable(self, exc: httpx.TransportError) -> ServiceUnavailable:
        return ServiceUnavailable(
            f"cannot reach memvault at {self.http.base_url} ({exc.__class__.__name__});"
            " is `memvault serve` running, and is --url (or MEMVAULT_URL) right?",
            code="server_unreachable",
        )

    def _check(self, response: httpx.Response) -> httpx.Response:
        if response.status_code < 400:
            return response
        try:
            err = response.json()["error"]
            type_, code, message = err["type"], err["code"], err["message"]
        except (ValueError, KeyError, TypeError):
            type_, code = "http_error", "http_error"
            text = response.text.strip()[:200]
            message = f"HTTP {response.status_code} from {self.http.base_url}" + (
                f": {text}" if text else ""
            )
        raise _error(response.status_code, type_, code, message, response.headers)

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return self._check(self.http.request(method, url, **kwargs))
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc

    def json(self, method: str, url: str, **kwargs: Any) -> Any:
        return self.json_of(self.request(method, url, **kwargs), method, url)

    def json_of(self, response: httpx.Response, method: str, url: str) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise ApiError(
                response.status_code,
                "invalid_response",
                "not_memvault",
                f"{self.http.base_url} answered {method} {url} with something other than"
                " JSON; is --url a memvault server?",
            ) from exc

    # ------------------------------------------------------------------ transfer
    def upload(
        self,
        fh: BinaryIO,
        size: int,
        sent: Callable[[int], None],
        event: Callable[[dict[str, Any]], None],
        *,
        obsidian_config: str = "keep",
    ) -> Any:
        """Import the zip in ``fh``: ``sent`` is told each chunk's size as it is sent, then
        ``event`` each of the server's progress events. Returns the import's report; an
        error, streamed or not, is raised as the unstreamed import's would be."""

        def chunks() -> Iterator[bytes]:
            while data := fh.read(256 * 1024):
                sent(len(data))
                yield data

        headers = {
            "Content-Type": "application/zip",
            "Content-Length": str(size),
            "Accept": f"{NDJSON}, application/json;q=0.5",
        }
        answered = False
        try:
            params = {"obsidian_config": obsidian_config} if obsidian_config != "keep" else None
            with self.http.stream(
                "POST", "/v1/import", content=chunks(), headers=headers, params=params
            ) as r:
                answered = True
                if r.status_code >= 400 or not r.headers.get("content-type", "").startswith(NDJSON):
                    # Refused before the archive was in, or a server that does not stream.
                    r.read()
                    return self.json_of(self._check(r), "POST", "/v1/import")
                for line in r.iter_lines():
                    item = self._event(line) if line.strip() else None
                    if item is None:
                        continue
                    if "result" in item:
                        return item["result"]
                    if "error" in item:
                        err = item["error"]
                        type_ = str(err.get("type", "internal_error"))
                        raise _error(
                            _STATUS_BY_TYPE.get(type_, 500),
                            type_,
                            str(err.get("code", "internal_error")),
                            str(err.get("message", "the import failed")),
                        )
                    event(item)
        except httpx.TransportError as exc:
            if not answered:
                raise self._unreachable(exc) from exc
            raise _cut_short(exc.__class__.__name__) from exc
        raise _cut_short("the answer ended early")

    def _event(self, line: str) -> dict[str, Any]:
        try:
            item = json.loads(line)
        except ValueError:
            item = None
        if not isinstance(item, dict):
            raise ApiError(
                200,
                "invalid_response",
                "not_memvault",
                f"{self.http.base_url} answered the import with a line that is not a JSON"
                " object; is --url a memvault server?",
            )
        return item

    def download(
        self, out: BinaryIO, on_start: Callable[[int | None], None], progress: Callable[[int], None]
    ) -> int:
        try:
            with self.http.stream("GET", "/v1/export") as response:
                if response.status_code >= 400:
                    response.read()
                    self._check(response)
                length = response.headers.get("Content-Length")
                on_start(int(length) if length and length.isdigit() else None)
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    progress(len(chunk))
                notes = response.headers.get("X-Memvault-Notes", "0")
                return int(notes) if notes.isdigit() else 0
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc


def _error(
    status: int, type_: str, code: str, message: str, headers: httpx.Headers | None = None
) -> MemvaultError:
    if status == 429:
        retry = headers.get("Retry-After") if headers is not None else None
        return RateLimited(message, code=code, retry_after=_retry_after(retry))
    return ApiError(status, type_, code, message)


def _cut_short(why: str) -> ServiceUnavailable:
    return ServiceUnavailable(
        f"the connection to memvault ended before the import's outcome ({why}). An import"
        " lands whole or not at all: check with `memvault recent`, or import again (notes"
        " already there are left unchanged)",
        code="import_outcome_unknown",
    )


def _retry_after(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value else 1.0
    except ValueError:
        return 1.0
