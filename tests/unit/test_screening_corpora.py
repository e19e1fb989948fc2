"""Write-screening on whole corpora: the targets hold on text the screen was not tuned on.

The held-out sets (tests/data/screening/heldout_*.jsonl, see the README there) were
written before the rules were tuned and are only measured: at least 95% of their
attacks are refused and at most 1% of their benign notes. These tests read only files
of this repository. The shared development data (../shared/data: public injection
examples, everyday LoCoMo notes) is checked too when it is there, and skipped with a
note when it is not. bench/screen.py prints the same figures with breakdowns.
"""

from __future__ import annotations

import pytest

from memvault.domain.screening import ScreeningVerdict, screen_path, screen_text
from tests.support import screening_corpora as corpora
from tests.support.screening_corpora import Sample

RECALL_TARGET = 0.95
FP_TARGET = 0.01
HELDOUT = ("heldout", "heldout2", "heldout3", "heldout4", "heldout5")
# Attack sets kept in the repo: attacks phrased like the shared development data are read
# from ../shared/data at run time, never copied here.
HELDOUT_ATTACKS = ("heldout", "heldout4", "heldout5")


def _verdict(sample: Sample) -> ScreeningVerdict:
    return screen_path(sample.text) if sample.field == "path" else screen_text(sample.text)


def _refused(samples: list[Sample]) -> list[Sample]:
    return [s for s in samples if not _verdict(s).allowed]


def test_heldout_sets_are_big_and_varied() -> None:
    attacks = corpora.load("heldout_attacks")
    benign = corpora.load("heldout_benign")
    assert len(attacks) >= 150
    assert len(benign) >= 200
    languages = {s.lang for s in attacks} - {"en"}
    assert {"es", "fr", "de", "pt", "it", "zh", "ja", "ru"} <= languages
    assert len(languages) >= 12
    assert len({s.obfuscation for s in attacks} - {"none"}) >= 10
    assert {s.family for s in attacks} >= {
        "instruction_override",
        "role_hijack",
        "prompt_extraction",
        "role_header",
    }
    assert {s.field for s in attacks} == {"markdown", "path"}
    assert {"code", "security_quoted", "docs", "multilingual", "path"} <= {s.kind for s in benign}
    assert len({s.id for s in attacks}) == len(attacks)
    assert len({s.id for s in benign}) == len(benign)


def test_the_fourth_heldout_set_is_big_and_varied() -> None:
    # written for the hardening issue and committed before its one measurement
    attacks = corpora.load("heldout4_attacks")
    benign = corpora.load("heldout4_benign")
    assert len(attacks) >= 150 and len(benign) >= 400
    assert len({s.lang for s in attacks}) >= 12 and len({s.lang for s in benign}) >= 12
    assert len({s.obfuscation for s in attacks} - {"none"}) >= 10
    assert {"everyday", "docs", "code", "security_quoted", "multilingual", "path"} <= {
        s.kind for s in benign
    }
    assert len({s.id for s in attacks}) == len(attacks)
    assert len({s.id for s in benign}) == len(benign)


def test_the_fifth_heldout_set_is_big_and_varied() -> None:
    # committed in 193d450 before its one measurement (83.7% of attacks, 0/412 notes)
    attacks = corpora.load("heldout5_attacks")
    benign = corpora.load("heldout5_benign")
    assert len(attacks) >= 200 and len(benign) >= 400
    assert len({s.lang for s in attacks}) >= 10 and len({s.lang for s in benign}) >= 10
    assert len({s.obfuscation for s in attacks} - {"none"}) >= 10
    assert {s.field for s in attacks} == {"markdown", "path"}
    assert len({s.id for s in attacks}) == len(attacks)
    assert len({s.id for s in benign}) == len(benign)


@pytest.mark.parametrize("name", HELDOUT_ATTACKS)
def test_heldout_attacks_are_refused(name: str) -> None:
    attacks = corpora.load(f"{name}_attacks")
    refused = _refused(attacks)
    missed = [s.text[:80] for s in attacks if s not in refused]
    assert len(refused) >= RECALL_TARGET * len(attacks), missed


def test_heldout_benign_notes_pass() -> None:
    # over the three sets together: one refusal is 1.6% of the smallest alone
    benign = [s for name in HELDOUT for s in corpora.load(f"{name}_benign")]
    assert len(benign) >= 300
    refused = _refused(benign)
    assert len(refused) <= FP_TARGET * len(benign), [_verdict(s).reason for s in refused]


def test_every_refused_heldout_attack_names_a_rule() -> None:
    for sample in (s for name in HELDOUT_ATTACKS for s in corpora.load(f"{name}_attacks")):
        verdict = _verdict(sample)
        if not verdict.allowed:
            assert verdict.rule is not None
            assert verdict.reason is not None and f"[rule {verdict.rule}]" in verdict.reason


def test_the_projects_own_docs_pass() -> None:
    # a model can save the README, the contributing guide and every doc, this one's ADR
    # on screening (which quotes attacks in code) included
    refused = {s.id: _verdict(s).reason for s in corpora.project_docs() if not _verdict(s).allowed}
    assert refused == {}


needs_shared = pytest.mark.skipif(
    corpora.shared_data_dir() is None,
    reason="../shared/data (injections-dev, locomo-dev) is not here; set MEMVAULT_SHARED_DATA",
)


@needs_shared
def test_public_injection_examples_are_refused() -> None:
    attacks = corpora.injections_dev()
    assert len(attacks) >= 60
    refused = _refused(attacks)
    missed = [s.text[:80] for s in attacks if s not in refused]
    assert len(refused) >= RECALL_TARGET * len(attacks), missed


@needs_shared
def test_everyday_conversation_notes_pass() -> None:
    notes = corpora.locomo_notes()
    assert len(notes) >= 100
    assert _refused(notes) == []
