"""What the bench scripts share: where imports come from, progress lines, percentiles.

The scripts run as ``.venv/bin/python bench/<name>.py``, so bench/ is sys.path[0] and the
repo root is not on sys.path at all. Importing this module (each script does, before
anything from ``tests.support``) puts the repo root first, as pytest does, so
``tests.support`` is the one copy of the test helpers the benchmarks use, and moves
bench/ last, so that no bench/<name>.py can shadow an installed package of that name
(the MCP SDK is ``mcp``) while ``import synth`` and ``import gateway`` still find bench's.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"


def _fix_sys_path() -> None:
    def where(entry: str) -> Path:
        return Path(entry or ".").resolve()

    rest = [p for p in sys.path if where(p) not in (ROOT, BENCH)]
    sys.path[:] = [str(ROOT), *rest, str(BENCH)]


_fix_sys_path()


def log(message: str) -> None:
    """A progress line on stderr (stdout is for the figures)."""
    print(message, file=sys.stderr, flush=True)


def percentile_nearest_rank(values: list[float], pct: float) -> float:
    """Nearest-rank percentile: the sample of rank round(pct% of n + 0.5), within 1..n
    (bench/run.py, aws.py, mcp_bench.py; p99 of 100 samples is the largest, of 1,000
    the 990th smallest)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(pct / 100.0 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def percentile_rounded(values: list[float], pct: float) -> float:
    """The sample at index round(pct% of (n - 1)) of the sorted values (bench/gateway*.py;
    p99 of 100 samples is the 99th smallest, of 1,000 the 990th)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))]
