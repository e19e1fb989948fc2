"""The write screen's engine as stored ahead of time (memvault.domain.screening_built).

The stored table only saves a process the build's CPU (ADR 0077): a table that no
longer matches the rules must fail here, never change a verdict.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from memvault.domain import screening, screening_built
from memvault.domain.screening_gate import Gate, derive_gate, gate_key, literal_prefixes

ROOT = Path(__file__).resolve().parents[2]


def test_the_stored_tables_are_what_the_build_derives_now() -> None:
    """Every stored table names the patterns the rules compile now, this
    interpreter's holds exactly the code, prefixes and gate the build derives, and each
    pattern made from it equals re.compile's (scripts/build_screen_engine.py --check)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_screen_engine.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_the_engine_in_this_process_comes_from_the_table_and_equals_a_compiled_one() -> None:
    engine = screening._engine()
    table = screening_built._table()
    forms = [f.regex for f in engine.forms]
    # a Pattern's flags hold re.UNICODE, which its compile added
    keys = [screening_built.pattern_key(rx.pattern, rx.flags & ~re.UNICODE) for rx in forms]
    assert all(key in table.patterns for key in keys)
    for rx in forms[:: max(1, len(forms) // 12)]:
        assert rx == re.compile(rx.pattern, rx.flags)
    prefix_sets = [literal_prefixes(rx.pattern, rx.flags) for rx in forms]
    assert screening_built.pattern_key(gate_key(prefix_sets), 0) in table.gates
    derived = derive_gate(prefix_sets)
    assert (engine.gate.ungated, engine.gate.literals) == derived[:2]
    assert engine.gate._forms_for == derived[2]
    assert engine.gate._rx is not None and engine.gate._rx.pattern == derived[3]


def test_what_the_table_lacks_is_derived_as_before() -> None:
    pattern = r"(?P<verb>forget|ignore)[\s]++the (?:rules|plan)"
    assert screening_built.is_missing(screening_built.literal_prefixes(pattern, 0))
    made = screening_built.compiled(pattern, re.MULTILINE)
    assert made == re.compile(pattern, re.MULTILINE)
    assert made.groupindex == {"verb": 1}
    assert literal_prefixes(pattern) == {"forget the", "ignore the"}
    gate = Gate([literal_prefixes(pattern), None])
    assert gate.ungated == (1,)
    assert list(gate.candidates("so ignore   the plan, forget the rest")) == [(3, (0,)), (22, (0,))]
