"""Paths differing only in case name one note, for every operation and not just writes;
a path looks a note up under any spelling and answers with the note's own spelling.

Also: names with invisible characters can no longer be made, but a note stored under
one before that rule stays reachable (read, moved to a clean name, deleted).
"""

from __future__ import annotations

import pytest

from memvault.container import Services
from memvault.errors import Conflict, InvalidInput, InvalidPath, NotFound
from memvault.services.context import Caller
from memvault.services.vault import MAX_CURSOR_CHARS, MAX_QUERY_CHARS, MAX_TAG_CHARS, build_put

STORED = "Projects/CHECK.md"
ASKED = ["projects/check.md", "PROJECTS/Check.md", "projects/CHECK.md"]


@pytest.fixture
def checklist(services: Services, user: Caller) -> None:
    services.vault.write(user, STORED, "v1")
    services.vault.write(user, STORED, "v2 links to [[Other]]")


def test_reads_find_the_note_under_any_case(
    services: Services, user: Caller, checklist: None
) -> None:
    for asked in ASKED:
        note = services.vault.read(user, asked)
        assert (note.path, note.markdown, note.version) == (STORED, "v2 links to [[Other]]", 2)
    notes = services.vault.read_many(user, [*ASKED, STORED, "projects/none.md"])
    assert [n.path for n in notes] == [STORED]


def test_history_and_versions_fold_case(services: Services, user: Caller, checklist: None) -> None:
    for asked in ASKED:
        assert [v.version for v in services.vault.versions(user, asked)] == [2, 1]
        assert services.vault.version(user, asked, 1).markdown == "v1"


def test_append_adds_to_the_note_under_its_own_spelling(
    services: Services, user: Caller, checklist: None
) -> None:
    outcome = services.vault.append(user, "projects/check.md", "v3")
    assert (outcome.note.path, outcome.note.version, outcome.created) == (STORED, 3, False)
    pinned = services.vault.append(user, "PROJECTS/CHECK.md", "v4", expected_version=3)
    assert pinned.note.path == STORED
    assert services.vault.read(user, STORED).markdown == "v2 links to [[Other]]\nv3\nv4"
    assert [n.path for n in services.vault.list_notes(user).items] == [STORED]
    with pytest.raises(Conflict):
        services.vault.append(user, "projects/check.md", "stale", expected_version=1)


def test_move_under_another_case_moves_the_note_and_rewrites_links(
    services: Services, user: Caller, checklist: None
) -> None:
    services.vault.write(user, "index.md", "see [[CHECK]] and [[Projects/CHECK]]")
    moved = services.vault.move(user, "projects/check.md", "done/Checklist.md")
    assert (moved.path, moved.version) == ("done/Checklist.md", 2)
    with pytest.raises(NotFound):
        services.vault.read(user, STORED)
    index = services.vault.read(user, "index.md").markdown
    assert "[[CHECK]]" not in index and "[[Projects/CHECK]]" not in index
    assert [n.path for n in services.vault.backlinks(user, "DONE/checklist.md")] == ["index.md"]


def test_a_move_onto_the_same_name_in_another_case_renames(
    services: Services, user: Caller, checklist: None
) -> None:
    # The asked path and the target fold alike: the note takes the target's spelling.
    moved = services.vault.move(user, "projects/check.md", "Projects/Check.md")
    assert moved.path == "Projects/Check.md"
    # Asked under another case, the target its own spelling: nothing to do.
    same = services.vault.move(user, "projects/CHECK.md", "Projects/Check.md")
    assert same.path == "Projects/Check.md" and same.version == 2


def test_delete_restore_and_purge_fold_case(
    services: Services, user: Caller, checklist: None
) -> None:
    with pytest.raises(Conflict):
        services.vault.delete(user, "projects/check.md", expected_version=1)
    with pytest.raises(Conflict):  # the history of a live note is not purged
        services.vault.purge(user, "projects/check.md")
    services.vault.delete(user, "projects/check.md", expected_version=2)
    with pytest.raises(NotFound):
        services.vault.read(user, STORED)
    assert [v.version for v in services.vault.versions(user, "PROJECTS/check.md")] == [2, 1]

    restored = services.vault.restore(user, "projects/check.md", 1)
    # Revived under its own spelling, its history continuing (not a second note).
    assert (restored.note.path, restored.note.version, restored.created) == (STORED, 3, True)
    assert [v.version for v in services.vault.versions(user, STORED)] == [3, 2, 1]

    services.vault.delete(user, "PROJECTS/CHECK.md")
    services.vault.purge(user, "projects/check.md")
    with pytest.raises(NotFound):
        services.vault.versions(user, STORED)
    with pytest.raises(NotFound):
        services.vault.purge(user, "projects/check.md")


