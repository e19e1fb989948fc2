"""The management REST API (notes, search, keys, billing, /healthz) on Lambda.

Mangum adapts API Gateway REST proxy events to the FastAPI app; responses are buffered,
which suits this surface (nothing here streams). Powertools adds the request's
correlation id to every log line (memvault's own JSON logs included), one EMF metric per
invocation, and X-Ray tracing.
"""

from __future__ import annotations

import logging
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from mangum import Mangum

from memvault.adapters.aws.lambda_boot import boot_services
from memvault.api.app import Surface, create_app

SURFACES: tuple[Surface, ...] = ("management",)

logger = Logger(service="memvault-management")
metrics = Metrics(namespace="memvault", service="management")
tracer = Tracer(service="memvault-management")


class _CorrelationFilter(logging.Filter):
    """Stamps memvault's own log records with the invocation's correlation id."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.correlation_id = logger.get_correlation_id()
        return True


# Cold start: settings, clients and the app are built once and reused while warm.
services = boot_services()
app = create_app(services, surfaces=SURFACES)
for _handler in logging.getLogger("memvault").handlers:
    _handler.addFilter(_CorrelationFilter())
# lifespan "auto": the app's lifespan holds nothing that cannot run once per invocation.
asgi = Mangum(app, lifespan="auto", api_gateway_base_path="/")


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
@tracer.capture_lambda_handler
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    metrics.add_metric(name="Invocations", unit=MetricUnit.Count, value=1)
    response: dict[str, Any] = asgi(event, context)  # type: ignore[arg-type]
    if int(response.get("statusCode", 500)) >= 500:
        metrics.add_metric(name="ServerErrors", unit=MetricUnit.Count, value=1)
    return response
