"""Embedder adapters (the ``Embedder`` port): the local static model, an OpenAI-compatible
upstream, Amazon Bedrock. ``build_embedder`` picks one from ``MEMVAULT_EMBEDDINGS``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not at run time: the embedding workers' fork server imports this
    # package (for the local model) and would pay for the settings' import (ADR 0067)
    from memvault.domain.pricing import PriceTable
    from memvault.ports import Embedder
    from memvault.settings import Settings

OPENAI_DEFAULT_MODEL = "text-embedding-3-small"
# Dimensions of the OpenAI models when none is configured.
OPENAI_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


def build_embedder(settings: Settings, prices: PriceTable | None = None) -> Embedder | None:
    """The configured embedder, or None when embeddings are off. The local model is loaded
    once per process and shared; the others are built per call (they hold a client)."""
    kind = settings.embeddings
    if kind == "off":
        return None
    from memvault.domain.pricing import PriceTable

    table = prices if prices is not None else PriceTable.load(settings.price_table)
    if kind == "local":
        from memvault.adapters.embeddings.local import shared_local_embedder

        return shared_local_embedder(settings.embeddings_dimension or 256)
    if kind == "openai":
        from memvault.adapters.embeddings.openai import OpenAIEmbedder

        model = settings.embeddings_model or OPENAI_DEFAULT_MODEL
        dimension = settings.embeddings_dimension or OPENAI_DIMENSIONS.get(model, 1536)
        key = settings.embeddings_api_key or settings.openai_api_key
        return OpenAIEmbedder(
            settings.embeddings_base_url or settings.openai_base_url,
            key.get_secret_value() if key else None,
            model=model,
            dimension=dimension,
            price=table.price(model),
            batch_size=settings.embeddings_batch_size,
            timeout=settings.upstream_connect_timeout + 60.0,
            # Only the text-embedding-3 family takes a dimensions parameter.
            send_dimensions=settings.embeddings_dimension is not None,
        )
    import boto3

    from memvault.adapters.embeddings.bedrock import TITAN_V2, BedrockEmbedder

    model = settings.embeddings_model or TITAN_V2
    client = boto3.client("bedrock-runtime", region_name=settings.aws_region)
    return BedrockEmbedder(
        client,
        model=model,
        dimension=settings.embeddings_dimension or 1024,
        price=table.price(model),
    )
