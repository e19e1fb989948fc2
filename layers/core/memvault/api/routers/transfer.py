"""REST routes for Obsidian zip import and export."""

from __future__ import annotations

import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import AsyncExitStack
from typing import IO

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser

from memvault.api import schemas
from memvault.api.deps import CallerDep, ServicesDep
from memvault.errors import InvalidInput, TooLarge
from memvault.services.transfer import iter_file

router = APIRouter(prefix="/v1", tags=["import/export"])

SPOOL_IN_MEMORY = 16 * 1024 * 1024
# Room for the boundaries, part headers and small fields around the archive in a
# multipart body: the body may be this much larger than the archive it carries.
MULTIPART_OVERHEAD = 64 * 1024
MAX_FORM_FIELDS = 16


def _too_large(limit: int) -> TooLarge:
    return TooLarge(
        f"import refused, nothing was changed: an import may be at most {limit} bytes",
        code="archive_too_large",
        limit=limit,
    )


def _refuse_declared_length(request: Request, allowed: int, limit: int) -> None:
    """Refuse before reading a byte when Content-Length already says the body is too big."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > allowed:
        raise _too_large(limit)


async def _limited(
    stream: AsyncIterator[bytes], allowed: int, limit: int
) -> AsyncGenerator[bytes, None]:
    """The request body, refused as soon as more than ``allowed`` bytes have arrived."""
    seen = 0
    async for chunk in stream:
        seen += len(chunk)
        if seen > allowed:
            raise _too_large(limit)
        yield chunk


async def _spool_raw(request: Request, limit: int) -> IO[bytes]:
    """A raw ``application/zip`` body, spooled to disk past 16 MiB."""
    _refuse_declared_length(request, limit, limit)
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115 - returned
    try:
        async for chunk in _limited(request.stream(), limit, limit):
            spool.write(chunk)
    except BaseException:
        spool.close()
        raise
    spool.seek(0)
    return spool


async def _multipart_archive(request: Request, limit: int, stack: AsyncExitStack) -> IO[bytes]:
    """The multipart field ``file``; the whole body is bounded while it streams in.

    (``request.form()`` would spool a file part of any size to disk before a limit
    could be checked.)
    """
    allowed = limit + MULTIPART_OVERHEAD
    _refuse_declared_length(request, allowed, limit)
    parser = MultiPartParser(
        request.headers,
        _limited(request.stream(), allowed, limit),
        max_files=1,
        max_fields=MAX_FORM_FIELDS,
        max_part_size=MULTIPART_OVERHEAD,
    )
    try:
        form = await parser.parse()
    except MultiPartException as exc:
        raise InvalidInput(
            f"the multipart body cannot be read: {exc.message}", code="invalid_multipart"
        ) from exc
    stack.push_async_callback(form.close)
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise InvalidInput("send the zip as the multipart field 'file'", code="missing_file")
    if upload.size is not None and upload.size > limit:
        raise _too_large(limit)
    upload.file.seek(0)
    return upload.file


@router.post(
    "/import",
    response_model=schemas.ImportOut,
    openapi_extra={
        "requestBody": {
            "content": {
                "application/zip": {"schema": {"type": "string", "format": "binary"}},
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"file": {"type": "string", "format": "binary"}},
                        "required": ["file"],
                    }
                },
            }
        }
    },
)
async def import_vault(request: Request, svc: ServicesDep, caller: CallerDep) -> schemas.ImportOut:
    limit = svc.transfer.limits.max_archive_bytes
    content_type = request.headers.get("content-type", "").lower()
    async with AsyncExitStack() as stack:
        if content_type.startswith("multipart/form-data"):
            archive = await _multipart_archive(request, limit, stack)
        else:
            archive = await _spool_raw(request, limit)
            stack.callback(archive.close)
        report = await run_in_threadpool(svc.transfer.import_zip, caller, archive)
    return schemas.ImportOut(
        created=report.created,
        updated=report.updated,
        unchanged=report.unchanged,
        skipped=report.skipped,
        skipped_files=report.skipped_files,
    )


@router.get("/export", response_class=StreamingResponse)
async def export_vault(svc: ServicesDep, caller: CallerDep) -> StreamingResponse:
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115 - streamed
    try:
        count = await run_in_threadpool(svc.transfer.export_zip, caller, spool)
    except BaseException:
        spool.close()
        raise
    size = spool.tell()
    spool.seek(0)

    def body() -> Iterator[bytes]:
        try:
            yield from iter_file(spool)
        finally:
            spool.close()

    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return StreamingResponse(
        body(),
        media_type="application/zip",
        headers={
            "Content-Disposition": f'attachment; filename="memvault-{stamp}.zip"',
            "Content-Length": str(size),
            "X-Memvault-Notes": str(count),
        },
    )
