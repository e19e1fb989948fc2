"""What each deployed Lambda function does once, at cold start, before serving.

Settings come from the environment the template sets; the provider keys are read from
Secrets Manager; then the services are built as for any other process. Nothing at cold
start sends a request to OpenSearch (ADR 0031): with the domain unreachable every
function still starts, serves what does not need search, and queues writes for
indexing. The index is created at deploy time by the ops function (functions/ops, a
custom resource), checked on the first operation that needs it, and ``memvault
init-search`` or the ops function's ``init-search`` action makes it by hand.
Entrypoints under functions/ call ``boot_services`` at import time, so a warm function
reuses all of it.

A composition root, beside ``container`` (which it ends in): it decides what a process
does before serving, so it lives above the adapters it calls rather than among them.
"""

from __future__ import annotations

import logging
from typing import Any

from memvault.adapters.aws.secrets import ProviderKeys, resolve_provider_keys
from memvault.adapters.aws.wiring import search_index, vector_index
from memvault.container import Services, build_services
from memvault.settings import Settings, get_settings

log = logging.getLogger(__name__)


def boot_settings(**overrides: Any) -> Settings:
    settings = resolve_provider_keys(get_settings())
    return settings.model_copy(update=overrides) if overrides else settings


def ensure_search_index(settings: Settings) -> bool:
    """Create the index if it is missing, or upgrade an older one (idempotent, safe when
    several callers race). The ops path only: no cold start calls it. True when created."""
    if settings.backend != "aws" or not settings.opensearch_url:
        return False
    created = search_index(settings).create_index(
        shards=settings.opensearch_shards, replicas=settings.opensearch_replicas
    )
    ensure_vector_index(settings)
    return created


def ensure_vector_index(settings: Settings) -> bool:
    """Create the chunk index of the configured embedder's dimension (ADR 0026), so the
    API functions, which may not create indices, store vectors from the first write. Never
    raises: a failure is logged, and the ops function's next drain (which may create it)
    makes it. True when created."""
    if settings.backend != "aws" or not settings.opensearch_url or settings.embeddings == "off":
        return False
    try:
        from memvault.adapters.embeddings import build_embedder

        embedder = build_embedder(settings)
        if embedder is None:
            return False
        return vector_index(settings).create_index(embedder.dimension)
    except Exception:
        log.warning("vector index not made", exc_info=True)
        return False


def boot_services(settings: Settings | None = None) -> Services:
    return build_services(settings or boot_settings())


def follow_provider_secrets(app: Any, settings: Settings) -> None:
    """Make the inference app's gateway read each provider key through ``ProviderKeys``
    (a cached read with a max age) when the key comes from a secret, so a rotated key
    applies within ``secrets_max_age_seconds`` without a cold start."""
    if not (settings.openai_api_key_secret or settings.anthropic_api_key_secret):
        return
    app.state.gateway.upstream.follow_credentials(ProviderKeys(settings))
