"""Logs, metrics and traces for the Lambda functions, set up once for all of them.

Each function names its service (``memvault-<name>`` for logs and X-Ray, ``<name>`` as
the EMF metrics' dimension in the ``memvault`` namespace) and wraps its handler here, so
every function counts ``Invocations`` the same way and the API Gateway ones count
``ServerErrors`` (a response of 500 or more) and stamp memvault's own JSON log lines
with the API Gateway request id as ``correlation_id``. The inference function is not a
Python handler (uvicorn behind Lambda Web Adapter): ``asgi`` wraps its app to do the
same per request, from the request and Lambda context the adapter passes in headers,
and ``usage_metrics`` turns each gateway request's billing line into EMF business
metrics (tokens, cost, rounds, recalled notes, memory tool calls).

Also here, because every function needs them the same way:

- an event a function does not serve (a schedule event sent to an API function, an API
  request sent to the schedule's) gets a clear answer, never a traceback
  (``UnsupportedEvent``, ``unsupported_event_response``);
- the idle-moment drain of the search outbox (``IdleDrain``, ADR 0031): after an
  invocation in which this process queued notes for indexing, a short, bounded attempt
  to index them once the search domain answers again.

Powertools is a Lambda-only dependency (layers/core/requirements.txt, and the dev
extras): only the entrypoints under functions/ and the lambda_* modules import this.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from memvault import errors

NAMESPACE = "memvault"
log = logging.getLogger("memvault.lambda")

Handler = Callable[[dict[str, Any], LambdaContext], dict[str, Any]]
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]

# Lambda Web Adapter passes events that are not HTTP requests (a schedule event, a direct
# invoke) to the app as a POST to this path (AWS_LWA_PASS_THROUGH_PATH's default).
PASS_THROUGH_PATH = "/events"


class UnsupportedEvent(ValueError):
    """An event this function does not serve (raised by the non-HTTP functions)."""


def describe_event(event: object) -> str:
    """What kind of event ``event`` looks like, in a few words (for error messages)."""
    if not isinstance(event, dict):
        return f"a {type(event).__name__}"
    if "detail-type" in event:
        return f"an EventBridge event ({event.get('detail-type')!r})"
    if "RequestType" in event:
        return "a CloudFormation custom resource request"
    if "httpMethod" in event or "requestContext" in event:
        return "an API Gateway request"
    if "action" in event:
        return f"an ops command ({event.get('action')!r})"
    return "an event of no known shape"


def is_api_gateway_event(event: object) -> bool:
    return isinstance(event, dict) and "httpMethod" in event and "requestContext" in event


def error_response(
    exc: errors.MemvaultError, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """An API Gateway proxy response for ``exc``: the REST API's error body, the status
    from errors.status_for (the one table), for answers given outside the app."""
    body = {"error": {"type": exc.type, "code": exc.code, "message": exc.message}}
    return {
        "statusCode": errors.status_for(exc),
        "headers": {"content-type": "application/json", **(headers or {})},
        "body": json.dumps(body),
        "isBase64Encoded": False,
    }


def unsupported_event_response(service: str, event: object) -> dict[str, Any]:
    """The API Gateway response an HTTP function gives an event that is not a request."""
    return error_response(
        errors.InvalidInput(
            f"the memvault {service} function serves API Gateway requests only;"
            f" it was invoked with {describe_event(event)}",
            code="unsupported_event",
        )
    )


class _CorrelationFilter(logging.Filter):
    """Stamps memvault's own log records with the invocation's correlation id."""

    def __init__(self, logger: Logger) -> None:
        super().__init__()
        self.logger = logger

    def filter(self, record: logging.LogRecord) -> bool:
        record.correlation_id = self.logger.get_correlation_id()
        return True


class Drainable(Protocol):
    """The part of services.indexing.IndexSync the idle drain uses."""

    @property
    def pending(self) -> bool: ...
    def drain_pending(self, stop: Callable[[], bool] = ..., batch: int = ...) -> int: ...


class IdleDrain:
    """At an idle moment, index what this process queued while search was down.

    Runs only when this process queued work (``IndexSync.pending``), at most once every
    ``every_s`` seconds, only if the search node answers a ping within ``probe_s``, and
    for at most ``budget_s`` seconds (checked between batches of ``batch`` notes), never
    into the invocation's last ``reserve_ms``. It never raises: what is left is drained
    on the next idle moment, the next good commit, or the ops function's schedule. On the
    buffered functions (Mangum) it runs before the handler returns, so it adds up to its
    budget to that one response; on inference it runs after the response has ended."""

    def __init__(
        self,
        indexing: Drainable,
        probe: Callable[[float], bool] | None,
        *,
        every_s: float = 30.0,
        probe_s: float = 0.5,
        budget_s: float = 1.0,
        batch: int = 50,
        reserve_ms: int = 3000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.indexing = indexing
        self.probe = probe
        self.every_s, self.probe_s, self.budget_s = every_s, probe_s, budget_s
        self.batch, self.reserve_ms = batch, reserve_ms
        self.clock = clock
        self._last: float | None = None

    def __call__(self, remaining_ms: int | None = None) -> int:
        if not self.indexing.pending:
            return 0
        now = self.clock()
        if self._last is not None and now - self._last < self.every_s:
            return 0
        if remaining_ms is not None and remaining_ms < self.reserve_ms + 1000 * self.budget_s:
            return 0
        self._last = now
        if self.probe is not None and not self.probe(self.probe_s):
            return 0
        deadline = now + self.budget_s
        try:
            drained = self.indexing.drain_pending(lambda: self.clock() >= deadline, self.batch)
        except Exception:
            log.warning("idle drain of the search outbox failed", exc_info=True)
            return 0
        if drained:
            log.info("idle drain of the search outbox", extra={"notes": drained})
        return drained


class Powertools:
    """One function's Powertools logger, metrics and tracer, and its handler wrappers."""

    def __init__(self, service: str) -> None:
        self.service = service
        self.logger = Logger(service=f"memvault-{service}")
        self.metrics = Metrics(namespace=NAMESPACE, service=service)
        self.tracer = Tracer(service=f"memvault-{service}")
        self.idle: IdleDrain | None = None

    def correlate_memvault_logs(self) -> None:
        """Add the correlation id to memvault's log handlers. Call it once the app is
        built: building it (``configure_logging``) is what installs them."""
        for handler in logging.getLogger("memvault").handlers:
            if not any(isinstance(f, _CorrelationFilter) for f in handler.filters):
                handler.addFilter(_CorrelationFilter(self.logger))

    def drain_when_idle(self, indexing: Drainable, index: object) -> None:
        """Run an ``IdleDrain`` of ``indexing`` after each invocation; ``index`` is the
        search index (its ``reachable`` probe is used when it has one). The probe is looked
        up when a drain runs, not now: reading it from a deferred adapter would build it
        and import opensearch-py at cold start (ADR 0052)."""

        def probe(timeout: float) -> bool:
            reachable = getattr(index, "reachable", None)
            return bool(reachable(timeout)) if callable(reachable) else True

        self.idle = IdleDrain(indexing, probe)

    def handler(self, fn: Handler, *, correlation_id_path: str | None = None) -> Handler:
        """``fn`` with the invocation's context in the logs, a trace, and its metrics
        flushed as EMF at the end; every invocation counts one ``Invocations``."""

        @self.logger.inject_lambda_context(correlation_id_path=correlation_id_path)
        @self.tracer.capture_lambda_handler
        @self.metrics.log_metrics
        def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
            self.metrics.add_metric(name="Invocations", unit=MetricUnit.Count, value=1)
            try:
                return fn(event, context)
            finally:
                if self.idle is not None:
                    self.idle(_remaining_ms(context))

        return handler

    def api_gateway_handler(self, respond: Handler) -> Handler:
        """A handler for API Gateway REST proxy events: as ``handler``, correlated by the
        request id, and a response of 500 or more counts one ``ServerErrors``. Any other
        event is answered 400 ``unsupported_event``."""

        def counted(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
            if not is_api_gateway_event(event):
                self.logger.warning(
                    "unsupported event", extra={"event_kind": describe_event(event)}
                )
                self.metrics.add_metric(name="UnsupportedEvents", unit=MetricUnit.Count, value=1)
                return unsupported_event_response(self.service, event)
            response = respond(event, context)
            if int(response.get("statusCode", 500)) >= 500:
                self.metrics.add_metric(name="ServerErrors", unit=MetricUnit.Count, value=1)
            return response

        return self.handler(counted, correlation_id_path=correlation_paths.API_GATEWAY_REST)

    # ------------------------------------------------------------------ inference
    def asgi(self, app: Asgi) -> Asgi:
        """``app`` (served by uvicorn behind Lambda Web Adapter) with, per request, what
        ``api_gateway_handler`` gives a Python handler: the API Gateway request id as
        the correlation id of every log line (from the ``x-amzn-request-context`` header
        the adapter adds), the Lambda request id and function in the logs (from
        ``x-amzn-lambda-context``), a trace subsegment under the invocation's trace
        (``x-amzn-trace-id``), ``Invocations`` and ``ServerErrors`` flushed as EMF when
        the response ends, and the idle drain after it. A non-HTTP event the adapter
        passes through (POST /events) is answered 400 ``unsupported_event``."""

        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            if scope.get("type") != "http":
                await app(scope, receive, send)
                return
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
            }
            request_context = _json_header(headers.get("x-amzn-request-context"))
            lambda_context = _json_header(headers.get("x-amzn-lambda-context"))
            self.logger.set_correlation_id(request_context.get("requestId"))
            self.logger.append_keys(
                function_request_id=lambda_context.get("request_id"),
                function_arn=lambda_context.get("invoked_function_arn"),
            )
            trace = headers.get("x-amzn-trace-id")
            if trace:
                os.environ["_X_AMZN_TRACE_ID"] = trace  # what X-Ray's Lambda context reads
            status = 500
            started = False

            async def sending(message: Message) -> None:
                nonlocal status, started
                if message["type"] == "http.response.start":
                    status, started = int(message["status"]), True
                await send(message)

            self.metrics.add_metric(name="Invocations", unit=MetricUnit.Count, value=1)
            try:
                if scope.get("method") == "POST" and scope.get("path") == PASS_THROUGH_PATH:
                    await _answer_unsupported(self, receive, sending)
                    return
                async with self.tracer.provider.in_subsegment_async(
                    f"## {scope.get('method')} {scope.get('path')}"
                ):
                    await app(scope, receive, sending)
            finally:
                if status >= 500 or not started:
                    self.metrics.add_metric(name="ServerErrors", unit=MetricUnit.Count, value=1)
                self.metrics.flush_metrics()
                self.logger.set_correlation_id(None)
                self.logger.remove_keys(["function_request_id", "function_arn"])
                if self.idle is not None:
                    deadline = lambda_context.get("deadline")
                    remaining = int(deadline - time.time() * 1000) if deadline else None
                    self.idle(remaining)

        return wrapped

    def usage_metrics(self) -> None:
        """Emit each gateway request's business metrics as EMF, from the billing line the
        gateway logs when a request is settled ("gateway request" on memvault.gateway):
        InputTokens, OutputTokens, CostMicros, Rounds, RecalledNotes, MemoryToolCalls,
        with the API format and outcome as dimensions. No note content is in that line,
        nor in these metrics."""
        gateway = logging.getLogger("memvault.gateway")
        if not any(isinstance(h, _UsageMetrics) for h in gateway.handlers):
            gateway.addHandler(_UsageMetrics(self.service))


