"""One gateway request, end to end: plan, reserve, dispatch, tool rounds, settle, record.

The API format (``formats``) reads and writes the JSON; ``planning`` decides what memory
the request gets; ``rounds`` decides which tool calls run; this module drives them and
keeps the money right: whatever happens after the reservation (an answer, an upstream
failure, a client that hangs up mid-stream), the hold is settled at what was actually
used and one usage record is written, without note content.
"""

from __future__ import annotations

import asyncio
import logging
import math
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from starlette.background import BackgroundTask
from starlette.responses import JSONResponse, Response, StreamingResponse

from memvault import spans
from memvault.container import Services
from memvault.domain.models import ApiKey, Reservation, UsageRecord
from memvault.domain.pricing import ModelPrice, cost_micros, reservation_micros
from memvault.errors import MemvaultError, UpstreamFailed, status_for
from memvault.gateway.formats.base import ApiFormat, Json, MalformedResponse, Turn, Usage
from memvault.gateway.planning import (
    RESERVATION_REACHED,
    ROUNDS_RAN_OUT,
    Plan,
    injected_tokens,
    plan_request,
)
from memvault.gateway.rounds import RoundState, check_ceiling, run_calls, writes_only
from memvault.gateway.sse import MalformedStream, encode_comment, parse_events
from memvault.gateway.upstream import ClientError, Timer, UpstreamClient
from memvault.gateway.wire import parse_object
from memvault.gateway.worker import GatewayWorker
from memvault.services.billing import BillingService
from memvault.services.recall import RecallService
from memvault.tokens import estimate_request_tokens
from memvault.tools import MAX_TOOL_ROUNDS

log = logging.getLogger("memvault.gateway")

NOTICE_HEADER = "x-token-notice"
RECALLED_HEADER = "x-memory-recalled"
OVERHEAD_HEADER = "x-gateway-overhead-ms"


@dataclass(slots=True)
class Exchange:
    """The state of one request once it is planned and its money is held."""

    api: ApiFormat
    key: ApiKey
    plan: Plan
    price: ModelPrice
    reservation: Reservation
    reserved_micros: int
    output_allowance: int
    client_headers: dict[str, str]
    timer: Timer
    rounds: RoundState
    started_at: float = 0.0  # the billing clock's time, for the usage record's day
    usage: Usage = field(default_factory=Usage)
    status: int = 200
    outcome: str = "ok"
    closed: bool = False

    @property
    def model(self) -> str:
        return str(self.plan.body.get("model", ""))

    def headers(self) -> dict[str, str]:
        spans.mark(spans.HEADERS)
        headers = {
            RECALLED_HEADER: str(self.plan.recalled),
            OVERHEAD_HEADER: f"{self.timer.overhead_ms():.2f}",
        }
        if self.plan.notices:
            headers[NOTICE_HEADER] = "; ".join(self.plan.notices)
        return headers

    def next_round_fits(self, next_body: Json) -> bool:
        """Would one more send stay inside what was reserved?"""
        spent = cost_micros(self.price, self.usage.input_tokens, self.usage.output_tokens)
        output_left = max(0, self.output_allowance - self.usage.output_tokens)
        next_cost = cost_micros(self.price, prompt_tokens(self.api, next_body), output_left)
        return spent + next_cost <= self.reserved_micros


