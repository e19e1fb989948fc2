"""Recall assembly time and token-counting throughput (printed, never asserted).

    .venv/bin/python bench/recall.py [--runs 20]

Five notes of about 2 KB and five of about 50 KB, assembled into the default recall
block (5 notes, 2,000 tokens); count_tokens over the same text; recall sets of five
consecutive synthetic notes (bench/synth.py, ~5 kB each, the case the gateway's overhead
target is set for: typically one note fits whole and the rest are excerpted), with p50
and p90 over the sets; and estimate_request_tokens over a 100 KB chat request, as the
gateway runs it per request.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import time
from collections.abc import Callable

from memvault.domain.recall import RecallNote, assemble_recall
from memvault.tokens import count_tokens, estimate_request_tokens
from synth import VaultGenerator

SYNTH_SETS = 40  # recall sets of five consecutive synthetic notes

WORDS = [
    "launch",
    "plan",
    "beta",
    "friday",
    "checklist",
    "owner",
    "review",
    "budget",
    "vendor",
    "contract",
    "deadline",
    "meeting",
    "notes",
    "decision",
    "risk",
    "follow-up",
    "customer",
    "feedback",
    "release",
    "migration",
    "schema",
]


def note_text(rng: random.Random, size: int) -> str:
    """Markdown of about ``size`` characters: paragraphs, links, code spans and a fence."""
    parts: list[str] = ["# " + " ".join(rng.choices(WORDS, k=4))]
    length = 0
    while length < size:
        kind = rng.random()
        if kind < 0.1:
            block = "```python\n" + "\n".join(f"x_{i} = {i}" for i in range(8)) + "\n```"
        else:
            words = rng.choices(WORDS, k=rng.randint(20, 80))
            words[rng.randrange(len(words))] = f"[[{rng.choice(WORDS)}]]"
            words[rng.randrange(len(words))] = f"`{rng.choice(WORDS)}()`"
            block = " ".join(words) + "."
        parts.append(block)
        length += len(block) + 2
    return "\n\n".join(parts)


def timed(runs: int, fn: Callable[[], object]) -> float:
    """Median seconds of ``fn`` over ``runs`` calls, after one warm-up."""
    fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    rng = random.Random(7)
    start = time.perf_counter()
    count_tokens("warm up")
    print(f"tokenizer load: {(time.perf_counter() - start) * 1000:.0f} ms (once per process)")

    for size in (2_000, 50_000):
        notes = [
            RecallNote(f"n{i}.md", f"n{i}", 1_780_000_000.0, note_text(rng, size), 1.0 - i / 10)
            for i in range(5)
        ]
        text = "\n".join(n.markdown for n in notes)
        block = assemble_recall(notes, max_notes=5, token_budget=2000, count_tokens=count_tokens)
        assert block is not None
        seconds = timed(
            args.runs,
            lambda n=notes: assemble_recall(  # type: ignore[misc]
                n, max_notes=5, token_budget=2000, count_tokens=count_tokens
            ),
        )
        count_seconds = timed(args.runs, lambda t=text: count_tokens(t))  # type: ignore[misc]
        tokens = count_tokens(text)
        print(
            f"5 notes of ~{size // 1000} KB: assemble {seconds * 1000:.2f} ms"
            f" ({len(block.paths)} notes, {len(block.excerpted)} excerpted, {block.tokens} tokens);"
            f" count_tokens {tokens / count_seconds / 1e6:.1f} M tokens/s"
            f" ({len(text) / count_seconds / 1e6:.1f} MB/s of text)"
        )

    synthetic_case(args.runs)

    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": note_text(rng, 2_000)}
        for i in range(50)
    ]
    request = {"model": "gpt-4o", "messages": messages}
    size = sum(len(m["content"]) for m in messages)
    seconds = timed(args.runs, lambda: estimate_request_tokens(request))
    print(
        f"estimate_request_tokens, {size // 1000} KB chat request: {seconds * 1000:.2f} ms"
        f" ({estimate_request_tokens(request)} tokens)"
    )


def synthetic_case(runs: int) -> None:
    """5 synthetic notes of ~5 kB into 2,000 tokens: the median time of each set, then
    the p50 and p90 across sets (sets differ in how many notes fit and where cuts fall)."""
    generator = VaultGenerator(1000, seed=1)
    notes = [
        RecallNote(spec.path, spec.name, 1_780_000_000.0, markdown, 1.0)
        for spec, markdown in itertools.islice(generator.iter_notes(), 5 * SYNTH_SETS)
    ]
    medians: list[float] = []
    included = excerpted = 0
    for start in range(0, len(notes), 5):
        group = notes[start : start + 5]
        block = assemble_recall(group, max_notes=5, token_budget=2000, count_tokens=count_tokens)
        assert block is not None and block.tokens <= 2000
        included += len(block.paths)
        excerpted += len(block.excerpted)
        medians.append(
            timed(
                runs,
                lambda g=group: assemble_recall(  # type: ignore[misc]
                    g, max_notes=5, token_budget=2000, count_tokens=count_tokens
                ),
            )
        )
    p50 = statistics.median(medians)
    p90 = statistics.quantiles(medians, n=10)[-1]
    print(
        f"5 synthetic notes of ~5 kB, 2,000 tokens ({SYNTH_SETS} sets): assemble p50"
        f" {p50 * 1000:.2f} ms, p90 {p90 * 1000:.2f} ms"
        f" ({included / SYNTH_SETS:.1f} notes, {excerpted / SYNTH_SETS:.1f} excerpted a set)"
    )


if __name__ == "__main__":
    main()