class _UsageMetrics(logging.Handler):
    FIELDS = (
        ("input_tokens", "InputTokens"),
        ("output_tokens", "OutputTokens"),
        ("cost_micros", "CostMicros"),
        ("rounds", "Rounds"),
        ("recalled_notes", "RecalledNotes"),
    )

    def __init__(self, service: str) -> None:
        super().__init__(level=logging.INFO)
        self.service = service

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage() != "gateway request":
            return
        try:
            metrics = EphemeralMetrics(namespace=NAMESPACE)
            metrics.add_dimension(name="service", value=self.service)
            metrics.add_dimension(name="api", value=str(getattr(record, "api", "unknown")))
            metrics.add_dimension(name="outcome", value=str(getattr(record, "outcome", "unknown")))
            for attr, name in self.FIELDS:
                metrics.add_metric(
                    name=name, unit=MetricUnit.Count, value=float(getattr(record, attr, 0) or 0)
                )
            calls = getattr(record, "memory_calls", None) or {}
            metrics.add_metric(
                name="MemoryToolCalls", unit=MetricUnit.Count, value=float(sum(calls.values()))
            )
            metrics.flush_metrics()
        except Exception:  # metrics must never break a request
            self.handleError(record)


# ---------------------------------------------------------------------- idempotency
# The POST routes whose retry would do the work twice (ADR 0032): an append appends
# again, a move answers 404 for the note it moved, a balance change is applied again, an
# import is run again, a memory item is added again. PUT and DELETE are idempotent by
# nature; POST /v1/keys is left out on purpose (its answer holds the new key's secret,
# shown once, which a stored answer would keep in the table); sign-in and invitation
# acceptance set cookies, which a replayed answer must never hand out.
IDEMPOTENT_ROUTES = (
    re.compile(r"^/v1/notes/.+/append$"),
    re.compile(r"^/v1/notes/.+/move$"),
    re.compile(r"^/v1/balance$"),
    re.compile(r"^/v1/import$"),
    re.compile(r"^/v1/memories/[^/]+/items$"),
)
IDEMPOTENCY_HEADER = "idempotency-key"
IDEMPOTENCY_KEY_MAX = 255


