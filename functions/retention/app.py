"""The scheduled retention sweep (EventBridge, nightly by default): see services.retention.

A run that had any sweep fail raises after all sweeps have run, so the invocation is
counted as an error (retried by EventBridge, visible to alarms) while the sweeps that
worked still did their part.
"""

from __future__ import annotations

import time
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from memvault.adapters.aws.lambda_boot import boot_services
from memvault.services.retention import RetentionService

logger = Logger(service="memvault-retention")
metrics = Metrics(namespace="memvault", service="retention")
tracer = Tracer(service="memvault-retention")

services = boot_services()
retention = RetentionService(
    services.billing,
    services.store,
    deleted_note_keep_days=services.settings.deleted_note_keep_days,
)


class RetentionFailed(RuntimeError):
    pass


@logger.inject_lambda_context
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    metrics.add_metric(name="Invocations", unit=MetricUnit.Count, value=1)
    report = retention.run(time.time())
    for name, count in report.counts.items():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=count)
    logger.info("retention run", extra={"counts": dict(report.counts), "event": event.get("id")})
    if not report.ok:
        raise RetentionFailed(f"retention sweeps failed: {dict(report.errors)}")
    return {"counts": dict(report.counts)}
