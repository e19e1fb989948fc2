"""The job function's work (functions/jobs): import and export jobs (ADR 0041, 0042).

S3 sends the notes bucket's events to EventBridge; a rule matches "Object Created" under
``jobs/run/`` (an import's upload, or the empty trigger object an export's POST writes)
and invokes this function asynchronously. Each object names its job
(``jobs/run/<account>/<job id>``): the job is checked (an upload larger than declared is
refused) and run here, to its end, within the function's 15 minutes. An S3 notification
(``Records``) is understood too, and ``{"account_id": ..., "job_id": ...}`` runs one job by
hand. Any other event is refused with ``UnsupportedEvent``, which names what it was.

A job killed here (a timeout, an out-of-memory kill) stops renewing its lease: once the
lease has run out the job is failed ``job_interrupted`` by whoever looks at it next, and
what its commit left half-written is rolled back from the commit's journal (ADR 0002):
the vault is as it was before the job.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import unquote_plus

from memvault.adapters.aws.jobs import parse_run_key
from memvault.container import Services
from memvault.errors import MemvaultError
from memvault.lambda_powertools import UnsupportedEvent, describe_event

log = logging.getLogger("memvault.jobs")


def _keys(event: dict[str, Any]) -> list[str] | None:
    """The object keys an event names, or None when it is not an event of ours."""
    if event.get("source") == "aws.s3" and isinstance(event.get("detail"), dict):
        key = event["detail"].get("object", {}).get("key")
        return [str(key)] if isinstance(key, str) else None
    records = event.get("Records")
    if isinstance(records, list) and records:
        found = []
        for record in records:
            key = (
                record.get("s3", {}).get("object", {}).get("key")
                if isinstance(record, dict)
                else None
            )
            if not isinstance(key, str):
                return None
            found.append(unquote_plus(key))  # S3 notifications URL-encode the key
        return found
    return None


def handle(event: dict[str, Any], services: Services) -> dict[str, Any]:
    if isinstance(event, dict) and set(event) == {"account_id", "job_id"}:
        targets = [(str(event["account_id"]), str(event["job_id"]))]
    else:
        object_keys = _keys(event) if isinstance(event, dict) else None
        if object_keys is None:
            raise UnsupportedEvent(
                "the job function runs on the notes bucket's Object Created events under"
                f" jobs/run/ only; it was invoked with {describe_event(event)}"
            )
        targets = []
        for key in object_keys:
            parsed = parse_run_key(key)
            if parsed is None:
                log.warning("object outside jobs/run/ ignored", extra={"key": key[:200]})
            else:
                targets.append(parsed)
    ran: list[dict[str, Any]] = []
    for account_id, job_id in targets:
        try:
            job = services.jobs.upload_arrived(account_id, job_id)
        except MemvaultError as exc:  # e.g. an upload that came after its link expired
            log.warning("job not run", extra={"job_id": job_id, "code": exc.code})
            ran.append({"job_id": job_id, "status": "refused", "code": exc.code})
            continue
        ran.append({"job_id": job_id, "status": None if job is None else job.status.value})
    return {"jobs": ran}
