"""The gateway's own overhead: the same requests straight to the upstream and through memvault.

    .venv/bin/python bench/gateway.py                  # 10k notes, ~3 min with the import
    .venv/bin/python bench/gateway.py --notes 1000 --reps 3 --json

Setup, all on 127.0.0.1:
- the scripted upstream (tests/support/upstream, the one stand-in: no provider is reachable here)
  in its own process, answering every chat completion at once;
- memvault (`memvault serve`, embedded backend) in its own process, in front of it, with
  a synthetic vault (bench/synth.py, 10k notes of ~5 kB by default) and a key with recall
  on (5 notes, 2,000 tokens: the defaults);
- this process as the client: one keep-alive connection per path.

Each user message of the synthetic query set ("What do my notes say about <query>?") is
sent, interleaved and in alternating order, four ways: straight to the upstream; through
memvault with memory off (pass-through: what the extra hop alone costs); with recall on;
and with recall and the memory tools on (the model answers without calling them). Every
request's message is one memvault has not seen (the query plus a marker word no note
holds), so none is answered from the recall memo.
Non-streaming requests are timed to the last byte, streaming ones to the first body byte
(TTFB). Printed: p50/p99 per path, what memvault adds (the difference of the medians and
of the p99s), the `x-gateway-overhead-ms` header next to that difference, how the added
p50 splits between the hop and recall, and the import time of the app module (python -X
importtime, median of 5 runs) as a proxy for a Lambda cold start. Targets (never
asserted): added p50 ≤ 5 ms, p99 ≤ 25 ms, streaming TTFB added ≤ 5 ms.

Then the agent steps: each question (new each time) sent, then resent with a tool call
and its result added per step, as a client's own tool loop does; recall runs on every
step, the first one searching, the later ones reusing its block (the recall memo).

Two measurements of size follow: an agent loop that resends a long history (100k
tokens by default) with one new user message per request, straight and through
memvault (memory off, and recall on), its first request reported apart; and one request
carrying a large base64 image (3 MB by default), straight and through memvault.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

# common first among bench's own: it puts the repo root on sys.path (tests.support).
import common
from common import ROOT, percentile_rounded
from memvault.container import build_services
from memvault.domain.models import Toggles
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller, Surface
from memvault.settings import Settings
from synth import VaultGenerator
from tests.support.servers import free_port

SEED = 1
MODEL = "gpt-4o-mini"
TARGET_P50_MS = 5.0
TARGET_P99_MS = 25.0
TARGET_TTFB_MS = 5.0
UPSTREAM_SCRIPT = """
import sys, time
sys.path.insert(0, {repo!r})
from tests.support.upstream import Reply, ScriptedUpstream
up = ScriptedUpstream().start()
answer = Reply(text="Here is what I found in your notes.", input_tokens=900, output_tokens=9)
up.set_default(answer)
print(up.base_url, flush=True)
while True:
    time.sleep(60)
    up.reset()  # forget recorded requests, keep answering
    up.set_default(answer)
"""


def log(message: str) -> None:
    common.log(f"[gateway-bench] {message}")


def wait_until_up(url: str, proc: subprocess.Popen[bytes], path: str = "/healthz") -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url} exited with {proc.returncode}")
        try:
            httpx.get(url + path, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


# The paths through memvault, by the key's memory toggles. "pass-through" has memory off:
# what the extra hop alone costs (the key check, the reservation, the forwarding), so the
# report can tell it apart from what recall costs.
GATEWAY_PATHS = {
    "pass-through": Toggles(),
    "recall": Toggles(recall=True),
    "recall+tools": Toggles(recall=True, tools=True),
}


def prepare_vault(data_dir: Path, notes: int) -> tuple[dict[str, str], list[str]]:
    """The vault loaded, a key per GATEWAY_PATHS entry (path -> secret) and the queries."""
    settings = Settings(backend="sqlite", data_dir=data_dir, log_level="WARNING")
    svc = build_services(settings, clock=time.time)
    issued = svc.accounts.bootstrap_local()
    assert issued is not None
    gen = VaultGenerator(notes, seed=SEED)
    zip_path = data_dir.parent / "vault.zip"
    gen.write_zip(zip_path)
    started = time.perf_counter()
    with zip_path.open("rb") as fh:
        report = svc.transfer.import_zip(Caller(LOCAL_ACCOUNT_ID, Surface.REST), fh)
    log(f"imported {report.created} notes in {time.perf_counter() - started:.1f} s")
    keys = {
        name: svc.accounts.issue_key(LOCAL_ACCOUNT_ID, name=name, toggles=toggles).secret
        for name, toggles in GATEWAY_PATHS.items()
    }
    queries = [f"What do my notes say about {q}?" for _, q in gen.queries()]
    return keys, queries


def start_upstream() -> tuple[subprocess.Popen[bytes], str]:
    """The scripted upstream in its own process, answering; and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-c", UPSTREAM_SCRIPT.format(repo=str(ROOT))],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().decode().strip()


