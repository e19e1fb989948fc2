"""domain.write_plan: every rule of a note write, decided without a store."""

from __future__ import annotations

import pytest

from memvault.domain import write_plan as wp
from memvault.domain.models import VERSIONS_KEPT, Limits, MoveNote, PutNote
from memvault.domain.tags import ancestor_keys, distinct_tags, tag_key
from memvault.errors import Conflict, NotFound, QuotaExceeded

NOW = 1_000.0


def put(
    path: str = "a.md", markdown: str = "hello", *, expected: int | None = None, sha: str = ""
) -> PutNote:
    return PutNote(
        path=path,
        markdown=markdown,
        title="T",
        tags=("x",),
        links=(),
        sha256=sha or f"sha-{markdown}",
        expected_version=expected,
    )


def live(
    path: str = "a.md", *, version: int = 3, size: int = 10, sha: str = "sha-old", id: str = "n1"
) -> wp.LiveNote:
    return wp.LiveNote(id=id, path=path, version=version, size=size, sha256=sha, created_at=5.0)


def fixed_id() -> str:
    return "new-id"


# ---------------------------------------------------------------------- put
def test_a_put_to_a_free_path_creates_version_1_and_costs_a_note() -> None:
    change = put(markdown="12345")
    decision = wp.plan_put(change, None, None, now=NOW, new_id=fixed_id)
    assert decision == wp.PutDecision(
        wp.PutKind.CREATE, "new-id", 1, NOW, wp.Cost(notes=1, bytes=5), trim_version=None
    )
    assert decision.writes
    note = decision.note(change, now=NOW)
    assert (note.id, note.version, note.created_at, note.updated_at) == ("new-id", 1, NOW, NOW)
    assert (note.size, note.markdown, note.tags) == (5, "12345", ("x",))


def test_a_put_to_a_live_note_replaces_it_and_costs_the_size_difference() -> None:
    decision = wp.plan_put(put(markdown="abc"), live(size=10), None, now=NOW)
    assert decision.kind is wp.PutKind.REPLACE
    assert (decision.note_id, decision.version, decision.created_at) == ("n1", 4, 5.0)
    assert decision.cost == wp.Cost(notes=0, bytes=3 - 10)


def test_identical_markdown_makes_no_version_and_costs_nothing() -> None:
    decision = wp.plan_put(put(sha="same"), live(sha="same"), None, now=NOW)
    assert decision.kind is wp.PutKind.UNCHANGED
    assert not decision.writes
    assert (decision.note_id, decision.version) == ("n1", 3)
    assert decision.cost == wp.FREE
    assert decision.trim_version is None
    with pytest.raises(AssertionError):
        decision.note(put(sha="same"), now=NOW)


def test_a_put_to_a_deleted_notes_path_revives_its_history() -> None:
    deleted = wp.DeletedNote(id="old", version=7, created_at=2.0)
    decision = wp.plan_put(put(markdown="abcd"), None, deleted, now=NOW, new_id=fixed_id)
    assert decision.kind is wp.PutKind.REVIVE
    assert (decision.note_id, decision.version, decision.created_at) == ("old", 8, 2.0)
    assert decision.cost == wp.Cost(notes=1, bytes=4)


def test_a_live_note_wins_over_a_tombstone_at_the_same_path() -> None:
    deleted = wp.DeletedNote(id="old", version=7, created_at=2.0)
    decision = wp.plan_put(put(), live(), deleted, now=NOW)
    assert (decision.kind, decision.note_id) == (wp.PutKind.REPLACE, "n1")


def test_a_case_only_clash_is_refused() -> None:
    with pytest.raises(Conflict) as caught:
        wp.plan_put(put("A.md"), live("a.md"), None, now=NOW)
    assert caught.value.code == "path_case_conflict"
    assert str(caught.value) == (
        "a note already exists at 'a.md'; paths differing only in case name the same note"
    )


def test_the_case_clash_is_checked_before_the_version() -> None:
    with pytest.raises(Conflict) as caught:
        wp.plan_put(put("A.md", expected=99), live("a.md"), None, now=NOW)
    assert caught.value.code == "path_case_conflict"


@pytest.mark.parametrize("expected", [None, 3])
def test_the_expected_version_may_be_absent_or_the_live_one(expected: int | None) -> None:
    assert wp.plan_put(put(expected=expected), live(), None, now=NOW).version == 4


