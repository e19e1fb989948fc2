"""Where a gateway request's time goes inside memvault: one timeline per path.

    .venv/bin/python bench/gateway_timeline.py                 # 10k notes, ~1 min
    .venv/bin/python bench/gateway_timeline.py --notes 1000 --reps 4

bench/gateway.py says how much memvault adds; this says where. memvault runs here as
`memvault serve` does (the same app under uvicorn, embedded backend, a synthetic vault,
the scripted upstream behind it), except that the server process is this file with
``--serve``: before the app starts it installs a recorder on memvault's span hook
(``memvault.spans``, the steps the gateway marks) and wraps uvicorn's protocol methods
to see each request's first byte. The client sends new messages (as bench/gateway.py
does) straight to the upstream and through memvault with memory off and with recall
on, non-streaming, interleaved; the server keeps one timeline per request and hands
them over when it stops.

Printed, per path: for each step (app entry, route handler, body read, the worker thread
picking the planning up and finishing it, the event loop resuming, the provider call sent
and answered, memvault's headers ready, the response's headers and body written to the
socket) the median time since the request's first byte reached uvicorn, and the median
length of the step itself; then the `x-gateway-overhead-ms` header and the added time
the client measured. The clocks cost a few microseconds each; a step memvault no
longer marks has no readings, and the report stops with an error rather than print
without it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from gateway import (
    body,
    path_clients,
    prepare_vault,
    serve_memvault,
    start_upstream,
    stopped_on_exit,
    timed,
)
from memvault import spans

PATH_HEADER = "x-bench-path"
PATHS = ("pass-through", "recall")
# (label, stamp): stamps are milliseconds after the request's first byte reached uvicorn.
STEPS = (
    ("app entry (uvicorn parsed the request)", "app"),
    ("route handler called", spans.ROUTE),
    ("body read", spans.BODY_READ),
    ("worker thread starts the planning", spans.WORKER_START),
    ("worker thread done (key, parse, recall, hold)", spans.WORKER_DONE),
    ("event loop resumes the request", spans.WORKER_RESUMED),
    ("provider call starts", spans.UPSTREAM_CALL),
    ("provider answered (read whole)", spans.UPSTREAM_ANSWER),
    ("memvault's headers ready", spans.HEADERS),
    ("response built, its headers go to uvicorn", "start_in"),
    ("headers written to the socket", "start_out"),
    ("body written: the last byte is out", "sent"),
)


# ---------------------------------------------------------------------- the server side
def serve(port: int, out: Path) -> None:
    """memvault's app under uvicorn, as `memvault serve` runs it, with clocks added."""
    import uvicorn
    from uvicorn.protocols.http import httptools_impl

    from memvault.api.app import create_app
    from memvault.container import get_services

    stamps: dict[str, float] = {}  # the request in progress (the client sends one at a time)
    records: list[dict[str, Any]] = []
    now = time.perf_counter

    def first(name: str) -> None:
        stamps.setdefault(name, now())

    # memvault's own steps: its span hook, which calls this at each (memvault.spans).
    spans.install(first)

    # The first byte's arrival is uvicorn's: its protocol's methods are wrapped.
    protocol = httptools_impl.HttpToolsProtocol
    data_received = protocol.data_received
    headers_complete = protocol.on_headers_complete
    message_complete = protocol.on_message_complete

    def on_data(self: Any, data: bytes) -> None:
        if not getattr(self, "_bench_reading", False):
            self._bench_reading, self._bench_first_byte = True, now()
        data_received(self, data)

    def on_headers(self: Any) -> None:
        headers_complete(self)
        self.scope["state"]["bench_first_byte"] = self._bench_first_byte

    def on_message(self: Any) -> None:
        self._bench_reading = False
        message_complete(self)

    protocol.data_received = on_data  # type: ignore[method-assign]
    protocol.on_headers_complete = on_headers  # type: ignore[method-assign]
    protocol.on_message_complete = on_message  # type: ignore[method-assign]

    def outermost(app: Any) -> Callable[[Any, Any, Any], Awaitable[None]]:
        async def timeline(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            stamps.clear()
            stamps["app"] = now()
            header: dict[str, float] = {}

            async def noting_send(message: Any) -> None:
                if message["type"] == "http.response.start":
                    for name, value in message.get("headers", []):
                        if name == b"x-gateway-overhead-ms":
                            header["ms"] = float(value)
                if message["type"] == "http.response.start":
                    first("start_in")
                await send(message)
                if message["type"] == "http.response.start":
                    first("start_out")
                if message["type"] == "http.response.body" and not message.get("more_body"):
                    first("sent")

            await app(scope, receive, noting_send)
            path = dict(scope["headers"]).get(PATH_HEADER.encode(), b"").decode()
            if path and "ms" in header:
                zero = scope["state"]["bench_first_byte"]
                entry = {name: (at - zero) * 1000.0 for name, at in stamps.items()}
                records.append({"path": path, "header_ms": header["ms"], **entry})

        return timeline

    def dump_and_exit(*_: object) -> None:
        out.write_text(json.dumps(records))
        os._exit(0)

    signal.signal(signal.SIGTERM, dump_and_exit)
    app = create_app(get_services())
    uvicorn.run(outermost(app), host="127.0.0.1", port=port, log_level="warning")


# ---------------------------------------------------------------------- the client side
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), Path(args.serve[1]))
        return

    with (
        tempfile.TemporaryDirectory(prefix="memvault-bench-timeline-") as tmp,
        stopped_on_exit() as procs,
    ):
        data_dir, out = Path(tmp) / "data", Path(tmp) / "timelines.json"
        keys, queries = prepare_vault(data_dir, args.notes)
        upstream, upstream_url = start_upstream()
        procs.append(upstream)
        server, gateway_url = serve_memvault(
            data_dir,
            upstream_url,
            command=lambda port: [sys.executable, __file__, "--serve", str(port), str(out)],
        )
        procs.append(server)
        measured = drive(upstream_url, gateway_url, keys, queries, args.reps, args.warmup)
        server.terminate()
        server.wait(timeout=10)
        report(json.loads(out.read_text()), measured, args.warmup * len(queries))


