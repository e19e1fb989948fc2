"""Two builds of memvault side by side: what each adds, on the same requests, interleaved.

    git worktree add /tmp/old <commit>
    .venv/bin/python bench/gateway_ab.py --a /tmp/old --b .        # 10k notes, ~3 min
    .venv/bin/python bench/gateway_ab.py --a /tmp/old --b . --notes 1000 --reps 4

On this shared 2-vCPU VM the same code measures up to 1.5 ms apart from one run of
bench/gateway.py to the next, so comparing two runs cannot show a change worth a few
tenths of a millisecond. Here both builds serve at once, each in its own process on its
own copy of one synthetic vault, behind the same scripted upstream; every message goes
straight to the upstream, through A and through B, in rotating order, so a slow patch
of the machine falls on all three alike. Every message is new (a marker word no note
holds), with recall on, as in bench/gateway.py. Printed: the added p50 and p99 and the
`x-gateway-overhead-ms` header per build, and B minus A. Swap --a and --b for a second
opinion: the first server started can be a little faster or slower.

A build is a source tree (a checkout or a worktree); its layers/core is put first on
PYTHONPATH of `memvault serve`, with this checkout's virtualenv.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

import httpx

from common import percentile_rounded
from gateway import body, prepare_vault, serve_memvault, start_upstream, stopped_on_exit, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--a", type=Path, required=True, help="source tree of build A")
    parser.add_argument("--b", type=Path, required=True, help="source tree of build B")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=16)
    args = parser.parse_args()
    builds = {"A": args.a, "B": args.b}
    with (
        tempfile.TemporaryDirectory(prefix="memvault-bench-ab-") as tmp,
        stopped_on_exit() as procs,
    ):
        source = Path(tmp) / "source"
        keys, queries = prepare_vault(source / "data", args.notes)
        upstream, upstream_url = start_upstream()
        procs.append(upstream)
        clients = {"direct": httpx.Client(base_url=upstream_url, timeout=120)}
        for name, tree in builds.items():
            data = Path(tmp) / name
            shutil.copytree(source / "data", data)
            proc, url = serve_memvault(data, upstream_url, tree)
            procs.append(proc)
            clients[name] = httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {keys['recall']}"}
            )
        samples = run(clients, queries, args.reps)
    report(builds, samples, args.notes, args.reps, len(queries))


def run(
    clients: dict[str, httpx.Client], queries: list[str], reps: int
) -> dict[tuple[str, bool], list[float]]:
    """(path, stream) -> milliseconds; and (path + " header", stream) -> the header."""
    samples: dict[tuple[str, bool], list[float]] = {}
    names = list(clients)
    sent = 0
    for rep in range(reps + 1):  # the first round warms up
        for i, question in enumerate(queries):
            for stream in (False, True):
                shift = (rep * len(queries) + i) % len(names)
                for name in names[shift:] + names[:shift]:
                    sent += 1
                    payload = body(f"{question} [zx{sent}q]", stream=stream)
                    elapsed, header = timed(clients[name], "/v1/chat/completions", payload)
                    if rep == 0:
                        continue
                    samples.setdefault((name, stream), []).append(elapsed)
                    if header is not None:
                        samples.setdefault((name + " header", stream), []).append(header)
    return samples


def report(
    builds: dict[str, Path],
    samples: dict[tuple[str, bool], list[float]],
    notes: int,
    reps: int,
    queries: int,
) -> None:
    print(f"\nmemvault A/B: {notes} notes, recall on, {reps} reps x {queries} queries, interleaved")
    for name, tree in builds.items():
        print(f"  {name}: {tree.resolve()}")
    print(f"{'':8}{'direct':>8}  {'A added':>16}  {'B added':>16}  {'B - A':>7}")
    print(f"{'':8}{'p50':>8}  {'p50 / p99 / hdr':>16}  {'p50 / p99 / hdr':>16}  {'p50':>7}")
    for stream in (False, True):
        direct = samples[("direct", stream)]
        base = statistics.median(direct)
        added = {}
        cells = []
        for name in builds:
            values = samples[(name, stream)]
            added[name] = statistics.median(values) - base
            p99 = percentile_rounded(values, 99) - percentile_rounded(direct, 99)
            header = statistics.median(samples[(name + " header", stream)])
            cells.append(f"{added[name]:5.2f}/{p99:5.2f}/{header:4.2f}")
        label = "TTFB" if stream else "whole"
        diff = added["B"] - added["A"]
        print(f"{label:8}{base:8.2f}  {cells[0]:>16}  {cells[1]:>16}  {diff:+7.2f}")


if __name__ == "__main__":
    main()
