"""Package check: builds the Lambda layer as `sam build` would and reports its size.

    .venv/bin/python scripts/package_check.py [--keep DIR] [--import-times N]

Installs layers/core/requirements.txt for the Lambda platform (manylinux wheels for
CPython 3.12 on x86_64, the template's runtime and architecture; no Docker needed),
adds the memvault package under python/ (what layers/core/Makefile does), and prints
the unzipped and zipped size of the layer and of each function plus the layer. Lambda
refuses a function whose unzipped code and layers exceed 250 MB, so the script exits 1
past that. boto3/botocore are in the layer (requirements.txt says why), counted here.
The Lambda Web Adapter layer the inference function also uses is not counted (it is
AWS's public layer, a few MB).

``--import-times N`` adds the cold start proxy: each function's entry module imported
N times in a fresh interpreter (python -X importtime; the median of the entry module's
cumulative time, which includes its module body: building the services). It runs the
entry modules against this interpreter's packages on the embedded backend (no AWS
calls), so the AWS-only adapters are not in the figure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "layers" / "core" / "requirements.txt"
PACKAGE = ROOT / "layers" / "core" / "memvault"
FUNCTIONS = ("inference", "management", "mcp", "retention")
LIMIT_BYTES = 250 * 1024 * 1024  # Lambda: function + layers, unzipped
PIP_PLATFORM = [
    "--platform",
    "manylinux2014_x86_64",
    "--implementation",
    "cp",
    "--python-version",
    "3.12",
    "--only-binary=:all:",
]


def build_layer(target: Path) -> Path:
    python_dir = target / "python"
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-compile", *PIP_PLATFORM]
    cmd += ["--target", str(python_dir), "-r", str(REQUIREMENTS)]
    subprocess.run(cmd, check=True)
    shutil.copytree(PACKAGE, python_dir / "memvault", ignore=_ignored)
    return target


def _ignored(_dir: str, names: list[str]) -> set[str]:
    return {n for n in names if n == "__pycache__" or n.endswith(".pyc")}


def tree_bytes(path: Path) -> int:
    return sum(
        f.stat().st_size for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts
    )


def zipped_bytes(path: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "a.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(path.rglob("*")):
                if f.is_file() and "__pycache__" not in f.parts:
                    zf.write(f, f.relative_to(path))
        return archive.stat().st_size


def largest_packages(python_dir: Path, n: int = 8) -> list[tuple[str, int]]:
    sizes = [
        (p.name, tree_bytes(p) if p.is_dir() else p.stat().st_size) for p in python_dir.iterdir()
    ]
    return sorted(sizes, key=lambda s: s[1], reverse=True)[:n]


def import_time_ms(function: str, runs: int) -> float:
    """Median cumulative import time of functions/<function>/app.py, in ms."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(ROOT / "layers" / "core"), str(ROOT / "functions" / function)]
        ),
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "memvault",
        "MEMVAULT_BACKEND": "sqlite",
    }
    samples: list[float] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as data:
            env["MEMVAULT_DATA_DIR"] = data
            out = subprocess.run(
                [sys.executable, "-X", "importtime", "-c", "import app"],
                cwd=ROOT / "functions" / function,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
        for line in out.stderr.splitlines():
            # "import time:  self [us] | cumulative | imported package"
            parts = line.split("|")
            if len(parts) == 3 and parts[2].strip() == "app" and not parts[2].startswith("  "):
                samples.append(int(parts[1]) / 1000.0)
    return statistics.median(samples)


def mb(n: int) -> str:
    return f"{n / 1_000_000:7.1f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="build the layer here and keep it")
    parser.add_argument("--import-times", type=int, default=0, metavar="N")
    args = parser.parse_args()
    tmp = None
    if args.keep:
        target = args.keep
        shutil.rmtree(target, ignore_errors=True)
    else:
        tmp = tempfile.TemporaryDirectory()
        target = Path(tmp.name)
    try:
        build_layer(target)
        layer = tree_bytes(target)
        print(
            f"layer (python3.12, manylinux2014_x86_64): {mb(layer)} unzipped,"
            f" {mb(zipped_bytes(target))} zipped"
        )
        for name, size in largest_packages(target / "python"):
            print(f"    {name:<32} {mb(size)}")
        worst = 0
        for function in FUNCTIONS:
            code = tree_bytes(ROOT / "functions" / function)
            total = code + layer
            worst = max(worst, total)
            print(f"{function:<11} code {code:>8} B + layer = {mb(total)} of 250 MB unzipped")
        if args.import_times:
            for function in FUNCTIONS:
                ms = import_time_ms(function, args.import_times)
                runs = args.import_times
                print(f"{function:<11} entry module import (median of {runs}): {ms:7.0f} ms")
        if worst > LIMIT_BYTES:
            print(f"over Lambda's limit: {mb(worst)} > 250 MB", file=sys.stderr)
            return 1
        return 0
    finally:
        if tmp is not None:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
