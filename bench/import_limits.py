"""How fast, and holding how much memory, an embedded import refuses hostile archives.

    .venv/bin/python bench/import_limits.py

Two archives the import must refuse (issue 23's figures, target <= 100 MB and <= 2 s):
- a padded archive: 1,024 notes of 1 MiB of one repeated character (1 GiB unpacked, a
  few MB packed), past the vault's 512 MiB byte quota;
- a flood: 50,000 tiny notes, past the 25,000-note limit;
and, next to them, a legitimate import of 1,000 notes, to compare. Each runs in a fresh
interpreter so its peak resident memory (ru_maxrss) is its own; the archive is written
to a temporary file first (not timed).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import common

MiB = 1024 * 1024

ONE_RUN = r"""
import io, json, resource, sys, time
from memvault.container import build_services
from memvault.errors import MemvaultError
from memvault.services.context import Caller, Surface
from memvault.settings import Settings

data_dir, archive = sys.argv[1], sys.argv[2]
services = build_services(Settings(backend="sqlite", data_dir=data_dir, embeddings="off"))
services.accounts.bootstrap_local()
caller = Caller(account_id="local", surface=Surface.REST)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
outcome = "imported"
with open(archive, "rb") as fh:
    try:
        services.transfer.import_zip(caller, fh)
    except MemvaultError as exc:
        outcome = exc.code
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"outcome": outcome, "seconds": elapsed, "peak_mb": peak / 1024,
                  "grew_mb": (peak - before) / 1024}))
"""


def write_archive(path: Path, entries: int, size: int, char: str = "a") -> None:
    body = (char * size).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for i in range(entries):
            zf.writestr(f"n/{i:06d}.md", body if size else f"note {i}".encode())


def run(archive: Path) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as data_dir:
        done = subprocess.run(
            [sys.executable, "-c", ONE_RUN, data_dir, str(archive)],
            capture_output=True,
            text=True,
            check=True,
        )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cases = {
            "padded 1 GiB (1,024 x 1 MiB)": (Path(tmp, "padded.zip"), 1024, MiB),
            "flood (50,000 tiny notes)": (Path(tmp, "flood.zip"), 50_000, 0),
            "legitimate (1,000 x 2 KiB)": (Path(tmp, "fine.zip"), 1000, 2048),
        }
        print(f"{'archive':32} {'packed MB':>10} {'outcome':>18} {'seconds':>8} {'peak MB':>8}")
        for name, (path, entries, size) in cases.items():
            common.log(f"writing {name}")
            write_archive(path, entries, size)
            common.log(f"importing {name}")
            got = run(path)
            packed = path.stat().st_size / MiB
            print(
                f"{name:32} {packed:10.1f} {got['outcome']!s:>18}"
                f" {got['seconds']:8.2f} {got['peak_mb']:8.1f}"
            )


if __name__ == "__main__":
    main()
