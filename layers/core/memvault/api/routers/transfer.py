"""REST routes for Obsidian zip import and export.

An import can report its progress: sent with ``Accept: application/x-ndjson``, it is
answered 200 as soon as the archive has arrived, with one JSON object per line as the
import goes (``{"phase", "done", "total"}``, see ``services.transfer.ImportProgress``)
and, last, ``{"result": <ImportOut>}`` or ``{"error": {"type", "code", "message"}}``,
the body an unstreamed import answers. What is refused before the archive has arrived
(no key, too large, a malformed multipart body) keeps its status either way. Once
started, an import runs to its end whether or not the client stays to read it: it lands
whole or not at all, as without the stream.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import tempfile
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack, suppress
from typing import IO, Annotated, Any

import anyio
import anyio.from_thread
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from fastapi import APIRouter, Query, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import TypeAdapter
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException, MultiPartParser
from starlette.types import Message, Receive, Scope, Send

from memvault.api import schemas
from memvault.api.deps import CallerDep, ServicesDep
from memvault.api.errors import error_body
from memvault.errors import InvalidInput, MemvaultError, TooLarge
from memvault.services.transfer import (
    ImportPhase,
    ImportProgress,
    ImportReport,
    ObsidianConfig,
    iter_file,
)

log = logging.getLogger("memvault.api")

router = APIRouter(prefix="/v1", tags=["import/export"])

SPOOL_IN_MEMORY = 16 * 1024 * 1024
# Room for the boundaries, part headers and small fields around the archive in a
# multipart body: the body may be this much larger than the archive it carries.
MULTIPART_OVERHEAD = 64 * 1024
MAX_FORM_FIELDS = 16
NDJSON = "application/x-ndjson"


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


def _wants_progress(request: Request) -> bool:
    """Whether the client's Accept header asks for NDJSON (with a q above 0)."""
    for item in request.headers.get("accept", "").split(","):
        media, *params = (part.strip() for part in item.split(";"))
        if media.lower() != NDJSON:
            continue
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    return float(value) > 0
                except ValueError:
                    return False
        return True
    return False


def _import_out(report: ImportReport) -> schemas.ImportOut:
    return schemas.ImportOut(
        created=report.created,
        updated=report.updated,
        unchanged=report.unchanged,
        skipped=report.skipped,
        skipped_files=report.skipped_files,
        files_created=report.files_created,
        files_updated=report.files_updated,
        files_unchanged=report.files_unchanged,
        config_files=report.config_files,
    )


def _line(event: dict[str, Any]) -> bytes:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


