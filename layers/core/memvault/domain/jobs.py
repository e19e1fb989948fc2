"""Import and export jobs: what a job is, the states it goes through, and its lease.

A job moves through ``awaiting_upload`` (imports only: the archive is being sent to its
staged blob) -> ``queued`` -> ``running`` -> ``succeeded`` | ``failed``; a job never
started before its upload expired, or whose staged archive has gone, is ``expired``.
Only the transitions below exist, each a pure function from a job to the next job:
storage compares versions (``revision``) so two workers never both move one job.

A running import holds its organisation's **lease** (ADR 0041): a record saying which job
writes the vault until when. The worker renews it while it works (every
``HEARTBEAT_SECONDS``); a second import of the organisation waits while the lease is
live; a lease past its time belongs to nobody, so a killed job never holds a vault for
longer than ``LEASE_SECONDS``. A job found ``running`` whose lease has run out was
killed: it is failed (``job_interrupted``), and its import, all or nothing, left the
vault as it was.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from memvault.errors import InvalidInput


class JobKind(StrEnum):
    IMPORT = "import"
    EXPORT = "export"


class JobStatus(StrEnum):
    AWAITING_UPLOAD = "awaiting_upload"
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    EXPIRED = "expired"


TERMINAL = frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.EXPIRED})

# Phases a job reports: the client's upload (the server's view: bytes), then the
# import's own (services.transfer.ImportPhase), or an export's "exporting" (notes).
PHASES = ("uploading", "parsing", "committing", "indexing", "exporting")

LEASE_SECONDS = 60.0
HEARTBEAT_SECONDS = 15.0
# How long an upload URL (and a job awaiting its upload) stays good.
UPLOAD_SECONDS = 3600.0
# How long a finished job, and its staged blobs, are kept (then expired and deleted).
KEEP_SECONDS = 24 * 3600.0
# On AWS a queued job waits for its object's event (EventBridge to the job function). One
# queued this long is asked for again (the event was lost, or the function failed before
# the job started): the storage event normally comes within seconds.
REDELIVER_SECONDS = 600.0
# A queued job that has not started this long after its last possible start signal (an
# import's upload link's end, an export's creation) fails: EventBridge gives up on an
# event after an hour (template.yaml's MaximumEventAgeInSeconds), and redeliveries meanwhile
# have had their hour too.
START_SECONDS = 2 * 3600.0

_ID_PREFIX = {JobKind.IMPORT: "imp_", JobKind.EXPORT: "exp_"}


def new_job_id(kind: JobKind) -> str:
    return _ID_PREFIX[kind] + secrets.token_hex(12)


def kind_of(job_id: str) -> JobKind | None:
    for kind, prefix in _ID_PREFIX.items():
        if job_id.startswith(prefix) and len(job_id) <= 64:
            return kind
    return None


@dataclass(frozen=True, slots=True)
class JobProgress:
    phase: str | None = None
    done: int = 0
    total: int = 0


@dataclass(frozen=True, slots=True)
class JobError:
    """A refusal or failure, in the shape every error body has."""

    type: str
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    account_id: str
    kind: JobKind
    status: JobStatus
    created_at: float
    updated_at: float
    member_id: str | None = None  # who asked (a person; None for a key without one)
    key_id: str | None = None  # the key used (None for a session)
    declared_bytes: int = 0  # an import's size as declared; its upload may hold no more
    filename: str | None = None
    # An import's choice for the archive's .obsidian/ folder ("keep" or "skip").
    obsidian_config: str = "keep"
    progress: JobProgress = field(default_factory=JobProgress)
    report: dict[str, Any] | None = None
    error: JobError | None = None
    # The staged blob's size once known (the uploaded archive, the exported zip).
    blob_bytes: int | None = None
    notes: int | None = None  # an export's note count
    # Until when the upload (or the download) link and the staged blob stay good.
    expires_at: float = 0.0
    # The worker running the job and until when its lease holds (running jobs only).
    lease_owner: str | None = None
    lease_until: float = 0.0
    revision: int = 0  # moves on every stored change (optimistic concurrency)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def lease_live(self, now: float) -> bool:
        return self.status is JobStatus.RUNNING and self.lease_until > now


def new_job(
    kind: JobKind,
    account_id: str,
    *,
    now: float,
    member_id: str | None,
    key_id: str | None,
    declared_bytes: int = 0,
    filename: str | None = None,
    obsidian_config: str = "keep",
    upload_seconds: float = UPLOAD_SECONDS,
    job_id: str | None = None,
) -> Job:
    status = JobStatus.AWAITING_UPLOAD if kind is JobKind.IMPORT else JobStatus.QUEUED
    return Job(
        id=job_id or new_job_id(kind),
        account_id=account_id,
        kind=kind,
        status=status,
        created_at=now,
        updated_at=now,
        member_id=member_id,
        key_id=key_id,
        declared_bytes=declared_bytes,
        filename=filename,
        obsidian_config=obsidian_config,
        progress=JobProgress("uploading", 0, declared_bytes)
        if kind is JobKind.IMPORT
        else JobProgress(),
        expires_at=now + upload_seconds,
    )


def _step(job: Job, now: float, **changes: Any) -> Job:
    return replace(job, updated_at=now, revision=job.revision + 1, **changes)


class IllegalTransition(InvalidInput):
    default_code = "job_state"


def _require(job: Job, *allowed: JobStatus) -> None:
    if job.status not in allowed:
        raise IllegalTransition(
            f"job {job.id} is {job.status}; this needs {' or '.join(allowed)}",
            code="job_state",
        )


def uploaded(job: Job, size: int, *, now: float) -> Job:
    """The archive has arrived whole: the job waits for a worker."""
    _require(job, JobStatus.AWAITING_UPLOAD)
    return _step(
        job,
        now,
        status=JobStatus.QUEUED,
        blob_bytes=size,
        progress=JobProgress("uploading", size, size),
    )


def started(job: Job, owner: str, *, now: float, lease_seconds: float = LEASE_SECONDS) -> Job:
    _require(job, JobStatus.QUEUED)
    return _step(
        job, now, status=JobStatus.RUNNING, lease_owner=owner, lease_until=now + lease_seconds
    )


def progressed(
    job: Job, progress: JobProgress, *, now: float, lease_seconds: float = LEASE_SECONDS
) -> Job:
    """New figures, the lease renewed with them (reporting is a heartbeat too)."""
    _require(job, JobStatus.RUNNING)
    return _step(job, now, progress=progress, lease_until=now + lease_seconds)


def succeeded(
    job: Job,
    *,
    now: float,
    report: dict[str, Any] | None = None,
    blob_bytes: int | None = None,
    notes: int | None = None,
    keep_seconds: float = KEEP_SECONDS,
) -> Job:
    _require(job, JobStatus.RUNNING)
    return _step(
        job,
        now,
        status=JobStatus.SUCCEEDED,
        report=report,
        blob_bytes=blob_bytes if blob_bytes is not None else job.blob_bytes,
        notes=notes,
        lease_owner=None,
        lease_until=0.0,
        expires_at=now + keep_seconds,
    )


def failed(job: Job, error: JobError, *, now: float, keep_seconds: float = KEEP_SECONDS) -> Job:
    _require(job, JobStatus.AWAITING_UPLOAD, JobStatus.QUEUED, JobStatus.RUNNING)
    return _step(
        job,
        now,
        status=JobStatus.FAILED,
        error=error,
        lease_owner=None,
        lease_until=0.0,
        expires_at=now + keep_seconds,
    )


def expired(job: Job, *, now: float) -> Job:
    return _step(job, now, status=JobStatus.EXPIRED, lease_owner=None, lease_until=0.0)


INTERRUPTED = JobError(
    type="service_unavailable",
    code="job_interrupted",
    message="the job stopped before it finished (its worker died); nothing was changed:"
    " start it again",
)


def interrupted(job: Job, *, now: float) -> Job | None:
    """The job failed as interrupted when it is running with its lease run out, else None."""
    if job.status is JobStatus.RUNNING and job.lease_until <= now:
        return failed(job, INTERRUPTED, now=now)
    return None


NOT_STARTED = JobError(
    type="service_unavailable",
    code="job_not_started",
    message="the job never started (the signal that starts it was lost, and asking again"
    " did not start it); nothing was changed: start it again",
)


def start_deadline(job: Job) -> float:
    """When a queued job that has not started is given up (``never_started``)."""
    last_signal = job.expires_at if job.kind is JobKind.IMPORT else job.created_at
    return last_signal + START_SECONDS


def never_started(job: Job, *, now: float) -> Job | None:
    """The job failed as never started when it is queued past its start deadline, else None."""
    if job.status is JobStatus.QUEUED and start_deadline(job) <= now:
        return failed(job, NOT_STARTED, now=now)
    return None


def undelivered(job: Job, now: float) -> bool:
    """Queued, unchanged for REDELIVER_SECONDS: its start signal should be sent again."""
    return job.status is JobStatus.QUEUED and job.updated_at + REDELIVER_SECONDS <= now


def redelivered(job: Job, *, now: float) -> Job:
    """The job, its start signal just sent again (the next redelivery waits from now)."""
    _require(job, JobStatus.QUEUED)
    return _step(job, now)


def due_to_expire(job: Job, now: float) -> bool:
    """Awaiting an upload past its link's time, or finished past the keeping time."""
    if job.status is JobStatus.AWAITING_UPLOAD:
        return job.expires_at <= now
    return job.status in (JobStatus.SUCCEEDED, JobStatus.FAILED) and job.expires_at <= now