def serve_memvault(
    data_dir: Path,
    upstream_url: str,
    source_tree: Path | None = None,
    command: Callable[[int], list[str]] | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """`memvault serve` on ``data_dir`` in front of the upstream, up and answering; with
    ``source_tree``, that tree's layers/core first on PYTHONPATH (another build); with
    ``command``, the command line it gives for the port instead of `memvault serve`."""
    port = free_port()
    env = {
        **os.environ,
        "MEMVAULT_DATA_DIR": str(data_dir),
        "MEMVAULT_OPENAI_BASE_URL": upstream_url + "/v1",
        "MEMVAULT_OPENAI_API_KEY": "sk-bench",
        "MEMVAULT_BUDGET_PER_MINUTE": "1e12",
        "MEMVAULT_BUDGET_BURST": "1e12",
    }
    if source_tree is not None:
        env["PYTHONPATH"] = str(source_tree.resolve() / "layers" / "core")
    argv = (
        command(port)
        if command is not None
        else [str(ROOT / ".venv/bin/memvault"), "serve", "--port", str(port)]
    )
    proc = subprocess.Popen(
        argv,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url, proc)
    return proc, url


def body(question: str, *, stream: bool) -> dict[str, Any]:
    return {
        "model": MODEL,
        "max_tokens": 64,
        "stream": stream,
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": question},
        ],
    }


def timed(client: httpx.Client, path: str, payload: dict[str, Any]) -> tuple[float, float | None]:
    """(milliseconds to the last byte or, for streams, to the first body byte; header)."""
    start = time.perf_counter()
    with client.stream("POST", path, json=payload) as response:
        if response.status_code != 200:
            raise RuntimeError(f"{path}: HTTP {response.status_code}: {response.read()[:300]!r}")
        header = response.headers.get("x-gateway-overhead-ms")
        if payload["stream"]:
            chunks = response.iter_raw()
            next(chunks)
            elapsed = (time.perf_counter() - start) * 1000.0
            for _ in chunks:
                pass
        else:
            response.read()
            elapsed = (time.perf_counter() - start) * 1000.0
    return elapsed, float(header) if header is not None else None


def run(
    notes: int,
    reps: int,
    warmup: int,
    conversation_tokens: int = 0,
    steps: int = 0,
    image_bytes: int = 0,
    agent_steps: int = 0,
) -> dict[str, Any]:
    with (
        tempfile.TemporaryDirectory(prefix="memvault-bench-gateway-") as tmp,
        stopped_on_exit() as procs,
    ):
        data_dir = Path(tmp) / "data"
        keys, queries = prepare_vault(data_dir, notes)
        upstream, upstream_url = start_upstream()
        procs.append(upstream)
        gateway, gateway_url = serve_memvault(data_dir, upstream_url)
        procs.append(gateway)
        log(f"upstream {upstream_url}, memvault {gateway_url}; timing {reps} reps")
        out = measure(upstream_url, gateway_url, keys, queries, reps, warmup)
        if agent_steps > 1:
            out["agent_steps"] = measure_agent_steps(
                upstream_url, gateway_url, keys, queries, reps, agent_steps
            )
        if conversation_tokens > 0:
            history = conversation_history(VaultGenerator(notes, seed=SEED), conversation_tokens)
            log(f"long conversation: {len(history)} messages, {steps} steps")
            out["conversation"] = measure_conversation(
                upstream_url, gateway_url, keys, history, queries, steps
            )
            out["conversation"]["tokens"] = conversation_tokens
        if image_bytes > 0:
            out["image"] = measure_image(upstream_url, gateway_url, keys, image_bytes, 20)
        return out


