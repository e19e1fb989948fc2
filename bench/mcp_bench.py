"""MCP vs REST: the same search through /mcp (tools/call memory_search) and GET /v1/search.

    .venv/bin/python bench/mcp_bench.py           # 1k notes, ~1 min
    .venv/bin/python bench/mcp_bench.py --reps 20 --json

One synthetic vault (bench/synth.py, 1k notes of ~5 kB, loaded through
TransferService.import_zip) on the embedded backend, served by one real uvicorn server
on 127.0.0.1 (``create_app``: the REST API and /mcp in one process, as ``memvault
serve`` runs them). Budgets are made huge so they never refuse (the charge is still
made, on both surfaces). Each query of the synthetic query set is sent, interleaved
and in alternating order so every path sees the same cache state, as:

- REST: ``GET /v1/search?q=...&limit=5``;
- MCP 2025-06-18: a JSON-RPC ``tools/call`` of ``memory_search`` (limit 5) POSTed to
  /mcp, the handshake era desktop clients speak;
- MCP 2026-07-28: the same call with the per-request envelope (the SDK's newest);

all three over one keep-alive httpx connection each, so the difference is the server's.
The official SDK client (``mcp.client``, async, its own connection) is timed as well,
for what a client adds on its side. Figures are printed next to the target (MCP adds
at most 2 ms to the p50 of REST); nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import LATEST_PROTOCOL_VERSION

# common first among bench's own: it puts the repo root on sys.path (tests.support).
from common import log, percentile_nearest_rank
from memvault.api.app import create_app
from memvault.container import build_services
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller, Surface
from memvault.settings import Settings
from synth import VaultGenerator
from tests.support.servers import serve_app

SEED = 1
LIMIT = 5
TARGET_ADDED_MS = 2.0  # MCP adds at most this to the REST p50
HANDSHAKE = "2025-06-18"
ACCEPT = "application/json, text/event-stream"


def timed(fn: Callable[[], httpx.Response]) -> float:
    start = time.perf_counter()
    response = fn()
    elapsed = (time.perf_counter() - start) * 1000.0
    if response.status_code != 200:
        raise RuntimeError(f"{response.request.url}: {response.status_code} {response.text[:300]}")
    return elapsed


def mcp_body(query: str, n: int, *, modern: bool) -> dict[str, Any]:
    params: dict[str, Any] = {
        "name": "memory_search",
        "arguments": {"query": query, "limit": LIMIT},
    }
    if modern:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": LATEST_PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


def check_mcp(response: httpx.Response) -> httpx.Response:
    result = response.json().get("result")
    if not result or result.get("isError"):
        raise RuntimeError(f"MCP search failed: {response.text[:300]}")
    return response


def run_bench(notes: int, reps: int, warmup: int) -> dict[str, Any]:
    res: dict[str, Any] = {"notes": notes, "reps": reps}
    with tempfile.TemporaryDirectory(prefix="memvault-bench-mcp-") as tmp:
        tmpdir = Path(tmp)
        gen = VaultGenerator(notes, seed=SEED)
        zip_path = tmpdir / "vault.zip"
        gen.write_zip(zip_path)
        settings = Settings(
            backend="sqlite",
            data_dir=tmpdir / "data",
            budget_per_minute=1e12,
            budget_burst=1e12,
            log_level="WARNING",
        )
        svc = build_services(settings, clock=time.time)
        issued = svc.accounts.bootstrap_local()
        assert issued is not None
        key = issued.secret
        with zip_path.open("rb") as fh:
            report = svc.transfer.import_zip(Caller(LOCAL_ACCOUNT_ID, Surface.REST), fh)
        assert report.created == notes, report
        log(f"loaded {notes} notes")

        auth = {"Authorization": f"Bearer {key}"}
        queries = [q for _, q in gen.queries()]
        samples: dict[str, list[float]] = {"rest": [], "mcp": [], "mcp_modern": [], "sdk": []}
        with serve_app(create_app(svc)) as url:
            with (
                httpx.Client(base_url=url, headers=auth, timeout=60) as rest,
                httpx.Client(
                    base_url=url,
                    headers={**auth, "Accept": ACCEPT, "MCP-Protocol-Version": HANDSHAKE},
                    timeout=60,
                ) as mcp,
                httpx.Client(
                    base_url=url,
                    headers={
                        **auth,
                        "Accept": ACCEPT,
                        "MCP-Protocol-Version": LATEST_PROTOCOL_VERSION,
                        "Mcp-Method": "tools/call",
                        "Mcp-Name": "memory_search",
                    },
                    timeout=60,
                ) as modern,
            ):
                paths: dict[str, Callable[[str, int], httpx.Response]] = {
                    "rest": lambda q, _n: rest.get("/v1/search", params={"q": q, "limit": LIMIT}),
                    "mcp": lambda q, n: check_mcp(
                        mcp.post("/mcp", json=mcp_body(q, n, modern=False))
                    ),
                    "mcp_modern": lambda q, n: check_mcp(
                        modern.post("/mcp", json=mcp_body(q, n, modern=True))
                    ),
                }
                n = 0
                for rep in range(warmup + reps):
                    for i, query in enumerate(queries):
                        order = list(paths)
                        if (rep + i) % 2:
                            order.reverse()
                        for name in order:
                            n += 1
                            elapsed = timed(
                                lambda name=name, query=query, n=n: paths[name](query, n)
                            )
                            if rep >= warmup:
                                samples[name].append(elapsed)
            samples["sdk"] = anyio.run(sdk_samples, url, key, queries, reps, warmup)
    for name, values in samples.items():
        res[name] = {
            "n": len(values),
            "p50_ms": statistics.median(values),
            "p99_ms": percentile_nearest_rank(values, 99),
            "mean_ms": statistics.fmean(values),
        }
    return res


async def sdk_samples(
    url: str, key: str, queries: list[str], reps: int, warmup: int
) -> list[float]:
    """tools/call through the official SDK client (handshake era), client overhead included."""
    out: list[float] = []
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy") as client,
    ):
        for rep in range(warmup + reps):
            for query in queries:
                start = time.perf_counter()
                result = await client.call_tool("memory_search", {"query": query, "limit": LIMIT})
                elapsed = (time.perf_counter() - start) * 1000.0
                if result.is_error:
                    raise RuntimeError(f"SDK search failed: {result.content}")
                if rep >= warmup:
                    out.append(elapsed)
    return out


def report(res: dict[str, Any]) -> None:
    rest = res["rest"]
    print(
        f"\nMCP vs REST search, {res['notes']} notes, {rest['n']} searches per path"
        f" (python {platform.python_version()}, {platform.machine()})\n"
    )
    header = (
        f"{'path':<44} {'p50 ms':>8} {'p99 ms':>8} {'x REST p50':>11} {'+ms p50':>8} {'+ms p99':>8}"
    )
    print(header)
    print("-" * len(header))
    labels = {
        "rest": "REST  GET /v1/search",
        "mcp": f"MCP   tools/call memory_search ({HANDSHAKE})",
        "mcp_modern": f"MCP   tools/call memory_search ({LATEST_PROTOCOL_VERSION})",
        "sdk": "MCP   the same via the SDK client (async)",
    }
    for name, label in labels.items():
        row = res[name]
        ratio = row["p50_ms"] / rest["p50_ms"]
        added50 = row["p50_ms"] - rest["p50_ms"]
        added99 = row["p99_ms"] - rest["p99_ms"]
        print(
            f"{label:<44} {row['p50_ms']:>8.2f} {row['p99_ms']:>8.2f} {ratio:>11.2f}"
            f" {added50:>+8.2f} {added99:>+8.2f}"
        )
    added = res["mcp"]["p50_ms"] - rest["p50_ms"]
    verdict = "met" if added <= TARGET_ADDED_MS else "NOT met"
    print(
        f"\ntarget: MCP adds <= {TARGET_ADDED_MS:.0f} ms to the REST p50 (same connection reuse):"
        f" {added:+.2f} ms ({verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=15, help="passes over the query set")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    res = run_bench(args.notes, args.reps, args.warmup)
    report(res)
    if args.json:
        print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