def test_a_stale_expected_version_is_refused_with_the_live_one() -> None:
    with pytest.raises(Conflict) as caught:
        wp.plan_put(put(expected=2), live(version=3), None, now=NOW)
    assert caught.value.code == "version_conflict"
    assert caught.value.details["current_version"] == 3
    assert str(caught.value) == "'a.md' is at version 3, not version 2; re-read it and retry"


def test_expecting_no_note_is_refused_when_one_is_live() -> None:
    with pytest.raises(Conflict) as caught:
        wp.plan_put(put(expected=0), live(version=3), None, now=NOW)
    assert str(caught.value) == (
        "a note already exists at 'a.md' (version 3); the write expected none"
    )


def test_expecting_a_version_of_a_missing_note_is_refused() -> None:
    deleted = wp.DeletedNote(id="old", version=7, created_at=2.0)
    with pytest.raises(Conflict) as caught:
        wp.plan_put(put(expected=7), None, deleted, now=NOW)
    assert str(caught.value) == "'a.md' is at no note, not version 7; re-read it and retry"
    assert caught.value.details["current_version"] is None


def test_expecting_no_note_creates_or_revives() -> None:
    deleted = wp.DeletedNote(id="old", version=7, created_at=2.0)
    assert wp.plan_put(put(expected=0), None, None, now=NOW).kind is wp.PutKind.CREATE
    assert wp.plan_put(put(expected=0), None, deleted, now=NOW).kind is wp.PutKind.REVIVE


def test_the_identical_check_comes_after_the_version_check() -> None:
    with pytest.raises(Conflict):
        wp.plan_put(put(sha="same", expected=1), live(sha="same"), None, now=NOW)


def test_new_notes_get_fresh_ids_by_default() -> None:
    first = wp.plan_put(put(), None, None, now=NOW)
    second = wp.plan_put(put(), None, None, now=NOW)
    assert first.note_id != second.note_id
    assert len(first.note_id) == 32


# ---------------------------------------------------------------------- the 50 kept versions
def test_no_version_is_trimmed_while_fewer_than_the_kept_exist() -> None:
    decision = wp.plan_put(put(), live(version=VERSIONS_KEPT - 1), None, now=NOW)
    assert (decision.version, decision.trim_version) == (VERSIONS_KEPT, None)


def test_each_version_past_the_kept_pushes_out_the_oldest() -> None:
    decision = wp.plan_put(put(), live(version=VERSIONS_KEPT), None, now=NOW)
    assert (decision.version, decision.trim_version) == (VERSIONS_KEPT + 1, 1)
    later = wp.plan_put(put(), live(version=VERSIONS_KEPT + 9), None, now=NOW)
    assert later.trim_version == 10


def test_a_revive_trims_like_any_new_version() -> None:
    deleted = wp.DeletedNote(id="old", version=VERSIONS_KEPT + 4, created_at=2.0)
    assert wp.plan_put(put(), None, deleted, now=NOW).trim_version == 5


# ---------------------------------------------------------------------- move
def test_a_move_to_a_free_path_keeps_the_note_and_costs_nothing() -> None:
    decision = wp.plan_move(MoveNote("a.md", "b/C.md"), live(), None)
    assert decision == wp.MoveDecision(note_id="n1", new_key="b/c.md", cost=wp.FREE)


def test_a_move_onto_another_live_note_is_refused() -> None:
    with pytest.raises(Conflict) as caught:
        wp.plan_move(MoveNote("a.md", "B.md"), live(), live("b.md", id="n2"))
    assert caught.value.code == "path_occupied"
    assert str(caught.value) == "a note already exists at 'b.md'"


@pytest.mark.parametrize("occupant", [None, "self"])
def test_a_change_of_case_moves_onto_the_notes_own_key(occupant: str | None) -> None:
    note = live("a.md")
    decision = wp.plan_move(MoveNote("a.md", "A.md"), note, note if occupant else None)
    assert decision.new_key == "a.md"


def test_a_move_of_a_missing_note_is_not_found() -> None:
    with pytest.raises(NotFound) as caught:
        wp.plan_move(MoveNote("a.md", "b.md"), None, None)
    assert caught.value.code == "note_not_found"
    assert str(caught.value) == "no note at 'a.md'"


def test_a_move_names_its_note_exactly() -> None:
    with pytest.raises(NotFound):
        wp.plan_move(MoveNote("A.md", "b.md"), live("a.md"), None)


