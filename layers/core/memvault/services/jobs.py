"""Import and export jobs: any size of vault, the same API on both backends (ADR 0041).

``POST /v1/imports`` makes a job awaiting its archive and hands out where to send it: a
presigned S3 PUT on AWS, memvault's own upload URL behind a signed token when embedded.
Once the archive has arrived the job runs by itself (the S3 event starts the job
function on AWS; a worker thread of the serving process when embedded), streaming the
staged archive through ``TransferService.import_zip``, whose all-or-nothing holds as
ever. Progress goes into the job as it runs. An export job writes the zip to a staged
blob, fetched through a presigned GET or a signed download URL.

The import lease (ADR 0041): a running import holds its organisation's lease, renewed
every heartbeat while it works; a second import waits for it (up to ``wait_seconds``,
then fails ``job_in_progress``); a lease past its time is taken over. A job found running
with its lease run out was killed: it is failed ``job_interrupted`` and what its commit
left half-written (a journaled DynamoDB commit) is rolled back (``JobStore.recover_vault``),
so the vault is as it was before the job.
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from memvault.domain import jobs as J
from memvault.domain.jobs import Job, JobError, JobKind, JobProgress, JobStatus
from memvault.domain.policy import Action, Target, allowed, require
from memvault.errors import (
    Conflict,
    InvalidInput,
    MemvaultError,
    NotFound,
    TooLarge,
    Unauthenticated,
)
from memvault.ports import BlobLink, JobStore, TransferBlobs
from memvault.services.context import Caller, Surface
from memvault.services.transfer import ImportPhase, ObsidianConfig, TransferService

log = logging.getLogger("memvault.jobs")

MAX_LISTED = 100
# How often the worker writes fresh figures into the job (and checks its lease).
REPORT_SECONDS = 0.5
DOWNLOAD_SECONDS = 3600.0
EXPORT_FILENAME = "vault.zip"


@dataclass(frozen=True, slots=True)
class JobTimes:
    lease_seconds: float = J.LEASE_SECONDS
    heartbeat_seconds: float = J.HEARTBEAT_SECONDS
    upload_seconds: float = J.UPLOAD_SECONDS
    keep_seconds: float = J.KEEP_SECONDS
    # How long a queued import waits for another import's lease before it fails.
    wait_seconds: float = 120.0


@dataclass(frozen=True, slots=True)
class Created:
    """A new job, and where its archive goes: ``link`` (direct to storage) or, embedded,
    ``token`` for memvault's own upload URL."""

    job: Job
    link: BlobLink | None
    token: str | None


@dataclass(frozen=True, slots=True)
class Download:
    link: BlobLink | None  # a presigned GET; None: memvault serves it behind ``token``
    token: str | None
    bytes: int
    expires_at: float
    filename: str


