"""The inference gateway (/v1/chat/completions, /v1/responses, /v1/messages,
/v1/embeddings, /v1/models) on Lambda.

Served by uvicorn behind Lambda Web Adapter (run.sh), not Mangum: Mangum buffers a
response until it ends, and the gateway's answers are server-sent event streams that
must reach the client as they are produced. With ``AWS_LWA_INVOKE_MODE=response_stream``
the adapter streams uvicorn's response through Lambda response streaming, and API
Gateway's ``STREAM`` transfer mode passes it on. Only the inference surface is mounted,
so the cold start never imports the MCP SDK or the management routers. Logs, metrics and
traces come from memvault.lambda_powertools, as for the other functions.
"""

from __future__ import annotations

from memvault.api.app import create_inference_app
from memvault.lambda_boot import boot_services, follow_provider_secrets
from memvault.lambda_powertools import Powertools

powertools = Powertools("inference")

# Built once when uvicorn imports this module (the function's cold start). Each request
# gets the correlation id, metrics and trace the other functions get (Powertools.asgi),
# each settled gateway request its EMF business metrics, and the idle moment after a
# response drains what this process queued for search.
services = boot_services()
gateway_app = create_inference_app(services)
follow_provider_secrets(gateway_app, services.settings)
app = powertools.asgi(gateway_app)
powertools.usage_metrics()
powertools.drain_when_idle(services.vault.indexing, services.index)
powertools.correlate_memvault_logs()
