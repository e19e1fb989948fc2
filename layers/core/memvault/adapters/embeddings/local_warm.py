"""Loads the local model on import: only the embedding workers' fork server imports this
(``VectorWorkers(warm=...)``, named by the composition root), so each worker it forks
starts with the model in memory (its pages shared, copy-on-write) instead of reading the
weights and the tokenizer again (ADR 0067). A model that cannot load is left to each
worker, which raises as before."""

from __future__ import annotations

import contextlib

from memvault.adapters.embeddings.local import DIMENSION, shared_local_embedder

# Not installed, or unreadable: the workers say so when they embed.
with contextlib.suppress(Exception):
    shared_local_embedder(DIMENSION)
