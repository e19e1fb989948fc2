"""The scheduled retention sweep (EventBridge, nightly by default): see services.retention.

A run that had any sweep fail raises after all sweeps have run, so the invocation is
counted as an error (retried by EventBridge, visible to alarms) while the sweeps that
worked still did their part. Logs, metrics and traces: memvault.lambda_powertools.
"""

from __future__ import annotations

import time
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from memvault.lambda_boot import boot_services
from memvault.lambda_powertools import Powertools
from memvault.services.retention import RetentionService

powertools = Powertools("retention")

services = boot_services()
retention = RetentionService(
    services.billing,
    services.store,
    deleted_note_keep_days=services.settings.deleted_note_keep_days,
    sessions=services.sessions,
    members=services.members,
    audit=services.audit,
    profiles=services.profiles,
)


class RetentionFailed(RuntimeError):
    pass


def _sweep(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = retention.run(time.time())
    for name, count in report.counts.items():
        powertools.metrics.add_metric(name=name, unit=MetricUnit.Count, value=count)
    powertools.logger.info(
        "retention run", extra={"counts": dict(report.counts), "event": event.get("id")}
    )
    if not report.ok:
        raise RetentionFailed(f"retention sweeps failed: {dict(report.errors)}")
    return {"counts": dict(report.counts)}


handler = powertools.handler(_sweep)
