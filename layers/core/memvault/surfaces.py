"""The HTTP surfaces (management REST, the inference gateway, MCP) and what each mounts.

The one module that sees both ``memvault.api`` and ``memvault.mcp``: those two are
siblings over the same services and never import each other (what they share is in
``memvault.http_edge``). ``memvault.api.app.create_app`` builds the application itself
(error handlers, access log, /healthz, lifespan) and asks ``mount`` for the surfaces it
was told to serve.

``memvault serve`` mounts every surface in one app; on AWS each Lambda function mounts
only its own. Each surface's code is imported only when it is mounted: the MCP SDK
alone takes over a second to import, which the inference function's cold start should
not pay.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

from fastapi import FastAPI

from memvault.container import Services

Surface = Literal["management", "inference", "mcp"]
ALL_SURFACES: tuple[Surface, ...] = ("management", "inference", "mcp")


def mount(app: FastAPI, services: Services, surfaces: Collection[Surface]) -> None:
    """Add the routes of each of ``surfaces`` to ``app`` (the gateway, for inference, to
    ``app.state.gateway``, which the app's lifespan closes)."""
    if "inference" in surfaces:
        from memvault.api.routers import inference
        from memvault.gateway.engine import Gateway

        app.state.gateway = Gateway(services)
        # First: routes are tried in order, and the gateway's requests are the ones whose
        # every fraction of a millisecond is added to a model call.
        app.include_router(inference.router)
    if "management" in surfaces:
        from memvault.api.routers import (
            audit,
            billing,
            files,
            keys,
            members,
            memories,
            notes,
            org,
            sessions,
            transfer,
        )

        app.include_router(notes.router)
        app.include_router(transfer.router)
        app.include_router(files.router)  # attachments and .obsidian/ (ADR 0043)
        app.include_router(keys.router)
        app.include_router(billing.router)
        # People: the organisation, members and invitations, sign-in, the audit log.
        app.include_router(org.router)
        app.include_router(members.router)
        app.include_router(sessions.router)
        app.include_router(audit.router)
        app.include_router(memories.router)  # memory profiles (memIDs)
        from memvault.api.routers import jobs

        app.include_router(jobs.router)  # import and export jobs of any size (ADR 0041)
        if services.settings.signup == "open":
            app.include_router(sessions.signup_router)

        from memvault.dashboard.serving import dashboard_routes, upload_origins

        # The web dashboard (/ and /dashboard/...): a client of the same REST routes,
        # whose scripts may also PUT an import's archive to S3 on AWS.
        s = services.settings
        uploads = upload_origins(
            backend=s.backend,
            bucket=s.bucket,
            endpoint=s.s3_presign_endpoint or s.s3_endpoint,
            region=s.aws_region,
        )
        app.router.routes.extend(dashboard_routes(connect=uploads))
    if "mcp" in surfaces:
        from memvault.mcp.http import mcp_routes

        # MCP at /mcp (and /mcp/): stateless streamable HTTP, see memvault.mcp.http.
        app.router.routes.extend(mcp_routes(services))
