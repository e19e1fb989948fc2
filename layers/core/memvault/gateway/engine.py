"""One gateway request, end to end: plan, reserve, dispatch, tool rounds, settle, record.

The API format (``formats``) reads and writes the JSON; ``planning`` decides what memory
the request gets; ``rounds`` decides which tool calls run and what the next round may
cost; this module drives them and keeps the money right: whatever happens after the
reservation (an answer, an upstream failure, a client that hangs up mid-stream), the
hold is settled at what was actually used and one usage record is written, without note
content. A stream is billed what its provider reported; one that ended before its usage
did is billed the prompt as counted at the reservation and the output memvault had
received (read or still buffered), and its record says ``estimated``.

Errors a request meets here are answered in the format's own shape (``api.error_body``),
with the provider's relayed headers (retry-after, request ids, rate limits) where the
provider answered; a failure nobody foresaw is a 500 in that shape too, never a trace.
"""

from __future__ import annotations

import asyncio
import logging
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import anyio
from starlette.background import BackgroundTask
from starlette.responses import JSONResponse, Response, StreamingResponse

from memvault import spans
from memvault.container import Services
from memvault.domain.models import ApiKey, Reservation, UsageRecord
from memvault.domain.pricing import MAX_MICROS, ModelPrice, cost_micros, reservation_micros
from memvault.domain.response_cache import CACHE_HEADER, CachedAnswer, CacheOutcome
from memvault.errors import MemvaultError, UpstreamFailed, status_for
from memvault.gateway import caching, chains
from memvault.gateway.caching import CacheStep
from memvault.gateway.formats.base import (
    ApiFormat,
    Json,
    MalformedResponse,
    StreamMeter,
    ToolCall,
    ToolOutcome,
    Turn,
    Usage,
    estimated_output,
    output_text,
)
from memvault.gateway.planning import (
    RESERVATION_REACHED,
    ROUNDS_RAN_OUT,
    Plan,
    injected_tokens,
    plan_request,
)
from memvault.gateway.profiles import (
    APPLIED_HEADER,
    MEM_ID_HEADER,
    ProfileStep,
    attach_profiles,
    requested_slugs,
)
from memvault.gateway.rounds import (
    RoundState,
    check_round,
    fit_outcomes,
    next_prompt_base,
    plan_round,
    planned_usage,
    reserved_prompt_tokens,
    result_tokens,
    run_calls,
    with_final_note,
    writes_only,
)
from memvault.gateway.sse import MalformedStream, SseParser, encode_comment, parse_events
from memvault.gateway.upstream import ClientError, Timer, UpstreamClient, UpstreamStream
from memvault.gateway.wire import parse_object
from memvault.gateway.worker import GatewayWorker
from memvault.services.billing import BillingService
from memvault.services.recall import RecallService
from memvault.tokens import estimate_request_tokens
from memvault.tools import MAX_TOOL_ROUNDS, ToolResult

log = logging.getLogger("memvault.gateway")

