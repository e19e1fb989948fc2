"""Searches that leave out the account's common terms (recall's), on every backend.

A term in more than a quarter of the account's notes, and in more than
COMMON_TERM_FLOOR of them, is common; terms no note holds are left out too. A term in
more than 2% of them (and more than the floor) is frequent: it only adds to the score of
the notes the message's rarer terms match.
"""

from __future__ import annotations

import io
import zipfile

import pytest

from memvault.container import Services
from memvault.domain.query import (
    COMMON_TERM_FLOOR,
    TERM_COUNTS_MAX_AGE,
    TermCounts,
    common_term_cutoff,
    frequent_term_cutoff,
)
from memvault.services.context import Caller
from memvault.services.recall import RecallService

COMMON_NOTES = COMMON_TERM_FLOOR + 4  # past the floor, and over a quarter of the vault
RARE_NOTES = 6


def import_notes(services: Services, caller: Caller, notes: dict[str, str]) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in notes.items():
            archive.writestr(path, text)
    buffer.seek(0)
    services.transfer.import_zip(caller, buffer)


def common_vault() -> dict[str, str]:
    notes = {
        f"common/c{i:03}.md": f"ubiquitous filler word number {i}" for i in range(COMMON_NOTES)
    }
    for i in range(RARE_NOTES):
        # Different lengths, so relevance orders them.
        notes[f"rare/z{i}.md"] = "zephyr sighting " + "calm " * i
    return notes


@pytest.fixture
def vault(services: Services, user: Caller) -> Services:
    import_notes(services, user, common_vault())
    return services


def search(services: Services, user: Caller, text: str, *, skip: bool) -> list[str]:
    hits = services.vault.search(
        user, text, limit=20, charge=False, skip_common_terms=skip, mode="keyword"
    )
    return [h.path for h in hits]


def test_common_terms_are_left_out_and_distinctive_ones_still_rank(
    vault: Services, user: Caller
) -> None:
    text = "zephyr ubiquitous"
    every_term = search(vault, user, text, skip=False)
    # Every term: the notes holding only the common word fill the rest of the page.
    assert len(every_term) == 20
    assert any(p.startswith("common/") for p in every_term)
    distinctive = search(vault, user, text, skip=True)
    # Without it: only the notes with the distinctive word, in the same order as before.
    assert sorted(distinctive) == sorted(f"rare/z{i}.md" for i in range(RARE_NOTES))
    assert distinctive == [p for p in every_term if p.startswith("rare/")]

    # Terms no note holds change nothing.
    text = "zephyr nowhereword calm"
    assert search(vault, user, text, skip=True) == search(vault, user, text, skip=False)
    assert search(vault, user, "nowhereword otherabsentword", skip=True) == []

    # Only common terms: still searched, so what holds them is still found.
    text = "ubiquitous filler nowhereword"
    found = search(vault, user, text, skip=True)
    assert len(found) == 20 and all(p.startswith("common/") for p in found)
    assert found == search(vault, user, text, skip=False)


def test_another_accounts_notes_do_not_make_a_term_common(vault: Services, user: Caller) -> None:
    before = search(vault, user, "zephyr ubiquitous", skip=True)
    vault.accounts.create_account("other", account_id="other")
    other = Caller(account_id="other")
    # In their vault "zephyr" is everywhere; in this account's it is still rare.
    import_notes(
        vault, other, {f"z/{i:03}.md": f"zephyr zephyr ubiquitous {i}" for i in range(150)}
    )
    assert search(vault, user, "zephyr ubiquitous", skip=True) == before
    # And theirs: both words are common there, so both are searched.
    theirs = search(vault, other, "zephyr ubiquitous", skip=True)
    assert len(theirs) == 20 and all(p.startswith("z/") for p in theirs)


def test_a_small_vault_is_searched_for_every_term(services: Services, user: Caller) -> None:
    # Fewer notes than the floor: no term can be common, whatever its share.
    import_notes(
        services, user, {f"n{i}.md": f"everywhere word {i}" + " rare" * (i == 3) for i in range(8)}
    )
    for text in ("everywhere rare", "everywhere nowhereword"):
        assert search(services, user, text, skip=True) == search(services, user, text, skip=False)


def test_recall_leaves_the_messages_common_words_out(vault: Services, user: Caller) -> None:
    block = RecallService(vault.vault).recall(
        user,
        "Anything ubiquitous in my notes about a zephyr?",
        max_notes=10,
        token_budget=4000,
        mode="keyword",
    )
    assert block is not None
    assert sorted(block.paths) == sorted(f"rare/z{i}.md" for i in range(RARE_NOTES))


# --------------------------------------------------------------------------- frequent terms

# 440 notes: a term in 101 to 110 of them is frequent, not common.
FREQUENT_VAULT_NOTES = 440
HARBOR_NOTES = 106


