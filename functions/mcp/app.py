"""MCP at /mcp on Lambda: stateless streamable HTTP, one JSON-RPC request per POST.

Mangum adapts API Gateway REST proxy events (responses are buffered: memvault's MCP
answers JSON, never an event stream). memvault's MCP never starts the SDK's session
manager, so Mangum running the lifespan around every invocation is harmless. Logs,
metrics and traces as for the management function (memvault.lambda_powertools).

The Host check (DNS rebinding protection) must allow the API's execute-api name. The
template cannot pass it in: the API's definition refers to this function, so the
function's environment referring to the API would be a circular dependency. API Gateway
names its API in every event (``requestContext.apiId``, set by API Gateway, not by the
client), and only that API may invoke this function, so the name is taken from the first
event and the app is built then (services are built at cold start as usual).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from mangum import Mangum

from memvault.api.app import create_app
from memvault.container import Services
from memvault.lambda_boot import boot_services
from memvault.lambda_powertools import Powertools
from memvault.settings import Settings
from memvault.surfaces import Surface

SURFACES: tuple[Surface, ...] = ("mcp",)

powertools = Powertools("mcp")

services = boot_services()
powertools.drain_when_idle(services.vault.indexing, services.index)
_asgi: Mangum | None = None


def api_host(event: dict[str, Any]) -> str | None:
    """The execute-api host name of the API that sent ``event`` (None outside one)."""
    api_id = (event.get("requestContext") or {}).get("apiId")
    region = os.environ.get("AWS_REGION") or services.settings.aws_region
    return f"{api_id}.execute-api.{region}.amazonaws.com" if api_id and region else None


def _app_for(event: dict[str, Any], svc: Services) -> Mangum:
    global _asgi
    if _asgi is None:
        hosts = [svc.settings.mcp_allowed_hosts]
        host = api_host(event)
        if host:
            hosts.append(host)
        settings: Settings = svc.settings.model_copy(update={"mcp_allowed_hosts": ",".join(hosts)})
        app = create_app(replace(svc, settings=settings), surfaces=SURFACES)
        powertools.correlate_memvault_logs()
        _asgi = Mangum(app, lifespan="auto", api_gateway_base_path="/")
    return _asgi


def _respond(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    response: dict[str, Any] = _app_for(event, services)(event, context)  # type: ignore[arg-type]
    return response


handler = powertools.api_gateway_handler(_respond)
