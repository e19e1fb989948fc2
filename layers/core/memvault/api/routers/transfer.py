"""REST routes for Obsidian zip import and export."""

from __future__ import annotations

import tempfile
import time
from typing import IO, cast

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from memvault.api import schemas
from memvault.api.deps import CallerDep, ServicesDep
from memvault.errors import InvalidInput, TooLarge
from memvault.services.transfer import iter_file

router = APIRouter(prefix="/v1", tags=["import/export"])

SPOOL_IN_MEMORY = 16 * 1024 * 1024


async def _spool_body(request: Request, limit: int) -> IO[bytes]:
    """The archive, spooled to disk past 16 MiB; refused as soon as it passes ``limit``."""
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115 - returned
    content_type = request.headers.get("content-type", "").lower()
    if content_type.startswith("multipart/form-data"):
        form = await request.form(max_part_size=limit)
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidInput("send the zip as the multipart field 'file'", code="missing_file")
        while chunk := await upload.read(1024 * 1024):
            spool.write(chunk)
            if spool.tell() > limit:
                raise TooLarge(f"an import may be at most {limit} bytes", code="archive_too_large")
    else:
        async for chunk in request.stream():
            spool.write(chunk)
            if spool.tell() > limit:
                raise TooLarge(f"an import may be at most {limit} bytes", code="archive_too_large")
    spool.seek(0)
    return cast(IO[bytes], spool)


@router.post(
    "/import",
    response_model=schemas.ImportOut,
    openapi_extra={
        "requestBody": {
            "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}}
        }
    },
)
async def import_vault(request: Request, svc: ServicesDep, caller: CallerDep) -> schemas.ImportOut:
    archive = await _spool_body(request, svc.transfer.limits.max_archive_bytes)
    try:
        report = await run_in_threadpool(svc.transfer.import_zip, caller, archive)  # type: ignore[arg-type]
    finally:
        archive.close()
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
    count = await run_in_threadpool(svc.transfer.export_zip, caller, spool)
    size = spool.tell()
    spool.seek(0)

    def body() -> object:
        try:
            yield from iter_file(spool)  # type: ignore[arg-type]
        finally:
            spool.close()

    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    return StreamingResponse(
        body(),  # type: ignore[arg-type]
        media_type="application/zip",
        headers={
            "Content-Disposition": f'attachment; filename="memvault-{stamp}.zip"',
            "Content-Length": str(size),
            "X-Memvault-Notes": str(count),
        },
    )
