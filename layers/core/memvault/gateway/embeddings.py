"""POST /v1/embeddings: a client's embeddings request passed through to the
OpenAI-compatible upstream, with the memvault key checked, priced and recorded in usage.

No memory is involved: the body goes up as it came (memvault's credential instead of the
client's) and the answer comes back as the upstream sent it. The money is held before
the request is sent (the input counted offline, priced from the price table: 402 when
the balance or the key's spend cap cannot cover it), and settled at what the upstream
reported (``usage.prompt_tokens``) by ``EmbeddingService.record_call``, which writes the
usage record every embedding call gets (``api_format`` "embeddings", outcome "client").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Final

from starlette.responses import JSONResponse, Response

from memvault.container import Services
from memvault.domain.models import ApiKey, Reservation
from memvault.domain.pricing import cost_micros
from memvault.errors import InvalidInput, MemvaultError, UpstreamFailed, status_for
from memvault.gateway.formats.base import MAX_MODEL_CHARS, as_int
from memvault.gateway.formats.openai import OpenAIChat
from memvault.gateway.upstream import ClientError, Timer, UpstreamClient
from memvault.gateway.wire import parse_object
from memvault.gateway.worker import GatewayWorker
from memvault.ports import Embeddings
from memvault.tokens import count_tokens

log = logging.getLogger("memvault.gateway")

PURPOSE: Final = "client"  # the usage record's outcome: a client's own embeddings call
_OPENAI = OpenAIChat()  # its error shape


def input_tokens(given: object) -> int:
    """The request's input as the provider will count it: text counted offline, token
    arrays by their length."""
    if isinstance(given, str):
        return count_tokens(given)
    if isinstance(given, list):
        if all(isinstance(x, int) for x in given):
            return len(given)
        return sum(input_tokens(x) for x in given)
    return 0


def _validate(body: dict[str, object]) -> tuple[str, int]:
    model = body.get("model")
    if not isinstance(model, str) or not model or len(model) > MAX_MODEL_CHARS:
        raise InvalidInput(
            f"'model' is required (a model id string of at most {MAX_MODEL_CHARS} characters)",
            code="invalid_model",
        )
    given = body.get("input")
    if not isinstance(given, str | list) or not given:
        raise InvalidInput(
            "'input' is required: a string, a list of strings or of token arrays",
            code="invalid_input",
        )
    return model, input_tokens(given)


async def pass_through(
    services: Services,
    upstream: UpstreamClient,
    worker: GatewayWorker,
    authenticate: Callable[[], ApiKey],
    raw_body: bytes,
    timer: Timer,
) -> Response:
    def prepare() -> tuple[ApiKey, dict[str, object], str, Reservation]:
        key = authenticate()
        body = parse_object(raw_body)
        model, counted = _validate(body)
        price = services.billing.price(model)
        held = services.billing.reserve(key, cost_micros(price, counted, 0))
        return key, body, model, held

    key, body, model, held = await worker.run(prepare)
    started, began = services.billing.clock(), time.perf_counter()
    price = services.billing.price(model)
    try:
        answer = await upstream.embeddings(body, timer)
    except UpstreamFailed as exc:
        await worker.run(services.billing.settle, held, 0)
        return JSONResponse(
            _OPENAI.error_body(exc.type, exc.code, upstream.redact.text(exc.message)),
            status_code=status_for(exc),
        )
    except BaseException:
        await worker.run(services.billing.settle, held, 0)
        raise
    if isinstance(answer, ClientError):
        await worker.run(services.billing.settle, held, 0)
        return Response(
            answer.body,
            status_code=answer.status,
            media_type=answer.content_type,
            headers=answer.headers,
        )
    payload = answer.payload
    usage = payload.get("usage") if isinstance(payload, dict) else None
    tokens = as_int(usage.get("prompt_tokens")) if isinstance(usage, dict) else 0
    if not tokens:
        tokens = input_tokens(body.get("input"))
    reported = payload.get("model") if isinstance(payload, dict) else None
    result = Embeddings(
        model=reported if isinstance(reported, str) and reported else model,
        dimension=0,
        vectors=[],
        input_tokens=tokens,
        cost_micros=cost_micros(price, tokens, 0),
    )
    duration_ms = int((time.perf_counter() - began) * 1000)

    def record() -> None:
        try:
            services.embedding.record_call(
                key.account_id,
                key.id,
                PURPOSE,
                result,
                started=started,
                duration_ms=duration_ms,
                held=held,
            )
        except MemvaultError:
            log.exception("embeddings usage not recorded", extra={"account_id": key.account_id})

    await worker.run(record)
    return Response(answer.raw, media_type="application/json", headers=answer.headers)
