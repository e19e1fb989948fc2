"""One structured log line per HTTP request: method, route template, status, time.

Plain ASGI rather than Starlette's BaseHTTPMiddleware: that one buffers through an extra
task per request and interferes with streamed answers and client disconnects, which the
gateway's SSE responses depend on. Never logs bodies (they carry note content).
"""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memvault.observability import monotonic_ms

log = logging.getLogger("memvault.http")

ARRIVED_AT = "arrived_at"  # request.state: perf_counter() when the request reached the app


class AccessLog:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        # request.state.arrived_at: the gateway's overhead clock starts here, so routing
        # and body parsing count as the time memvault added.
        scope.setdefault("state", {})[ARRIVED_AT] = start
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            route = scope.get("route")
            log.info(
                "request",
                extra={
                    "method": scope.get("method"),
                    "route": getattr(route, "path", "unmatched"),
                    "status": status,
                    "ms": monotonic_ms(start),
                },
            )
