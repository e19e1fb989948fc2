"""The HTTP application: management REST API, the inference gateway and MCP.

``memvault serve`` mounts every surface in one app. On AWS each Lambda function mounts
only its own (``surfaces``), and imports only what it needs: the MCP SDK alone takes over
a second to import, which the inference function's cold start should not pay.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from typing import Literal

from fastapi import FastAPI

from memvault import __version__
from memvault.api import errors
from memvault.api.access_log import AccessLog
from memvault.container import Services, get_services
from memvault.observability import configure_logging

Surface = Literal["management", "inference", "mcp"]
ALL_SURFACES: tuple[Surface, ...] = ("management", "inference", "mcp")


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    gateway = getattr(app.state, "gateway", None)
    if gateway is not None:
        # Mangum runs lifespan around every invocation: both are re-made on next use.
        await gateway.aclose()


def create_app(
    services: Services | None = None, *, surfaces: Collection[Surface] = ALL_SURFACES
) -> FastAPI:
    svc = services or get_services()
    configure_logging(svc.settings.log_level)
    app = FastAPI(
        lifespan=_lifespan,
        title="memvault",
        version=__version__,
        description="A memory layer for LLM API keys: a vault of markdown notes.",
    )
    app.state.services = svc
    errors.install(app)
    app.add_middleware(AccessLog)

    @app.get("/healthz", tags=["health"])
    def healthz() -> dict[str, str]:
        return {"status": "ok", "backend": svc.settings.backend, "version": __version__}

    if "inference" in surfaces:
        from memvault.api.routers import inference
        from memvault.gateway.engine import Gateway

        app.state.gateway = Gateway(svc)
        # First: routes are tried in order, and the gateway's requests are the ones whose
        # every fraction of a millisecond is added to a model call.
        app.include_router(inference.router)
    if "management" in surfaces:
        from memvault.api.routers import billing, keys, notes, transfer

        app.include_router(notes.router)
        app.include_router(transfer.router)
        app.include_router(keys.router)
        app.include_router(billing.router)
    if "mcp" in surfaces:
        from memvault.mcp.http import mcp_routes

        # MCP at /mcp (and /mcp/): stateless streamable HTTP, see memvault.mcp.http.
        app.router.routes.extend(mcp_routes(svc))
    return app


def create_inference_app(services: Services | None = None) -> FastAPI:
    """The gateway alone: what the inference Lambda function serves."""
    inference_only: tuple[Surface, ...] = ("inference",)
    return create_app(services, surfaces=inference_only)
