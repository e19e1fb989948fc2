"""The HTTP application: management REST API, the inference gateway and MCP.

``create_app`` builds what every surface shares (error handlers, the access log,
/healthz, the lifespan) and mounts the surfaces it is given through ``memvault.surfaces``,
the one module that sees both this package and the MCP one, so api/ itself never
imports MCP. ``memvault serve`` mounts every surface in one app; on AWS each Lambda
function mounts only its own (``surfaces``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager

from fastapi import FastAPI

from memvault import __version__
from memvault.api import errors
from memvault.api.access_log import AccessLog
from memvault.container import Services, get_services
from memvault.observability import configure_logging
from memvault.surfaces import ALL_SURFACES, Surface, mount


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    gateway = getattr(app.state, "gateway", None)  # set when the inference surface is mounted
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

    mount(app, svc, surfaces)
    return app


def create_inference_app(services: Services | None = None) -> FastAPI:
    """The gateway alone: what the inference Lambda function serves."""
    inference_only: tuple[Surface, ...] = ("inference",)
    return create_app(services, surfaces=inference_only)
