"""The HTTP application: management REST API (and, later, gateway and MCP routes)."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request, Response

from memvault import __version__
from memvault.api import errors
from memvault.api.routers import keys, notes, transfer
from memvault.container import Services, get_services
from memvault.mcp.http import mcp_routes
from memvault.observability import configure_logging, monotonic_ms

log = logging.getLogger("memvault.http")


def create_app(services: Services | None = None) -> FastAPI:
    svc = services or get_services()
    configure_logging(svc.settings.log_level)
    app = FastAPI(
        title="memvault",
        version=__version__,
        description="A memory layer for LLM API keys: a vault of markdown notes.",
    )
    app.state.services = svc
    errors.install(app)

    @app.middleware("http")
    async def access_log(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        start = time.perf_counter()
        response = await call_next(request)
        route = request.scope.get("route")
        log.info(
            "request",
            extra={
                "method": request.method,
                "route": getattr(route, "path", "unmatched"),
                "status": response.status_code,
                "ms": monotonic_ms(start),
            },
        )
        return response

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, str]:
        return {"status": "ok", "backend": svc.settings.backend, "version": __version__}

    app.include_router(notes.router)
    app.include_router(transfer.router)
    app.include_router(keys.router)
    # MCP at /mcp (and /mcp/): stateless streamable HTTP, see memvault.mcp.http.
    app.router.routes.extend(mcp_routes(svc))
    return app