class JobService:
    def __init__(
        self,
        jobs: JobStore,
        blobs: TransferBlobs,
        transfer: TransferService,
        clock: Callable[[], float] = time.time,
        *,
        times: JobTimes | None = None,
        background: bool = False,
    ) -> None:
        self.jobs = jobs
        self.blobs = blobs
        self.transfer = transfer
        self.clock = clock
        self.times = times or JobTimes()
        # Embedded: jobs run on a worker thread of this process; AWS: the job function.
        self.worker = JobWorker(self) if background else None

    # ------------------------------------------------------------------ creating
    def create_import(
        self,
        caller: Caller,
        declared_bytes: int,
        filename: str | None = None,
        *,
        obsidian_config: ObsidianConfig = "keep",
    ) -> Created:
        require(caller, Action.IMPORT_VAULT)
        limit = self.transfer.limits.max_archive_bytes
        if declared_bytes <= 0:
            raise InvalidInput("bytes must be the archive's size, above 0", code="invalid_size")
        if declared_bytes > limit:
            raise TooLarge(
                f"import refused, nothing was changed: the archive is {declared_bytes} bytes;"
                f" an import may be at most {limit} bytes",
                code="archive_too_large",
                limit=limit,
            )
        now = self.clock()
        self.sweep(caller.account_id)
        holder = self.jobs.lease_holder(caller.account_id, now=now)
        if holder is not None:
            raise Conflict(
                f"another import of this organisation is running ({holder}); start this one"
                " once it has finished",
                code="job_in_progress",
                job_id=holder,
            )
        job = J.new_job(
            JobKind.IMPORT,
            caller.account_id,
            now=now,
            member_id=caller.member_id,
            key_id=caller.key_id,
            declared_bytes=declared_bytes,
            filename=(filename or None) and filename[:255],
            obsidian_config=obsidian_config,
            upload_seconds=self.times.upload_seconds,
        )
        self.jobs.create(job)
        link = self.blobs.upload_link(
            job.account_id, job.id, size=declared_bytes, expires_at=job.expires_at, now=now
        )
        token = None
        if link is None:
            token = J.sign_token(
                self.jobs.signing_key(), J.UPLOAD, job.account_id, job.id, job.expires_at
            )
        log.info("import job created", extra={"account_id": job.account_id, "job_id": job.id})
        return Created(job, link, token)

    def create_export(self, caller: Caller) -> Job:
        require(caller, Action.EXPORT_VAULT)
        now = self.clock()
        self.sweep(caller.account_id)
        job = J.new_job(
            JobKind.EXPORT,
            caller.account_id,
            now=now,
            member_id=caller.member_id,
            key_id=caller.key_id,
            upload_seconds=self.times.keep_seconds,
        )
        self.jobs.create(job)
        self._dispatch(job)
        return job

    # ------------------------------------------------------------------ reading
    def get(self, caller: Caller, job_id: str, kind: JobKind | None = None) -> Job:
        """The caller's organisation's job; 404 for anything else (another organisation's,
        a colleague's a member may not see, the wrong kind): existence is never told."""
        job = self.jobs.get(caller.account_id, job_id) if J.kind_of(job_id) else None
        if (
            job is None
            or (kind is not None and job.kind is not kind)
            or not self._visible(caller, job)
        ):
            raise NotFound(f"no job {job_id!r}", code="job_not_found")
        return self._settle(job)

    def recent(self, caller: Caller, limit: int = 20) -> list[Job]:
        found = self.jobs.recent(caller.account_id, min(max(limit, 1), MAX_LISTED))
        return [self._settle(job) for job in found if self._visible(caller, job)]

    def download(self, job: Job) -> Download | None:
        """Where a succeeded export's zip is fetched, or None (not an export that
        succeeded)."""
        if job.kind is not JobKind.EXPORT or job.status is not JobStatus.SUCCEEDED:
            return None
        now = self.clock()
        expires = min(now + DOWNLOAD_SECONDS, job.expires_at)
        link = self.blobs.download_link(
            job.account_id, job.id, filename=EXPORT_FILENAME, expires_at=expires, now=now
        )
        token = None
        if link is None:
            token = J.sign_token(
                self.jobs.signing_key(), J.DOWNLOAD, job.account_id, job.id, expires
            )
        return Download(link, token, job.blob_bytes or 0, expires, EXPORT_FILENAME)

    def _visible(self, caller: Caller, job: Job) -> bool:
        if caller.role is None:  # a caller with no member (stdio MCP, tests): the vault's
            return True
        return allowed(caller, Action.READ_JOB, Target(member_id=job.member_id, key_id=job.key_id))

    # ------------------------------------------------------------------ tokens
    def _by_token(self, purpose: str, job_id: str, token: str) -> Job:
        """The job a token was signed for; 401 for a bad token, or one run out."""
        if J.kind_of(job_id) is None:
            raise Unauthenticated("this link is not valid", code="invalid_token")
        check = J.check_token(self.jobs.signing_key(), purpose, job_id, token, now=self.clock())
        job = None if check is None else self.jobs.get(check.account_id, job_id)
        if check is None or job is None:
            raise Unauthenticated("this link is not valid", code="invalid_token")
        if check.expired:
            raise Unauthenticated("this link has expired; start a new job", code="token_expired")
        return job

    def receive_upload(
        self, job_id: str, token: str, chunks: Iterator[bytes], *, length: int | None = None
    ) -> Job:
        """Embedded: the archive of an import, sent to memvault's own upload URL; refused
        (and the job failed) as soon as it is longer than declared (``length``: its
        Content-Length, checked before a byte is read)."""
        job = self._by_token(J.UPLOAD, job_id, token)
        if job.status is not JobStatus.AWAITING_UPLOAD:
            raise Conflict(
                f"job {job.id} is {job.status}, not awaiting its upload", code="job_state"
            )
        if length is not None and length > job.declared_bytes:
            exc = TooLarge(
                f"import refused, nothing was changed: the upload is {length} bytes, more than"
                f" the {job.declared_bytes} bytes declared",
                code="archive_too_large",
                limit=job.declared_bytes,
            )
            self._fail(job, exc)
            raise exc
        try:
            size = self.blobs.write_upload(
                job.account_id, job.id, chunks, max_bytes=job.declared_bytes
            )
        except TooLarge as exc:
            self._fail(job, exc)
            raise
        return self._arrived(job, size)

    def open_download(self, job_id: str, token: str) -> tuple[Job, Any]:
        """Embedded: the export's zip behind a download token (job, open file)."""
        job = self._by_token(J.DOWNLOAD, job_id, token)
        fh = (
            self.blobs.open_export(job.account_id, job.id)
            if job.status is JobStatus.SUCCEEDED
            else None
        )
        if fh is None:
            raise NotFound("this export is no longer available", code="job_not_found")
        return job, fh

    # ------------------------------------------------------------------ running
    def upload_arrived(self, account_id: str, job_id: str) -> Job | None:
        """AWS: the S3 event of an upload (or an export's trigger object): check it, then
        run the job here. A repeated event for a job already moved on does nothing."""
        job = self.jobs.get(account_id, job_id) if J.kind_of(job_id) else None
        if job is None:
            self.blobs.delete(account_id, job_id)  # nobody's: an expired or stray object
            return None
        if job.kind is JobKind.EXPORT or job.status is JobStatus.QUEUED:
            # A queued import's event again: a redelivery (``resume``), or a retry after the
            # function died between the upload's check and the job's start. ``run`` starts
            # a job once, whoever asks.
            return self.run(account_id, job_id)
        if job.status is not JobStatus.AWAITING_UPLOAD:
            return self._settle(job)
        size = self.blobs.upload_size(account_id, job_id)
        if size is None:
            return job
        if size > job.declared_bytes:
            self.blobs.delete(account_id, job_id)
            return self._fail(
                job,
                TooLarge(
                    f"import refused, nothing was changed: the upload is {size} bytes, more than"
                    f" the {job.declared_bytes} bytes declared",
                    code="archive_too_large",
                ),
            )
        return self._arrived(job, size, inline=True)

    def _arrived(self, job: Job, size: int, *, inline: bool = False) -> Job:
        now = self.clock()
        if now >= job.expires_at:
            job = self._save_or_current(J.expired(job, now=now))
            self.blobs.delete(job.account_id, job.id)
            raise Unauthenticated("this link has expired; start a new job", code="token_expired")
        job = self._save_or_current(J.uploaded(job, size, now=now))
        if inline:
            return self.run(job.account_id, job.id) or job
        self._dispatch(job)
        return job

    def _dispatch(self, job: Job) -> None:
        if self.blobs.request_run(job.account_id, job.id):
            return  # the backend starts it (AWS: the trigger object's event)
        if self.worker is not None:
            self.worker.submit(job.account_id, job.id)
        else:
            self.run(job.account_id, job.id)

    def run(self, account_id: str, job_id: str) -> Job | None:
        """Run a queued job to its end here; the job as it ended (or as found)."""
        job = self.jobs.get(account_id, job_id)
        if job is None or job.status is not JobStatus.QUEUED:
            return job
        owner = uuid.uuid4().hex
        leased = job.kind is JobKind.IMPORT
        if leased and not self._take_lease(job):
            return self._fail(
                job,
                Conflict(
                    "another import of this organisation ran for too long; start this one again",
                    code="job_in_progress",
                ),
            )
        started = J.started(job, owner, now=self.clock(), lease_seconds=self.times.lease_seconds)
        if not self.jobs.save(started):  # another worker moved it first: it is theirs
            if leased:
                self.jobs.release_lease(account_id, job_id)
            return self.jobs.get(account_id, job_id)
        try:
            return self._work(started)
        finally:
            if leased:
                self.jobs.release_lease(account_id, job_id)
                self.blobs.delete(account_id, job_id)

    def _take_lease(self, job: Job) -> bool:
        deadline = time.monotonic() + self.times.wait_seconds
        while True:
            now = self.clock()
            until = now + self.times.lease_seconds
            if self.jobs.acquire_lease(job.account_id, job.id, until=until, now=now):
                return True
            holder = self.jobs.lease_holder(job.account_id, now=now)
            if holder is not None:
                self._settle_id(job.account_id, holder)
            if time.monotonic() >= deadline:
                return False
            time.sleep(min(1.0, max(0.05, self.times.wait_seconds / 100)))

    def _work(self, job: Job) -> Job:
        reporter = _Reporter(self, job)
        reporter.start()
        caller = Caller(
            account_id=job.account_id,
            surface=Surface.REST,
            key_id=job.key_id,
            member_id=job.member_id,
        )
        outcome: dict[str, Any] = {}
        error: JobError | None = None
        try:
            if job.kind is JobKind.IMPORT:
                outcome = self._import(caller, reporter)
            else:
                outcome = self._export(caller, reporter)
        except MemvaultError as exc:
            error = JobError(exc.type, exc.code, exc.message)
        except Exception:
            log.exception("job failed", extra={"account_id": job.account_id, "job_id": job.id})
            error = JobError("internal_error", "internal_error", "something went wrong on our side")
        finally:
            current = reporter.stop()
        now = self.clock()
        if current.status is not JobStatus.RUNNING:
            return current  # failed meanwhile as interrupted (its lease was lost)
        if error is not None:
            final = J.failed(current, error, now=now, keep_seconds=self.times.keep_seconds)
        else:
            final = J.succeeded(
                current,
                now=now,
                report=outcome.get("report"),
                blob_bytes=outcome.get("bytes"),
                notes=outcome.get("notes"),
                keep_seconds=self.times.keep_seconds,
            )
        stored = self._save_or_current(final)
        log.info(
            "job ended",
            extra={"account_id": job.account_id, "job_id": job.id, "status": stored.status.value},
        )
        return stored

    def _import(self, caller: Caller, reporter: _Reporter) -> dict[str, Any]:
        def progress(phase: ImportPhase, done: int, total: int) -> None:
            reporter.report(phase, done, total)

        config: ObsidianConfig = "skip" if reporter.job.obsidian_config == "skip" else "keep"
        with self.blobs.open_upload(caller.account_id, reporter.job.id) as archive:
            report = self.transfer.import_zip(
                caller, archive, progress=progress, obsidian_config=config
            )
        return {"report": dataclasses.asdict(report)}  # what POST /v1/import answers

    def _export(self, caller: Caller, reporter: _Reporter) -> dict[str, Any]:
        with tempfile.TemporaryFile() as spool:
            report = self.transfer.export(
                caller,
                spool,
                progress=lambda done, total: reporter.report("exporting", done, total),
            )
            size = self.blobs.store_export(caller.account_id, reporter.job.id, spool)
        return {
            "bytes": size,
            "notes": report.notes,
            "report": {"notes": report.notes, "windows_unsafe": len(report.windows_unsafe)},
        }

    # ------------------------------------------------------------------ upkeep
    def _settle(self, job: Job) -> Job:
        """The job after what time has done to it: an interrupted job failed (its vault
        rolled back), a job past its keeping expired (its blobs deleted)."""
        now = self.clock()
        failed = J.interrupted(job, now=now)
        if failed is not None:
            # The vault first: the job is failed only once what its commit half-wrote is
            # undone (a commit whose own lock is still live is looked at again later).
            pending = job.kind is JobKind.IMPORT and (
                self.jobs.recover_vault(job.account_id, now=now) is None
            )
            if pending:
                return job
            stored = self._save_or_current(failed)
            if stored.status is JobStatus.FAILED:
                self.jobs.release_lease(job.account_id, job.id)
                self.blobs.delete(job.account_id, job.id)
                log.warning(
                    "job interrupted", extra={"account_id": job.account_id, "job_id": job.id}
                )
            return stored
        given_up = J.never_started(job, now=now) if self.blobs.direct else None
        if given_up is not None:
            # AWS: its start signal was lost and sent again (``resume``) to no avail; an
            # embedded queue runs every job it holds, however long it waits.
            stored = self._save_or_current(given_up)
            if stored.status is JobStatus.FAILED:
                self.blobs.delete(job.account_id, job.id)
                log.warning(
                    "job never started", extra={"account_id": job.account_id, "job_id": job.id}
                )
            return stored
        if J.due_to_expire(job, now):
            self.blobs.delete(job.account_id, job.id)
            return self._save_or_current(J.expired(job, now=now))
        return job

    def _settle_id(self, account_id: str, job_id: str) -> None:
        job = self.jobs.get(account_id, job_id)
        if job is not None:
            self._settle(job)

    def sweep(self, account_id: str) -> int:
        """Settle the organisation's recent jobs (expire, fail the interrupted); how many
        changed."""
        return sum(
            1 for job in self.jobs.recent(account_id, MAX_LISTED) if self._settle(job) is not job
        )

    def resume(self) -> int:
        """The unfinished jobs a dead worker left (at an embedded server's start; on the
        ops schedule on AWS): a running job whose lease has run out is failed, its vault
        rolled back. A queued one is run again (embedded); on AWS, where its object's event
        runs it, one left queued REDELIVER_SECONDS has its signal sent again, and one past
        its start deadline is failed ``job_not_started``. How many were failed."""
        failed = 0
        for job in self.jobs.unfinished():
            if job.status is JobStatus.QUEUED and not self.blobs.direct:
                self._dispatch(job)
            elif self._settle(job).status is JobStatus.FAILED:
                failed += 1
            elif J.undelivered(job, self.clock()):
                self._redeliver(job)
        return failed

    def _redeliver(self, job: Job) -> None:
        """AWS: a queued job's start signal again, sent by whichever run saves it first.
        The staged object is signalled where it lies (a new trigger would overwrite an
        import's archive); an export whose empty trigger is gone gets a new one."""
        again = J.redelivered(job, now=self.clock())
        if not self.jobs.save(again):
            return  # another run, or the job itself, moved it first
        sent = self.blobs.redeliver(job.account_id, job.id)
        if not sent and job.kind is JobKind.EXPORT:
            sent = self.blobs.request_run(job.account_id, job.id)
        extra = {"account_id": job.account_id, "job_id": job.id}
        if sent:
            log.warning("job start signal sent again", extra=extra)
        else:  # an import whose staged archive is gone: nothing can start it
            given_up = J.failed(
                again, J.NOT_STARTED, now=self.clock(), keep_seconds=self.times.keep_seconds
            )
            self._save_or_current(given_up)
            log.warning("job never started: its archive is gone", extra=extra)

    def _fail(self, job: Job, exc: MemvaultError) -> Job:
        error = JobError(exc.type, exc.code, exc.message)
        return self._save_or_current(
            J.failed(job, error, now=self.clock(), keep_seconds=self.times.keep_seconds)
        )

    def _save_or_current(self, job: Job) -> Job:
        if self.jobs.save(job):
            return job
        current = self.jobs.get(job.account_id, job.id)
        return current if current is not None else job


