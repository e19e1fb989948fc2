"""The ops function's work (functions/ops): upkeep on a schedule, the search index at
deploy time, and the operator's commands (ADR 0031).

One function, the only one whose role may create the search index, takes three kinds
of event:

- **the upkeep schedule** (EventBridge, every five minutes by default), parsed with
  Powertools' ``event_parser`` model: the index is made if it is missing (once per warm
  process), every account's search outbox is drained, expired holds are settled, and
  the queue's age is published as the ``SearchQueueAgeSeconds`` EMF metric (0 when every
  outbox is empty) for the alarm;
- **the ``SearchIndex`` custom resource** (CloudFormation, at deploy time): the index is
  created, or upgraded in place, before the stack is complete. An unreachable domain
  never fails a deploy: the resource reports success with ``Created: "false"`` and the
  next upkeep run makes the index;
- **an operator's command** (``aws lambda invoke --payload``), the deployed twin of the
  CLI's storage commands, which a deployer's shell cannot run against a domain only the
  functions may reach: ``{"action": "init-search"}``, ``{"action": "reindex",
  "account": "<id>"}`` (or ``"all": true``: every organisation, as far as the time
  allows, then the ones left are named), ``{"action": "drain"}``.

Any other event is refused with ``UnsupportedEvent``, which names what it was.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.request
from collections.abc import Callable
from typing import Any, Literal

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.parser import parse
from aws_lambda_powertools.utilities.parser.models import (
    CloudFormationCustomResourceBaseModel,
    EventBridgeModel,
)
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, ValidationError

from memvault.adapters.aws.lazy import EnsureOnce
from memvault.container import Services
from memvault.lambda_boot import ensure_search_index
from memvault.lambda_powertools import Powertools, UnsupportedEvent, describe_event
from memvault.services.upkeep import Upkeep

log = logging.getLogger("memvault.ops")

# The upkeep and reindex loops stop starting work this close to the function's timeout.
RESERVE_MS = 15_000


class OpsCommand(BaseModel):
    """A direct invocation by an operator."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["init-search", "reindex", "drain"]
    account: str | None = None
    all: bool = False


class UpkeepFailed(RuntimeError):
    """Expired holds could not be settled: the run counts as failed (retried, alarmed)."""