def test_a_move_checks_the_expected_version_before_the_destination() -> None:
    with pytest.raises(Conflict) as caught:
        wp.plan_move(MoveNote("a.md", "b.md", 1), live(version=3), live("b.md", id="n2"))
    assert caught.value.code == "version_conflict"


# ---------------------------------------------------------------------- delete
def test_a_delete_frees_the_note_and_its_bytes() -> None:
    decision = wp.plan_delete("a.md", None, live(size=42))
    assert decision == wp.DeleteDecision(note_id="n1", cost=wp.Cost(notes=-1, bytes=-42))


def test_a_delete_of_a_missing_note_is_not_found() -> None:
    with pytest.raises(NotFound) as caught:
        wp.plan_delete("a.md", None, None)
    assert (caught.value.code, str(caught.value)) == ("note_not_found", "no note at 'a.md'")


def test_a_delete_names_its_note_exactly_and_checks_the_version() -> None:
    with pytest.raises(NotFound):
        wp.plan_delete("A.md", None, live("a.md"))
    with pytest.raises(Conflict) as caught:
        wp.plan_delete("a.md", 2, live(version=3))
    assert caught.value.code == "version_conflict"


# ---------------------------------------------------------------------- quota
LIMITS = Limits(max_notes=10, max_bytes=1000)


def test_costs_add_up_over_a_batch() -> None:
    total = wp.FREE + wp.Cost(1, 10) + wp.Cost(-1, -3) + wp.Cost(0, 5)
    assert total == wp.Cost(0, 12)


def test_a_commit_within_the_limits_passes() -> None:
    wp.check_quota(wp.Usage(9, 990), LIMITS, wp.Cost(1, 10))
    assert wp.quota_refusal(wp.Usage(9, 990), LIMITS, wp.Cost(1, 10)) is None


def test_a_commit_past_the_note_limit_is_refused() -> None:
    with pytest.raises(QuotaExceeded) as caught:
        wp.check_quota(wp.Usage(10, 0), LIMITS, wp.Cost(1, 1))
    assert caught.value.code == "vault_note_limit"
    assert str(caught.value) == "the vault would hold 11 notes; its limit is 10"


def test_a_commit_past_the_byte_limit_is_refused() -> None:
    with pytest.raises(QuotaExceeded) as caught:
        wp.check_quota(wp.Usage(1, 990), LIMITS, wp.Cost(0, 11))
    assert caught.value.code == "vault_byte_limit"
    assert str(caught.value) == (
        "the vault would hold 1001 bytes of notes; its limit is 1000 bytes"
    )


def test_the_note_limit_is_named_first_when_both_are_passed() -> None:
    refusal = wp.quota_refusal(wp.Usage(10, 1000), LIMITS, wp.Cost(1, 1))
    assert refusal is not None and refusal.code == "vault_note_limit"
    assert wp.byte_limit_refusal(wp.Usage(10, 1000), LIMITS, wp.Cost(1, 1)).code == (
        "vault_byte_limit"
    )


def test_a_vault_over_a_lowered_limit_may_still_shrink_or_stay() -> None:
    over = wp.Usage(note_count=20, total_bytes=5000)
    for cost in (wp.Cost(-1, -100), wp.FREE, wp.Cost(0, -1), wp.Cost(-1, 0)):
        wp.check_quota(over, LIMITS, cost)
    with pytest.raises(QuotaExceeded):
        wp.check_quota(over, LIMITS, wp.Cost(0, 1))


# ---------------------------------------------------------------------- tags
def test_tags_fold_like_paths_and_drop_a_leading_hash() -> None:
    assert tag_key("Project/Alpha") == "project/alpha"
    assert tag_key("#Straße") == "strasse"
    # casefold alone leaves U+01F0 decomposed; the fold puts it back in NFC.
    assert tag_key("\u01f0") == "\u01f0"


def test_distinct_tags_keep_the_first_spelling_of_each() -> None:
    assert distinct_tags(["Alpha", "beta", "ALPHA", "Beta/x"]) == {
        "alpha": "Alpha",
        "beta": "beta",
        "beta/x": "Beta/x",
    }


def test_ancestor_keys_let_a_filter_match_nested_tags() -> None:
    assert ancestor_keys(["A/b/C", "a/B", "d"]) == ["a", "a/b", "a/b/c", "d"]