@contextmanager
def stopped_on_exit() -> Iterator[list[subprocess.Popen[bytes]]]:
    """A list for the processes a run starts: each is terminated, and waited for, on
    the way out."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        yield procs
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)


@contextmanager
def path_clients(
    upstream_url: str,
    gateway_url: str,
    keys: dict[str, str],
    names: Sequence[str],
    name_header: str | None = None,
) -> Iterator[dict[str, httpx.Client]]:
    """One keep-alive client per path, closed after: "direct" to the upstream, each name
    through memvault with its key (and, with ``name_header``, its name in that header)."""
    clients = {"direct": httpx.Client(base_url=upstream_url, timeout=120)}
    for name in names:
        headers = {"Authorization": f"Bearer {keys[name]}"}
        if name_header is not None:
            headers[name_header] = name
        clients[name] = httpx.Client(base_url=gateway_url, headers=headers, timeout=120)
    try:
        yield clients
    finally:
        for client in clients.values():
            client.close()


def measure(
    upstream_url: str,
    gateway_url: str,
    keys: dict[str, str],
    queries: list[str],
    reps: int,
    warmup: int,
) -> dict[str, Any]:
    samples: dict[str, list[float]] = {}
    headers: dict[str, list[float]] = {}
    sent = 0
    with path_clients(upstream_url, gateway_url, keys, list(keys)) as clients:
        paths = {name: (client, "/v1/chat/completions") for name, client in clients.items()}
        for rep in range(warmup + reps):
            for i, question in enumerate(queries):
                for stream in (False, True):
                    order = list(paths)
                    if (rep + i) % 2:
                        order.reverse()
                    for name in order:
                        client, path = paths[name]
                        # Every request is a message memvault has not seen: a question
                        # seen before is answered from the recall memo (measured apart,
                        # in measure_agent_steps). The marker is one word that no note
                        # holds, so the search does the same work as for the question.
                        sent += 1
                        message = f"{question} [zx{sent}q]"
                        elapsed, header = timed(client, path, body(message, stream=stream))
                        if rep < warmup:
                            continue
                        label = f"{name}{' stream' if stream else ''}"
                        samples.setdefault(label, []).append(elapsed)
                        if header is not None:
                            headers.setdefault(label, []).append(header)
    out: dict[str, Any] = {"samples": {}, "headers": {}}
    for label, values in samples.items():
        out["samples"][label] = {
            "n": len(values),
            "p50_ms": statistics.median(values),
            "p99_ms": percentile_rounded(values, 99),
        }
    for label, values in headers.items():
        out["headers"][label] = {
            "p50_ms": statistics.median(values),
            "p99_ms": percentile_rounded(values, 99),
        }
    return out


def agent_step(question: str, step: int) -> dict[str, Any]:
    """The request of step ``step`` of a client's own tool loop on ``question``: the
    question, then ``step`` rounds of a tool call and its result."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": question},
    ]
    for round_ in range(step):
        call = f"call_{round_}"
        messages += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {"name": "lookup", "arguments": f'{{"page": {round_}}}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call, "content": f"Result page {round_}."},
        ]
    return {"model": MODEL, "max_tokens": 64, "stream": False, "messages": messages}


def measure_agent_steps(
    upstream_url: str,
    gateway_url: str,
    keys: dict[str, str],
    queries: list[str],
    reps: int,
    steps: int,
) -> dict[str, Any]:
    """A client's own tool loop: each question (new every time) is sent, then resent
    ``steps - 1`` times with the tool calls and results so far. Recall runs for the
    question at every step; the first step searches, the later ones find the block in
    the recall memo (the vault does not change)."""
    names = ("direct", "pass-through", "recall")
    first: dict[str, list[float]] = {name: [] for name in names}
    later: dict[str, list[float]] = {name: [] for name in names}
    with path_clients(upstream_url, gateway_url, keys, names[1:]) as clients:
        for rep in range(reps + 1):  # one warm-up round
            for i, query in enumerate(queries):
                question = f"{query} [zx{rep}l{i}q]"
                for step in range(steps):
                    order = list(names) if (rep + i + step) % 2 else list(reversed(names))
                    for name in order:
                        elapsed, _ = timed(
                            clients[name], "/v1/chat/completions", agent_step(question, step)
                        )
                        if rep:
                            (later if step else first)[name].append(elapsed)
    return {
        "steps": steps,
        "loops": reps * len(queries),
        "first_p50_ms": {name: statistics.median(v) for name, v in first.items()},
        "later_p50_ms": {name: statistics.median(v) for name, v in later.items()},
    }


