"""The inference routes: /v1/chat/completions, /v1/responses, /v1/messages, /v1/embeddings
and /v1/models.

Thin: take the key and the body, hand them to the gateway, which checks the key before it
parses the body.
Errors are raised, never translated here; ``memvault.api.errors`` renders them, in the
shape of the route's API format (``request.state.error_format``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from memvault import spans
from memvault.api.access_log import ARRIVED_AT
from memvault.api.deps import services
from memvault.domain.models import ApiKey
from memvault.gateway import embeddings as embeddings_pass_through
from memvault.gateway.engine import Gateway
from memvault.gateway.formats.anthropic import AnthropicMessages
from memvault.gateway.formats.base import ApiFormat
from memvault.gateway.formats.openai import OpenAIChat
from memvault.gateway.formats.responses import OpenAIResponses
from memvault.gateway.upstream import Timer
from memvault.http_edge import presented_secret, read_body

# Requests carry whole conversations, images included (API Gateway allows 10 MB).
MAX_INFERENCE_BODY = 32 * 1024 * 1024
# A body declared at most this large is read before the key is checked, which saves the
# key check a trip of its own to a worker thread; a larger one waits for a valid key, so
# a caller without one cannot make memvault hold megabytes.
READ_BEFORE_KEY_CHECK = 256 * 1024
ERROR_FORMAT_STATE = "error_format"

OPENAI = OpenAIChat()
ANTHROPIC = AnthropicMessages()
RESPONSES = OpenAIResponses()

router = APIRouter(tags=["inference"])


def gateway(request: Request) -> Gateway:
    gw: Gateway = request.app.state.gateway
    return gw


async def _authenticate(request: Request, *, allow_x_api_key: bool) -> ApiKey:
    secret = presented_secret(request, allow_x_api_key=allow_x_api_key)
    return await run_in_threadpool(services(request).accounts.authenticate, secret)


def _declared_small(request: Request) -> bool:
    declared = request.headers.get("content-length", "")
    return declared.isdigit() and int(declared) <= READ_BEFORE_KEY_CHECK


async def _infer(request: Request, api: ApiFormat, *, allow_x_api_key: bool) -> Response:
    spans.mark(spans.ROUTE)
    timer = Timer(getattr(request.state, ARRIVED_AT, None))
    setattr(request.state, ERROR_FORMAT_STATE, api)
    authenticate: Callable[[], ApiKey]
    if _declared_small(request):
        # The key is checked with the rest of the preparation, in the gateway's one trip
        # to a worker thread, and still before the body is parsed.
        secret = presented_secret(request, allow_x_api_key=allow_x_api_key)
        authenticate = partial(services(request).accounts.authenticate, secret)
    else:
        # A large (or unsized) body is only read for a valid key.
        key = await _authenticate(request, allow_x_api_key=allow_x_api_key)
        authenticate = partial(_known, key)
    raw = await read_body(request, MAX_INFERENCE_BODY)
    spans.mark(spans.BODY_READ)
    headers = {name.lower(): value for name, value in request.headers.items()}
    return await gateway(request).handle(api, authenticate, raw, headers, timer)


def _known(key: ApiKey) -> ApiKey:
    return key


@router.post("/v1/chat/completions", summary="OpenAI Chat Completions, with memory")
async def chat_completions(request: Request) -> Response:
    return await _infer(request, OPENAI, allow_x_api_key=False)


@router.post("/v1/messages", summary="Anthropic Messages, with memory")
async def messages(request: Request) -> Response:
    return await _infer(request, ANTHROPIC, allow_x_api_key=True)


@router.post("/v1/responses", summary="OpenAI Responses, with memory")
async def responses(request: Request) -> Response:
    return await _infer(request, RESPONSES, allow_x_api_key=False)


@router.post("/v1/embeddings", summary="Embeddings, passed through to the OpenAI upstream")
async def embeddings(request: Request) -> Response:
    timer = Timer(getattr(request.state, ARRIVED_AT, None))
    setattr(request.state, ERROR_FORMAT_STATE, OPENAI)
    key = await _authenticate(request, allow_x_api_key=False)
    raw = await read_body(request, MAX_INFERENCE_BODY)
    gw = gateway(request)
    return await embeddings_pass_through.pass_through(
        services(request), gw.upstream, gw.worker, partial(_known, key), raw, timer
    )


@router.get("/v1/models", summary="The upstream's models (Anthropic's list with anthropic-version)")
async def models(request: Request) -> Response:
    anthropic = "anthropic-version" in request.headers
    api: ApiFormat = ANTHROPIC if anthropic else OPENAI
    setattr(request.state, ERROR_FORMAT_STATE, api)
    await _authenticate(request, allow_x_api_key=anthropic)
    headers = {name.lower(): value for name, value in request.headers.items()}
    return await gateway(request).models(api, headers)
