"""Per-test and per-fixture CPU of a run, for finding what the suite spends its time on.

Off unless asked for: ``pytest -p tests.support.cpu_report`` with
``MEMVAULT_TEST_CPU_REPORT=<path>`` writes ``<path>.<worker>.jsonl``: one line per test
phase (setup, call, teardown: wall and process CPU, threads and reaped children
included) and one per fixture setup. ``python -m tests.support.cpu_report <path>`` sums
them by test, module and fixture. Nothing is asserted.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections.abc import Generator
from typing import Any

import pytest

_OUT = os.environ.get("MEMVAULT_TEST_CPU_REPORT", "")
_rows: list[dict[str, Any]] = []
# CPU the process spent in the garbage collector, per generation (with the other threads'
# CPU of that time: a process clock).
_gc_cpu = [0.0, 0.0, 0.0]
_gc_started: list[float] = [0.0]


def _on_gc(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _gc_started[0] = time.process_time()
    else:
        _gc_cpu[info["generation"]] += time.process_time() - _gc_started[0]


if _OUT:
    gc.callbacks.append(_on_gc)


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _measure(kind: str, name: str, phase: str) -> Generator[None, Any, None]:
    wall, cpu = time.perf_counter(), _cpu()
    yield
    _rows.append(
        {
            "kind": kind,
            "name": name,
            "phase": phase,
            "wall": round(time.perf_counter() - wall, 4),
            "cpu": round(_cpu() - cpu, 4),
            "end": round(time.time(), 3),  # when it ended: each worker's timeline
        }
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, None]:
    yield from _measure("test", item.nodeid, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, None]:
    yield from _measure("test", item.nodeid, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, Any, None]:
    yield from _measure("test", item.nodeid, "teardown")


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(
    fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest
) -> Generator[None, Any, None]:
    yield from _measure("fixture", f"{fixturedef.baseid}::{fixturedef.argname}", "setup")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _OUT:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{_OUT}.{worker}.jsonl", "w", encoding="utf-8") as fh:
        for row in _rows:
            fh.write(json.dumps(row) + "\n")
        process = {
            "kind": "process",
            "name": worker,
            "cpu": _cpu(),
            "gc": _gc_cpu,
            "end": round(time.time(), 3),
        }
        fh.write(json.dumps(process) + "\n")


def _summary(prefix: str, top: int) -> None:
    import glob
    from collections import defaultdict

    tests: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    fixtures: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    processes = 0.0
    collector = [0.0, 0.0, 0.0]
    for path in glob.glob(f"{prefix}.*.jsonl"):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                if row["kind"] == "process":
                    processes += row["cpu"]
                    for generation, cpu in enumerate(row.get("gc", ())):
                        collector[generation] += cpu
                elif row["kind"] == "test":
                    tests[row["name"]][0] += row["wall"]
                    tests[row["name"]][1] += row["cpu"]
                    module = modules[row["name"].split("::")[0]]
                    module[0] += row["wall"]
                    module[1] += row["cpu"]
                    module[2] += row["phase"] == "call"
                else:
                    fixture = fixtures[row["name"]]
                    fixture[0] += row["wall"]
                    fixture[1] += row["cpu"]
                    fixture[2] += 1
    print(
        f"worker processes: {processes:.1f} s CPU; "
        f"in tests: {sum(c for _, c in tests.values()):.1f} s; "
        f"in the garbage collector: {sum(collector):.1f} s "
        f"(generations 0, 1, 2: {', '.join(f'{c:.1f}' for c in collector)})"
    )
    print(f"\n{'cpu s':>8} {'wall s':>8}  test (top {top} by CPU)")
    for name, (wall, cpu) in sorted(tests.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{cpu:8.2f} {wall:8.2f}  {name}")
    print(f"\n{'cpu s':>8} {'wall s':>8} {'tests':>6}  module")
    for name, (wall, cpu, n) in sorted(modules.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{cpu:8.2f} {wall:8.2f} {n:6.0f}  {name}")
    print(
        f"\n{'cpu s':>8} {'wall s':>8} {'setups':>6}  fixture "
        "(its own setup, not that of the fixtures it asks for)"
    )
    for name, (wall, cpu, n) in sorted(fixtures.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{cpu:8.2f} {wall:8.2f} {n:6.0f}  {name}")


if __name__ == "__main__":
    import sys

    _summary(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 60)
