"""AWS: a job left queued because its start signal never came (ADR 0041, 0042).

On AWS a queued job runs when its object's Object Created event reaches the job function
through EventBridge. When that event is lost (or the function died between the upload's
check and the job's start), the ops schedule's ``jobs.resume`` sends the signal again
after ``REDELIVER_SECONDS``, leaving an import's archive as uploaded, and fails a job
still not started past its start deadline, with nothing changed. Here S3's events are
what ``pending_events`` finds: each object under jobs/run/ written since it last looked.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault.adapters.aws.jobs import RUN_PREFIX, run_key
from memvault.container import Services, build_services
from memvault.domain import jobs as J
from memvault.domain.jobs import Job, JobKind, JobStatus
from memvault.lambda_jobs import handle
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from tests.contract.test_import_export import make_zip
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.jobs import object_created, queued_import

NOTES = [(f"kept/note {i}.md", f"# Note {i}\n\nbody {i}\n") for i in range(3)]


@pytest.fixture
def aws(tmp_path: Path, clock: FakeClock) -> Iterator[Services]:
    with backend_settings(tmp_path, "aws", embeddings="off") as settings:
        services = build_services(settings, clock=clock)
        services.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        yield services


class _Events:
    """What S3 would send: an Object Created event for each object under jobs/run/ written
    (or copied onto itself) since the last look."""

    def __init__(self, services: Services) -> None:
        self.services = services
        self.client: Any = services.store.bodies.client  # type: ignore[attr-defined]
        self.seen: dict[str, str] = {}
        self.pending()  # what exists now has had its event

    def pending(self) -> list[str]:
        listed = self.client.list_objects_v2(
            Bucket=self.services.settings.bucket, Prefix=RUN_PREFIX
        )
        new = []
        for obj in listed.get("Contents", []):
            head = self.client.head_object(Bucket=self.services.settings.bucket, Key=obj["Key"])
            mark = f"{obj['LastModified']}/{sorted(head.get('Metadata', {}).items())}"
            if self.seen.get(obj["Key"]) != mark:
                self.seen[obj["Key"]] = mark
                new.append(obj["Key"])
        return new

    def deliver_pending(self) -> int:
        keys = self.pending()
        for key in keys:
            handle(object_created(self.services.settings.bucket, key, 0), self.services)
        return len(keys)


def _job(services: Services, job_id: str) -> Job:
    found = services.jobs.jobs.get(LOCAL_ACCOUNT_ID, job_id)
    assert found is not None
    return found


def _staged(services: Services, job_id: str) -> bytes | None:
    client: Any = services.store.bodies.client  # type: ignore[attr-defined]
    try:
        body = client.get_object(
            Bucket=services.settings.bucket, Key=run_key(LOCAL_ACCOUNT_ID, job_id)
        )
    except client.exceptions.NoSuchKey:
        return None
    return bytes(body["Body"].read())


def test_a_queued_import_whose_event_was_lost_is_signalled_again_and_runs(
    aws: Services, clock: FakeClock
) -> None:
    archive = make_zip(*NOTES)
    events = _Events(aws)
    job = queued_import(aws, LOCAL_ACCOUNT_ID, archive, clock())
    events.pending()  # the upload's event came, and the function died before the start

    clock.advance(J.REDELIVER_SECONDS - 1)
    assert aws.jobs.resume() == 0
    assert events.pending() == []  # not yet: the event may still be on its way

    clock.advance(2)
    assert aws.jobs.resume() == 0
    assert _staged(aws, job.id) == archive  # signalled where it lies, byte for byte
    assert aws.jobs.resume() == 0  # the signal is sent once per REDELIVER_SECONDS
    assert events.deliver_pending() == 1

    done = _job(aws, job.id)
    assert done.status is JobStatus.SUCCEEDED, done.error
    assert len(aws.store.note_keys(LOCAL_ACCOUNT_ID)) == len(NOTES)


def test_a_repeated_event_of_a_queued_import_starts_it(aws: Services, clock: FakeClock) -> None:
    """EventBridge retries an invocation that failed: the job function died after checking
    the upload (the job queued), so the retry finds it queued and runs it."""
    job = queued_import(aws, LOCAL_ACCOUNT_ID, make_zip(*NOTES), clock())
    handle(object_created(aws.settings.bucket, run_key(LOCAL_ACCOUNT_ID, job.id), 0), aws)
    assert _job(aws, job.id).status is JobStatus.SUCCEEDED
    assert len(aws.store.note_keys(LOCAL_ACCOUNT_ID)) == len(NOTES)


def test_a_queued_export_whose_event_was_lost_is_signalled_again_and_runs(
    aws: Services, clock: FakeClock
) -> None:
    events = _Events(aws)
    job = J.new_job(JobKind.EXPORT, LOCAL_ACCOUNT_ID, now=clock(), member_id=None, key_id=None)
    aws.jobs.jobs.create(job)
    assert aws.jobs.blobs.request_run(LOCAL_ACCOUNT_ID, job.id)
    events.pending()  # its trigger's event was lost

    clock.advance(J.REDELIVER_SECONDS + 1)
    assert aws.jobs.resume() == 0
    assert events.deliver_pending() == 1
    assert _job(aws, job.id).status is JobStatus.SUCCEEDED


def test_a_job_never_started_past_its_deadline_fails_and_changes_nothing(
    aws: Services, clock: FakeClock
) -> None:
    archive = make_zip(*NOTES)
    events = _Events(aws)
    job = queued_import(aws, LOCAL_ACCOUNT_ID, archive, clock())
    events.pending()
    # Every signal is lost: the schedule sends it again every REDELIVER_SECONDS ...
    while clock() < J.start_deadline(job):
        clock.advance(J.REDELIVER_SECONDS + 1)
        failed = aws.jobs.resume()
        events.pending()  # ... and S3's events never arrive
    assert failed == 1
    given_up = _job(aws, job.id)
    assert given_up.status is JobStatus.FAILED
    assert given_up.error is not None
    assert (given_up.error.type, given_up.error.code) == ("service_unavailable", "job_not_started")
    assert "nothing was changed" in given_up.error.message
    assert _staged(aws, job.id) is None  # its archive deleted with it
    assert len(aws.store.note_keys(LOCAL_ACCOUNT_ID)) == 0
    # A late event for it does nothing.
    handle(object_created(aws.settings.bucket, run_key(LOCAL_ACCOUNT_ID, job.id), 0), aws)
    assert _job(aws, job.id).status is JobStatus.FAILED
    assert len(aws.store.note_keys(LOCAL_ACCOUNT_ID)) == 0


def test_an_import_whose_archive_is_gone_fails_when_it_would_be_signalled(
    aws: Services, clock: FakeClock
) -> None:
    job = queued_import(aws, LOCAL_ACCOUNT_ID, make_zip(*NOTES), clock())
    aws.jobs.blobs.delete(LOCAL_ACCOUNT_ID, job.id)
    clock.advance(J.REDELIVER_SECONDS + 1)
    aws.jobs.resume()
    gone = _job(aws, job.id)
    assert gone.status is JobStatus.FAILED
    assert gone.error is not None and gone.error.code == "job_not_started"
