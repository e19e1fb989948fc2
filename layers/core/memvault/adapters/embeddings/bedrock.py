"""Embeddings from Amazon Bedrock: Titan Text Embeddings V2 through ``bedrock-runtime``.

Titan V2 embeds one text per ``InvokeModel`` call: the body is ``{"inputText",
"dimensions", "normalize"}`` and the answer ``{"embedding", "inputTextTokenCount"}``.
Dimensions are 256, 512 or 1024 (``MEMVAULT_EMBEDDINGS_DIMENSION``). Priced from the price
table like the OpenAI-compatible adapter; billing is the caller's (``services.embedding``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from memvault.adapters.embeddings.openai import unavailable, unit
from memvault.domain.pricing import ModelPrice, cost_micros
from memvault.ports import Embeddings

TITAN_V2 = "amazon.titan-embed-text-v2:0"
TITAN_DIMENSIONS = (256, 512, 1024)
# Titan V2 accepts up to 50,000 characters per text (8,192 tokens).
MAX_CHARS = 50_000


class BedrockEmbedder:
    def __init__(
        self,
        client: Any,
        *,
        model: str = TITAN_V2,
        dimension: int = 1024,
        price: ModelPrice,
    ) -> None:
        if model.startswith("amazon.titan-embed-text-v2") and dimension not in TITAN_DIMENSIONS:
            raise ValueError(f"Titan V2 embeds in 256, 512 or 1024 dimensions, not {dimension}")
        self._client = client
        self._model = model
        self._dimension = dimension
        self._price = price

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> Embeddings:
        vectors: list[list[float]] = []
        tokens = 0
        for text in texts:
            vector, used = self._one(text)
            vectors.append(vector)
            tokens += used
        return Embeddings(
            model=self._model,
            dimension=self._dimension,
            vectors=vectors,
            input_tokens=tokens,
            cost_micros=cost_micros(self._price, tokens, 0),
        )

    def _one(self, text: str) -> tuple[list[float], int]:
        body = json.dumps(
            {
                "inputText": (text or " ")[:MAX_CHARS],
                "dimensions": self._dimension,
                "normalize": True,
            }
        )
        try:
            out = self._client.invoke_model(
                modelId=self._model,
                body=body,
                contentType="application/json",
                accept="application/json",
            )
            answer = json.loads(out["body"].read())
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "ClientError")
            raise unavailable(f"Bedrock {code}") from exc
        except BotoCoreError as exc:
            raise unavailable(type(exc).__name__) from exc
        except (ValueError, KeyError, TypeError) as exc:
            raise unavailable("an answer that is not JSON") from exc
        try:
            vector = unit([float(v) for v in answer["embedding"]])
            used = int(answer.get("inputTextTokenCount") or 0)
        except (KeyError, TypeError, ValueError) as exc:
            raise unavailable("an answer without an embedding") from exc
        if len(vector) != self._dimension:
            raise unavailable(f"{len(vector)} dimensions, expected {self._dimension}")
        return vector, used
