"""The HTTP client to model providers, and the one place their failures are classified.

An upstream 4xx is the client's business: it passes through with its status and body.
Everything else that goes wrong (5xx, timeouts, refused connections, garbage) becomes an
``UpstreamFailed`` (502) or ``UpstreamTimeout`` (504) in the caller's API format.

The client is aiohttp's: every gateway request makes at least one provider call, and on
the same machine a call through aiohttp (C-accelerated HTTP parsing) took about 0.8 ms
less than through httpx's async client (bench/gateway.py's pass-through row measures the
hop).
Answers are read decompressed (a provider that gzips is read right) and relayed with
memvault's own headers plus the provider's that clients rely on (``relayed_headers``:
retry-after, request ids, rate limits). Nothing relayed carries memvault's provider
credential: a provider that echoes it (an error naming the key it was given) has it
masked (``redact``).
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager, suppress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import aiohttp
import orjson

from memvault.errors import UpstreamFailed, UpstreamTimeout
from memvault.gateway.formats.base import ApiFormat
from memvault.gateway.wire import encode_request
from memvault.settings import Settings

# The most of an upstream error body passed on to the client (it is the provider's text).
MAX_ERROR_BODY = 64 * 1024
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
# Connections open to providers at once, per process.
MAX_CONNECTIONS = 200
READ_CHUNK = 64 * 1024
LARGE_BODY_BYTES = 512 * 1024
# Provider response headers clients rely on (the SDKs' retry timing, request ids for
# support, rate-limit state), relayed on answers, streams and errors alike.
RELAYED_HEADERS = frozenset(
    {
        "retry-after",
        "retry-after-ms",
        "x-should-retry",
        "x-request-id",
        "request-id",
        "openai-processing-ms",
        "openai-organization",
        "openai-version",
        "openai-project",
    }
)
RELAYED_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-")
# What a credential found in a relayed text becomes.
MASK = "[memvault provider key]"


def relayed_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The provider's headers that pass to the client (see RELAYED_HEADERS)."""
    return {
        name.lower(): value
        for name, value in headers.items()
        if name.lower() in RELAYED_HEADERS or name.lower().startswith(RELAYED_PREFIXES)
    }


class Redactor:
    """Masks the provider credentials memvault holds in text it relays."""

    def __init__(self, secrets: list[str]) -> None:
        # Longest first, so a key that contains another is masked whole.
        self.secrets = sorted({s for s in secrets if len(s) >= 8}, key=len, reverse=True)

    def learn(self, secret: str) -> None:
        """Mask ``secret`` too (a rotated key); the old ones stay masked."""
        if len(secret) >= 8 and secret not in self.secrets:
            self.secrets = sorted({*self.secrets, secret}, key=len, reverse=True)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return value

    def bytes(self, value: bytes) -> bytes:
        for secret in self.secrets:
            raw = secret.encode()
            if raw in value:
                value = value.replace(raw, MASK.encode())
        return value


@dataclass(frozen=True, slots=True)
class Upstream:
    base_url: str
    credential: str | None
    proxy: str | None = None  # from HTTP(S)_PROXY / NO_PROXY, read once at start


def _env_proxy(base_url: str) -> str | None:
    """The proxy the environment names for ``base_url`` (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY,
    minus NO_PROXY), read once: aiohttp's own ``trust_env`` reads the environment and
    ~/.netrc again on every request, which cost over a millisecond a call here."""
    parts = urlsplit(base_url)
    if not parts.hostname or proxy_bypass(parts.hostname):
        return None
    proxies = getproxies()
    return proxies.get(parts.scheme) or proxies.get("all") or None


@dataclass(frozen=True, slots=True)
class Answer:
    """A whole upstream answer: its bytes (relayed verbatim when nothing changes), its
    JSON and the headers that pass to the client."""

    raw: bytes
    payload: object
    headers: dict[str, str]


@dataclass(slots=True)
class ClientError:
    """An upstream 4xx: relayed to the client as it came (the credential masked)."""

    status: int
    body: bytes
    content_type: str
    headers: dict[str, str]


