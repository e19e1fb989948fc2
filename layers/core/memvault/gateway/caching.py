"""The response cache on a gateway request (domain.response_cache has the rules).

``decide`` runs on the worker thread once the request is planned: it says whether the
request may use the cache (asked for by ``x-cache: on`` or the key's setting; never
with memory attached) and looks the answer up. A hit is answered here (``replay``), with
nothing sent upstream; a miss is stored once its answer is whole and good (``store`` for
a whole answer, ``recording`` around a stream's bytes).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

from starlette.responses import Response, StreamingResponse

from memvault.container import Services
from memvault.domain.models import ApiKey
from memvault.domain.response_cache import (
    CACHE_HEADER,
    DEFAULT_TTL_SECONDS,
    MAX_ENTRY_BYTES,
    CachedAnswer,
    CacheOutcome,
    request_digest,
    wanted,
)

log = logging.getLogger("memvault.gateway")


@dataclass
class CacheStep:
    outcome: CacheOutcome
    digest: str = ""
    ttl_seconds: int = DEFAULT_TTL_SECONDS
    hit: CachedAnswer | None = None


def decide(
    services: Services,
    key: ApiKey,
    api_format: str,
    raw_body: bytes,
    headers: dict[str, str],
    *,
    memory_attached: bool,
    now: float,
) -> CacheStep | None:
    """The request's cache step, or None when it did not ask for the cache."""
    if not wanted(headers.get(CACHE_HEADER), key.cache_ttl_seconds is not None):
        return None
    if memory_attached:
        return CacheStep(CacheOutcome.BYPASS_MEMORY)
    # The client's own body (before memvault adds anything, as stream_options), parsed
    # again: the digest is of what the client asked.
    digest = request_digest(api_format, json.loads(raw_body))
    ttl = key.cache_ttl_seconds or DEFAULT_TTL_SECONDS
    try:
        hit = services.response_cache.get(key.account_id, digest, now=now)
    except Exception:  # a cache that cannot be read is a miss, never a failure
        log.warning("response cache unreadable", extra={"account_id": key.account_id})
        hit = None
    return CacheStep(CacheOutcome.HIT if hit else CacheOutcome.MISS, digest, ttl, hit)


def replay(answer: CachedAnswer, headers: dict[str, str]) -> Response:
    """The cached answer as it was sent: a whole JSON body, or the stream's events."""
    if answer.content_type.startswith("text/event-stream"):

        async def events() -> AsyncIterator[bytes]:
            for event in answer.body.split(b"\n\n"):
                if event:
                    yield event + b"\n\n"

        return StreamingResponse(
            events(),
            media_type="text/event-stream",
            headers={**headers, "cache-control": "no-cache"},
        )
    return Response(
        answer.body, status_code=answer.status, media_type=answer.content_type, headers=headers
    )


def store(
    services: Services,
    key: ApiKey,
    step: CacheStep,
    body: bytes,
    content_type: str,
    *,
    model: str,
    input_tokens: int,
    output_tokens: int,
    cost_micros: int,
    now: float,
) -> None:
    """Keep a good answer of a miss (never raises: the client has its answer)."""
    if step.outcome is not CacheOutcome.MISS or len(body) > MAX_ENTRY_BYTES:
        return
    answer = CachedAnswer(
        status=200,
        content_type=content_type,
        body=body,
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_micros=cost_micros,
        created_at=now,
    )
    try:
        services.response_cache.put(
            key.account_id, step.digest, answer, expires_at=now + step.ttl_seconds
        )
    except Exception:
        log.warning("response cache not written", extra={"account_id": key.account_id})


async def recording(
    events: AsyncIterable[str | bytes | memoryview], sent: list[bytes]
) -> AsyncIterator[str | bytes | memoryview]:
    """Pass a stream's events through, appending each to ``sent`` (up to the entry
    limit): the gateway keeps them once the stream has ended well."""
    size = 0
    async for data in events:
        chunk = data.encode() if isinstance(data, str) else bytes(data)
        size += len(chunk)
        if size <= MAX_ENTRY_BYTES:
            sent.append(chunk)
        else:
            sent.clear()  # too big to cache: nothing is kept
        yield data