def drive(
    upstream_url: str,
    gateway_url: str,
    keys: dict[str, str],
    queries: list[str],
    reps: int,
    warmup: int,
) -> dict[str, float]:
    """Median time to the last byte per path, the client's clock; "direct" included."""
    samples: dict[str, list[float]] = {name: [] for name in ("direct", *PATHS)}
    sent = 0
    with path_clients(upstream_url, gateway_url, keys, PATHS, PATH_HEADER) as clients:
        for rep in range(warmup + reps):
            for i, question in enumerate(queries):
                order = list(clients) if (rep + i) % 2 else list(reversed(clients))
                for name in order:
                    sent += 1
                    payload = body(f"{question} [zx{sent}t]", stream=False)
                    elapsed, _ = timed(clients[name], "/v1/chat/completions", payload)
                    if rep >= warmup:
                        samples[name].append(elapsed)
    return {name: statistics.median(values) for name, values in samples.items()}


def report(records: list[dict[str, Any]], measured: dict[str, float], skip: int) -> None:
    """Per path and step: the median of each request's time at that step, and the median
    of the step's own length (from the step before it, request by request; medians of
    times do not add up, the steps' own lengths show where the time goes)."""
    by_path = {path: [r for r in records if r["path"] == path][skip:] for path in PATHS}

    def median(path: str, field: str) -> float:
        return statistics.median(r[field] for r in by_path[path] if field in r)

    def step_length(path: str, field: str, before: str | None) -> float:
        return statistics.median(
            r[field] - (r[before] if before else 0.0)
            for r in by_path[path]
            if field in r and (before is None or before in r)
        )

    print("\nmemvault gateway timeline, ms from the request's first byte in uvicorn: at / step")
    print(f"(median of {min(len(v) for v in by_path.values())} new messages per path)")
    print(f"{'step':48}" + "".join(f"{path:>20}" for path in PATHS))
    before: str | None = None
    for label, field in STEPS:
        cells = "".join(
            f"{median(path, field):11.3f} /{step_length(path, field, before):6.3f}"
            for path in PATHS
        )
        print(f"{label:48}{cells}")
        before = field
    rows = {
        "x-gateway-overhead-ms header": lambda p: median(p, "header_ms"),
        "provider time (answered - call starts)": lambda p: step_length(
            p, spans.UPSTREAM_ANSWER, spans.UPSTREAM_CALL
        ),
        "added, client's clock (through - direct)": lambda p: measured[p] - measured["direct"],
    }
    for label, value in rows.items():
        print(f"{label:48}" + "".join(f"{value(path):19.3f} " for path in PATHS))
    print(f"direct to the upstream, client's clock: {measured['direct']:.3f} ms")


if __name__ == "__main__":
    main()
