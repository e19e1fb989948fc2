"""The local embedder: WordLlama's static token table (l2_supercat, 256 dimensions).

A static embedding model is a table with one vector per token: a text's vector is the
mean of its tokens' rows, normalised to unit length. No neural network runs, so it embeds
thousands of chunks a second on one core and loads in about a tenth of a second. The
weights (16 MB of float16) and the tokenizer ship inside the ``wordllama`` wheel and are
read from its installed files: nothing is downloaded, ever (ADR 0024). Only the two files
are read; the ``wordllama`` package itself is never imported (its import configures the
root logger and pulls in modules memvault does not use).
"""

from __future__ import annotations

import importlib.util
import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memvault.errors import ServiceUnavailable
from memvault.ports import Embeddings

MODEL = "wordllama-l2-supercat-256"
DIMENSION = 256
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
# Longer texts are cut to this many tokens: chunks are bounded well below it, and a mean
# over more tokens than this no longer moves.
MAX_TOKENS = 2048
_BATCH = 256


def package_dir() -> Path:
    """Where the installed ``wordllama`` package lives, without importing it."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ServiceUnavailable(
            "the local embedding model is not installed (pip install wordllama), "
            "or set MEMVAULT_EMBEDDINGS to openai, bedrock or off",
            code="embeddings_unavailable",
        )
    return Path(next(iter(spec.submodule_search_locations)))


class StaticEmbedder:
    """Mean-pooled static token vectors, unit-normalised. Thread-safe: the tokenizer is
    used under a lock (its padding settings are shared state) and the table is read-only."""

    def __init__(self, table: npt.NDArray[np.float32], tokenizer: Any, model: str) -> None:
        self._table = table
        self._tokenizer = tokenizer
        self._model = model
        self._lock = threading.Lock()

    @classmethod
    def load(cls, root: Path | None = None, *, dimension: int = DIMENSION) -> StaticEmbedder:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        base = root or package_dir()
        try:
            tokenizer = Tokenizer.from_file(str(base / _TOKENIZER))
            table = load_file(str(base / _WEIGHTS))["embedding.weight"]
        except Exception as exc:  # tokenizers raises bare Exception for a missing/bad file
            raise ServiceUnavailable(
                f"the local embedding model's files could not be read ({type(exc).__name__})",
                code="embeddings_unavailable",
            ) from exc
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        # The table's leading dimensions are a Matryoshka prefix: a shorter vector is the
        # first ``dimension`` columns (used by bench/embedders.py to compare sizes).
        table32 = np.ascontiguousarray(table[:, :dimension], dtype=np.float32)
        name = MODEL if dimension == DIMENSION else f"wordllama-l2-supercat-{dimension}"
        return cls(table32, tokenizer, name)

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return int(self._table.shape[1])

    def embed(self, texts: Sequence[str]) -> Embeddings:
        vectors, tokens = self._embed(texts)
        return Embeddings(
            model=self._model,
            dimension=self.dimension,
            vectors=vectors.tolist(),
            input_tokens=tokens,
        )

    def embed_array(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The vectors as one float32 array (rows unit length; an empty text's row is 0)."""
        return self._embed(texts)[0]

    def _embed(self, texts: Sequence[str]) -> tuple[npt.NDArray[np.float32], int]:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        tokens = 0
        prepared = [unicodedata.normalize("NFKC", text) for text in texts]
        for start in range(0, len(prepared), _BATCH):
            batch = prepared[start : start + _BATCH]
            with self._lock:
                encoded = self._tokenizer.encode_batch(batch, add_special_tokens=False)
            for row, enc in enumerate(encoded):
                ids = enc.ids
                if not ids:
                    continue
                tokens += len(ids)
                out[start + row] = self._table[ids].mean(axis=0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out, tokens


# The leading columns of the table that make a shorter vector (MEMVAULT_EMBEDDINGS_DIMENSION).
DIMENSIONS = (64, 128, 256)


@lru_cache(maxsize=len(DIMENSIONS))
def shared_local_embedder(dimension: int = DIMENSION) -> StaticEmbedder:
    """The local model, loaded once per process and dimension (256: 32 MB in float32)."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"the local model embeds in 64, 128 or 256 dimensions, not {dimension}")
    return StaticEmbedder.load(dimension=dimension)
