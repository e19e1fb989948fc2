"""The scheduled retention sweep (EventBridge, nightly by default): see services.retention.

It needs no search: nothing here reaches OpenSearch, so a search outage never stops it.
The schedule event is parsed with Powertools' event_parser model; any other event is
refused with a clear UnsupportedEvent. A run watches its remaining time (the Lambda
context) and starts no sweep or batch in its last 20 seconds; the next run continues.

A run that had any sweep fail raises after all sweeps have run, so the invocation is
counted as an error (retried by EventBridge, visible to alarms) while the sweeps that
worked still did their part. Logs, metrics and traces: memvault.lambda_powertools.
"""

from __future__ import annotations

import time
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ValidationError

from memvault.lambda_boot import boot_services
from memvault.lambda_powertools import Powertools, UnsupportedEvent, describe_event
from memvault.services.retention import RetentionService

powertools = Powertools("retention")
RESERVE_MS = 20_000  # more than one purge batch takes

services = boot_services()
retention = RetentionService(
    services.billing,
    services.store,
    deleted_note_keep_days=services.settings.deleted_note_keep_days,
    sessions=services.sessions,
    members=services.members,
    audit=services.audit,
    profiles=services.profiles,
    files=services.attachments,
)


class RetentionFailed(RuntimeError):
    pass


def _sweep(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    try:
        schedule = parse(event=event, model=EventBridgeModel)
    except (ValidationError, TypeError) as exc:
        raise UnsupportedEvent(
            "the retention function runs on its EventBridge schedule only; it was invoked"
            f" with {describe_event(event)}"
        ) from exc
    if schedule.detail_type != "Scheduled Event":  # another EventBridge event (S3's)
        raise UnsupportedEvent(
            "the retention function runs on its EventBridge schedule only; it was invoked"
            f" with {describe_event(event)}"
        )
    # No new sweep or batch starts in the last RESERVE_MS of the invocation: the next
    # run continues where this one stopped (each unit of work is whole).
    report = retention.run(
        time.time(), stop=lambda: context.get_remaining_time_in_millis() < RESERVE_MS
    )
    for name, count in report.counts.items():
        powertools.metrics.add_metric(name=name, unit=MetricUnit.Count, value=count)
    powertools.metrics.add_metric(
        name="SweepsUnfinished", unit=MetricUnit.Count, value=len(report.unfinished)
    )
    powertools.logger.info(
        "retention run",
        extra={
            "counts": dict(report.counts),
            "unfinished": list(report.unfinished),
            "event": schedule.id,
        },
    )
    if not report.ok:
        raise RetentionFailed(f"retention sweeps failed: {dict(report.errors)}")
    return {"counts": dict(report.counts), "unfinished": list(report.unfinished)}


handler = powertools.handler(_sweep)
