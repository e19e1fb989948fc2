"""Import and export jobs as a client drives them (tests of the job API, bench/): a live
server on either backend whose presigned S3 links really answer, and the helpers that
create a job, PUT its archive with no Authorization header and wait for the job's end.

On AWS the presigned links name a moto server on a loopback port, in this process
(``ThreadedMotoServer``: the same state as the in-process moto the backend runs on), so
the PUT and GET are real HTTP requests to the URLs memvault signed. What S3 would do next
(its Object Created event reaching the job function) is done by handing the job
function's own ``handle`` the event S3 sends through EventBridge (events/jobs_object_created.json).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from memvault.adapters.aws.jobs import RUN_PREFIX, run_key
from memvault.container import Services, build_services
from memvault.domain import jobs as J
from memvault.domain.jobs import Job, JobKind
from memvault.lambda_jobs import handle
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.servers import LiveServer, serve

ROOT = Path(__file__).resolve().parents[2]
TERMINAL = {"succeeded", "failed", "expired"}

_server_lock = threading.Lock()
_server_url: str | None = None


def moto_http() -> str:
    """The process's moto server on a loopback port (started once; shares moto's state)."""
    global _server_url
    with _server_lock:
        if _server_url is None:
            from moto.server import ThreadedMotoServer

            server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
            server.start()
            host, port = server.get_host_and_port()
            _server_url = f"http://{host}:{port}"
        return _server_url


def job_server(
    tmp_path: Path, backend: str, clock: FakeClock, *, courier: bool = False, **overrides: Any
) -> Iterator[LiveServer]:
    """A live server for jobs; with ``courier`` on AWS, what S3 and EventBridge do runs by
    itself (:func:`s3_courier`), for clients that know nothing of tests (the CLI)."""
    if backend == "aws":
        overrides.setdefault("s3_presign_endpoint", moto_http())
    # Jobs move archives: vectors (a k-NN index on the node) have their own tests.
    overrides.setdefault("embeddings", "off")
    with backend_settings(tmp_path, backend, **overrides) as settings:
        services = build_services(settings, clock=clock)
        if backend == "aws" and courier:
            with s3_courier(services):
                yield from serve(services, clock)
        else:
            yield from serve(services, clock)


@contextlib.contextmanager
def s3_courier(services: Services, every: float = 0.05) -> Iterator[None]:
    """S3's Object Created events through EventBridge to the job function, in a thread:
    each new object under jobs/run/ is handed to the job function's ``handle`` once."""
    client: Any = services.store.bodies.client  # type: ignore[attr-defined]
    bucket = services.settings.bucket
    seen: set[tuple[str, str]] = set()
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(every):
            listed = client.list_objects_v2(Bucket=bucket, Prefix=RUN_PREFIX)
            for obj in listed.get("Contents", []):
                mark = (obj["Key"], str(obj["LastModified"]))
                if mark not in seen:
                    seen.add(mark)
                    handle(object_created(bucket, obj["Key"], obj["Size"]), services)

    thread = threading.Thread(target=run, name="s3-courier", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


@functools.lru_cache(maxsize=1)
def _event() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "events" / "jobs_object_created.json").read_text())
    return data


def object_created(bucket: str, key: str, size: int) -> dict[str, Any]:
    """The EventBridge event S3 sends for a new object (events/jobs_object_created.json)."""
    event = copy.deepcopy(_event())
    event["detail"]["bucket"]["name"] = bucket
    event["detail"]["object"]["key"] = key
    event["detail"]["object"]["size"] = size
    return event


def deliver(services: Services, account_id: str, job_id: str) -> dict[str, Any]:
    """What S3 and EventBridge do after an object lands under jobs/run/: the job function's
    handler on the event (AWS only; the embedded worker needs nothing)."""
    event = object_created(services.settings.bucket, run_key(account_id, job_id), 0)
    return handle(event, services)


def queued_import(services: Services, account_id: str, archive: bytes, now: float) -> Job:
    """An import whose archive has arrived and been checked, not yet started: what a
    worker (or the job function) that died before the start leaves behind."""
    job = J.new_job(
        JobKind.IMPORT,
        account_id,
        now=now,
        member_id=None,
        key_id=None,
        declared_bytes=len(archive),
    )
    services.jobs.jobs.create(job)
    services.jobs.blobs.write_upload(account_id, job.id, iter([archive]), max_bytes=len(archive))
    queued = J.uploaded(job, len(archive), now=now)
    assert services.jobs.jobs.save(queued)
    return queued


def wait(client: httpx.Client, path: str, timeout: float = 60.0) -> dict[str, Any]:
    """GET ``path`` until the job has ended; its last answer."""
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = client.get(path).json()
        if body.get("status") in TERMINAL or time.monotonic() > deadline:
            return body
        time.sleep(0.02)


def import_job(
    server: LiveServer,
    archive: bytes,
    *,
    key: str | None = None,
    declared: int | None = None,
    account_id: str = "local",
) -> tuple[dict[str, Any], httpx.Response]:
    """Create an import job, PUT ``archive`` to its link (no Authorization), let it run
    and wait: (the job at its end, the upload's response)."""
    with server.client(key) as client:
        created = client.post("/v1/imports", json={"bytes": declared or len(archive)})
        assert created.status_code == 201, created.text
        job = created.json()
        upload = job["upload"]
        put = httpx.put(upload["url"], content=archive, headers=upload["headers"], timeout=60)
        if server.services.settings.backend == "aws" and put.status_code == 200:
            deliver(server.services, account_id, job["id"])
        return wait(client, f"/v1/imports/{job['id']}"), put


def export_job(
    server: LiveServer, key: str | None = None, account_id: str = "local"
) -> dict[str, Any]:
    with server.client(key) as client:
        created = client.post("/v1/exports")
        assert created.status_code == 202, created.text
        job = created.json()
        if server.services.settings.backend == "aws":
            deliver(server.services, account_id, job["id"])
        return wait(client, f"/v1/exports/{job['id']}")
