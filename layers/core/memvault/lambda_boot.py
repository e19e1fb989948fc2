"""What each deployed Lambda function does once, at cold start, before serving.

Settings come from the environment the template sets; the provider keys are read from
Secrets Manager; the search index is created if this is the stack's first start (only
the functions' roles may reach the OpenSearch domain, so a deployer's shell cannot do
it); then the services are built as for any other process. Entrypoints under
functions/ call ``boot_services`` at import time, so a warm function reuses all of it.

A composition root, beside ``container`` (which it ends in): it decides what a process
does before serving, so it lives above the adapters it calls rather than among them.
"""

from __future__ import annotations

from typing import Any

from memvault.adapters.aws.secrets import resolve_provider_keys
from memvault.adapters.aws.wiring import search_index
from memvault.container import Services, build_services
from memvault.settings import Settings, get_settings


def boot_settings(**overrides: Any) -> Settings:
    settings = resolve_provider_keys(get_settings())
    return settings.model_copy(update=overrides) if overrides else settings


def ensure_search_index(settings: Settings) -> bool:
    """Create the index if it is missing (idempotent, safe when cold starts race)."""
    if settings.backend != "aws" or not settings.opensearch_url:
        return False
    return search_index(settings).create_index(replicas=settings.opensearch_replicas)


def boot_services(settings: Settings | None = None) -> Services:
    settings = settings or boot_settings()
    ensure_search_index(settings)
    return build_services(settings)
