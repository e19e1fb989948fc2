"""The job aggregate (domain/jobs.py): its transitions, its lease, its tokens."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memvault.domain import jobs as J
from memvault.domain.jobs import JobKind, JobStatus

KEY = b"k" * 32


def _import() -> J.Job:
    return J.new_job(
        JobKind.IMPORT, "acme", now=100.0, member_id="m", key_id="k", declared_bytes=10
    )


def test_an_import_goes_from_its_upload_to_its_end_and_nowhere_else() -> None:
    job = _import()
    assert job.status is JobStatus.AWAITING_UPLOAD and job.id.startswith("imp_")
    assert job.progress == J.JobProgress("uploading", 0, 10)
    with pytest.raises(J.IllegalTransition):
        J.started(job, "w", now=101)
    queued = J.uploaded(job, 10, now=101)
    assert queued.status is JobStatus.QUEUED and queued.revision == job.revision + 1
    running = J.started(queued, "w", now=102, lease_seconds=60)
    assert running.lease_live(161.9) and not running.lease_live(162)
    done = J.succeeded(running, now=103, report={"created": 1})
    assert done.terminal and done.lease_owner is None and done.expires_at == 103 + J.KEEP_SECONDS
    with pytest.raises(J.IllegalTransition):
        J.failed(done, J.INTERRUPTED, now=104)
    assert J.new_job(JobKind.EXPORT, "acme", now=0, member_id=None, key_id=None).status is (
        JobStatus.QUEUED
    )


def test_a_running_job_whose_lease_ran_out_is_interrupted() -> None:
    running = J.started(J.uploaded(_import(), 10, now=101), "w", now=102, lease_seconds=60)
    assert J.interrupted(running, now=161) is None
    failed = J.interrupted(running, now=162)
    assert failed is not None and failed.status is JobStatus.FAILED
    assert failed.error is not None and failed.error.code == "job_interrupted"
    renewed = J.progressed(running, J.JobProgress("parsing", 1, 2), now=150, lease_seconds=60)
    assert J.interrupted(renewed, now=162) is None


def test_jobs_expire_awaiting_their_upload_or_kept_past_their_time() -> None:
    job = _import()
    assert not J.due_to_expire(job, job.expires_at - 1) and J.due_to_expire(job, job.expires_at)
    running = J.started(J.uploaded(job, 10, now=101), "w", now=102)
    assert not J.due_to_expire(running, 10**12)  # a running job is never expired


def test_tokens_name_one_job_one_purpose_one_organisation_until_their_time() -> None:
    token = J.sign_token(KEY, J.UPLOAD, "acme", "imp_1", 500.0)
    assert J.check_token(KEY, J.UPLOAD, "imp_1", token, now=499) == J.TokenCheck("acme", False)
    assert J.check_token(KEY, J.UPLOAD, "imp_1", token, now=500) == J.TokenCheck("acme", True)
    assert J.check_token(KEY, J.DOWNLOAD, "imp_1", token, now=0) is None
    assert J.check_token(KEY, J.UPLOAD, "imp_2", token, now=0) is None
    assert J.check_token(b"x" * 32, J.UPLOAD, "imp_1", token, now=0) is None
    prefix, until, mac = token.split(".")
    assert J.check_token(KEY, J.UPLOAD, "imp_1", f"{prefix}.{int(until) + 9}.{mac}", now=0) is None
    other = J.sign_token(KEY, J.UPLOAD, "evil", "imp_1", 500.0).split(".")[0]
    assert J.check_token(KEY, J.UPLOAD, "imp_1", f"{other}.{until}.{mac}", now=0) is None
    for junk in ("", "a.b", "a.b.c.d", "!!.1.x", "x" * 600):
        assert J.check_token(KEY, J.UPLOAD, "imp_1", junk, now=0) is None


def test_the_stored_form_round_trips() -> None:
    job = J.failed(
        replace(_import(), filename="v.zip", obsidian_config="skip"), J.INTERRUPTED, now=5
    )
    assert J.from_record(J.to_record(job)) == job
    assert J.kind_of(job.id) is JobKind.IMPORT and J.kind_of("exp_x") is JobKind.EXPORT
    assert J.kind_of("nope") is None