# --- tokens: what an embedded upload or download URL carries instead of a key.

UPLOAD, DOWNLOAD = "upload", "download"


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def _mac(key: bytes, purpose: str, account_id: str, job_id: str, expires: int) -> str:
    message = "\x1f".join((purpose, account_id, job_id, str(expires))).encode("utf-8")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def sign_token(key: bytes, purpose: str, account_id: str, job_id: str, expires: float) -> str:
    """A token authorising exactly one job's upload (or download) until ``expires``: it
    names the organisation, and its MAC binds the purpose, the job and the time."""
    until = int(expires)
    return f"{_b64(account_id)}.{until}.{_mac(key, purpose, account_id, job_id, until)}"


@dataclass(frozen=True, slots=True)
class TokenCheck:
    account_id: str
    expired: bool


def check_token(
    key: bytes, purpose: str, job_id: str, token: str, *, now: float
) -> TokenCheck | None:
    """The organisation a token was signed for (and whether it has run out), or None when
    it is not a token for this job and purpose."""
    parts = token.split(".")
    if len(parts) != 3 or len(token) > 512 or not parts[1].isdigit():
        return None
    prefix, until, mac = parts
    try:
        account = base64.urlsafe_b64decode(prefix + "=" * (-len(prefix) % 4)).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    expected = _mac(key, purpose, account, job_id, int(until))
    if not account or not hmac.compare_digest(expected, mac):
        return None
    return TokenCheck(account, int(until) <= now)