# A stream left early (the client hung up) is metered for what the provider had sent:
# read until its socket is quiet this long, within the limit (UpstreamStream.unread).
LEFT_EARLY_QUIET = 0.02
LEFT_EARLY_LIMIT = 0.25


class UpstreamStream:
    """An upstream SSE answer: its byte chunks, and the headers that pass to the client."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.headers = relayed_headers(response.headers)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return _chunks(self._response)

    async def unread(
        self, quiet: float = LEFT_EARLY_QUIET, limit: float = LEFT_EARLY_LIMIT
    ) -> bytes:
        """What the provider sent that was not read yet: a stream left early is billed for
        what reached memvault, read or not. The bytes already buffered, and those the
        socket holds or receives until it is quiet for ``quiet`` seconds (at most
        ``limit`` in all). A fixed number of event-loop turns was not enough under load:
        a hang-up could be handled before the loop had polled the provider's socket, and
        what the provider had sent (and bills) went unbilled. Never raises."""
        content = self._response.content
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit
        parts: list[bytes] = []
        try:
            parts.append(content.read_nowait())
            while not content.at_eof():
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                chunk = await asyncio.wait_for(content.readany(), min(quiet, remaining))
                if not chunk:
                    break
                parts.append(chunk)
        except Exception:  # a timeout (the socket is quiet), or the stream broke: done
            pass
        return b"".join(parts)


class UpstreamClient:
    """One pooled HTTP client per event loop; tracks time spent waiting on providers."""

    def __init__(self, settings: Settings):
        self.upstreams = {
            "openai": Upstream(
                settings.openai_base_url.rstrip("/"),
                settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
                _env_proxy(settings.openai_base_url),
            ),
            "anthropic": Upstream(
                settings.anthropic_base_url.rstrip("/"),
                settings.anthropic_api_key.get_secret_value()
                if settings.anthropic_api_key
                else None,
                _env_proxy(settings.anthropic_base_url),
            ),
        }
        # sock_connect: the TCP (and TLS) handshake. sock_read: the longest silence while
        # an answer is awaited or streamed, not the whole answer's time (streams run long).
        self.timeout = aiohttp.ClientTimeout(
            total=None,
            sock_connect=settings.upstream_connect_timeout,
            sock_read=settings.upstream_read_timeout,
        )
        # aiohttp bounds connecting and every read, but not writing the request: a
        # provider that stops reading a large body would hold the request for ever. So
        # the whole wait for an answer's headers is bounded (_send): connecting (a wait
        # for a free pooled connection included), then up to the read timeout to send the
        # body, then the read timeout for the headers.
        self.headers_deadline = (
            settings.upstream_connect_timeout + 2 * settings.upstream_read_timeout
        )
        self.redact = Redactor([u.credential for u in self.upstreams.values() if u.credential])
        self._credentials: Callable[[str], str | None] | None = None
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def follow_credentials(self, source: Callable[[str], str | None]) -> None:
        """Ask ``source`` (provider name -> its key) for the key on every request instead
        of the key read at start: a source that caches with a max age (the deployed
        inference function's Secrets Manager reader) makes a rotated key apply without a
        restart. Every key it gives is masked in relayed text like the first."""
        self._credentials = source

    def credential(self, provider: str) -> str | None:
        if self._credentials is None:
            return self.upstreams[provider].credential
        value = self._credentials(provider)
        if value:
            self.redact.learn(value)
        return value

    @property
    def session(self) -> aiohttp.ClientSession:
        # Created on first use, inside the running event loop that will use it; a new
        # loop (a test's, or an adapter that runs each invocation in its own) gets its
        # own session, since connections belong to the loop that opened them.
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=self.timeout,
                connector=aiohttp.TCPConnector(limit=MAX_CONNECTIONS),
                trust_env=False,  # the environment's proxy is read once: see _env_proxy
                # Answers are relayed with memvault's headers; nothing here sets cookies.
                cookie_jar=aiohttp.DummyCookieJar(),
                raise_for_status=False,
            )
            self._loop = loop
        return self._session

    async def aclose(self) -> None:
        session, self._session, self._loop = self._session, None, None
        if session is not None and not session.closed:
            with suppress(RuntimeError):  # its loop is gone, and its connections with it
                await session.close()

    async def _send(
        self, method: str, url: str, headers: dict[str, str], proxy: str | None, data: Any = None
    ) -> aiohttp.ClientResponse:
        """The provider's response, its headers read (its body not yet)."""
        async with asyncio.timeout(self.headers_deadline):
            return await self.session.request(method, url, data=data, headers=headers, proxy=proxy)

    async def _fetch(
        self, method: str, url: str, headers: dict[str, str], proxy: str | None, data: Any = None
    ) -> tuple[int, bytes, Mapping[str, str]]:
        """A whole answer: its status, its body (up to MAX_RESPONSE_BYTES) and headers."""
        with _provider_errors():
            response = await self._send(method, url, headers, proxy, data)
            try:
                raw = await _read_capped(response)
            finally:
                _finish(response)
        return response.status, raw, response.headers

    def _request_parts(
        self, api: ApiFormat, body: dict[str, Any], client_headers: dict[str, str]
    ) -> tuple[str, bytes | io.BytesIO, dict[str, str], str | None]:
        upstream = self.upstreams[api.provider]
        data = encode_request(body)
        return (
            upstream.base_url + api.upstream_path,
            # aiohttp writes a large body from a file object in pieces, between which the
            # event loop serves other requests (and warns about a large bytes body).
            io.BytesIO(data) if len(data) > LARGE_BODY_BYTES else data,
            api.upstream_headers(client_headers, self.credential(api.provider)),
            upstream.proxy,
        )

    async def complete(
        self, api: ApiFormat, body: dict[str, Any], client_headers: dict[str, str], timer: Timer
    ) -> Answer | ClientError:
        """A whole (non-streaming) answer, or a 4xx to relay."""
        url, data, headers, proxy = self._request_parts(api, body, client_headers)
        with timer.upstream():
            status, raw, response_headers = await self._fetch("POST", url, headers, proxy, data)
        failure = _failure(status, raw, response_headers, self.redact)
        if failure is not None:
            return failure
        return Answer(raw, _answer_json(raw), relayed_headers(response_headers))

    async def embeddings(self, body: dict[str, Any], timer: Timer) -> Answer | ClientError:
        """A client's embeddings request, sent to the OpenAI-compatible upstream as it
        came (with memvault's credential): the whole answer, or a 4xx to relay."""
        upstream = self.upstreams["openai"]
        headers = {"content-type": "application/json"}
        credential = self.credential("openai")
        if credential:
            headers["authorization"] = f"Bearer {credential}"
        url = upstream.base_url + "/embeddings"
        with timer.upstream():
            status, raw, response_headers = await self._fetch(
                "POST", url, headers, upstream.proxy, encode_request(body)
            )
        failure = _failure(status, raw, response_headers, self.redact)
        if failure is not None:
            return failure
        return Answer(raw, _answer_json(raw), relayed_headers(response_headers))

    async def models(self, api: ApiFormat, client_headers: dict[str, str]) -> Answer | ClientError:
        upstream = self.upstreams[api.provider]
        headers = api.upstream_headers(client_headers, self.credential(api.provider))
        headers.pop("content-type", None)
        status, raw, response_headers = await self._fetch(
            "GET", upstream.base_url + api.models_path, headers, upstream.proxy
        )
        failure = _failure(status, raw, response_headers, self.redact)
        if failure is not None:
            return failure
        return Answer(raw, None, relayed_headers(response_headers))

    @asynccontextmanager
    async def stream(
        self, api: ApiFormat, body: dict[str, Any], client_headers: dict[str, str], timer: Timer
    ) -> AsyncIterator[ClientError | UpstreamStream]:
        """Open a streamed answer: yields its byte chunks, or a 4xx to relay."""
        url, data, headers, proxy = self._request_parts(api, body, client_headers)
        started = time.perf_counter()
        try:
            with _provider_errors():
                response = await self._send("POST", url, headers, proxy, data)
        finally:
            # The wait for the answer's headers is upstream time now: the client's
            # response headers (x-gateway-overhead-ms) are computed before it is read.
            now = time.perf_counter()
            timer.add_upstream(now - started)
        started = now
        try:
            if response.status >= 300:
                try:
                    raw = await _read_capped(response, MAX_ERROR_BODY)
                except (TimeoutError, aiohttp.ClientError):
                    raw = b""  # the status says what happened; the body is a courtesy
                failure = _failure(response.status, raw, response.headers, self.redact)
                assert failure is not None
                yield failure
                return
            if not _is_event_stream(response.headers):
                raise UpstreamFailed(
                    "the model provider answered a stream with something else"
                    f" ({response.headers.get('content-type', 'no content type')})",
                    code="upstream_malformed",
                )
            yield UpstreamStream(response)
        finally:
            timer.add_upstream(time.perf_counter() - started)
            _finish(response)


@contextmanager
def _provider_errors() -> Iterator[None]:
    """A provider call's failures as memvault's: a timeout is a 504, anything else that
    stops the call (refused, reset, a bad URL, garbage for HTTP) a 502."""
    try:
        yield
    except TimeoutError as exc:
        raise _timeout() from exc
    except (aiohttp.ClientError, ValueError) as exc:
        raise _unreachable(exc) from exc


def _finish(response: aiohttp.ClientResponse) -> None:
    if response.content.at_eof():
        response.release()  # read to the end: the connection goes back to the pool
    else:
        # Left early (the client went away, a failure, an answer over the cap): dropping
        # the connection is what tells the provider to stop generating.
        response.close()


def _is_event_stream(headers: Mapping[str, str]) -> bool:
    """An SSE answer; one without a content type gets the benefit of the doubt."""
    content_type: str | None = headers.get("content-type")
    if content_type is None:
        return True
    return content_type.split(";")[0].strip().lower() == "text/event-stream"


async def _chunks(response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    try:
        async for chunk in response.content.iter_any():
            yield chunk
    except TimeoutError as exc:
        raise _timeout() from exc
    except aiohttp.ClientError as exc:
        raise UpstreamFailed(
            "the model provider's stream broke off before it ended", code="upstream_stream_broken"
        ) from exc


async def _read_capped(response: aiohttp.ClientResponse, cap: int = MAX_RESPONSE_BYTES) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_chunked(READ_CHUNK):
        size += len(chunk)
        if size > cap:
            break
        parts.append(chunk)
    return b"".join(parts)


def _answer_json(raw: bytes) -> object:
    """A whole answer's JSON. The standard library's parser recurses, and a model's tool
    call nested about a thousand levels deep is past its limit: such an answer is read
    by orjson (which takes 1,024 levels without recursing), and its too deep call is
    refused where calls are checked (rounds.check_round), not here as a crash."""
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise UpstreamFailed(
            "the model provider's answer is not JSON", code="upstream_malformed"
        ) from exc
    except RecursionError:
        pass
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise UpstreamFailed(
            "the model provider's answer is nested too deeply to read", code="upstream_malformed"
        ) from exc


def _failure(
    status: int, raw: bytes, headers: Mapping[str, str], redact: Redactor
) -> ClientError | None:
    if status < 300:
        return None
    relayed = relayed_headers(headers)
    if 400 <= status < 500:
        return ClientError(
            status,
            redact.bytes(raw[:MAX_ERROR_BODY]),
            headers.get("content-type", "application/json"),
            relayed,
        )
    detail = redact.text(_provider_message(raw))
    raise UpstreamFailed(
        f"the model provider failed (HTTP {status})" + (f": {detail}" if detail else ""),
        code="upstream_error",
        upstream_status=status,
        headers=relayed,
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


def _unreachable(exc: Exception) -> UpstreamFailed:
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