def frequent_vault() -> dict[str, str]:
    """ "harbor" is frequent; "zephyr" is rare, and some of its notes hold "harbor" too;
    "ubiquitous" is common."""
    notes: dict[str, str] = {}
    for i in range(3):
        # z3 to z5 hold "harbor" as well; each is as long as its twin without it.
        notes[f"rare/z{i}.md"] = "zephyr sighting placid placid " + "calm " * i
        notes[f"rare/z{i + 3}.md"] = "zephyr sighting harbor harbor " + "calm " * i
    for i in range(HARBOR_NOTES - 3):
        notes[f"docks/d{i:03}.md"] = f"harbor ubiquitous quay {i}"
    for i in range(FREQUENT_VAULT_NOTES - len(notes)):
        notes[f"filler/f{i:03}.md"] = f"ubiquitous filler number {i}"
    return notes


@pytest.fixture
def frequent(services: Services, user: Caller) -> Services:
    import_notes(services, user, frequent_vault())
    return services


def scored(services: Services, user: Caller, text: str, *, skip: bool) -> dict[str, float]:
    hits = services.vault.search(
        user, text, limit=50, charge=False, skip_common_terms=skip, mode="keyword"
    )
    return {h.path: h.score for h in hits}


def test_the_vault_has_a_frequent_term() -> None:
    # The fixture's premise, so the tests below test what they say.
    assert frequent_term_cutoff(FREQUENT_VAULT_NOTES) < HARBOR_NOTES
    assert HARBOR_NOTES <= common_term_cutoff(FREQUENT_VAULT_NOTES) < HARBOR_NOTES + 20


def test_a_frequent_term_only_adds_to_what_the_rarer_terms_match(
    frequent: Services, user: Caller
) -> None:
    # One vault of 440 notes for the three checks below, which only read it: each had
    # its own, and importing it takes 2.5-2.8 s of CPU on AWS (0.05 s on SQLite).

    # A frequent term scores the notes the rarer terms match, and brings in none.
    every_term = scored(frequent, user, "zephyr harbor", skip=False)
    assert any(p.startswith("docks/") for p in every_term)
    selected = scored(frequent, user, "zephyr harbor", skip=True)
    # Only the notes holding the rare word...
    assert sorted(selected) == sorted(f"rare/z{i}.md" for i in range(6))
    # ...each scored as a search for both words scores it, so those with "harbor" too
    # come first, in the same order as before.
    for path, score in selected.items():
        assert score == pytest.approx(every_term[path], rel=1e-6)
    assert set(list(selected)[:3]) == {"rare/z3.md", "rare/z4.md", "rare/z5.md"}
    assert list(selected) == [p for p in every_term if p.startswith("rare/")]

    # A message without rarer terms is matched by its frequent ones: "ubiquitous" is
    # common (left out); "harbor" is the rarest word left, so it matches.
    found = scored(frequent, user, "harbor ubiquitous nowhereword", skip=True)
    assert len(found) == 50 and all(p.startswith(("docks/", "rare/")) for p in found)
    assert list(found) == list(scored(frequent, user, "harbor", skip=False))

    # Recall leans on the rarer words of a message.
    block = RecallService(frequent.vault).recall(
        user,
        "What did I note at the harbor about a zephyr?",
        max_notes=10,
        token_budget=4000,
        mode="keyword",
    )
    assert block is not None
    # Only the notes with the rare word, though there is room for more; those with the
    # frequent word too come first.
    assert sorted(block.paths) == sorted(f"rare/z{i}.md" for i in range(6))
    assert set(block.paths[:3]) == {"rare/z3.md", "rare/z4.md", "rare/z5.md"}


# --------------------------------------------------------------------------- remembered counts


@pytest.fixture
def clock_of_counts(vault: Services) -> list[float]:
    """The search index's term counts on a clock the test moves."""
    now = [0.0]
    vault.index.term_counts = TermCounts(clock=lambda: now[0])  # type: ignore[attr-defined]
    return now


def test_a_term_no_note_held_is_found_as_soon_as_a_note_holds_it(
    vault: Services, user: Caller, clock_of_counts: list[float]
) -> None:
    assert search(vault, user, "zephyr quokka", skip=True) == search(
        vault, user, "zephyr", skip=True
    )
    vault.vault.write(user, "new/quokka.md", "a quokka sighting")
    assert "new/quokka.md" in search(vault, user, "zephyr quokka", skip=True)


def test_term_counts_are_remembered_for_a_while(
    vault: Services, user: Caller, clock_of_counts: list[float]
) -> None:
    rare_calm = search(vault, user, "zephyr calm", skip=True)  # "calm" is in 5 notes: kept
    assert sorted(rare_calm) == sorted(f"rare/z{i}.md" for i in range(RARE_NOTES))
    # Now "calm" is in most of the vault: common.
    import_notes(vault, user, {f"calm/c{i:03}.md": f"calm evening {i}" for i in range(200)})

    clock_of_counts[0] = TERM_COUNTS_MAX_AGE - 1  # still as counted: searched, and found
    remembered = search(vault, user, "zephyr calm", skip=True)
    assert any(p.startswith("calm/") for p in remembered)

    clock_of_counts[0] = TERM_COUNTS_MAX_AGE  # counted again: common, left out
    counted = search(vault, user, "zephyr calm", skip=True)
    assert sorted(counted) == sorted(f"rare/z{i}.md" for i in range(RARE_NOTES))