NOTICE_HEADER = "x-token-notice"
# What a memory read dropped from a turn that does not continue is answered, where the
# stored conversation needs an output for every call (Responses with store, ADR 0045).
DROPPED_READ_OUTPUT = (
    "[memory: not run: this read came in a turn that ended the answer, so its result could"
    " not be used]"
)
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
    # The prompt of the send in flight as memvault counts it: the reservation's count for
    # the first, the planned size for each round's (a stream cut short is billed it).
    prompt_tokens: int
    started_at: float = 0.0  # the billing clock's time, for the usage record's day
    usage: Usage = field(default_factory=Usage)
    estimated: bool = False  # some of the usage is memvault's count, not upstream's
    # What the rounds are planned on: each send's usage as memvault counts it, or as the
    # provider reported it when that is more (gateway.rounds.planned_usage, ADR 0023).
    planned: Usage = field(default_factory=Usage)
    upstream_headers: dict[str, str] = field(default_factory=dict)  # relayed to the client
    status: int = 200
    outcome: str = "ok"
    closed: bool = False
    profile: ProfileStep | None = None  # what x-mem-id attached (None: no header)
    cache: CacheStep | None = None  # the response cache (None: not asked for)
    # A cache miss's answer as sent (whole, or the stream's chunks so far), kept by
    # _close when the request ended well.
    cache_sent: list[bytes] = field(default_factory=list)
    cache_type: str = "application/json"
    # The last turn's memory calls that no round answered upstream (a mixed turn, rounds
    # that ran out): what each was answered, owed to a stored conversation (ADR 0045).
    owed: list[ToolOutcome] = field(default_factory=list)
    # The response id the client continued, when the gateway sent another one upstream
    # (a chain link): what the client is shown as the response continued.
    continuing: str | None = None

    @property
    def model(self) -> str:
        return str(self.plan.body.get("model", ""))

    def headers(self) -> dict[str, str]:
        spans.mark(spans.HEADERS)
        headers = {
            **self.upstream_headers,
            RECALLED_HEADER: str(self.plan.recalled),
            OVERHEAD_HEADER: f"{self.timer.overhead_ms():.2f}",
        }
        if self.plan.notices:
            headers[NOTICE_HEADER] = "; ".join(self.plan.notices)
        if self.profile is not None:  # always, when x-mem-id was sent (even empty)
            headers[APPLIED_HEADER] = self.profile.applied_header
        if self.cache is not None:
            headers[CACHE_HEADER] = self.cache.outcome.value
        return headers

    @property
    def memory_attached(self) -> bool:
        """Recall injected notes, memory tools are offered, or x-mem-id was sent: the
        same text can mean another prompt as memory changes (no response cache)."""
        return self.plan.recalled > 0 or self.plan.tools_on or self.profile is not None

    @property
    def injected(self) -> int:
        """Tokens memvault added: recall, memory tools and the memory profile blocks."""
        return injected_tokens(self.plan) + (self.profile.tokens if self.profile else 0)

    def add_usage(self, usage: Usage, *, estimated: bool) -> None:
        self.usage.add(usage)
        self.estimated = self.estimated or estimated

    def room_tokens(self) -> int:
        """The prompt tokens the reservation still holds for every send to come: what
        was reserved, less what was spent and the output allowance not yet used."""
        spent = cost_micros(self.price, self.planned.input_tokens, self.planned.output_tokens)
        output_left = max(0, self.output_allowance - self.planned.output_tokens)
        left = self.reserved_micros - spent - cost_micros(self.price, 0, output_left)
        if self.price.input_per_million <= 0:
            return MAX_MICROS if left >= 0 else -1
        return math.floor(Decimal(left) / self.price.input_per_million)

    def notice(self, notice: str) -> None:
        if notice not in self.plan.notices:
            self.plan.notices.append(notice)


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
        try:
            exchange = await self.worker.run(
                self._prepare, api, authenticate, raw_body, headers, timer
            )
        except MemvaultError:
            raise
        except Exception as exc:
            raise _internal_error(exc) from exc
        if exchange.cache is not None and exchange.cache.hit is not None:
            return self._cached(exchange, exchange.cache.hit)
        if exchange.plan.body.get("stream") is True:
            response = await self._stream(exchange)
            if _caching_miss(exchange) and isinstance(response, StreamingResponse):
                exchange.cache_type = SSE
                response.body_iterator = caching.recording(
                    response.body_iterator, exchange.cache_sent
                )
            return response
        try:
            response = await self._complete(exchange)
        except BaseException as exc:
            exchange.status, exchange.outcome = _failure_status(exc)
            await self._close(exchange)
            if isinstance(exc, UpstreamFailed):
                return self._error_response(api, exc)
            if isinstance(exc, Exception) and not isinstance(exc, MemvaultError):
                raise _internal_error(exc) from exc
            raise
        # Settling and the usage record happen once the answer is sent: the client does
        # not wait for the bookkeeping.
        if _caching_miss(exchange) and response.status_code == 200:
            exchange.cache_sent.append(bytes(response.body))
        response.background = BackgroundTask(self._close, exchange)
        return response

    def _cached(self, ex: Exchange, answer: CachedAnswer) -> Response:
        """A cache hit: the answer as it was first sent, nothing sent upstream; the hold
        is released and the record says what was saved."""
        ex.outcome = "cache_hit"
        response = caching.replay(answer, ex.headers())
        response.background = BackgroundTask(self._close, ex)
        return response

    def _keep(self, ex: Exchange) -> None:
        """Store a miss's answer, once it came back whole and good (before the usage
        record, so a client that has seen its record finds the answer cached). Its TTL
        counts from when it was asked."""
        if not _caching_miss(ex) or ex.status != 200 or ex.outcome != "ok":
            return
        assert ex.cache is not None
        caching.store(
            self.services,
            ex.key,
            ex.cache,
            b"".join(ex.cache_sent),
            ex.cache_type,
            model=ex.model,
            input_tokens=ex.usage.input_tokens,
            output_tokens=ex.usage.output_tokens,
            cost_micros=cost_micros(ex.price, ex.usage.input_tokens, ex.usage.output_tokens),
            now=ex.started_at,
        )

    async def aclose(self) -> None:
        """Close the upstream client and let the worker thread end; both start again on
        next use (Mangum runs the app's lifespan around every invocation)."""
        await self.upstream.aclose()
        self.worker.close()

    async def models(self, api: ApiFormat, headers: dict[str, str]) -> Response:
        try:
            answer = await self.upstream.models(api, headers)
        except UpstreamFailed as exc:
            return self._error_response(api, exc)
        if isinstance(answer, ClientError):
            return Response(
                answer.body,
                status_code=answer.status,
                media_type=answer.content_type,
                headers=answer.headers,
            )
        return Response(answer.raw, media_type="application/json", headers=answer.headers)

    def _error_response(self, api: ApiFormat, exc: UpstreamFailed) -> Response:
        """A provider failure in the format's shape, with the provider's relayed headers
        (its retry-after above all) and never memvault's credential."""
        message = self.upstream.redact.text(exc.message)
        relayed = exc.details.get("headers")
        return JSONResponse(
            api.error_body(exc.type, exc.code, message),
            status_code=status_for(exc),
            headers=relayed if isinstance(relayed, dict) else None,
        )

    def _prepare(
        self,
        api: ApiFormat,
        authenticate: Callable[[], ApiKey],
        raw_body: bytes,
        headers: dict[str, str],
        timer: Timer,
    ) -> Exchange:
        try:
            exchange = self._assemble(api, authenticate, raw_body, headers, timer)
            exchange.cache = caching.decide(
                self.services,
                exchange.key,
                api.name,
                raw_body,
                headers,
                memory_attached=exchange.memory_attached,
                now=self.services.billing.clock(),
            )
            return exchange
        except MemvaultError as exc:
            # x-memory-applied is sent whenever x-mem-id was, refusals included: empty
            # when the request was refused before any memory was attached.
            if MEM_ID_HEADER in headers:
                exc.details.setdefault("response_headers", {APPLIED_HEADER: ""})
            raise

    def _assemble(
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
        # Continuing a response id the gateway linked: the last round's, outputs owed first.
        resumed = chains.resume(self.services, api, key, body, now=self.services.billing.clock())
        continuing = api.continues_from(body) if resumed is not body else None
        body = resumed
        slugs = requested_slugs(headers)  # more than 16: a 400 before anything is held
        plan = plan_request(self.services, self.recaller, api, key, body, headers)
        profile: ProfileStep | None = None
        if slugs is not None:
            plan.body, profile = attach_profiles(self.services, api, key, body, plan.body, slugs)
        billing = self.services.billing
        price = billing.price(str(body["model"]))
        allowance = api.output_allowance(body, self.services.settings.default_output_allowance)
        sends = MAX_TOOL_ROUNDS + 1 if plan.tools_on else 1
        # The client's request plus what memvault added (counted when it was built), so the
        # recall block is not tokenized twice.
        # Spend caps and the balance are checked on the request as assembled: memory
        # profiles attached can make a key near its cap be refused.
        added = injected_tokens(plan) + (profile.tokens if profile else 0)
        prompt = math.ceil((estimate_request_tokens(body) + added) * api.token_margin)
        # With the memory tools, the prompt five times and what the four rounds may add
        # (their results and the model's turns sent again: gateway.rounds, ADR 0023).
        held_prompt = reserved_prompt_tokens(prompt, allowance, sends)
        amount = reservation_micros(price, held_prompt, allowance, 1)
        try:
            reservation = billing.reserve(key, amount)  # past what a ledger holds: a 400
        except MemvaultError as exc:
            if profile is not None:  # a refusal still says which memories were attached
                exc.details["response_headers"] = {APPLIED_HEADER: profile.applied_header}
            raise
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
            prompt_tokens=prompt,
            started_at=billing.clock(),
            profile=profile,
            continuing=continuing,
        )

    # ------------------------------------------------------------------ whole answers
    async def _complete(self, ex: Exchange) -> Response:
        body = ex.plan.body
        turns: list[Turn] = []
        while True:
            spans.mark(spans.UPSTREAM_CALL)
            answer = await self.upstream.complete(ex.api, body, ex.client_headers, ex.timer)
            spans.mark(spans.UPSTREAM_ANSWER)
            ex.upstream_headers = answer.headers
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
            estimated = not turn.usage.reported
            if estimated:
                # A provider that says nothing of usage is billed memvault's count.
                output = estimated_output(output_text(turn), ex.api.token_margin)
                turn.usage = Usage(ex.prompt_tokens, output)
            if not ex.plan.tools_on:
                # Nothing to change: the provider's bytes go to the client as they came.
                ex.add_usage(turn.usage, estimated=estimated)
                if ex.continuing is not None and isinstance(answer.payload, dict):
                    shown = ex.api.shown_continuing(answer.payload, ex.continuing)
                    return JSONResponse(shown, headers=ex.headers())
                return Response(answer.raw, media_type="application/json", headers=ex.headers())
            ex.add_usage(turn.usage, estimated=estimated)
            turns.append(turn)
            next_body = await self._after_turn(ex, body, turn)
            if next_body is None:
                break
            body = next_body
        final = ex.api.final_response(turns, ex.usage)
        client_id = final.get("id")
        await self._link(ex, body, client_id if isinstance(client_id, str) else None, turns[-1])
        if ex.continuing is not None:
            final = ex.api.shown_continuing(final, ex.continuing)
        return JSONResponse(final, headers=ex.headers())

    async def _link(self, ex: Exchange, body: Json, client_id: str | None, last: Turn) -> None:
        """Before the client has its response id: link it to the last round when the
        provider cannot continue it as it is (ADR 0045; formats without stored
        conversations never link)."""
        now = self.services.billing.clock()
        link = ex.api.chain_link(body, client_id, last, ex.owed, now)
        if link is not None and client_id is not None:
            await self.worker.run(chains.remember, self.services, ex.key, client_id, link)

    async def _after_turn(self, ex: Exchange, body: Json, turn: Turn) -> Json | None:
        """Run the turn's memory calls; the next round's body, or None when the answer is done."""
        if not turn.memory_calls:
            return None
        return await self.worker.run(self._round, ex, body, turn)

    def _round(self, ex: Exchange, body: Json, turn: Turn) -> Json | None:
        """One round's blocking work (in the worker thread): check the whole round, plan
        the next send, run the calls, size their results, build the next body."""
        check_round(turn)  # nothing runs if any call is refused
        state, memory = ex.rounds, turn.memory_calls
        if turn.client_calls:
            self._last_calls(ex, memory)
            return None
        if state.withheld is not None or not state.rounds_left:
            # The model asked again after its last round (or for a tool it was not given).
            ex.notice(state.withheld or ROUNDS_RAN_OUT)
            self._last_calls(ex, memory)
            return None
        margin = ex.api.token_margin
        ex.planned.add(Usage(*planned_usage(turn, ex.prompt_tokens, margin)))
        base = next_prompt_base(turn, ex.prompt_tokens, margin)
        plan = plan_round(
            room=ex.room_tokens(), base=base, sends_left=state.sends_left, calls=len(memory)
        )
        if plan is None:
            # Not even a last send fits: the writes run, the answer is what was said.
            ex.notice(RESERVATION_REACHED)
            self._last_calls(ex, memory)
            return None
        outcomes = fit_outcomes(run_calls(self.services, state, memory), plan.result_tokens, margin)
        state.rounds += 1
        if not plan.tools:
            state.withheld = RESERVATION_REACHED if state.rounds_left else ROUNDS_RAN_OUT
            ex.notice(state.withheld)
            outcomes = with_final_note(outcomes)
        ex.prompt_tokens = base + sum(result_tokens(o, margin) for o in outcomes)
        return ex.api.continued(body, turn, outcomes, memory_tools=plan.tools)

    def _last_calls(self, ex: Exchange, memory: list[ToolCall]) -> None:
        """The memory calls of a turn that does not continue: the writes run, the reads
        are dropped; what each was answered is owed to a stored conversation."""
        state = ex.rounds
        ran = {id(o.call): o for o in run_calls(self.services, state, writes_only(memory, state))}
        dropped = ToolResult(DROPPED_READ_OUTPUT, is_error=True)
        ex.owed = [ran.get(id(call)) or ToolOutcome(call, dropped) for call in memory]

    # ------------------------------------------------------------------ streams
    async def _stream(self, ex: Exchange) -> Response:
        body, client_wants_usage = ex.api.prepare_stream(ex.plan.body)
        opened = self.upstream.stream(ex.api, body, ex.client_headers, ex.timer)
        try:
            first = await opened.__aenter__()
        except BaseException as exc:
            ex.status, ex.outcome = _failure_status(exc)
            await self._close(ex)
            if isinstance(exc, UpstreamFailed):
                return self._error_response(ex.api, exc)
            if isinstance(exc, Exception) and not isinstance(exc, MemvaultError):
                raise _internal_error(exc) from exc
            raise
        ex.upstream_headers = first.headers
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

    def _metered(self, ex: Exchange, meter: StreamMeter) -> Usage:
        """A round's usage as its meter saw it, added to the request's."""
        usage, estimated = meter.usage(ex.prompt_tokens, ex.api.token_margin)
        ex.add_usage(usage, estimated=estimated)
        return usage

    async def _events(
        self,
        ex: Exchange,
        body: Json,
        client_wants_usage: bool,
        opened: Any,
        first: UpstreamStream,
    ) -> Any:
        notices_sent = len(ex.plan.notices)
        translator = ex.api.translator(client_wants_usage=client_wants_usage)
        translator.continuing = ex.continuing
        tools: asyncio.Task[Json | None] | None = None
        stream: UpstreamStream | None = first
        # The round being read: until its stream ends, a meter is open (and billed
        # whatever happens); the parser keeps what is not a whole event yet.
        meter: StreamMeter | None = None
        parser = SseParser()
        try:
            while True:
                assert stream is not None
                meter, parser = ex.api.meter(), SseParser()
                if not ex.plan.tools_on:
                    ended = False
                    async for event in parse_events(stream, parser):
                        meter.observe(event)
                        ended = ended or ex.api.ends_stream(event)
                        if ex.continuing is None:
                            data = ex.api.passthrough_event(
                                event, client_wants_usage=client_wants_usage
                            )
                        else:
                            data = ex.api.passthrough_continued(
                                event, client_wants_usage=client_wants_usage, previous=ex.continuing
                            )
                        if data is not None:
                            yield data
                    if not ended:
                        raise MalformedStream("the upstream stream ended before its last event")
                    self._metered(ex, meter)
                    meter = None
                    break
                translator.begin_round()
                async for event in parse_events(stream, parser):
                    meter.observe(event)
                    for data in translator.feed(event):
                        yield data
                turn = translator.end_round()
                turn.usage = self._metered(ex, meter)
                meter = None
                await opened.__aexit__(None, None, None)
                opened, stream = None, None
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
                    await self._link(ex, body, translator.response_id(), turn)
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
                stream = opened_stream
        except (MemvaultError, MalformedStream) as exc:
            error = exc if isinstance(exc, MemvaultError) else _malformed(exc)
            ex.status, ex.outcome = _failure_status(error)
            message = self.upstream.redact.text(error.message)
            for data in translator.error(ex.api, error.type, error.code, message):
                yield data
        except BaseException as exc:
            ex.status, ex.outcome = _failure_status(exc)
            if not isinstance(exc, Exception):
                raise  # cancelled, or the generator closed: nothing more can be sent
            error = _internal_error(exc)
            for data in translator.error(ex.api, error.type, error.code, error.message):
                yield data
        finally:
            with anyio.CancelScope(shield=True):
                if meter is not None:
                    # The round ended before its stream did (the client hung up, the
                    # provider broke off): what reached memvault is billed, the events
                    # already read and those still buffered.
                    if stream is not None:
                        _meter_rest(await stream.unread(), parser, meter)
                    self._metered(ex, meter)
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
        if ex.cache_sent:
            await self.worker.run(self._keep, ex)
        hit = ex.cache.hit if ex.cache is not None else None
        embed_calls = ex.profile.embed_calls if ex.profile else 0
        embed_micros = ex.profile.embed_cost_micros if ex.profile else 0
        cost = cost_micros(ex.price, ex.usage.input_tokens, ex.usage.output_tokens)
        cost += embed_micros
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
            injected_tokens=ex.injected,
            cost_micros=cost,
            status=ex.status,
            outcome=ex.outcome,
            started_at=ex.started_at,
            duration_ms=round(ex.timer.elapsed_ms()),
            overhead_ms=round(ex.timer.overhead_ms()),
            estimated=ex.estimated,
            injected_recall_tokens=ex.plan.recall.tokens if ex.plan.recall else 0,
            injected_profile_tokens=ex.profile.tokens if ex.profile else 0,
            search_embed_calls=embed_calls,
            search_embed_micros=embed_micros,
            cache_hits=1 if hit is not None else 0,
            cache_saved_tokens=hit.input_tokens + hit.output_tokens if hit is not None else 0,
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
                "estimated": record.estimated,
                "cost_micros": record.cost_micros,
                "overhead_ms": record.overhead_ms,
                "notices": len(ex.plan.notices),
            },
        )


def _meter_rest(unread: bytes, parser: SseParser, meter: StreamMeter) -> None:
    """Meter what a stream left early still held: its unread bytes and the parser's
    part of an event. Never raises (the stream is over either way)."""
    try:
        for event in [*parser.feed(unread), *parser.close()]:
            meter.observe(event)
    except MalformedStream:
        pass


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


def _internal_error(exc: Exception) -> MemvaultError:
    """A failure nobody foresaw, as the client sees it: logged with its trace, answered
    as a 500 (kind internal_error) in the format's shape that says nothing of it."""
    log.error("gateway request failed", exc_info=exc)
    return MemvaultError("something went wrong on our side; try again", code="internal_error")


def _failure_status(exc: BaseException) -> tuple[int, str]:
    if isinstance(exc, MemvaultError):
        return status_for(exc), exc.code
    if isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return 499, "client_disconnected"
    return 500, "internal_error"


SSE = "text/event-stream"


def _caching_miss(ex: Exchange) -> bool:
    return ex.cache is not None and ex.cache.outcome is CacheOutcome.MISS
