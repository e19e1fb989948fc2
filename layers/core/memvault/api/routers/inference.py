"""The inference routes: /v1/chat/completions, /v1/messages and /v1/models.

Thin: authenticate before reading the body, parse the JSON, hand it to the gateway.
Errors are raised, never translated here; ``memvault.api.errors`` renders them, in the
shape of the route's API format (``request.state.error_format``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from memvault.api.access_log import ARRIVED_AT
from memvault.api.deps import bearer_secret, read_body, services
from memvault.domain.models import ApiKey
from memvault.errors import InvalidInput, Unauthenticated
from memvault.gateway.engine import Gateway
from memvault.gateway.formats.anthropic import AnthropicMessages
from memvault.gateway.formats.base import ApiFormat
from memvault.gateway.formats.openai import OpenAIChat
from memvault.gateway.upstream import Timer
from memvault.gateway.wire import NotJson, parse_request

# Requests carry whole conversations, images included (API Gateway allows 10 MB).
MAX_INFERENCE_BODY = 32 * 1024 * 1024
ERROR_FORMAT_STATE = "error_format"

OPENAI = OpenAIChat()
ANTHROPIC = AnthropicMessages()

router = APIRouter(tags=["inference"])


def gateway(request: Request) -> Gateway:
    gw: Gateway = request.app.state.gateway
    return gw


async def _authenticate(request: Request, *, allow_x_api_key: bool) -> ApiKey:
    header = request.headers.get("authorization")
    x_api_key = request.headers.get("x-api-key") if allow_x_api_key else None
    if header is not None and header.strip() and bearer_secret(header) is None:
        raise Unauthenticated(
            "the Authorization header must be 'Bearer <key>'", code="malformed_authorization"
        )
    secret = bearer_secret(header, x_api_key)
    svc = services(request)
    return await run_in_threadpool(svc.accounts.authenticate, secret)


async def _json_body(request: Request) -> dict[str, Any]:
    raw = await read_body(request, MAX_INFERENCE_BODY)
    try:
        body = parse_request(raw)
    except NotJson as exc:
        raise InvalidInput(
            f"the request body is not valid JSON: {exc}", code="invalid_json"
        ) from exc
    if not isinstance(body, dict):
        raise InvalidInput("the request body must be a JSON object", code="invalid_json")
    return body


async def _infer(request: Request, api: ApiFormat, *, allow_x_api_key: bool) -> Response:
    timer = Timer(getattr(request.state, ARRIVED_AT, None))
    setattr(request.state, ERROR_FORMAT_STATE, api)
    key = await _authenticate(request, allow_x_api_key=allow_x_api_key)
    body = await _json_body(request)
    headers = {name.lower(): value for name, value in request.headers.items()}
    return await gateway(request).handle(api, key, body, headers, timer)


@router.post("/v1/chat/completions", summary="OpenAI Chat Completions, with memory")
async def chat_completions(request: Request) -> Response:
    return await _infer(request, OPENAI, allow_x_api_key=False)


@router.post("/v1/messages", summary="Anthropic Messages, with memory")
async def messages(request: Request) -> Response:
    return await _infer(request, ANTHROPIC, allow_x_api_key=True)


@router.get("/v1/models", summary="The upstream's models (Anthropic's list with anthropic-version)")
async def models(request: Request) -> Response:
    anthropic = "anthropic-version" in request.headers
    api: ApiFormat = ANTHROPIC if anthropic else OPENAI
    setattr(request.state, ERROR_FORMAT_STATE, api)
    await _authenticate(request, allow_x_api_key=anthropic)
    headers = {name.lower(): value for name, value in request.headers.items()}
    return await gateway(request).models(api, headers)