def test_recreating_under_another_case_continues_the_history(
    services: Services, user: Caller, checklist: None
) -> None:
    services.vault.delete(user, STORED)
    again = services.vault.write(user, "projects/check.md", "v3")
    assert (again.note.path, again.note.version, again.created) == ("projects/check.md", 3, True)
    assert [v.version for v in services.vault.versions(user, STORED)] == [3, 2, 1]
    assert services.vault.version(user, "projects/check.md", 1).markdown == "v1"
    assert [n.path for n in services.vault.list_notes(user).items] == ["projects/check.md"]
    assert services.vault.read(user, STORED).markdown == "v3"
    assert [h.path for h in services.vault.search(user, "v3")] == ["projects/check.md"]


def test_restore_of_a_live_note_under_another_case(
    services: Services, user: Caller, checklist: None
) -> None:
    restored = services.vault.restore(user, "projects/check.md", 1, expected_version=2)
    assert (restored.note.path, restored.note.version, restored.created) == (STORED, 3, False)
    assert services.vault.read(user, STORED).markdown == "v1"


def test_backlinks_fold_case(services: Services, user: Caller, checklist: None) -> None:
    services.vault.write(user, "a.md", "[[check]]")
    services.vault.write(user, "b.md", "[[projects/check]]")
    for asked in ASKED:
        assert [n.path for n in services.vault.backlinks(user, asked)] == ["a.md", "b.md"]


def test_another_account_is_untouched_by_folded_lookups(
    services: Services, user: Caller, checklist: None
) -> None:
    services.accounts.create_account("other", account_id="other")
    other = Caller(account_id="other")
    with pytest.raises(NotFound):
        services.vault.read(other, "projects/check.md")
    with pytest.raises(NotFound):
        services.vault.versions(other, "projects/check.md")
    with pytest.raises(NotFound):
        services.vault.delete(other, "projects/check.md")
    with pytest.raises(NotFound):
        services.vault.move(other, "projects/check.md", "x.md")
    services.vault.write(other, "projects/check.md", "theirs")
    assert services.vault.read(user, "projects/check.md").markdown == "v2 links to [[Other]]"
    assert services.vault.read(other, STORED).markdown == "theirs"


# ---------------------------------------------------------------------- invisible characters
LEGACY = "notes/plan\u200b.md"  # stored before invisible characters were refused


def test_no_note_can_be_made_at_a_name_with_an_invisible_character(
    services: Services, user: Caller
) -> None:
    services.vault.write(user, "a.md", "x")
    for call in (
        lambda: services.vault.write(user, "plan\u200b.md", "x"),
        lambda: services.vault.append(user, "plan\u202e.md", "x"),
        lambda: services.vault.move(user, "a.md", "a\ufeff.md"),
        lambda: services.vault.restore(user, "a\u2028.md", 1),
    ):
        with pytest.raises(InvalidPath):
            call()
    assert [n.path for n in services.vault.list_notes(user).items] == ["a.md"]


def test_a_note_stored_under_such_a_name_stays_reachable(services: Services, user: Caller) -> None:
    services.store.commit(user.account_id, [build_put(LEGACY, "old")], now=1.0)
    assert services.vault.read(user, LEGACY).markdown == "old"
    assert [n.path for n in services.vault.read_many(user, [LEGACY])] == [LEGACY]
    assert [v.version for v in services.vault.versions(user, LEGACY)] == [1]
    assert [n.path for n in services.vault.list_notes(user, folder="notes").items] == [LEGACY]
    with pytest.raises(InvalidPath):  # no new version at that name: rename it first
        services.vault.write(user, LEGACY, "new")
    moved = services.vault.move(user, LEGACY, "notes/plan.md")
    assert (moved.path, moved.markdown) == ("notes/plan.md", "old")
    services.store.commit(user.account_id, [build_put("x\u2066.md", "gone")], now=2.0)
    services.vault.delete(user, "x\u2066.md")
    with pytest.raises(NotFound):
        services.vault.read(user, "x\u2066.md")


# ---------------------------------------------------------------------- length limits
def test_search_text_and_filters_have_length_limits(services: Services, user: Caller) -> None:
    """What every surface (MCP and the gateway's tools too, not only REST) may send."""
    services.vault.write(user, "a.md", "words #tag")
    for call in (
        lambda: services.vault.search(user, "x" * (MAX_QUERY_CHARS + 1)),
        lambda: services.vault.search(user, "words", tag="t" * (MAX_TAG_CHARS + 1)),
        lambda: services.vault.list_notes(user, tag="t" * (MAX_TAG_CHARS + 1)),
        lambda: services.vault.list_notes(user, cursor="c" * (MAX_CURSOR_CHARS + 1)),
    ):
        with pytest.raises(InvalidInput, match="at most") as info:
            call()
        assert info.value.code == "invalid_input"
    services.vault.search(user, "words " + "x" * (MAX_QUERY_CHARS - 6))  # at the limit: fine
    assert services.vault.list_notes(user, tag="t" * MAX_TAG_CHARS).items == []
