"""Import and export jobs over real HTTP on both backends (ADR 0041): the archive goes to
the link POST /v1/imports hands out, with no Authorization header (a presigned S3 PUT on
AWS, memvault's own upload URL embedded), the job runs by itself, and GET reports its
progress and its report or its refusal; an export ends in a download link."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from memvault.container import Services, build_services
from memvault.domain import jobs as J
from memvault.domain.identity import Role
from memvault.domain.jobs import JobKind, JobStatus
from memvault.ports import JobStore
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller
from memvault.services.jobs import JobService, JobTimes
from tests.contract.test_import_export import make_zip
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.jobs import deliver, export_job, import_job, job_server, queued_import, wait
from tests.support.people import make_org
from tests.support.servers import LiveServer

SMALL_LIMIT = 64 * 1024
NOTES = [(f"folder/note {i}.md", f"# Note {i}\n\nlinks to [[note {i + 1}]]\n") for i in range(12)]


@pytest.fixture
def server(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[LiveServer]:
    yield from job_server(tmp_path, backend, clock, import_max_archive_bytes=SMALL_LIMIT)


def _notes(client: httpx.Client) -> dict[str, str]:
    listed = client.get("/v1/notes", params={"limit": 500}).json()
    return {
        n["path"]: client.get(f"/v1/notes/{n['path']}").json()["markdown"] for n in listed["notes"]
    }


def test_an_import_job_lands_the_archive_and_reports_like_the_sync_import(
    server: LiveServer,
) -> None:
    archive = make_zip(*NOTES)
    with server.client() as client:
        created = client.post("/v1/imports", json={"bytes": len(archive), "filename": "v.zip"})
        assert created.status_code == 201
        job = created.json()
        assert job["id"].startswith("imp_") and job["status"] == "awaiting_upload"
        assert job["progress"] == {"phase": "uploading", "done": 0, "total": len(archive)}
        upload = job["upload"]
        assert upload["method"] == "PUT" and upload["max_bytes"] == len(archive)
        assert upload["url"].startswith("http")
    if server.services.settings.backend == "aws":
        # Signed with SigV4, so S3 refuses a body of another size (SigV2 signs no length).
        signed = parse_qs(urlsplit(upload["url"]).query)["X-Amz-SignedHeaders"][0]
        assert "content-length" in signed.split(";")
    # No Authorization header: the link alone authorises the upload.
    put = httpx.put(upload["url"], content=archive, headers=upload["headers"])
    assert put.status_code == 200, put.text
    if server.services.settings.backend == "aws":
        deliver(server.services, LOCAL_ACCOUNT_ID, job["id"])
    with server.client() as client:
        done = wait(client, f"/v1/imports/{job['id']}")
        assert done["status"] == "succeeded", done
        assert done["error"] is None and done["kind"] == "import"
        report = done["report"]
        assert (report["created"], report["updated"], report["unchanged"]) == (12, 0, 0)
        assert report["skipped"] == 0 and report["skipped_files"] == []
        assert done["progress"] == {"phase": "indexing", "done": 12, "total": 12}
        assert done["bytes"] == len(archive)
        assert _notes(client) == dict(NOTES)
        listed = client.get("/v1/jobs").json()["items"]
        assert [j["id"] for j in listed] == [job["id"]]
        # Searchable at once, like a sync import.
        hits = client.get("/v1/search", params={"q": "links", "mode": "keyword"}).json()
        assert len(hits["results"]) >= 1
        # The report is the sync import's object (the same archive: all unchanged now).
        sync = client.post(
            "/v1/import", content=archive, headers={"Content-Type": "application/zip"}
        )
        assert set(sync.json()) == set(report) and sync.json()["unchanged"] == 12
    again, _ = import_job(server, archive)
    assert again["report"]["unchanged"] == 12


def test_who_may_start_a_job_and_who_sees_it(server: LiveServer) -> None:
    org = make_org(server.services, "other")
    with server.client() as client:
        too_big = client.post("/v1/imports", json={"bytes": SMALL_LIMIT + 1})
        assert too_big.status_code == 413
        assert too_big.json()["error"]["code"] == "archive_too_large"
        assert client.post("/v1/imports", json={"bytes": 0}).status_code == 400
        assert client.get("/v1/jobs").json()["items"] == []
    # A member (signed in, or with their admin key) may not import the shared vault.
    with server.client(org.member.key.secret) as client:
        refused = client.post("/v1/imports", json={"bytes": 100})
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "admin_required"
        # ...but may export it, as they may read every note.
        assert client.post("/v1/exports").status_code == 202
    with server.client(org.admin.key.secret) as client:
        job = client.post("/v1/imports", json={"bytes": 100})
        assert job.status_code == 201
        job_id = job.json()["id"]
    with server.client() as client:  # another organisation's admin: no such job
        missing = client.get(f"/v1/imports/{job_id}")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "job_not_found"
        assert client.get("/v1/jobs").json()["items"] == []
        assert client.get(f"/v1/exports/{job_id}").status_code == 404
    with server.client(org.member.key.secret) as client:  # a colleague's job: not theirs
        assert client.get(f"/v1/imports/{job_id}").status_code == 404
        assert [j["kind"] for j in client.get("/v1/jobs").json()["items"]] == ["export"]
    with server.client(org.owner.key.secret) as client:
        assert client.get(f"/v1/imports/{job_id}").status_code == 200
        assert len(client.get("/v1/jobs").json()["items"]) == 2


def test_refusals_after_the_upload_fail_the_job_and_change_nothing(server: LiveServer) -> None:
    archive = make_zip(*NOTES)
    # Longer than declared.
    done, put = import_job(server, archive, declared=len(archive) - 10)
    if server.services.settings.backend == "sqlite":
        assert put.status_code == 413
        assert put.json()["error"]["code"] == "archive_too_large"
    else:
        # S3 refuses a body whose length differs from the signed Content-Length; moto does
        # not, so the job function's own check is what this shows.
        assert put.status_code == 200
    assert done["status"] == "failed"
    assert done["error"]["code"] == "archive_too_large"
    assert done["error"]["type"] == "payload_too_large"
    # Not a zip: the sync import's typed error, in the job.
    done, put = import_job(server, b"this is not a zip archive at all")
    assert put.status_code == 200
    assert done["status"] == "failed"
    assert done["error"] == {
        "type": "unprocessable",
        "code": "not_a_zip",
        "message": "import refused, nothing was changed: the file is not a zip archive",
    }
    assert done["report"] is None
    # After the link ran out: nothing runs.
    with server.client() as client:
        job = client.post("/v1/imports", json={"bytes": len(archive)}).json()
    server.clock.advance(J.UPLOAD_SECONDS + 1)
    put = httpx.put(job["upload"]["url"], content=archive, headers=job["upload"]["headers"])
    if server.services.settings.backend == "sqlite":
        assert put.status_code == 401
        assert put.json()["error"]["code"] == "token_expired"
    else:
        assert put.status_code == 200  # S3's link is on real time; the job is not
        deliver(server.services, LOCAL_ACCOUNT_ID, job["id"])
    with server.client() as client:
        assert client.get(f"/v1/imports/{job['id']}").json()["status"] == "expired"
        assert _notes(client) == {}


def test_an_export_job_downloads_the_same_bytes_as_the_sync_export(server: LiveServer) -> None:
    import_job(server, make_zip(*NOTES))
    done = export_job(server)
    assert done["status"] == "succeeded", done
    assert done["report"] == {"notes": 12, "windows_unsafe": 0}
    download = done["download"]
    assert download["filename"] == "vault.zip"
    fetched = httpx.get(download["url"])  # no Authorization header
    assert fetched.status_code == 200
    with server.client() as client:
        sync = client.get("/v1/export")
    assert fetched.content == sync.content
    assert download["bytes"] == len(sync.content)


def test_a_second_import_waits_for_a_live_lease_and_takes_an_expired_one(
    server: LiveServer,
) -> None:
    svc = server.services
    now = server.clock()
    # Another import of the organisation is running: its lease is live.
    assert svc.jobs.jobs.acquire_lease(LOCAL_ACCOUNT_ID, "imp_other", until=now + 60, now=now)
    with server.client() as client:
        busy = client.post("/v1/imports", json={"bytes": 100})
        assert busy.status_code == 409
        assert busy.json()["error"]["code"] == "job_in_progress"
        server.clock.advance(61)  # the other job died: its lease ran out
        done, _ = import_job(server, make_zip(*NOTES))
    assert done["status"] == "succeeded"
    assert svc.jobs.jobs.lease_holder(LOCAL_ACCOUNT_ID, now=server.clock()) is None


def test_a_job_whose_worker_died_is_failed_once_its_lease_runs_out(server: LiveServer) -> None:
    """A running job nobody renews (its worker was killed): failed job_interrupted, the
    vault untouched, the organisation free for the next import."""
    svc, clock = server.services, server.clock
    job = J.new_job(
        JobKind.IMPORT, LOCAL_ACCOUNT_ID, now=clock(), member_id=None, key_id=None, declared_bytes=9
    )
    svc.jobs.jobs.create(job)
    job = J.uploaded(job, 9, now=clock())
    assert svc.jobs.jobs.save(job)
    running = J.started(job, "dead-worker", now=clock())
    assert svc.jobs.jobs.save(running)
    assert svc.jobs.jobs.acquire_lease(
        LOCAL_ACCOUNT_ID, job.id, until=running.lease_until, now=clock()
    )
    with server.client() as client:
        assert client.get(f"/v1/imports/{job.id}").json()["status"] == "running"
        clock.advance(J.LEASE_SECONDS + 1)
        failed = client.get(f"/v1/imports/{job.id}").json()
        assert failed["status"] == "failed"
        assert failed["error"]["code"] == "job_interrupted"
        assert _notes(client) == {}
    done, _ = import_job(server, make_zip(*NOTES))
    assert done["status"] == "succeeded"


def test_a_server_start_fails_what_a_dead_server_left_and_runs_what_was_queued(
    tmp_path: Path, clock: FakeClock
) -> None:
    """Embedded: ``memvault serve`` starts with ``jobs.resume``: a job left running with
    its lease run out is failed (the vault as it was), a queued one runs."""
    with backend_settings(tmp_path, "sqlite") as settings:
        first = build_services(settings, clock=clock)
        first.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        store = first.jobs.jobs
        dead = J.new_job(
            JobKind.IMPORT,
            LOCAL_ACCOUNT_ID,
            now=clock(),
            member_id=None,
            key_id=None,
            declared_bytes=9,
        )
        store.create(dead)
        dead = J.uploaded(dead, 9, now=clock())
        assert store.save(dead)
        dead = J.started(dead, "gone", now=clock())
        assert store.save(dead)  # as a server killed mid-job leaves it: running
        assert store.acquire_lease(LOCAL_ACCOUNT_ID, dead.id, until=dead.lease_until, now=clock())
        queued = queued_import(first, LOCAL_ACCOUNT_ID, make_zip(*NOTES), clock())

        clock.advance(J.LEASE_SECONDS + 1)  # the server was down a while
        second = build_services(settings, clock=clock)  # a new server on the same data
        assert second.jobs.resume() == 1
        assert second.jobs.worker is not None and second.jobs.worker.idle()
        found = {j.id: j for j in second.jobs.jobs.recent(LOCAL_ACCOUNT_ID, 10)}
        assert found[dead.id].status is JobStatus.FAILED
        assert found[dead.id].error is not None
        assert found[dead.id].error.code == "job_interrupted"
        assert found[queued.id].status is JobStatus.SUCCEEDED
        assert len(second.store.note_keys(LOCAL_ACCOUNT_ID)) == len(NOTES)


class _Recorded:
    """The backend's own job store, noting every progress it is asked to save."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.saved: list[tuple[str | None, int, int]] = []

    def save(self, job: Any) -> bool:
        self.saved.append((job.progress.phase, job.progress.done, job.progress.total))
        return bool(self.inner.save(job))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_running_job_reports_each_phase_into_the_job(services: Services, user: Caller) -> None:
    """What GET /v1/imports/{id} shows while a job runs: the worker writes the import's
    phases into the job as they come (here every millisecond, to see each one)."""
    recorded = _Recorded(services.jobs.jobs)
    jobs = JobService(
        cast(JobStore, recorded),
        services.jobs.blobs,
        services.transfer,
        services.vault.clock,
        times=JobTimes(heartbeat_seconds=0.001),
    )
    archive = make_zip(*NOTES)
    owner = Caller(account_id=LOCAL_ACCOUNT_ID, role=Role.OWNER, manage=True, member_id="m")
    job = jobs.create_import(owner, len(archive)).job
    jobs.blobs.write_upload(LOCAL_ACCOUNT_ID, job.id, iter([archive]), max_bytes=len(archive))
    recorded.save(J.uploaded(job, len(archive), now=services.vault.clock()))
    done = jobs.run(LOCAL_ACCOUNT_ID, job.id)
    assert done is not None and done.status is JobStatus.SUCCEEDED
    phases = [phase for phase, _done, _total in recorded.saved]
    order = ["uploading", "parsing", "committing", "indexing"]
    assert [p for p in order if p in phases] == order
    assert [p for p in dict.fromkeys(phases) if p in order] == order  # in that order
    assert ("indexing", 12, 12) in recorded.saved