class _ImportStream(Response):
    """200, then the import's progress as NDJSON lines and its outcome as the last line.

    The import runs on a worker thread; its progress callback only hands each event to
    the event loop (a queue without a bound: an import makes about a hundred), so a slow
    reader never holds the import up, and a client that goes away stops the sending,
    not the import. The archive is closed once the import has ended.
    """

    def __init__(self, run: Callable[[ImportProgress], ImportReport], held: AsyncExitStack):
        self.status_code = 200
        self.media_type = NDJSON
        self.background = None
        self.init_headers({"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
        self._run = run
        self._held = held

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        events, lines = anyio.create_memory_object_stream[bytes](math.inf)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._import, events)
                await self._send_lines(send, lines)
        finally:
            await self._held.aclose()

    async def _import(self, events: MemoryObjectSendStream[bytes]) -> None:
        def progress(phase: ImportPhase, done: int, total: int) -> None:
            line = _line({"phase": phase, "done": done, "total": total})
            # Nobody reading any more (or the loop gone) is no reason to stop the import.
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, RuntimeError):
                anyio.from_thread.run_sync(events.send_nowait, line)

        async with events:
            try:
                # Not abandoned if this task is cancelled: the import ends before the
                # archive it reads is closed.
                report = await anyio.to_thread.run_sync(self._run, progress)
                outcome = {"result": _import_out(report).model_dump(mode="json")}
            except MemvaultError as exc:
                outcome = error_body(exc.type, exc.code, exc.message)
            except Exception:
                log.error("streamed import failed", exc_info=True)
                outcome = error_body(
                    "internal_error", "internal_error", "something went wrong on our side"
                )
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                events.send_nowait(_line(outcome))

    async def _send_lines(self, send: Send, lines: MemoryObjectReceiveStream[bytes]) -> None:
        connected = True

        async def emit(message: Message) -> None:
            nonlocal connected
            if connected:
                try:
                    await send(message)
                except OSError:  # the client went away: read on, send no more
                    connected = False

        await emit(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        async with lines:
            async for line in lines:
                await emit({"type": "http.response.body", "body": line, "more_body": True})
        await emit({"type": "http.response.body", "body": b"", "more_body": False})


def _inline_refs(schema: Any, defs: dict[str, Any]) -> Any:
    """A JSON schema with its ``$defs`` references written out in place."""
    if isinstance(schema, dict):
        ref = schema.get("$ref", "")
        if ref.startswith("#/$defs/"):
            return _inline_refs(defs[ref.removeprefix("#/$defs/")], defs)
        return {k: _inline_refs(v, defs) for k, v in schema.items() if k != "$defs"}
    if isinstance(schema, list):
        return [_inline_refs(v, defs) for v in schema]
    return schema


def _event_schema() -> Any:
    schema = TypeAdapter(
        schemas.ImportProgressEvent | schemas.ImportResultEvent | schemas.ImportErrorEvent
    ).json_schema()
    return _inline_refs(schema, schema.get("$defs", {}))


@router.post(
    "/import",
    response_model=schemas.ImportOut,
    responses={
        200: {
            "description": (
                "The import's report. With Accept: application/x-ndjson, a stream of"
                " events, one per line: progress, then the result or the error (the"
                " status is 200 once the archive has arrived; the last line is the outcome)."
            ),
            "content": {NDJSON: {"schema": _event_schema()}},
        }
    },
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
async def import_vault(
    request: Request,
    svc: ServicesDep,
    caller: CallerDep,
    obsidian_config: Annotated[
        ObsidianConfig,
        Query(description="keep: .obsidian/ is stored as the vault's configuration; skip"),
    ] = "keep",
) -> schemas.ImportOut | Response:
    limit = svc.transfer.limits.max_archive_bytes
    content_type = request.headers.get("content-type", "").lower()
    async with AsyncExitStack() as stack:
        if content_type.startswith("multipart/form-data"):
            archive = await _multipart_archive(request, limit, stack)
        else:
            archive = await _spool_raw(request, limit)
            stack.callback(archive.close)
        if _wants_progress(request):

            def run(progress: ImportProgress) -> ImportReport:
                return svc.transfer.import_zip(
                    caller, archive, progress=progress, obsidian_config=obsidian_config
                )

            return _ImportStream(run, stack.pop_all())  # it closes the archive when done
        report = await run_in_threadpool(
            functools.partial(svc.transfer.import_zip, obsidian_config=obsidian_config),
            caller,
            archive,
        )
    return _import_out(report)


# How many of an export's entries Windows cannot extract (GET /v1/export/windows-unsafe
# names them): the archive holds every note under its own name, ADR 0022.
WINDOWS_UNSAFE_HEADER = "X-Export-Windows-Unsafe"


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={
        200: {
            "headers": {
                WINDOWS_UNSAFE_HEADER: {
                    "description": "Entries Windows cannot extract under their names;"
                    " GET /v1/export/windows-unsafe lists them.",
                    "schema": {"type": "integer"},
                }
            }
        }
    },
)
async def export_vault(svc: ServicesDep, caller: CallerDep) -> StreamingResponse:
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115 - streamed
    try:
        report = await run_in_threadpool(svc.transfer.export, caller, spool)
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
            "X-Memvault-Notes": str(report.notes),
            WINDOWS_UNSAFE_HEADER: str(len(report.windows_unsafe)),
        },
    )


@router.get("/export/windows-unsafe", response_model=schemas.WindowsUnsafeList)
def windows_unsafe(svc: ServicesDep, caller: CallerDep) -> schemas.WindowsUnsafeList:
    found = svc.transfer.windows_unsafe(caller)
    return schemas.WindowsUnsafeList(
        count=len(found),
        notes=[schemas.WindowsUnsafeOut(path=f.path, reason=f.reason) for f in found],
    )
