"""The Responses format's overhead next to Chat Completions: the same requests, one run.

    .venv/bin/python bench/responses.py                  # 1k notes, 3 reps, about a minute
    .venv/bin/python bench/responses.py --notes 10000 --reps 5 --json

The setup is bench/gateway.py's (scripted upstream and `memvault serve` in their own
processes on 127.0.0.1, a synthetic vault, a key per path: pass-through, recall, recall
and the memory tools). Each question of the synthetic query set is sent through memvault
as a chat completion (``messages``) and as a response (the same system text as
``instructions``, the question as ``input``), interleaved and in alternating order, whole
and streamed (streams timed to the first body byte). The scripted upstream answers both
formats at once, so the difference of the medians is what the Responses format costs
memvault more (or less) than chat. Target (never asserted): within 1 ms p50 of chat
completions on every path.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

import httpx

# common first among bench's own: it puts the repo root on sys.path (tests.support).
import common  # noqa: F401
from common import percentile_rounded
from gateway import (
    MODEL,
    log,
    prepare_vault,
    serve_memvault,
    start_upstream,
    stopped_on_exit,
    timed,
)

TARGET_MS = 1.0
FORMATS = {"chat": "/v1/chat/completions", "responses": "/v1/responses"}


def payload(fmt: str, question: str, *, stream: bool) -> dict[str, Any]:
    if fmt == "chat":
        return {
            "model": MODEL,
            "max_tokens": 64,
            "stream": stream,
            "messages": [
                {"role": "system", "content": "You are a helpful assistant."},
                {"role": "user", "content": question},
            ],
        }
    return {
        "model": MODEL,
        "max_output_tokens": 64,
        "stream": stream,
        "instructions": "You are a helpful assistant.",
        "input": question,
    }


def measure(
    gateway_url: str, keys: dict[str, str], queries: list[str], reps: int, warmup: int
) -> dict[str, Any]:
    samples: dict[tuple[str, str, bool], list[float]] = {}
    clients = {
        name: httpx.Client(
            base_url=gateway_url, headers={"Authorization": f"Bearer {secret}"}, timeout=120
        )
        for name, secret in keys.items()
    }
    sent = 0
    try:
        for rep in range(warmup + reps):
            for i, query in enumerate(queries):
                for name, client in clients.items():
                    order = list(FORMATS) if (rep + i) % 2 == 0 else list(FORMATS)[::-1]
                    for stream in (False, True):
                        for fmt in order:
                            # A marker no note holds, alike for both formats: never
                            # answered from the recall memo, the same search's cost.
                            question = f"{query} (zx{sent:06d})"
                            elapsed, _ = timed(
                                client, FORMATS[fmt], payload(fmt, question, stream=stream)
                            )
                            sent += 1
                            if rep >= warmup:
                                samples.setdefault((name, fmt, stream), []).append(elapsed)
    finally:
        for client in clients.values():
            client.close()
    log(f"{sent} requests")
    rows = []
    for name in keys:
        for stream in (False, True):
            chat, responses = samples[(name, "chat", stream)], samples[(name, "responses", stream)]
            rows.append(
                {
                    "path": name + (" stream" if stream else ""),
                    "n": len(chat),
                    "chat_p50_ms": statistics.median(chat),
                    "responses_p50_ms": statistics.median(responses),
                    "chat_p99_ms": percentile_rounded(chat, 99),
                    "responses_p99_ms": percentile_rounded(responses, 99),
                    "added_p50_ms": statistics.median(responses) - statistics.median(chat),
                }
            )
    return {"rows": rows, "target_ms": TARGET_MS}


def report(out: dict[str, Any]) -> None:
    print(
        f"{'path':<24}{'n':>5}{'chat p50':>10}{'resp p50':>10}{'added':>8}{'chat p99':>10}"
        f"{'resp p99':>10}"
    )
    for row in out["rows"]:
        print(
            f"{row['path']:<24}{row['n']:>5}{row['chat_p50_ms']:>10.2f}"
            f"{row['responses_p50_ms']:>10.2f}{row['added_p50_ms']:>8.2f}"
            f"{row['chat_p99_ms']:>10.2f}{row['responses_p99_ms']:>10.2f}"
        )
    worst = max(row["added_p50_ms"] for row in out["rows"])
    verdict = "met" if worst <= TARGET_MS else "missed"
    print(f"target: Responses within {TARGET_MS} ms p50 of chat: worst {worst:+.2f} ms ({verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="memvault-bench-responses-") as tmp,
        stopped_on_exit() as procs,
    ):
        data_dir = Path(tmp) / "data"
        keys, queries = prepare_vault(data_dir, args.notes)
        upstream, upstream_url = start_upstream()
        procs.append(upstream)
        gateway, gateway_url = serve_memvault(data_dir, upstream_url)
        procs.append(gateway)
        out = measure(gateway_url, keys, queries, args.reps, args.warmup)
    out["notes"] = args.notes
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        report(out)


if __name__ == "__main__":
    main()