def new_signing_key() -> bytes:
    return secrets.token_bytes(32)


# --- the stored form, the same on every backend (a JSON object).


def to_record(job: Job) -> dict[str, Any]:
    return {
        "id": job.id,
        "account_id": job.account_id,
        "kind": job.kind.value,
        "status": job.status.value,
        "created_at": job.created_at,
        "updated_at": job.updated_at,
        "member_id": job.member_id,
        "key_id": job.key_id,
        "declared_bytes": job.declared_bytes,
        "filename": job.filename,
        "obsidian_config": job.obsidian_config,
        "progress": [job.progress.phase, job.progress.done, job.progress.total],
        "report": job.report,
        "error": None if job.error is None else [job.error.type, job.error.code, job.error.message],
        "blob_bytes": job.blob_bytes,
        "notes": job.notes,
        "expires_at": job.expires_at,
        "lease_owner": job.lease_owner,
        "lease_until": job.lease_until,
        "revision": job.revision,
    }


def from_record(data: dict[str, Any]) -> Job:
    phase, done, total = data["progress"]
    error = data.get("error")
    return Job(
        id=data["id"],
        account_id=data["account_id"],
        kind=JobKind(data["kind"]),
        status=JobStatus(data["status"]),
        created_at=float(data["created_at"]),
        updated_at=float(data["updated_at"]),
        member_id=data.get("member_id"),
        key_id=data.get("key_id"),
        declared_bytes=int(data.get("declared_bytes") or 0),
        filename=data.get("filename"),
        obsidian_config=data.get("obsidian_config") or "keep",
        progress=JobProgress(phase, int(done), int(total)),
        report=data.get("report"),
        error=None if not error else JobError(*error),
        blob_bytes=None if data.get("blob_bytes") is None else int(data["blob_bytes"]),
        notes=None if data.get("notes") is None else int(data["notes"]),
        expires_at=float(data.get("expires_at") or 0.0),
        lease_owner=data.get("lease_owner"),
        lease_until=float(data.get("lease_until") or 0.0),
        revision=int(data.get("revision") or 0),
    )