def conversation_history(gen: VaultGenerator, target_tokens: int) -> list[dict[str, Any]]:
    """An agent's long history: alternating user and assistant turns of note-sized text
    (the synthetic vault's own notes), until it holds about ``target_tokens``."""
    from memvault.tokens import count_tokens

    history: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    total = 0
    for index, (_, markdown) in enumerate(gen.iter_notes()):
        if total >= target_tokens:
            break
        history.append({"role": "assistant" if index % 2 else "user", "content": markdown})
        total += count_tokens(markdown)
    if history[-1]["role"] == "user":
        history.append({"role": "assistant", "content": "Noted."})
    return history


def measure_conversation(
    upstream_url: str,
    gateway_url: str,
    keys: dict[str, str],
    history: list[dict[str, Any]],
    queries: list[str],
    steps: int,
) -> dict[str, Any]:
    """An agent loop: every request resends the whole history plus one new user message,
    and the history grows by that message and a short answer each step. Step 0 is the
    conversation's first request through memvault (nothing of it counted before)."""
    names = ("direct", "pass-through", "recall")
    samples: dict[str, list[float]] = {name: [] for name in names}
    first: dict[str, float] = {}
    messages = list(history)
    with path_clients(upstream_url, gateway_url, keys, names[1:]) as clients:
        for step in range(steps + 1):
            question = f"Step {step}. {queries[step % len(queries)]}"
            payload = {
                "model": MODEL,
                "max_tokens": 64,
                "stream": False,
                "messages": [*messages, {"role": "user", "content": question}],
            }
            # Step 0 in a fixed order, so its pass-through request is the first to count
            # the history; later steps alternate.
            order = list(names) if step == 0 or step % 2 else list(reversed(names))
            for name in order:
                elapsed, _ = timed(clients[name], "/v1/chat/completions", payload)
                if step == 0:
                    first[name] = elapsed
                else:
                    samples[name].append(elapsed)
            messages += [
                {"role": "user", "content": question},
                {"role": "assistant", "content": f"Answer {step}."},
            ]
    return {
        "history_bytes": len(json.dumps(history)),
        "steps": steps,
        "p50_ms": {name: statistics.median(values) for name, values in samples.items()},
        "first_ms": first,
    }


def measure_image(
    upstream_url: str, gateway_url: str, keys: dict[str, str], image_bytes: int, reps: int
) -> dict[str, Any]:
    """A request carrying one large base64 image, straight and through memvault with
    memory off: what a big body costs the hop (parsing, re-encoding, forwarding)."""
    import base64
    import random

    data = base64.b64encode(random.Random(SEED).randbytes(image_bytes)).decode()
    payload = {
        "model": MODEL,
        "max_tokens": 64,
        "stream": False,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is in this picture?"},
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
                ],
            }
        ],
    }
    samples: dict[str, list[float]] = {"direct": [], "pass-through": []}
    with path_clients(upstream_url, gateway_url, keys, ["pass-through"]) as clients:
        for rep in range(reps + 2):  # two warm-up rounds
            order = list(clients) if rep % 2 else list(reversed(clients))
            for name in order:
                elapsed, _ = timed(clients[name], "/v1/chat/completions", payload)
                if rep >= 2:
                    samples[name].append(elapsed)
    return {
        "body_bytes": len(json.dumps(payload)),
        "reps": reps,
        "p50_ms": {name: statistics.median(values) for name, values in samples.items()},
    }


def import_time_ms(module: str, runs: int = 5) -> float:
    """Median cumulative import time of ``module`` in a fresh interpreter."""
    values = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True,
            text=True,
            check=True,
        )
        pattern = re.compile(rf"\|\s*(\d+)\s*\|\s*{re.escape(module)}\s*$")
        for line in done.stderr.splitlines():
            match = pattern.search(line)
            if match:
                values.append(int(match.group(1)) / 1000.0)
    return statistics.median(values)