class _Reporter:
    """The running job's figures, written into the job every ``REPORT_SECONDS`` from a
    thread of its own (the import's progress callback only hands them over), with the
    lease renewed every heartbeat. A lease lost (another worker failed the job as
    interrupted) makes the next report raise: before the commit, that refuses the import."""

    def __init__(self, service: JobService, job: Job) -> None:
        self.service = service
        self.job = job
        self._latest = job.progress
        self._passed: list[JobProgress] = []  # phases ended since the last write
        self._phase_lock = threading.Lock()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._lost = False
        self._last_renewal = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name=f"job-{job.id}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def report(self, phase: str, done: int, total: int) -> None:
        if self._lost:
            raise Conflict(
                "the job lost its lease (it was taken for interrupted); nothing was changed",
                code="job_interrupted",
            )
        progress = JobProgress(phase, done, total)
        with self._phase_lock:
            if progress.phase != self._latest.phase and self._latest.phase is not None:
                self._passed.append(self._latest)  # every phase is recorded once at least
            self._latest = progress

    def _loop(self) -> None:
        tick = min(REPORT_SECONDS, self.service.times.heartbeat_seconds)
        while not self._stop.wait(tick):
            self._flush(force=False)

    def _flush(self, *, force: bool) -> None:
        svc, times = self.service, self.service.times
        with self._lock:
            due = time.monotonic() - self._last_renewal >= times.heartbeat_seconds
            if self._lost or not (
                force or due or self._passed or self._latest != self.job.progress
            ):
                return
            with self._phase_lock:  # the ended phases and the latest, as one snapshot
                passed, self._passed = self._passed, []
                latest = self._latest
            now = svc.clock()
            try:
                for ended in passed:  # a phase faster than a tick still shows
                    moved = J.progressed(
                        self.job, ended, now=now, lease_seconds=times.lease_seconds
                    )
                    if not svc.jobs.save(moved):
                        self._lost = True
                        return
                    self.job = moved
                if self.job.kind is JobKind.IMPORT and due:
                    until = now + times.lease_seconds
                    if not svc.jobs.renew_lease(self.job.account_id, self.job.id, until=until):
                        self._lost = True
                        return
                moved = J.progressed(self.job, latest, now=now, lease_seconds=times.lease_seconds)
                if svc.jobs.save(moved):
                    self.job = moved
                    self._last_renewal = time.monotonic() if due else self._last_renewal
                else:
                    self._lost = True
            except Exception:
                # A storage hiccup costs one report; the lease has room for several.
                log.warning("job progress not recorded", exc_info=True)

    def stop(self) -> Job:
        """Stop reporting; the job as stored last (its figures up to date)."""
        self._stop.set()
        self._thread.join()
        self._flush(force=True)
        if self._lost:
            current = self.service.jobs.get(self.job.account_id, self.job.id)
            return current if current is not None else self.job
        return self.job


class JobWorker:
    """Embedded: one thread running queued jobs one at a time, started on first use."""

    def __init__(self, service: JobService) -> None:
        self.service = service
        self._queue: queue.Queue[tuple[str, str]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, account_id: str, job_id: str) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="job-worker", daemon=True)
                self._thread.start()
        self._queue.put((account_id, job_id))

    def _loop(self) -> None:
        while True:
            account_id, job_id = self._queue.get()
            try:
                self.service.run(account_id, job_id)
            except Exception:
                log.exception("job worker failed", extra={"job_id": job_id})
            finally:
                self._queue.task_done()

    def idle(self, timeout: float = 30.0) -> bool:
        """Wait until every submitted job has run (tests, shutdown)."""
        deadline = time.monotonic() + timeout
        while self._queue.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True
