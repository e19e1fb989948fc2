"""REST routes for the vault's files that are not notes (attachments, ``.obsidian/``).

``GET /v1/files`` lists them, ``GET/PUT/DELETE /v1/files/{path}`` read, write and
delete one. A download is the stored bytes with the file's content type; a type that can
run scripts in a browser (SVG, HTML) is sent as a download and every answer carries
``Content-Security-Policy: sandbox`` and ``nosniff``, so a vault's file cannot act on
the API's origin. Thin: parse, call ``services.attachments``, shape.
"""

from __future__ import annotations

import email.utils
import urllib.parse
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Annotated

import anyio.from_thread
from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse, RedirectResponse, StreamingResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from memvault.api.deps import CallerDep, ServicesDep
from memvault.api.schemas import iso
from memvault.domain import attachments as files
from memvault.domain.attachments import StoredFile
from memvault.errors import TooLarge
from memvault.services.attachments import FileOutcome
from memvault.services.uploads import CHUNK, LINK_SECONDS, Upload, disposition

router = APIRouter(prefix="/v1", tags=["files"])


class FileOut(BaseModel):
    path: str
    kind: str
    size: int
    sha256: str
    content_type: str
    created_at: float
    updated_at: float

    @classmethod
    def of(cls, found: StoredFile) -> FileOut:
        return cls(
            path=found.path,
            kind=found.kind,
            size=found.size,
            sha256=found.sha256,
            content_type=found.content_type,
            created_at=found.created_at,
            updated_at=found.updated_at,
        )


class FileList(BaseModel):
    files: list[FileOut]
    next_cursor: str | None


class FileWriteOut(BaseModel):
    file: FileOut
    changed: bool
    message: str


@router.get("/files", response_model=FileList)
def list_files(
    svc: ServicesDep,
    caller: CallerDep,
    prefix: Annotated[str, Query(max_length=1024, description="Paths starting with this.")] = "",
    config: Annotated[bool, Query(description="Include .obsidian/ configuration.")] = False,
    cursor: Annotated[str | None, Query(max_length=2048)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> FileList:
    page = svc.attachments.list_files(
        caller, prefix=prefix, config=config, cursor=cursor, limit=limit
    )
    return FileList(files=[FileOut.of(f) for f in page.files], next_cursor=page.next_cursor)


_SAFETY = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox; default-src 'none'",
}


class LinkOut(BaseModel):
    url: str
    expires_at: datetime


def _file_headers(found: StoredFile) -> dict[str, str]:
    return {
        "ETag": f'"{found.sha256}"',
        "Last-Modified": email.utils.formatdate(found.updated_at, usegmt=True),
        "Content-Disposition": disposition(found.path, files.inline_safe(found.content_type)),
        "Content-Length": str(found.size),
        **_SAFETY,
    }


def _link(url: str, expires_at: float) -> JSONResponse:
    out = LinkOut(url=url, expires_at=iso(expires_at))
    return JSONResponse(out.model_dump(mode="json"), headers={"Cache-Control": "no-store"})


def _stream(fh: IO[bytes]) -> Iterator[bytes]:
    with fh:
        while chunk := fh.read(CHUNK):
            yield chunk


@router.get("/files/{path:path}", response_model=None)
def download_file(
    request: Request,
    svc: ServicesDep,
    caller: CallerDep,
    path: str,
    link: Annotated[
        bool, Query(description="Answer {url, expires_at} to fetch it without a key.")
    ] = False,
) -> Response:
    """The file's bytes: streamed by memvault, or on AWS, for a file larger than a
    Lambda answer carries, a 307 redirect to a short-lived presigned S3 GET. ``?link=1``
    answers a link instead, on both backends."""
    fetched = svc.uploads.fetch(caller, path, link=link)
    found = fetched.file
    if fetched.link is not None:
        if link:
            return _link(fetched.link.url, fetched.link.expires_at)
        return RedirectResponse(fetched.link.url, status_code=307, headers=dict(_SAFETY))
    if fetched.token is not None:
        base = str(request.base_url).rstrip("/")
        quoted = urllib.parse.quote(found.path, safe="/")
        url = f"{base}/v1/file-downloads/{quoted}?token={fetched.token}"
        return _link(url, svc.uploads.clock() + LINK_SECONDS)
    return StreamingResponse(
        _stream(svc.uploads.open(caller, found)),
        media_type=found.content_type,
        headers=_file_headers(found),
    )


@router.get("/file-downloads/{path:path}", response_class=StreamingResponse)
def download_by_link(
    svc: ServicesDep, path: str, token: Annotated[str, Query(max_length=512)]
) -> StreamingResponse:
    """Embedded: a file behind the link ``GET /v1/files/{path}?link=1`` answered (no
    Authorization: the token authorises this one file for a few minutes)."""
    found, fh = svc.uploads.open_by_token(path, token)
    return StreamingResponse(
        _stream(fh), media_type=found.content_type, headers=_file_headers(found)
    )


class UploadIn(BaseModel):
    path: str = Field(max_length=1024)
    bytes: int
    content_type: str | None = Field(default=None, max_length=255)
    sha256: str | None = Field(default=None, max_length=64)


class UploadLinkOut(BaseModel):
    method: str
    url: str
    headers: dict[str, str]
    max_bytes: int
    expires_at: datetime


class UploadOut(BaseModel):
    id: str
    path: str
    bytes: int
    upload: UploadLinkOut


@router.post("/files/uploads", status_code=201, response_model=UploadOut)
def begin_upload(
    body: UploadIn, request: Request, svc: ServicesDep, caller: CallerDep
) -> UploadOut:
    """A large file (up to the organisation's file size limit): where to PUT exactly
    ``bytes`` bytes, with no Authorization; then ``POST .../complete``."""
    began = svc.uploads.begin(
        caller, body.path, body.bytes, content_type=body.content_type, sha256=body.sha256
    )
    up = began.upload
    if began.link is not None:
        url, headers, expires = began.link.url, began.link.headers, began.link.expires_at
    else:
        base = str(request.base_url).rstrip("/")
        url = f"{base}/v1/file-uploads/{up.id}?token={began.token}"
        headers, expires = {"content-type": up.content_type}, up.expires_at
    return UploadOut(
        id=up.id,
        path=up.path,
        bytes=up.bytes,
        upload=UploadLinkOut(
            method="PUT", url=url, headers=headers, max_bytes=up.bytes, expires_at=iso(expires)
        ),
    )


@router.put(
    "/file-uploads/{upload_id}",
    openapi_extra={
        "requestBody": {
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            }
        }
    },
)
async def receive_upload(
    upload_id: str, token: Annotated[str, Query(max_length=512)], request: Request, svc: ServicesDep
) -> dict[str, object]:
    """Embedded: a large file's bytes, as the body (the token authorises this upload)."""
    declared = request.headers.get("content-length", "")
    length = int(declared) if declared.isdigit() else None
    stream = request.stream()

    def chunks() -> Iterator[bytes]:
        while True:
            try:
                chunk = anyio.from_thread.run(stream.__anext__)
            except StopAsyncIteration:
                return
            if chunk:
                yield chunk

    def receive() -> object:
        return svc.uploads.receive(upload_id, token, chunks(), length=length)

    up = await run_in_threadpool(receive)
    assert isinstance(up, Upload)
    return {"id": up.id, "bytes": up.bytes, "status": "uploaded"}


