"""One default TLS context for every HTTP client the tests build.

httpx (and httpx2, which the openai, anthropic and mcp SDKs use) loads the CA bundle
into a new SSLContext for every client it builds: 20-40 ms each, although every client
here speaks plain HTTP to 127.0.0.1. The suite builds thousands of clients, so the
default context (verify=True, no client certificate) is built once per process and
shared; SSLContext objects are safe to share between clients and threads. Any other
TLS configuration still gets a context of its own.
"""

from __future__ import annotations

import importlib
import ssl
from typing import Any


def share_default_tls_context() -> None:
    for package in ("httpx", "httpx2"):
        try:
            transports = importlib.import_module(f"{package}._transports.default")
        except ImportError:
            continue
        original = transports.create_ssl_context
        if getattr(original, "memvault_shared", False):
            continue
        transports.create_ssl_context = _shared(original)


def _shared(original: Any) -> Any:
    default: list[ssl.SSLContext] = []

    def create_ssl_context(
        verify: Any = True, cert: Any = None, trust_env: bool = True
    ) -> ssl.SSLContext:
        if verify is not True or cert is not None or not trust_env:
            return original(verify=verify, cert=cert, trust_env=trust_env)  # type: ignore[no-any-return]
        if not default:
            default.append(original(verify=True, cert=None, trust_env=True))
        return default[0]

    create_ssl_context.memvault_shared = True  # type: ignore[attr-defined]
    return create_ssl_context
