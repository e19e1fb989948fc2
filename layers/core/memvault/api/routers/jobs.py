"""REST routes of import and export jobs: any size of vault, one path on both backends
(ADR 0041; the contract the dashboard builds on is README "Big vaults: import and export
jobs").

``POST /v1/imports`` answers where to send the zip: a presigned S3 PUT on AWS, or this
server's ``PUT /v1/imports/{id}/upload?token=...`` when embedded; either takes no
Authorization header (the URL authorises exactly that upload until it expires). The job
then runs by itself; ``GET /v1/imports/{id}`` reports its progress and its report or its
refusal. ``POST /v1/exports`` likewise ends in a download link. Who may do what is the
policy's (``domain.policy``: ``vault.import``, ``vault.export``, ``jobs.read``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

import anyio.from_thread
from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from memvault.api.deps import CallerDep, ServicesDep
from memvault.api.job_schemas import ImportJobIn, JobList, JobOut, LinkOut, download_out
from memvault.api.schemas import iso
from memvault.domain.jobs import Job, JobKind
from memvault.services.jobs import JobService
from memvault.services.transfer import iter_file

router = APIRouter(prefix="/v1", tags=["import/export jobs"])

Token = Annotated[str, Query(max_length=512)]


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _job_out(request: Request, jobs: JobService, job: Job) -> JobOut:
    download = None
    if job.kind is JobKind.EXPORT:
        found = jobs.download(job)
        if found is not None:
            url = (
                found.link.url
                if found.link is not None
                else f"{_base(request)}/v1/exports/{job.id}/download?token={found.token}"
            )
            download = download_out(found, url)
    return JobOut.of(job, download=download)


@router.post("/imports", status_code=201, response_model=JobOut)
def create_import(
    body: ImportJobIn, request: Request, svc: ServicesDep, caller: CallerDep
) -> JobOut:
    created = svc.jobs.create_import(
        caller, body.bytes, body.filename, obsidian_config=body.obsidian_config
    )
    job = created.job
    if created.link is not None:
        link = LinkOut(
            method="PUT",
            url=created.link.url,
            headers=created.link.headers,
            max_bytes=job.declared_bytes,
            expires_at=iso(created.link.expires_at),
        )
    else:
        link = LinkOut(
            method="PUT",
            url=f"{_base(request)}/v1/imports/{job.id}/upload?token={created.token}",
            headers={"content-type": "application/zip"},
            max_bytes=job.declared_bytes,
            expires_at=iso(job.expires_at),
        )
    return JobOut.of(job, upload=link)


@router.get("/imports/{job_id}", response_model=JobOut)
def get_import(job_id: str, request: Request, svc: ServicesDep, caller: CallerDep) -> JobOut:
    return _job_out(request, svc.jobs, svc.jobs.get(caller, job_id, JobKind.IMPORT))


@router.put(
    "/imports/{job_id}/upload",
    response_model=JobOut,
    openapi_extra={
        "requestBody": {
            "content": {"application/zip": {"schema": {"type": "string", "format": "binary"}}}
        }
    },
)
async def upload_import(job_id: str, token: Token, request: Request, svc: ServicesDep) -> JobOut:
    """Embedded: the zip of an import, as the body (no Authorization: the token in the URL
    authorises this one upload). Answered once it is staged; the job then runs."""
    declared = request.headers.get("content-length", "")
    length = int(declared) if declared.isdigit() else None
    stream = request.stream()

    def chunks() -> Iterator[bytes]:
        # Read on the worker thread, from the event loop's request stream.
        while True:
            try:
                chunk = anyio.from_thread.run(stream.__anext__)
            except StopAsyncIteration:
                return
            if chunk:
                yield chunk

    def receive() -> Job:
        return svc.jobs.receive_upload(job_id, token, chunks(), length=length)

    job = await run_in_threadpool(receive)
    return _job_out(request, svc.jobs, job)


@router.post("/exports", status_code=202, response_model=JobOut)
def create_export(request: Request, svc: ServicesDep, caller: CallerDep) -> JobOut:
    return _job_out(request, svc.jobs, svc.jobs.create_export(caller))


@router.get("/exports/{job_id}", response_model=JobOut)
def get_export(job_id: str, request: Request, svc: ServicesDep, caller: CallerDep) -> JobOut:
    return _job_out(request, svc.jobs, svc.jobs.get(caller, job_id, JobKind.EXPORT))


@router.get("/exports/{job_id}/download", response_class=StreamingResponse)
def download_export(job_id: str, token: Token, svc: ServicesDep) -> StreamingResponse:
    """Embedded: the export's zip behind its download token (no Authorization)."""
    job, fh = svc.jobs.open_download(job_id, token)

    def body() -> Iterator[bytes]:
        with fh:
            yield from iter_file(fh)

    headers = {"Content-Disposition": 'attachment; filename="vault.zip"'}
    if job.blob_bytes is not None:
        headers["Content-Length"] = str(job.blob_bytes)
    return StreamingResponse(body(), media_type="application/zip", headers=headers)


@router.get("/jobs", response_model=JobList)
def list_jobs(
    request: Request,
    svc: ServicesDep,
    caller: CallerDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> JobList:
    return JobList(items=[_job_out(request, svc.jobs, j) for j in svc.jobs.recent(caller, limit)])