class Gateway:
    """The inference gateway for one process: services, recall and the upstream client."""

    def __init__(self, services: Services, upstream: UpstreamClient | None = None) -> None:
        self.services = services
        self.upstream = upstream or UpstreamClient(services.settings)
        self.recaller = RecallService(services.vault)
        self.worker = GatewayWorker()

    # ------------------------------------------------------------------ entry
    async def handle(
        self,
        api: ApiFormat,
        authenticate: Callable[[], ApiKey],
        raw_body: bytes,
        headers: dict[str, str],
        timer: Timer | None = None,
    ) -> Response:
        """Check the key (``authenticate``, which raises for a bad one), then parse the
        body and plan the request, all in one trip to a worker thread: each trip costs
        the event loop a wake-up, a few hundred microseconds on a busy machine. The key
        is checked before the body is parsed, so a request with a bad key and a bad body
        is told about the key. ``timer`` starts when the request arrives, so the overhead
        header counts the key check and body parsing too."""
        timer = timer or Timer()
        exchange = await self.worker.run(self._prepare, api, authenticate, raw_body, headers, timer)
        if exchange.plan.body.get("stream") is True:
            return await self._stream(exchange)
        try:
            response = await self._complete(exchange)
        except BaseException as exc:
            exchange.status, exchange.outcome = _failure_status(exc)
            await self._close(exchange)
            raise
        # Settling and the usage record happen once the answer is sent: the client does
        # not wait for the bookkeeping.
        response.background = BackgroundTask(self._close, exchange)
        return response

    async def aclose(self) -> None:
        """Close the upstream client and let the worker thread end; both start again on
        next use (Mangum runs the app's lifespan around every invocation)."""
        await self.upstream.aclose()
        self.worker.close()

    async def models(self, api: ApiFormat, headers: dict[str, str]) -> Response:
        answer = await self.upstream.models(api, headers)
        if isinstance(answer, ClientError):
            return Response(answer.body, status_code=answer.status, media_type=answer.content_type)
        return Response(answer.raw, media_type="application/json")

    def _prepare(
        self,
        api: ApiFormat,
        authenticate: Callable[[], ApiKey],
        raw_body: bytes,
        headers: dict[str, str],
        timer: Timer,
    ) -> Exchange:
        key = authenticate()
        body = parse_object(raw_body)
        api.validate(body)
        plan = plan_request(self.services, self.recaller, api, key, body, headers)
        billing = self.services.billing
        price = billing.price(str(body["model"]))
        allowance = api.output_allowance(body, self.services.settings.default_output_allowance)
        sends = MAX_TOOL_ROUNDS + 1 if plan.tools_on else 1
        # The client's request plus what memvault added (counted when it was built), so the
        # recall block is not tokenized twice.
        prompt = math.ceil(
            (estimate_request_tokens(body) + injected_tokens(plan)) * api.token_margin
        )
        amount = reservation_micros(price, prompt, allowance, sends)
        reservation = billing.reserve(key, amount)
        return Exchange(
            api=api,
            key=key,
            plan=plan,
            price=price,
            reservation=reservation,
            reserved_micros=amount,
            output_allowance=allowance,
            client_headers=headers,
            timer=timer,
            rounds=RoundState(plan.caller),
            started_at=billing.clock(),
        )

    # ------------------------------------------------------------------ whole answers
    async def _complete(self, ex: Exchange) -> Response:
        body = ex.plan.body
        turns: list[Turn] = []
        while True:
            spans.mark(spans.UPSTREAM_CALL)
            answer = await self.upstream.complete(ex.api, body, ex.client_headers, ex.timer)
            spans.mark(spans.UPSTREAM_ANSWER)
            if isinstance(answer, ClientError):
                ex.status, ex.outcome = answer.status, "upstream_refused"
                return Response(
                    answer.body,
                    status_code=answer.status,
                    media_type=answer.content_type,
                    headers=ex.headers(),
                )
            try:
                turn = ex.api.parse_response(answer.payload)
            except MalformedResponse as exc:
                raise UpstreamFailed(
                    f"the model provider's answer is malformed: {exc}", code="upstream_malformed"
                ) from exc
            if not ex.plan.tools_on:
                # Nothing to change: the provider's bytes go to the client as they came.
                ex.usage = turn.usage
                return Response(answer.raw, media_type="application/json", headers=ex.headers())
            ex.usage.add(turn.usage)
            turns.append(turn)
            next_body = await self._after_turn(ex, body, turn)
            if next_body is None:
                break
            body = next_body
        return JSONResponse(ex.api.final_response(turns, ex.usage), headers=ex.headers())

    async def _after_turn(self, ex: Exchange, body: Json, turn: Turn) -> Json | None:
        """Run the turn's memory calls; the next round's body, or None when the answer is done."""
        memory = turn.memory_calls
        if not memory:
            return None
        check_ceiling(turn)
        if turn.client_calls or not ex.rounds.rounds_left:
            if not turn.client_calls:
                ex.plan.notices.append(ROUNDS_RAN_OUT)
            await self.worker.run(
                run_calls, self.services, ex.rounds, writes_only(memory, ex.rounds)
            )
            return None
        outcomes = await self.worker.run(run_calls, self.services, ex.rounds, memory)
        ex.rounds.rounds += 1
        next_body = ex.api.continued(body, turn, outcomes)
        if not ex.next_round_fits(next_body):
            ex.plan.notices.append(RESERVATION_REACHED)
            return None
        return next_body

    # ------------------------------------------------------------------ streams
    async def _stream(self, ex: Exchange) -> Response:
        body, client_wants_usage = ex.api.prepare_stream(ex.plan.body)
        opened = self.upstream.stream(ex.api, body, ex.client_headers, ex.timer)
        try:
            first = await opened.__aenter__()
        except BaseException as exc:
            ex.status, ex.outcome = _failure_status(exc)
            await self._close(ex)
            raise
        if isinstance(first, ClientError):
            ex.status, ex.outcome = first.status, "upstream_refused"
            await opened.__aexit__(None, None, None)
            await self._close(ex)
            return Response(
                first.body,
                status_code=first.status,
                media_type=first.content_type,
                headers=ex.headers(),
            )
        events = self._events(ex, body, client_wants_usage, opened, first)
        return StreamingResponse(
            events,
            media_type="text/event-stream",
            headers={**ex.headers(), "cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    async def _events(
        self,
        ex: Exchange,
        body: Json,
        client_wants_usage: bool,
        opened: Any,
        first: AsyncIterator[bytes],
    ) -> AsyncIterator[bytes]:
        notices_sent = len(ex.plan.notices)
        translator = ex.api.translator(client_wants_usage=client_wants_usage)
        tools: asyncio.Task[Json | None] | None = None
        round_open = False
        try:
            chunks = first
            while True:
                if not ex.plan.tools_on:
                    ended = False
                    async for event in parse_events(chunks):
                        ended = ended or ex.api.ends_stream(event)
                        data = ex.api.passthrough_event(
                            event, ex.usage, client_wants_usage=client_wants_usage
                        )
                        if data is not None:
                            yield data
                    if not ended:
                        raise MalformedStream("the upstream stream ended before its last event")
                    break
                translator.begin_round()
                round_open = True
                async for event in parse_events(chunks):
                    for data in translator.feed(event):
                        yield data
                turn = translator.end_round()
                round_open = False
                ex.usage.add(turn.usage)
                await opened.__aexit__(None, None, None)
                opened = None
                tools = asyncio.ensure_future(self._after_turn(ex, body, turn))
                if turn.memory_calls:
                    # Keep-alive comments while the tools run: the client's connection
                    # (and any proxy's idle timer) never sees a silent gap.
                    interval = self.services.settings.stream_keepalive_seconds
                    yield encode_comment("memory tools running")
                    while not (await asyncio.wait({tools}, timeout=interval))[0]:
                        yield encode_comment("memory tools running")
                next_body = await tools
                tools = None
                if next_body is None:
                    # Notices that arose in the rounds: the headers are long gone, so they
                    # travel as an SSE comment, ahead of the last events (clients stop
                    # reading at those).
                    for notice in ex.plan.notices[notices_sent:]:
                        yield encode_comment(f"{NOTICE_HEADER}: {notice}")
                    for data in translator.finish(ex.usage, dropped_memory_calls=False):
                        yield data
                    break
                body = next_body
                opened = self.upstream.stream(ex.api, body, ex.client_headers, ex.timer)
                opened_stream = await opened.__aenter__()
                if isinstance(opened_stream, ClientError):
                    raise UpstreamFailed(
                        "the model provider refused a memory tool round"
                        f" (HTTP {opened_stream.status})",
                        code="upstream_refused_round",
                    )
                chunks = opened_stream
        except (MemvaultError, MalformedStream) as exc:
            error = exc if isinstance(exc, MemvaultError) else _malformed(exc)
            ex.status, ex.outcome = _failure_status(error)
            if ex.plan.tools_on:
                yield translator.error(error)
            else:
                yield ex.api.stream_error(error.type, error.code, error.message)
        except BaseException as exc:
            ex.status, ex.outcome = _failure_status(exc)
            raise
        finally:
            with anyio.CancelScope(shield=True):
                if round_open:
                    ex.usage.add(translator.turn_usage())
                if tools is not None:
                    # Tools run in a thread and cannot be stopped half-way: wait for them
                    # so the record counts what ran.
                    await asyncio.wait({tools})
                if opened is not None:
                    await opened.__aexit__(None, None, None)
                await self._close(ex)

    # ------------------------------------------------------------------ settling
    async def _close(self, ex: Exchange) -> None:
        if ex.closed:
            return
        ex.closed = True
        cost = cost_micros(ex.price, ex.usage.input_tokens, ex.usage.output_tokens)
        record = UsageRecord(
            id=uuid.uuid4().hex,
            account_id=ex.key.account_id,
            key_id=ex.key.id,
            model=ex.model,
            api_format=ex.api.name,
            input_tokens=ex.usage.input_tokens,
            output_tokens=ex.usage.output_tokens,
            rounds=ex.rounds.rounds,
            memory_calls=dict(ex.rounds.calls_by_tool),
            recalled_notes=ex.plan.recalled,
            injected_tokens=injected_tokens(ex.plan),
            cost_micros=cost,
            status=ex.status,
            outcome=ex.outcome,
            started_at=ex.started_at,
            duration_ms=round(ex.timer.elapsed_ms()),
            overhead_ms=round(ex.timer.overhead_ms()),
        )
        billing = self.services.billing
        await self.worker.run(_settle_and_record, billing, ex.reservation, cost, record)
        log.info(
            "gateway request",
            extra={
                "account_id": record.account_id,
                "key_id": record.key_id,
                "api": record.api_format,
                "model": record.model,
                "status": record.status,
                "outcome": record.outcome,
                "rounds": record.rounds,
                "memory_calls": record.memory_calls,
                "recalled_notes": record.recalled_notes,
                "input_tokens": record.input_tokens,
                "output_tokens": record.output_tokens,
                "cost_micros": record.cost_micros,
                "overhead_ms": record.overhead_ms,
                "notices": len(ex.plan.notices),
            },
        )


def prompt_tokens(api: ApiFormat, body: Json) -> int:
    """The prompt's tokens as the provider will likely count them (see ``token_margin``)."""
    return math.ceil(estimate_request_tokens(body) * api.token_margin)


def _settle_and_record(
    billing: BillingService, reservation: Reservation, cost: int, record: UsageRecord
) -> None:
    try:
        billing.settle(reservation, cost)
    finally:
        billing.record_usage(record)


def _malformed(exc: MalformedStream) -> UpstreamFailed:
    return UpstreamFailed(
        f"the model provider's stream is malformed: {exc}", code="upstream_malformed"
    )


def _failure_status(exc: BaseException) -> tuple[int, str]:
    if isinstance(exc, MemvaultError):
        return status_for(exc), exc.code
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return 499, "client_disconnected"
    return 500, "internal_error"