@router.post("/files/uploads/{upload_id}/complete", response_model=FileWriteOut)
def complete_upload(
    upload_id: str, response: Response, svc: ServicesDep, caller: CallerDep
) -> FileWriteOut:
    """Store the uploaded bytes at the upload's path, as ``PUT /v1/files/{path}`` would."""
    return _written(response, svc.uploads.complete(caller, upload_id))


async def _read_capped(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    seen = 0
    async for chunk in request.stream():
        seen += len(chunk)
        if seen > limit:
            raise _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large(limit: int) -> TooLarge:
    return TooLarge(
        f"a file may hold at most {limit} bytes (the organisation's file size limit)",
        code="file_too_large",
        limit=limit,
    )


@router.put("/files/{path:path}", response_model=FileWriteOut)
async def put_file(
    request: Request, response: Response, svc: ServicesDep, caller: CallerDep, path: str
) -> FileWriteOut:
    limit = (await run_in_threadpool(svc.attachments.limits, caller.account_id)).max_file_bytes
    data = await _read_capped(request, limit)
    outcome = await run_in_threadpool(svc.attachments.put, caller, path, data)
    return _written(response, outcome)


def _written(response: Response, outcome: FileOutcome) -> FileWriteOut:
    if outcome.created:
        response.status_code = 201
    response.headers["ETag"] = f'"{outcome.file.sha256}"'
    message = (
        "stored"
        if outcome.created
        else ("replaced" if outcome.changed else "unchanged: the same bytes are stored")
    )
    return FileWriteOut(file=FileOut.of(outcome.file), changed=outcome.changed, message=message)


@router.delete("/files/{path:path}", response_model=FileOut)
def delete_file(svc: ServicesDep, caller: CallerDep, path: str) -> FileOut:
    return FileOut.of(svc.attachments.delete(caller, path))
