"""`memvault import` and `memvault export` through the job API (ADR 0041): the same
path for any size of vault, embedded or on AWS.

An import makes a job (POST /v1/imports), sends the zip to the link it was given (a PUT
with no Authorization header: a presigned S3 URL, or the server's own upload URL behind a
token), then follows the job (GET /v1/imports/{id}) to its report or its refusal, raised
as the synchronous import's would be. An export makes a job, follows it, and downloads
the zip from the link the finished job names. A server without the job API (an older
memvault) is spoken to the old way (POST /v1/import, GET /v1/export).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import httpx

from memvault.cli.client import _STATUS_BY_TYPE, ApiError, Client, _error
from memvault.errors import MemvaultError, ServiceUnavailable

CHUNK = 256 * 1024
# How often a job is asked how it is doing: quickly at first, then every second.
POLL_FIRST, POLL_MAX = 0.05, 1.0
PHASES = ("parsing", "committing", "indexing")


def _no_job_api(exc: ApiError) -> bool:
    return exc.status in (404, 405) and exc.code in ("route_not_found", "method_not_allowed")


def _link_error(response: httpx.Response, what: str) -> MemvaultError:
    """A refused upload or download: memvault's own error body, or S3's (XML)."""
    try:
        err = response.json()["error"]
        return _error(response.status_code, err["type"], err["code"], err["message"])
    except (ValueError, KeyError, TypeError):
        text = response.text.strip()[:300]
        return ApiError(
            response.status_code,
            "upload_error" if what == "upload" else "download_error",
            f"{what}_refused",
            f"the {what} was refused (HTTP {response.status_code})" + (f": {text}" if text else ""),
        )


def _job_error(job: dict[str, Any]) -> MemvaultError:
    err = job.get("error") or {}
    type_ = str(err.get("type", "internal_error"))
    if job.get("status") == "expired":
        type_, code, message = "authentication_error", "token_expired", "the job expired"
        return _error(401, type_, code, message)
    return _error(
        _STATUS_BY_TYPE.get(type_, 500),
        type_,
        str(err.get("code", "internal_error")),
        str(err.get("message", "the job failed")),
    )


class _Phases:
    """Hands the job's figures on as the streamed import's events: each phase once it is
    reached, and every earlier one shown finished once a later one is: the one a poll
    last saw part-way (``committing 0/2`` then ``indexing 2/2``: a phase ends before the
    next starts), and those a poll came too late to see at all."""

    def __init__(self, event: Callable[[dict[str, Any]], None]) -> None:
        self.event = event
        self.last: tuple[str, int, int] | None = None

    def __call__(self, progress: dict[str, Any] | None) -> None:
        phase = (progress or {}).get("phase")
        if phase not in PHASES:
            return
        done, total = int(progress["done"]), int(progress["total"])  # type: ignore[index]
        seen = PHASES.index(self.last[0]) if self.last else -1
        if self.last is not None and seen < PHASES.index(phase) and self.last[1] < self.last[2]:
            self.event({"phase": self.last[0], "done": self.last[2], "total": self.last[2]})
        for earlier in PHASES[seen + 1 : PHASES.index(phase)]:
            self.event({"phase": earlier, "done": total, "total": total})
        if self.last != (phase, done, total):
            self.event({"phase": phase, "done": done, "total": total})
            self.last = (phase, done, total)


def _follow(client: Client, path: str, on_progress: Callable[[dict[str, Any]], None]) -> Any:
    """GET the job until it has ended; the ended job."""
    pause = POLL_FIRST
    while True:
        job = client.json("GET", path)
        on_progress(job.get("progress"))
        if job.get("status") in ("succeeded", "failed", "expired"):
            return job
        time.sleep(pause)
        pause = min(POLL_MAX, pause * 1.5)


def import_via_job(
    client: Client,
    fh: BinaryIO,
    size: int,
    sent: Callable[[int], None],
    event: Callable[[dict[str, Any]], None],
    *,
    filename: str | None = None,
    obsidian_config: str = "keep",
) -> Any:
    """Import the zip in ``fh`` as a job; ``sent`` is told each chunk's size as it goes
    up, ``event`` the server's phases. Returns the report (what POST /v1/import answers)."""
    body: dict[str, Any] = {"bytes": size, "obsidian_config": obsidian_config}
    if filename:
        body["filename"] = filename[:255]
    try:
        job = client.json("POST", "/v1/imports", json=body)
    except ApiError as exc:
        if _no_job_api(exc):
            return client.upload(fh, size, sent, event, obsidian_config=obsidian_config)
        raise
    upload = job["upload"]

    def chunks() -> Iterator[bytes]:
        while data := fh.read(CHUNK):
            sent(len(data))
            yield data

    headers = {**upload.get("headers", {}), "Content-Length": str(size)}
    try:
        # A client of its own: the link authorises the upload, and S3 refuses a request
        # that carries an Authorization header of another kind.
        with httpx.Client(timeout=client.http.timeout) as plain:
            put = plain.put(upload["url"], content=chunks(), headers=headers)
    except httpx.TransportError as exc:
        raise ServiceUnavailable(
            f"the upload did not reach {httpx.URL(upload['url']).host} ({exc.__class__.__name__})",
            code="upload_failed",
        ) from exc
    if put.status_code >= 400:
        raise _link_error(put, "upload")
    done = _follow(client, f"/v1/imports/{job['id']}", _Phases(event))
    if done["status"] != "succeeded":
        raise _job_error(done)
    return done["report"]


def export_via_job(
    client: Client,
    out: BinaryIO,
    on_start: Callable[[int | None], None],
    progress: Callable[[int], None],
) -> int:
    """Export as a job and download its zip into ``out``; the notes exported."""
    try:
        job = client.json("POST", "/v1/exports")
    except ApiError as exc:
        if _no_job_api(exc):
            return client.download(out, on_start, progress)
        raise
    done = _follow(client, f"/v1/exports/{job['id']}", lambda _progress: None)
    if done["status"] != "succeeded":
        raise _job_error(done)
    link = done["download"]
    try:
        with (
            httpx.Client(timeout=client.http.timeout) as plain,
            plain.stream("GET", link["url"]) as response,
        ):
            if response.status_code >= 400:
                response.read()
                raise _link_error(response, "download")
            on_start(int(link["bytes"]))
            for chunk in response.iter_bytes():
                out.write(chunk)
                progress(len(chunk))
    except httpx.TransportError as exc:
        raise ServiceUnavailable(
            f"the download from {httpx.URL(link['url']).host} failed ({exc.__class__.__name__})",
            code="download_failed",
        ) from exc
    return int((done.get("report") or {}).get("notes", 0))
