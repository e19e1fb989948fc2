"""Request and response bodies of the import/export job routes (/tmp/jobs-contract.md,
README "Big vaults: import and export jobs")."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from memvault.api.schemas import iso
from memvault.domain.jobs import Job
from memvault.services.jobs import Download

STRICT_IN = ConfigDict(extra="forbid")


class ImportJobIn(BaseModel):
    model_config = STRICT_IN
    bytes: int = Field(gt=0, description="The zip's size in bytes; the upload may hold no more.")
    filename: str | None = Field(default=None, max_length=255)
    obsidian_config: Literal["keep", "skip"] = Field(
        default="keep",
        description="The archive's .obsidian/ folder: kept as the vault's configuration, or"
        " left out (as POST /v1/import's obsidian_config).",
    )


class JobProgressOut(BaseModel):
    phase: Literal["uploading", "parsing", "committing", "indexing", "exporting"] | None
    done: int
    total: int


class JobErrorOut(BaseModel):
    type: str
    code: str
    message: str


class LinkOut(BaseModel):
    method: Literal["PUT", "GET"]
    url: str
    headers: dict[str, str]
    max_bytes: int | None = None
    expires_at: datetime


class DownloadOut(BaseModel):
    url: str
    bytes: int
    expires_at: datetime
    filename: str


class JobOut(BaseModel):
    id: str
    kind: Literal["import", "export"]
    status: Literal["awaiting_upload", "queued", "running", "succeeded", "failed", "expired"]
    progress: JobProgressOut
    report: dict[str, Any] | None
    error: JobErrorOut | None
    filename: str | None
    bytes: int | None = Field(description="The archive's size: as uploaded, or as exported.")
    created_at: datetime
    updated_at: datetime
    upload: LinkOut | None = None
    download: DownloadOut | None = None

    @classmethod
    def of(
        cls, job: Job, *, upload: LinkOut | None = None, download: DownloadOut | None = None
    ) -> JobOut:
        return cls(
            id=job.id,
            kind=job.kind.value,
            status=job.status.value,
            progress=JobProgressOut(
                phase=job.progress.phase,
                done=job.progress.done,
                total=job.progress.total,
            ),
            report=job.report,
            error=None
            if job.error is None
            else JobErrorOut(type=job.error.type, code=job.error.code, message=job.error.message),
            filename=job.filename,
            bytes=job.blob_bytes if job.blob_bytes is not None else job.declared_bytes or None,
            created_at=iso(job.created_at),
            updated_at=iso(job.updated_at),
            upload=upload,
            download=download,
        )


def download_out(found: Download, url: str) -> DownloadOut:
    return DownloadOut(
        url=url, bytes=found.bytes, expires_at=iso(found.expires_at), filename=found.filename
    )


class JobList(BaseModel):
    items: list[JobOut]