class Ops:
    def __init__(
        self, services: Services, powertools: Powertools, clock: Callable[[], float] = time.time
    ) -> None:
        self.services = services
        self.powertools = powertools
        self.upkeep = Upkeep(
            services.vault.indexing,
            services.billing,
            services.store,
            clock,
            jobs=services.jobs.resume,  # jobs whose worker died (ADR 0041)
        )
        self.index_ready = EnsureOnce(lambda: ensure_search_index(services.settings))

    def handle(self, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        if not isinstance(event, dict):
            raise UnsupportedEvent(f"the ops function cannot serve {describe_event(event)}")
        try:
            if "RequestType" in event:
                request = parse(event=event, model=CloudFormationCustomResourceBaseModel)
                return self.custom_resource(request, context)
            if "detail-type" in event:
                schedule = parse(event=event, model=EventBridgeModel)
                if schedule.detail_type != "Scheduled Event":
                    raise UnsupportedEvent(f"the ops function cannot serve {describe_event(event)}")
                return self.scheduled(schedule, context)
            if "action" in event:
                return self.command(parse(event=event, model=OpsCommand), context)
        except ValidationError as exc:
            raise UnsupportedEvent(
                f"the ops function cannot serve this {describe_event(event)}: {exc}"
            ) from exc
        raise UnsupportedEvent(
            f"the ops function serves its schedule, the SearchIndex custom resource and"
            f" commands such as {{'action': 'init-search'}}; it was invoked with"
            f" {describe_event(event)}"
        )

    # ------------------------------------------------------------------ schedule
    def scheduled(self, event: EventBridgeModel, context: LambdaContext) -> dict[str, Any]:
        index_error: str | None = None
        try:
            self.index_ready()
        except Exception as exc:  # the drain will fail too; holds are still settled
            index_error = f"{type(exc).__name__}: {exc}"
            log.warning("search index could not be ensured", exc_info=True)
        return self._upkeep(context, {"event": event.id, "index_error": index_error})

    def _upkeep(self, context: LambdaContext, extra: dict[str, Any]) -> dict[str, Any]:
        report = self.upkeep.run(stop=_stopper(context))
        metrics = self.powertools.metrics
        for name, count in report.counts.items():
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=count)
        metrics.add_metric(
            name="SearchQueueAgeSeconds",
            unit=MetricUnit.Seconds,
            value=report.queue_age_seconds or 0.0,
        )
        metrics.add_metric(name="UpkeepErrors", unit=MetricUnit.Count, value=len(report.errors))
        out = {
            "counts": report.counts,
            "errors": report.errors,
            "queue_age_seconds": report.queue_age_seconds,
        }
        self.powertools.logger.info("upkeep run", extra={**out, **extra})
        if "holds_released" in report.errors:
            raise UpkeepFailed(f"expired holds could not be settled: {report.errors}")
        return out

    # ------------------------------------------------------------------ commands
    def command(self, command: OpsCommand, context: LambdaContext) -> dict[str, Any]:
        if command.action == "init-search":
            created = ensure_search_index(self.services.settings)
            self.index_ready()  # cached for the upkeep runs of this warm process
            index = self.services.settings.opensearch_index
            return {"index": index, "created": created}
        if command.action == "drain":
            return self._upkeep(context, {"command": "drain"})
        return self.reindex(command, context)

    def reindex(self, command: OpsCommand, context: LambdaContext) -> dict[str, Any]:
        if command.all == (command.account is not None):
            raise UnsupportedEvent('reindex takes "account": "<id>" or "all": true (one of them)')
        store = self.services.store
        if command.account is not None:
            if store.get_account(command.account) is None:
                raise UnsupportedEvent(f"no organisation {command.account!r} on this stack")
            accounts = [command.account]
        else:
            accounts = [a.id for a in store.list_organisations()]
        stop = _stopper(context)
        done: dict[str, int] = {}
        for account in accounts:
            if stop():
                break
            done[account] = self.services.vault.reindex(account)
        left = [a for a in accounts if a not in done]
        self.powertools.metrics.add_metric(
            name="NotesReindexed", unit=MetricUnit.Count, value=sum(done.values())
        )
        return {"reindexed": done, "left": left}

    # ------------------------------------------------------------------ deploy time
    def custom_resource(
        self, request: CloudFormationCustomResourceBaseModel, context: LambdaContext
    ) -> dict[str, Any]:
        index = self.services.settings.opensearch_index
        data: dict[str, str] = {"Index": index}
        if request.request_type in ("Create", "Update"):
            try:
                data["Created"] = str(ensure_search_index(self.services.settings)).lower()
            except Exception as exc:
                # A search outage must not fail (and roll back) a deploy: the upkeep
                # schedule makes the index within minutes.
                log.warning("search index not made at deploy time", exc_info=True)
                data["Created"] = "false"
                data["Error"] = f"{type(exc).__name__}: {exc}"[:500]
        body = {
            "Status": "SUCCESS",
            "Reason": f"see CloudWatch log stream {getattr(context, 'log_stream_name', '?')}",
            "PhysicalResourceId": f"memvault-search-index-{index}",
            "StackId": request.stack_id,
            "RequestId": request.request_id,
            "LogicalResourceId": request.logical_resource_id,
            "Data": data,
        }
        _put_response(str(request.response_url), body)
        return body


def _stopper(context: LambdaContext) -> Callable[[], bool]:
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if not callable(remaining):
        return lambda: False
    return lambda: int(remaining()) < RESERVE_MS


def _put_response(url: str, body: dict[str, Any]) -> None:
    """Send a custom resource's outcome to CloudFormation (its presigned S3 URL)."""
    data = json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method="PUT", headers={"content-type": "", "content-length": str(len(data))}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()
