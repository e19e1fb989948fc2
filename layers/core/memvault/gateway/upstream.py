"""The HTTP client to model providers, and the one place their failures are classified.

An upstream 4xx is the client's business: it passes through with its status and body.
Everything else that goes wrong (5xx, timeouts, refused connections, garbage) becomes an
``UpstreamFailed`` (502) or ``UpstreamTimeout`` (504) in the caller's API format.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from memvault.errors import UpstreamFailed, UpstreamTimeout
from memvault.gateway.formats.base import ApiFormat
from memvault.settings import Settings

# The most of an upstream error body passed on to the client (it is the provider's text).
MAX_ERROR_BODY = 64 * 1024
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Upstream:
    base_url: str
    credential: str | None


@dataclass(frozen=True, slots=True)
class Answer:
    """A whole upstream answer: its bytes (relayed verbatim when nothing changes) and JSON."""

    raw: bytes
    payload: object


@dataclass(slots=True)
class ClientError:
    """An upstream 4xx: relayed to the client as it came."""

    status: int
    body: bytes
    content_type: str


class UpstreamClient:
    """One pooled HTTP client per process; tracks time spent waiting on providers."""

    def __init__(self, settings: Settings, transport: httpx.AsyncBaseTransport | None = None):
        self.upstreams = {
            "openai": Upstream(
                settings.openai_base_url.rstrip("/"),
                settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
            ),
            "anthropic": Upstream(
                settings.anthropic_base_url.rstrip("/"),
                settings.anthropic_api_key.get_secret_value()
                if settings.anthropic_api_key
                else None,
            ),
        }
        self.timeout = httpx.Timeout(
            settings.upstream_read_timeout, connect=settings.upstream_connect_timeout
        )
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        # Created on first use, inside the running event loop that will use it.
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=self.timeout,
                transport=self._transport,
                limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def _request(
        self, api: ApiFormat, body: dict[str, Any], client_headers: dict[str, str]
    ) -> httpx.Request:
        upstream = self.upstreams[api.name]
        return self.client.build_request(
            "POST",
            upstream.base_url + api.upstream_path,
            content=json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode(),
            headers=api.upstream_headers(client_headers, upstream.credential),
        )

    async def complete(
        self, api: ApiFormat, body: dict[str, Any], client_headers: dict[str, str], timer: Timer
    ) -> Answer | ClientError:
        """A whole (non-streaming) answer, or a 4xx to relay."""
        request = self._request(api, body, client_headers)
        with timer.upstream():
            try:
                response = await self.client.send(request, stream=True)
                try:
                    raw = await _read_capped(response)
                finally:
                    await response.aclose()
            except httpx.TimeoutException as exc:
                raise _timeout() from exc
            except httpx.HTTPError as exc:
                raise _unreachable(exc) from exc
        failure = _failure(response.status_code, raw, response.headers)
        if failure is not None:
            return failure
        try:
            return Answer(raw, json.loads(raw))
        except ValueError as exc:
            raise UpstreamFailed(
                "the model provider's answer is not JSON", code="upstream_malformed"
            ) from exc

    async def models(self, api: ApiFormat, client_headers: dict[str, str]) -> Answer | ClientError:
        upstream = self.upstreams[api.name]
        headers = api.upstream_headers(client_headers, upstream.credential)
        headers.pop("content-type", None)
        try:
            response = await self.client.get(upstream.base_url + api.models_path, headers=headers)
        except httpx.TimeoutException as exc:
            raise _timeout() from exc
        except httpx.HTTPError as exc:
            raise _unreachable(exc) from exc
        failure = _failure(response.status_code, response.content, response.headers)
        if failure is not None:
            return failure
        return Answer(response.content, None)

    @asynccontextmanager
    async def stream(
        self, api: ApiFormat, body: dict[str, Any], client_headers: dict[str, str], timer: Timer
    ) -> AsyncIterator[ClientError | AsyncIterator[bytes]]:
        """Open a streamed answer: yields its byte chunks, or a 4xx to relay."""
        request = self._request(api, body, client_headers)
        started = time.perf_counter()
        try:
            response = await self.client.send(request, stream=True)
        except httpx.TimeoutException as exc:
            timer.add_upstream(time.perf_counter() - started)
            raise _timeout() from exc
        except httpx.HTTPError as exc:
            timer.add_upstream(time.perf_counter() - started)
            raise _unreachable(exc) from exc
        # The wait for the answer's headers is upstream time now: the client's response
        # headers (x-gateway-overhead-ms) are computed before the stream is read.
        now = time.perf_counter()
        timer.add_upstream(now - started)
        started = now
        try:
            if response.status_code >= 300:
                raw = await _read_capped(response, MAX_ERROR_BODY)
                failure = _failure(response.status_code, raw, response.headers)
                assert failure is not None
                yield failure
                return
            if not _is_event_stream(response.headers):
                raise UpstreamFailed(
                    "the model provider answered a stream with something else"
                    f" ({response.headers.get('content-type', 'no content type')})",
                    code="upstream_malformed",
                )
            yield _chunks(response)
        finally:
            timer.add_upstream(time.perf_counter() - started)
            await response.aclose()


def _is_event_stream(headers: httpx.Headers) -> bool:
    """An SSE answer; one without a content type gets the benefit of the doubt."""
    content_type: str | None = headers.get("content-type")
    if content_type is None:
        return True
    return content_type.split(";")[0].strip().lower() == "text/event-stream"


async def _chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    try:
        async for chunk in response.aiter_raw():
            yield chunk
    except httpx.TimeoutException as exc:
        raise _timeout() from exc
    except httpx.HTTPError as exc:
        raise UpstreamFailed(
            "the model provider's stream broke off before it ended", code="upstream_stream_broken"
        ) from exc


async def _read_capped(response: httpx.Response, cap: int = MAX_RESPONSE_BYTES) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > cap:
            break
        parts.append(chunk)
    return b"".join(parts)


def _failure(status: int, raw: bytes, headers: httpx.Headers) -> ClientError | None:
    if status < 300:
        return None
    if 400 <= status < 500:
        return ClientError(
            status, raw[:MAX_ERROR_BODY], headers.get("content-type", "application/json")
        )
    detail = _provider_message(raw)
    raise UpstreamFailed(
        f"the model provider failed (HTTP {status})" + (f": {detail}" if detail else ""),
        code="upstream_error",
        upstream_status=status,
    )


def _provider_message(raw: bytes) -> str:
    try:
        payload = json.loads(raw)
    except ValueError:
        return ""
    error = payload.get("error") if isinstance(payload, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return message[:500] if isinstance(message, str) else ""


def _timeout() -> UpstreamTimeout:
    return UpstreamTimeout("the model provider did not answer in time", code="upstream_timeout")


def _unreachable(exc: httpx.HTTPError) -> UpstreamFailed:
    return UpstreamFailed(
        f"the model provider could not be reached ({type(exc).__name__})",
        code="upstream_unreachable",
    )


class Timer:
    """Wall time of one gateway request, split into upstream time and memvault's own."""

    def __init__(self, started: float | None = None) -> None:
        """``started``: a ``time.perf_counter()`` reading, when the request arrived."""
        self.started = time.perf_counter() if started is None else started
        self.upstream_seconds = 0.0

    def add_upstream(self, seconds: float) -> None:
        self.upstream_seconds += seconds

    def upstream(self) -> _UpstreamSpan:
        return _UpstreamSpan(self)

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0

    def overhead_ms(self) -> float:
        return max(0.0, self.elapsed_ms() - self.upstream_seconds * 1000.0)


class _UpstreamSpan:
    def __init__(self, timer: Timer) -> None:
        self.timer = timer
        self.start = 0.0

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *_exc: object) -> None:
        self.timer.add_upstream(time.perf_counter() - self.start)