def report(res: dict[str, Any]) -> None:
    s, h = res["samples"], res["headers"]
    print(f"\nmemvault gateway overhead: {res['notes']} notes, recall on, embedded backend")
    print(f"machine: {res['machine']}; {res['reps']} reps x {res['queries']} queries per path")
    columns = ("p50 ms", 9), ("p99 ms", 9), ("added p50", 11), ("added p99", 11)
    print(f"{'path':<22}" + "".join(f"{name:>{width}}" for name, width in columns) + " header p50")
    for stream in ("", " stream"):
        base = s[f"direct{stream}"]
        for name in ("direct", *GATEWAY_PATHS):
            row = s[f"{name}{stream}"]
            label = f"{name}{stream}" + (" (TTFB)" if stream else "")
            line = f"{label:<22}{row['p50_ms']:>9.2f}{row['p99_ms']:>9.2f}"
            if name != "direct":
                line += f"{row['p50_ms'] - base['p50_ms']:>11.2f}"
                line += f"{row['p99_ms'] - base['p99_ms']:>11.2f}"
                header = h.get(f"{name}{stream}")
                line += f"{header['p50_ms']:>12.2f}" if header else f"{'-':>12}"
            print(line)
    added = s["recall"]["p50_ms"] - s["direct"]["p50_ms"]
    added99 = s["recall"]["p99_ms"] - s["direct"]["p99_ms"]
    ttfb = s["recall stream"]["p50_ms"] - s["direct stream"]["p50_ms"]
    print(
        f"targets: added p50 {added:.2f} ms (<= {TARGET_P50_MS}), added p99 {added99:.2f} ms"
        f" (<= {TARGET_P99_MS}), streaming TTFB added {ttfb:.2f} ms (<= {TARGET_TTFB_MS})"
    )
    print(
        f"header vs measured (recall, p50): {h['recall']['p50_ms']:.2f} ms reported,"
        f" {added:.2f} ms measured"
    )
    hop = s["pass-through"]["p50_ms"] - s["direct"]["p50_ms"]
    print(
        f"of the added p50: the hop with memory off {hop:.2f} ms,"
        f" recall on top of it {s['recall']['p50_ms'] - s['pass-through']['p50_ms']:.2f} ms"
    )
    loop = res.get("agent_steps")
    if loop:
        print(
            f"\nagent steps: a new question, then resent with its tool calls and results"
            f" ({loop['steps']} steps, {loop['loops']} loops); recall on every step"
        )
        print(f"{'path':<22}{'first step added':>18}{'later steps added':>19}")
        first, later = loop["first_p50_ms"], loop["later_p50_ms"]
        for name in ("pass-through", "recall"):
            print(
                f"{name:<22}{first[name] - first['direct']:>18.2f}"
                f"{later[name] - later['direct']:>19.2f}"
            )
    conv = res.get("conversation")
    if conv:
        print(
            f"\nlong conversation (an agent loop): a ~{conv['tokens'] // 1000}k-token history"
            f" ({conv['history_bytes'] // 1024} KB) resent with one new user message per"
            f" request; {conv['steps']} steps"
        )
        print(f"{'path':<22}{'p50 ms':>9}{'added p50':>11}{'first request added':>21}")
        p50, first = conv["p50_ms"], conv["first_ms"]
        for name in ("direct", "pass-through", "recall"):
            line = f"{name:<22}{p50[name]:>9.2f}"
            if name != "direct":
                line += f"{p50[name] - p50['direct']:>11.2f}"
                line += f"{first[name] - first['direct']:>21.2f}"
            print(line)
    image = res.get("image")
    if image:
        p50 = image["p50_ms"]
        print(
            f"\nlarge body: one base64 image, {image['body_bytes'] / 1e6:.1f} MB of JSON,"
            f" memory off, {image['reps']} reps: direct {p50['direct']:.2f} ms, through"
            f" memvault {p50['pass-through']:.2f} ms, added"
            f" {p50['pass-through'] - p50['direct']:.2f} ms"
        )
    for module, ms in res["import_ms"].items():
        print(f"import time (python -X importtime, median of 5): {module} {ms:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument(
        "--conversation-tokens",
        type=int,
        default=100_000,
        help="history size of the agent-loop measurement (0 skips it)",
    )
    parser.add_argument("--steps", type=int, default=20, help="requests in the agent loop")
    parser.add_argument(
        "--image-mb", type=float, default=3.0, help="image size of the large-body measurement"
    )
    parser.add_argument(
        "--agent-steps",
        type=int,
        default=4,
        help="requests per question in the agent-steps measurement (below 2 skips it)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    res = run(
        args.notes,
        args.reps,
        args.warmup,
        args.conversation_tokens,
        args.steps,
        int(args.image_mb * 1_000_000),
        args.agent_steps,
    )
    res.update(
        notes=args.notes,
        reps=args.reps,
        queries=len(VaultGenerator(args.notes, seed=SEED).queries()),
        machine=f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
        import_ms={
            "memvault.api.app": import_time_ms("memvault.api.app"),
            "memvault.api.routers.inference": import_time_ms("memvault.api.routers.inference"),
        },
    )
    if args.json:
        print(json.dumps(res, indent=2))
    else:
        report(res)


if __name__ == "__main__":
    main()
