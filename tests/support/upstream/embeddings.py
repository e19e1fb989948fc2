"""The scripted upstream's ``POST /v1/embeddings``: a small, real embedding of each input.

Each word (casefolded, word characters) is hashed to a signed position in ``dimensions``
(default 64) and the counts are normalised, so texts sharing words are near and texts
sharing none are orthogonal: enough for tests to find a note by its words through the
OpenAI-compatible adapter. Usage counts one token per word.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

DEFAULT_DIMENSIONS = 64
_WORD = re.compile(r"\w+")


def embed(text: str, dimensions: int) -> tuple[list[float], int]:
    vector = [0.0] * dimensions
    words = _WORD.findall(text.casefold())
    for word in words:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "big") % dimensions
        vector[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    return ([v / norm for v in vector] if norm else vector), len(words)


def problem(request_json: Any) -> str | None:
    if not isinstance(request_json, dict) or "model" not in request_json:
        return "'model' is required"
    inputs = request_json.get("input")
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not inputs:
        return "'input' must be a string or a non-empty list of strings"
    if not all(isinstance(text, str) and text for text in inputs):
        return "'input' items must be non-empty strings"
    return None


def answer(request_json: dict[str, Any]) -> dict[str, Any]:
    inputs = request_json["input"]
    if isinstance(inputs, str):
        inputs = [inputs]
    dimensions = int(request_json.get("dimensions") or DEFAULT_DIMENSIONS)
    data = []
    tokens = 0
    for index, text in enumerate(inputs):
        vector, used = embed(text, dimensions)
        tokens += used
        data.append({"object": "embedding", "index": index, "embedding": vector})
    return {
        "object": "list",
        "data": data,
        "model": request_json["model"],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
