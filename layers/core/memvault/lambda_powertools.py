"""Logs, metrics and traces for the Lambda functions, set up once for all of them.

Each function names its service (``memvault-<name>`` for logs and X-Ray, ``<name>`` as
the EMF metrics' dimension in the ``memvault`` namespace) and wraps its handler here, so
every function counts ``Invocations`` the same way and the API Gateway ones count
``ServerErrors`` (a response of 500 or more) and stamp memvault's own JSON log lines
with the API Gateway request id as ``correlation_id``.

Powertools is a Lambda-only dependency (layers/core/requirements.txt, and the dev
extras): only the entrypoints under functions/ import this module.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

NAMESPACE = "memvault"

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]


class _CorrelationFilter(logging.Filter):
    """Stamps memvault's own log records with the invocation's correlation id."""

    def __init__(self, logger: Logger) -> None:
        super().__init__()
        self.logger = logger

    def filter(self, record: logging.LogRecord) -> bool:
        record.correlation_id = self.logger.get_correlation_id()
        return True


class Powertools:
    """One function's Powertools logger, metrics and tracer, and its handler wrappers."""

    def __init__(self, service: str) -> None:
        self.logger = Logger(service=f"memvault-{service}")
        self.metrics = Metrics(namespace=NAMESPACE, service=service)
        self.tracer = Tracer(service=f"memvault-{service}")

    def correlate_memvault_logs(self) -> None:
        """Add the correlation id to memvault's log handlers. Call it once the app is
        built: building it (``configure_logging``) is what installs them."""
        for handler in logging.getLogger("memvault").handlers:
            handler.addFilter(_CorrelationFilter(self.logger))

    def handler(self, fn: Handler, *, correlation_id_path: str | None = None) -> Handler:
        """``fn`` with the invocation's context in the logs, a trace, and its metrics
        flushed as EMF at the end; every invocation counts one ``Invocations``."""

        @self.logger.inject_lambda_context(correlation_id_path=correlation_id_path)
        @self.tracer.capture_lambda_handler
        @self.metrics.log_metrics
        def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
            self.metrics.add_metric(name="Invocations", unit=MetricUnit.Count, value=1)
            return fn(event, context)

        return handler

    def api_gateway_handler(self, respond: Handler) -> Handler:
        """A handler for API Gateway REST proxy events: as ``handler``, correlated by the
        request id, and a response of 500 or more counts one ``ServerErrors``."""

        def counted(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
            response = respond(event, context)
            if int(response.get("statusCode", 500)) >= 500:
                self.metrics.add_metric(name="ServerErrors", unit=MetricUnit.Count, value=1)
            return response

        return self.handler(counted, correlation_id_path=correlation_paths.API_GATEWAY_REST)
