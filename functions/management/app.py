"""The management REST API (notes, search, keys, billing, /healthz) on Lambda.

Mangum adapts API Gateway REST proxy events to the FastAPI app; responses are buffered,
which suits this surface (nothing here streams). Powertools adds the request's
correlation id to every log line (memvault's own JSON logs included), one EMF metric per
invocation, and X-Ray tracing (memvault.lambda_powertools). The POST routes a client may
retry take an Idempotency-Key (Powertools Idempotency, ADR 0032).
"""

from __future__ import annotations

from mangum import Mangum

from memvault.api.app import create_app
from memvault.lambda_boot import boot_services
from memvault.lambda_powertools import Handler, Idempotency, Powertools
from memvault.surfaces import Surface

SURFACES: tuple[Surface, ...] = ("management",)

powertools = Powertools("management")

# Cold start: settings, clients and the app are built once and reused while warm.
services = boot_services()
app = create_app(services, surfaces=SURFACES)
powertools.correlate_memvault_logs()
powertools.drain_when_idle(services.vault.indexing, services.index)
# lifespan "auto": the app's lifespan holds nothing that cannot run once per invocation.
asgi = Mangum(app, lifespan="auto", api_gateway_base_path="/")
respond: Handler = asgi  # type: ignore[assignment]
if services.settings.idempotency_table:
    # The POST routes a client may retry run once per Idempotency-Key (ADR 0032).
    respond = Idempotency(
        services.settings.idempotency_table,
        expires_after_seconds=services.settings.idempotency_seconds,
    ).wrap(respond)
handler = powertools.api_gateway_handler(respond)
