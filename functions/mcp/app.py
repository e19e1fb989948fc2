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
event and added to the endpoint's host policy then. The app itself (the MCP server, its
tools, the routes) is built at cold start, so the first call does not pay for it.
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext
from mangum import Mangum

from memvault.api.app import create_app
from memvault.lambda_boot import boot_services
from memvault.lambda_powertools import Powertools
from memvault.mcp.http import HostPolicy, McpHttpApp
from memvault.surfaces import Surface

SURFACES: tuple[Surface, ...] = ("mcp",)

powertools = Powertools("mcp")

# Cold start: services, the app and its MCP server, reused while warm.
services = boot_services()
powertools.drain_when_idle(services.vault.indexing, services.index)
app = create_app(services, surfaces=SURFACES)
powertools.correlate_memvault_logs()
asgi = Mangum(app, lifespan="auto", api_gateway_base_path="/")
endpoint: McpHttpApp = next(
    r.endpoint  # type: ignore[attr-defined]
    for r in app.routes
    if getattr(r, "name", None) == "mcp"
)


def api_host(event: dict[str, Any]) -> str | None:
    """The execute-api host name of the API that sent ``event`` (None outside one)."""
    api_id = (event.get("requestContext") or {}).get("apiId")
    region = os.environ.get("AWS_REGION") or services.settings.aws_region
    return f"{api_id}.execute-api.{region}.amazonaws.com" if api_id and region else None


def allow_api_host(event: dict[str, Any]) -> None:
    """Add the sending API's host to the endpoint's allowed hosts (once: a tuple scan
    on later events)."""
    host = api_host(event)
    policy = endpoint.hosts
    if host and not policy.host_allowed(host):
        endpoint.hosts = HostPolicy(hosts=(*policy.hosts, host), origins=policy.origins)


def _respond(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    allow_api_host(event)
    response: dict[str, Any] = asgi(event, context)  # type: ignore[arg-type]
    return response


handler = powertools.api_gateway_handler(_respond)
