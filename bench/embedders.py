"""Local embedding models compared: retrieval quality, throughput, load time, size (ADR 0024).

Quality is recall@5 and MRR of semantic search alone on ../shared/data/locomo-dev (read
at run time, never copied): each question ranks the notes of its conversation by their
best chunk's cosine similarity (chunks as domain.chunking makes them). Throughput is
chunks embedded per second on one core; load time is a fresh process importing the
adapter and loading the model (what a Lambda cold start pays); size is what the model's
wheel and the dependencies it brings occupy on disk once installed.

    .venv/bin/python bench/embedders.py [--quick]

model2vec (0.10.0) is listed without figures: no package on PyPI ships potion weights
(model2vec, laghu, kor-minish and agentrecall-db all fetch them from the Hugging Face hub
at run time, which memvault may not do).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

import common  # sys.path: the repo root first
from memvault.adapters.embeddings.local import StaticEmbedder
from memvault.domain.chunking import DEFAULT_MAX_TOKENS, chunk_note
from memvault.domain.markdown import parse_note

DATA = common.ROOT.parent / "shared" / "data" / "locomo-dev"
# What installing wordllama adds to memvault's own dependencies (tokenizers brings the
# Hugging Face hub client, which memvault never calls).
DEPENDENCIES = (
    "wordllama",
    "numpy",
    "tokenizers",
    "safetensors",
    "huggingface_hub",
    "hf_xet",
    "fsspec",
    "filelock",
    "tqdm",
    "toml",
)


def load_locomo() -> tuple[dict[str, str], list[dict[str, object]]]:
    notes: dict[str, str] = {}
    with zipfile.ZipFile(DATA / "locomo-dev.zip") as archive:
        for name in archive.namelist():
            if name.endswith(".md"):
                notes[name] = archive.read(name).decode()
    queries = json.loads((DATA / "queries.json").read_text())
    return notes, queries


def evaluate(
    embed: Callable[[list[str]], np.ndarray],
    notes: dict[str, str],
    queries: list[dict[str, object]],
    *,
    chunked: bool = True,
    context: bool = True,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> tuple[float, float]:
    paths: list[str] = []
    texts: list[str] = []
    for path, markdown in notes.items():
        title = parse_note(path, markdown).title
        if chunked:
            for chunk in chunk_note(markdown, title=title, path=path, max_tokens=max_tokens):
                paths.append(path)
                texts.append(chunk.embed_text if context else chunk.text)
        else:
            paths.append(path)
            texts.append(markdown)
    matrix = embed(texts)
    owner = np.array(paths)
    query_vectors = embed([str(q["query"]) for q in queries])
    recall = mrr = 0.0
    for q, qv in zip(queries, query_vectors, strict=True):
        prefix = str(q["prefix"])
        rows = np.flatnonzero(np.char.startswith(owner, prefix))
        scores = matrix[rows] @ qv
        best: dict[str, float] = {}
        for row, score in zip(rows, scores, strict=True):
            path = paths[row]
            if score > best.get(path, -2.0):
                best[path] = float(score)
        ranked = sorted(best, key=lambda p: -best[p])
        truth = set(q["ground_truth"])  # type: ignore[call-overload]
        recall += len(truth & set(ranked[:5])) / len(truth)
        mrr += next((1 / (i + 1) for i, p in enumerate(ranked[:10]) if p in truth), 0.0)
    return recall / len(queries), mrr / len(queries)


def throughput(embedder: StaticEmbedder, texts: list[str], repeat: int) -> float:
    batch = texts * repeat
    started = time.perf_counter()
    embedder.embed_array(batch)
    return len(batch) / (time.perf_counter() - started)


def cold_load_seconds(dimension: int, runs: int) -> tuple[float, float]:
    """(importing numpy, tokenizers and safetensors and loading the model, loading alone) in
    a fresh process that has imported memvault's ports and settings already (what any
    memvault process pays anyway); medians of ``runs``."""
    code = (
        "import time, memvault.ports, memvault.settings; t = time.perf_counter();"
        "import numpy, tokenizers, safetensors.numpy; u = time.perf_counter();"
        "from memvault.adapters.embeddings.local import StaticEmbedder;"
        f"StaticEmbedder.load(dimension={dimension}).embed(['warm']);"
        "v = time.perf_counter(); print(v - t, v - u)"
    )
    pairs = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
        pairs.append((float(out[0]), float(out[1])))
    pairs.sort()
    return pairs[len(pairs) // 2]


def installed_mb(*packages: str) -> float:
    total = 0
    for name in packages:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            continue
        for root in spec.submodule_search_locations:
            total += sum(f.stat().st_size for f in Path(root).rglob("*") if f.is_file())
    return total / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"skipped: {DATA} is not there (the shared LoCoMo split)")
        return
    notes, queries = load_locomo()
    common.log(f"{len(notes)} notes, {len(queries)} questions")
    sample = [
        c.embed_text
        for m in list(notes.values())[:20]
        for c in chunk_note(m, title="", path="x.md")
    ]

    print("| model | dims | recall@5 | MRR | chunks/s | cold load (load alone) | installed |")
    print("|---|---|---|---|---|---|---|")
    for dimension in (256, 128, 64):
        embedder = StaticEmbedder.load(dimension=dimension)
        recall, mrr = evaluate(embedder.embed_array, notes, queries)
        rate = throughput(embedder, sample, 5 if args.quick else 20)
        load, alone = cold_load_seconds(dimension, 1 if args.quick else 3)
        size = installed_mb(*DEPENDENCIES)
        print(
            f"| {embedder.model} | {dimension} | {recall:.3f} | {mrr:.3f} | {rate:,.0f} |"
            f" {load * 1000:.0f} ms ({alone * 1000:.0f} ms) | {size:.0f} MB |"
        )
    print("| model2vec potion-base-8M | 256 | - | - | - | - | weights on no PyPI package |")

    embedder = StaticEmbedder.load()
    print()
    print("Chunking, wordllama 256 (semantic only, folder-filtered):")
    print("| variant | recall@5 | MRR |")
    print("|---|---|---|")
    for label, kwargs in (
        (f"chunks of {DEFAULT_MAX_TOKENS} tokens, title/path/heading prefix (memvault)", {}),
        (f"chunks of {DEFAULT_MAX_TOKENS} tokens, no prefix", {"context": False}),
        ("chunks of 64 tokens, prefix", {"max_tokens": 64}),
        ("chunks of 200 tokens, prefix", {"max_tokens": 200}),
        ("chunks of 400 tokens, prefix", {"max_tokens": 400}),
        ("whole notes", {"chunked": False}),
    ):
        recall, mrr = evaluate(embedder.embed_array, notes, queries, **kwargs)  # type: ignore[arg-type]
        print(f"| {label} | {recall:.3f} | {mrr:.3f} |")


if __name__ == "__main__":
    main()
