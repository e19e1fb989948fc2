"""Embeddings from an OpenAI-compatible upstream: ``POST {base}/embeddings``, batched.

The base URL and key are the gateway's (``MEMVAULT_OPENAI_BASE_URL``,
``MEMVAULT_OPENAI_API_KEY``) unless ``MEMVAULT_EMBEDDINGS_BASE_URL`` /
``MEMVAULT_EMBEDDINGS_API_KEY`` name another. Each call is priced from the price table
(input tokens as the provider reports them) and the cost is in ``Embeddings.cost_micros``;
billing the organisation is the caller's (``services.embedding``). Vectors are normalised
here: providers that already return unit vectors are unchanged by it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import httpx

from memvault.domain.pricing import ModelPrice, cost_micros
from memvault.errors import ServiceUnavailable
from memvault.ports import Embeddings

# OpenAI takes up to 2,048 inputs a request; smaller batches keep one request's body and
# its retry cheap.
DEFAULT_BATCH = 128


def unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0 or not math.isfinite(norm):
        return [0.0] * len(vector)
    return [v / norm for v in vector]


def unavailable(what: str) -> ServiceUnavailable:
    return ServiceUnavailable(
        f"the embedding model could not answer ({what}); vectors are retried later",
        code="embeddings_unavailable",
    )


class OpenAIEmbedder:
    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        model: str,
        dimension: int,
        price: ModelPrice,
        batch_size: int = DEFAULT_BATCH,
        timeout: float = 30.0,
        send_dimensions: bool = False,
        client: httpx.Client | None = None,
    ) -> None:
        self._url = base_url.rstrip("/") + "/embeddings"
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.Client(timeout=timeout, headers=headers)
        if client is not None and api_key:
            self._client.headers.update(headers)
        self._model = model
        self._dimension = dimension
        self._price = price
        self._batch = max(1, batch_size)
        self._send_dimensions = send_dimensions

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> Embeddings:
        vectors: list[list[float]] = []
        tokens = 0
        for start in range(0, len(texts), self._batch):
            batch = list(texts[start : start + self._batch])
            got, used = self._request(batch)
            vectors.extend(got)
            tokens += used
        return Embeddings(
            model=self._model,
            dimension=self._dimension,
            vectors=vectors,
            input_tokens=tokens,
            cost_micros=cost_micros(self._price, tokens, 0),
        )

    def _request(self, batch: list[str]) -> tuple[list[list[float]], int]:
        # An empty string is refused by some providers: send a space, its vector is unused
        # noise either way (an empty chunk is never stored).
        payload: dict[str, Any] = {
            "model": self._model,
            "input": [text or " " for text in batch],
            "encoding_format": "float",
        }
        if self._send_dimensions:
            payload["dimensions"] = self._dimension
        try:
            response = self._client.post(self._url, json=payload)
        except httpx.HTTPError as exc:
            raise unavailable(type(exc).__name__) from exc
        if response.status_code != 200:
            raise unavailable(f"upstream status {response.status_code}")
        try:
            body = response.json()
            rows = sorted(body["data"], key=lambda row: int(row["index"]))
            vectors = [unit([float(v) for v in row["embedding"]]) for row in rows]
            usage = body.get("usage") or {}
            used = int(usage.get("prompt_tokens") or usage.get("total_tokens") or 0)
        except (ValueError, KeyError, TypeError) as exc:
            raise unavailable("an answer that is not an embeddings list") from exc
        if len(vectors) != len(batch) or any(len(v) != self._dimension for v in vectors):
            raise unavailable(
                f"{len(vectors)} vectors for {len(batch)} texts, expected {self._dimension} "
                "dimensions each"
            )
        return vectors, used

    def close(self) -> None:
        self._client.close()
