"""Response cache: a hit's latency next to a direct call to the upstream, in one run.

    .venv/bin/python bench/cache.py [--reps 300]

The scripted upstream (tests/support/upstream) answers in its own process with no
thinking time, so "direct" is the floor a real provider never reaches (it adds hundreds
of milliseconds); memvault (`memvault serve`, embedded backend) runs in front of it. Three
paths, the same request body each time:
- direct: the upstream itself;
- memvault, cache off (``x-cache: off``): the hop to the upstream and back;
- memvault, cache hit (``x-cache: on``, after one miss): answered from SQLite.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import httpx

import common
from gateway import serve_memvault, start_upstream, stopped_on_exit
from memvault.container import build_services
from memvault.domain.models import Toggles
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.settings import Settings

BODY = {
    "model": "gpt-4o-mini",
    "messages": [{"role": "user", "content": "Name three prime numbers, please."}],
}


def timed(client: httpx.Client, headers: dict[str, str], reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        started = time.perf_counter()
        answer = client.post("/chat/completions", json=BODY, headers=headers)
        out.append((time.perf_counter() - started) * 1000)
        answer.raise_for_status()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=300)
    reps = parser.parse_args().reps
    with tempfile.TemporaryDirectory() as tmp, stopped_on_exit() as procs:
        data_dir = Path(tmp) / "data"
        svc = build_services(Settings(backend="sqlite", data_dir=data_dir, embeddings="off"))
        svc.accounts.bootstrap_local()
        secret = svc.accounts.issue_key(LOCAL_ACCOUNT_ID, name="bench", toggles=Toggles()).secret
        upstream, upstream_url = start_upstream()
        procs.append(upstream)
        gateway, gateway_url = serve_memvault(data_dir, upstream_url)
        procs.append(gateway)
        auth = {"Authorization": f"Bearer {secret}"}
        with (
            httpx.Client(base_url=upstream_url + "/v1", timeout=60) as direct,
            httpx.Client(base_url=gateway_url + "/v1", timeout=60, headers=auth) as memvault,
        ):
            first = memvault.post("/chat/completions", json=BODY, headers={"x-cache": "on"})
            assert first.headers["x-cache"] == "miss", first.headers
            time.sleep(0.5)  # the miss is kept once its answer is settled
            for client, headers in ((direct, {}), (memvault, {"x-cache": "off"})):
                timed(client, headers, 20)  # warm-up
            figures = {
                "direct upstream": timed(direct, {}, reps),
                "memvault, cache off": timed(memvault, {"x-cache": "off"}, reps),
                "memvault, cache hit": timed(memvault, {"x-cache": "on"}, reps),
            }
            check = memvault.post("/chat/completions", json=BODY, headers={"x-cache": "on"})
            assert check.headers["x-cache"] == "hit", check.headers
    base = statistics.median(figures["direct upstream"])
    print(f"{'path':24} {'p50 ms':>8} {'p90 ms':>8} {'x direct':>9}")
    for name, samples in figures.items():
        p50 = statistics.median(samples)
        p90 = common.percentile_nearest_rank(samples, 90)
        print(f"{name:24} {p50:8.2f} {p90:8.2f} {p50 / base:9.2f}")


if __name__ == "__main__":
    main()