class _NotKept(Exception):
    """An answer that is not stored (not a 2xx): the record is dropped, a retry runs."""

    def __init__(self, response: dict[str, Any]) -> None:
        super().__init__("not kept")
        self.response = response


class Idempotency:
    """Powertools Idempotency for the POST routes a client may retry (ADR 0032).

    A request to one of ``IDEMPOTENT_ROUTES`` that carries an ``Idempotency-Key`` header
    runs once per key, caller and route: a retry within ``expires_after_seconds`` gets
    the first answer again (with ``Idempotent-Replayed: true``) without running; a retry
    while the first still runs gets 409 ``request_in_progress`` with Retry-After; the same
    key with another body gets 409 ``idempotency_key_reused``. Only 2xx answers are kept:
    a refused request can be retried as it is. The records live in their own DynamoDB
    table (the persistence layer's ``id`` key, TTL on ``expires_at``); the key is a hash
    of the header, the caller's credential (a digest of it: two callers never share a
    record) and the route, and the body is checked by its digest."""

    def __init__(
        self, table: str, *, expires_after_seconds: int = 3600, client: Any | None = None
    ) -> None:
        from aws_lambda_powertools.utilities.idempotency import (
            DynamoDBPersistenceLayer,
            IdempotencyConfig,
            idempotent_function,
        )

        self.config = IdempotencyConfig(
            event_key_jmespath="[key, caller, method, path]",
            payload_validation_jmespath="body",
            expires_after_seconds=expires_after_seconds,
            raise_on_no_idempotency_key=True,
        )
        self.persistence = DynamoDBPersistenceLayer(
            table_name=table, expiry_attr="expires_at", boto3_client=client
        )
        self._once = idempotent_function(
            data_keyword_argument="request",
            persistence_store=self.persistence,
            config=self.config,
        )(self._run)
        self._respond: Handler | None = None
        self._ran = False
        self._event: dict[str, Any] | None = None
        self._context: LambdaContext | None = None

    def _run(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self._respond is not None and self._event is not None
        self._ran = True
        response = self._respond(self._event, self._context)  # type: ignore[arg-type]
        if not 200 <= int(response.get("statusCode", 500)) < 300:
            raise _NotKept(response)
        return response

    def wrap(self, respond: Handler) -> Handler:
        """``respond`` with the idempotency of the retried POST routes."""

        def once(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
            request = _idempotency_request(event)
            if request is None:
                return respond(event, context)
            if "error" in request:
                return error_response(request["error"])
            from aws_lambda_powertools.utilities.idempotency.exceptions import (
                IdempotencyAlreadyInProgressError,
                IdempotencyValidationError,
            )

            self.config.register_lambda_context(context)
            self._respond, self._event, self._context = respond, event, context
            self._ran = False
            try:
                answer = dict(self._once(request=request))
            except _NotKept as kept:
                return kept.response
            except IdempotencyAlreadyInProgressError:
                return error_response(
                    errors.Conflict(
                        "a request with this Idempotency-Key is still running; retry in a"
                        " second to get its answer",
                        code="request_in_progress",
                    ),
                    {"retry-after": "1"},
                )
            except IdempotencyValidationError:
                return error_response(
                    errors.Conflict(
                        "this Idempotency-Key was used with another request body; use a new"
                        " key for a new request",
                        code="idempotency_key_reused",
                    )
                )
            finally:
                ran, self._ran = self._ran, False
                self._respond = self._event = self._context = None
            if not ran:
                headers = dict(answer.get("headers") or {})
                headers["idempotent-replayed"] = "true"
                answer["headers"] = headers
            return answer

        return once


def _header(event: dict[str, Any], name: str) -> str | None:
    for key, value in (event.get("headers") or {}).items():
        if key.lower() == name and isinstance(value, str):
            return value
    return None


def _idempotency_request(event: dict[str, Any]) -> dict[str, Any] | None:
    """What identifies a retried request (None: the request is not covered), or
    {"error": ...} for a malformed key."""
    if event.get("httpMethod") != "POST":
        return None
    path = str(event.get("path") or "")
    if not any(route.match(path) for route in IDEMPOTENT_ROUTES):
        return None
    key = _header(event, IDEMPOTENCY_HEADER)
    if key is None:
        return None
    key = key.strip()
    if not key or len(key) > IDEMPOTENCY_KEY_MAX or not key.isprintable():
        return {
            "error": errors.InvalidInput(
                f"the Idempotency-Key header must be 1 to {IDEMPOTENCY_KEY_MAX} printable"
                " characters",
                code="invalid_idempotency_key",
            )
        }
    credential = _header(event, "authorization") or _session_cookie(event)
    if not credential:
        return None  # refused by the app anyway; nothing to keep
    body = event.get("body") or ""
    return {
        "key": key,
        "caller": hashlib.sha256(credential.encode()).hexdigest(),
        "method": "POST",
        "path": path,
        "body": hashlib.sha256(str(body).encode()).hexdigest(),
    }


def _session_cookie(event: dict[str, Any]) -> str | None:
    cookie = _header(event, "cookie")
    if not cookie:
        return None
    for part in cookie.split(";"):
        name, _, value = part.strip().partition("=")
        if name == "memvault_session":
            return value
    return None


async def _answer_unsupported(powertools: Powertools, receive: Receive, send: Send) -> None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    try:
        event: object = json.loads(body or b"null")
    except ValueError:
        event = body
    powertools.metrics.add_metric(name="UnsupportedEvents", unit=MetricUnit.Count, value=1)
    powertools.logger.warning("unsupported event", extra={"event_kind": describe_event(event)})
    response = unsupported_event_response(powertools.service, event)
    await send(
        {
            "type": "http.response.start",
            "status": response["statusCode"],
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": response["body"].encode()})


def _json_header(value: str | None) -> dict[str, Any]:
    if not value:
        return {}
    try:
        parsed = json.loads(value)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _remaining_ms(context: object) -> int | None:
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    try:
        return int(remaining()) if callable(remaining) else None
    except Exception:
        return None
