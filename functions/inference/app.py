"""The inference gateway (/v1/chat/completions, /v1/messages, /v1/models) on Lambda.

Served by uvicorn behind Lambda Web Adapter (run.sh), not Mangum: Mangum buffers a
response until it ends, and the gateway's answers are server-sent event streams that
must reach the client as they are produced. With ``AWS_LWA_INVOKE_MODE=response_stream``
the adapter streams uvicorn's response through Lambda response streaming, and API
Gateway's ``STREAM`` transfer mode passes it on. Only the inference surface is mounted,
so the cold start never imports the MCP SDK or the management routers.
"""

from __future__ import annotations

from memvault.api.app import create_inference_app
from memvault.lambda_boot import boot_services

# Built once when uvicorn imports this module (the function's cold start).
services = boot_services()
app = create_inference_app(services)
