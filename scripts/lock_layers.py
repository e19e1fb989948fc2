"""Writes layers/core/locks/<Layer>.txt: each Lambda layer's wheels, pinned, with hashes.

    .venv/bin/python scripts/lock_layers.py [--check]

The versions are constraints.txt's (what `make install` puts in .venv, so what the tests
ran). For each layer of layers/core/build_layer.py's LAYERS, pip resolves its top-level
requirements (with the Core layer's) for CPython 3.12 on manylinux x86_64 and aarch64,
without installing anything (``pip install --dry-run --report``, metadata only); the
layer gets what it resolves to less what Core already has and less EXCLUDED (never
imported on Lambda). A distribution two non-core layers both need goes to Core, so no
file is in two layers of one function. Each line carries the sha256 of the wheel for
each architecture (one hash when both use the same wheel), so the layer build
(``pip install --require-hashes --no-deps``) installs exactly these files.

``--check`` writes nothing and exits 1 when the lock files differ from what it would
write (or when a wheel is missing for an architecture: the resolve fails).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "layers" / "core"))

from build_layer import (  # noqa: E402
    ARCHES,
    DATA_ONLY,
    EXCLUDED,
    LAYERS,
    LOCKS,
    pip_platform_args,
)

CONSTRAINTS = ROOT / "constraints.txt"
CORE = "CoreLayer"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


Resolved = dict[str, tuple[str, set[str]]]  # name -> (version, sha256 hashes)


def resolve(requirements: list[str], arch: str) -> Resolved:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed"]
        cmd += ["--quiet", "--disable-pip-version-check", "--report", str(report)]
        cmd += ["--target", str(Path(tmp) / "t"), "-c", str(CONSTRAINTS)]
        cmd += [*pip_platform_args(arch), *requirements]
        subprocess.run(cmd, check=True)
        data = json.loads(report.read_text(encoding="utf-8"))
    out: Resolved = {}
    for item in data["install"]:
        meta = item["metadata"]
        hashes = item["download_info"].get("archive_info", {}).get("hashes", {})
        if "sha256" not in hashes:
            raise SystemExit(f"{meta['name']}: the index gave no sha256")
        out[canonical(meta["name"])] = (meta["version"], {hashes["sha256"]})
    return out


def split(arch: str) -> dict[str, Resolved]:
    """The layers' distributions on ``arch``. DATA_ONLY wheels (the same files on every
    architecture) are resolved on x86_64 only: the layer build installs that wheel."""

    def wanted(reqs: tuple[str, ...]) -> list[str]:
        return [r for r in reqs if arch == "x86_64" or r not in DATA_ONLY]

    core_reqs = wanted(LAYERS[CORE].requirements)
    layers: dict[str, Resolved] = {CORE: resolve(core_reqs, arch)}
    for name, layer in LAYERS.items():
        if name != CORE:
            found = resolve(core_reqs + wanted(layer.requirements), arch)
            layers[name] = {k: v for k, v in found.items() if k not in layers[CORE]}
    for layer_deps in layers.values():
        for excluded in EXCLUDED:
            layer_deps.pop(excluded, None)
    seen: dict[str, str] = {}
    for name, layer_deps in layers.items():
        if name == CORE:
            continue
        for dist in list(layer_deps):
            if dist in seen:  # needed by two non-core layers: Core has it
                layers[CORE][dist] = layer_deps.pop(dist)
                layers[seen[dist]].pop(dist, None)
            else:
                seen[dist] = name
    return layers


def merged() -> dict[str, Resolved]:
    by_arch = {arch: split(arch) for arch in ARCHES}
    first, *rest = ARCHES
    out = by_arch[first]
    for arch in rest:
        for layer, deps in by_arch[arch].items():
            if set(deps) != set(out[layer]) - set(DATA_ONLY):
                raise SystemExit(f"{layer}: {arch} resolves other distributions than {first}")
            for dist, (version, hashes) in deps.items():
                if version != out[layer][dist][0]:
                    raise SystemExit(f"{dist}: {version} on {arch}, {out[layer][dist][0]}")
                out[layer][dist][1].update(hashes)
    return out


def render(layer: str, deps: Resolved) -> str:
    lines = [
        f"# {layer}: {LAYERS[layer].description}.",
        "# Written by scripts/lock_layers.py (make lock) from constraints.txt; the layer is",
        "# built from this file alone (pip --require-hashes --no-deps): do not edit by hand.",
    ]
    for dist in sorted(deps):
        version, hashes = deps[dist]
        lines.append(f"{dist}=={version} \\")
        ordered = sorted(hashes)
        for i, digest in enumerate(ordered):
            lines.append(f"    --hash=sha256:{digest}" + (" \\" if i < len(ordered) - 1 else ""))
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    stale = []
    LOCKS.mkdir(exist_ok=True)
    for layer, deps in merged().items():
        text = render(layer, deps)
        path = LOCKS / f"{layer}.txt"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, encoding="utf-8")
        print(f"{layer:<15} {len(deps):>3} distributions")
    if stale:
        print(f"out of date: {', '.join(stale)} (run make lock)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
