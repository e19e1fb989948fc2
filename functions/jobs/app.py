"""The job function: import and export jobs of any size, started by the notes bucket's
Object Created events under jobs/run/ (through EventBridge): see memvault.lambda_jobs.
Logs, metrics and traces: memvault.lambda_powertools.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from memvault.lambda_boot import boot_services
from memvault.lambda_jobs import handle
from memvault.lambda_powertools import Powertools

powertools = Powertools("jobs")

services = boot_services()


def _run(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return handle(event, services)


handler = powertools.handler(_run)
