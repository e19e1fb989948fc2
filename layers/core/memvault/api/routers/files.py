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
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from memvault.api.deps import CallerDep, ServicesDep
from memvault.domain import attachments as files
from memvault.domain.attachments import StoredFile
from memvault.errors import TooLarge

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


def _disposition(path: str, inline: bool) -> str:
    name = path.rsplit("/", 1)[-1]
    ascii_name = name.encode("ascii", "replace").decode().replace('"', "_").replace("?", "_")
    quoted = urllib.parse.quote(name, safe="")
    kind = "inline" if inline else "attachment"
    return f"{kind}; filename=\"{ascii_name}\"; filename*=UTF-8''{quoted}"


@router.get("/files/{path:path}", response_class=Response)
def download_file(svc: ServicesDep, caller: CallerDep, path: str) -> Response:
    found, data = svc.attachments.download(caller, path)
    inline = files.inline_safe(found.content_type)
    return Response(
        content=data,
        media_type=found.content_type,
        headers={
            "ETag": f'"{found.sha256}"',
            "Last-Modified": email.utils.formatdate(found.updated_at, usegmt=True),
            "Content-Disposition": _disposition(found.path, inline),
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "sandbox; default-src 'none'",
        },
    )


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
