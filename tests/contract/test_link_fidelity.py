"""Links resolve, count and move as Obsidian's do, on every backend (domain.links has
the rules; these tests hold the vault to them through the service layer)."""

from __future__ import annotations

from memvault.container import Services
from memvault.domain.models import NoteSummary
from memvault.services.context import Caller


def paths_of(summaries: list[NoteSummary]) -> list[str]:
    return sorted(s.path for s in summaries)


def test_every_link_form_counts_as_a_backlink(services: Services, user: Caller) -> None:
    write = services.vault.write
    write(user, "docs/Filters.md", "# Filters")
    write(user, "p.md", '---\nrelated: "[[Filters]]"\n---\nbody')
    write(user, "w.md", "see [[Filters#`wikilink`|`wikilink`]]")
    write(user, "m.md", "see [the filters](docs/Filters.md#Top)")
    write(user, "e.md", "see [the filters](<docs/Filters.md>) and [x](Filters)")
    write(user, "docs/r.md", "see [[./Filters]]")
    write(user, "docs/deep/r.md", "see [[../Filters]]")
    write(user, "s.md", "see [[/docs/Filters]]")
    write(user, "not.md", "see [[/Filters]] and [[./Filters]] and `[[Filters]]`")
    assert paths_of(services.vault.backlinks(user, "docs/Filters.md")) == [
        "docs/deep/r.md",
        "docs/r.md",
        "e.md",
        "m.md",
        "p.md",
        "s.md",
        "w.md",
    ]


def test_a_new_note_that_wins_a_tie_takes_the_backlinks_over(
    services: Services, user: Caller
) -> None:
    write = services.vault.write
    write(user, "f/Plan.md", "one")
    write(user, "team/notes.md", "[[Plan]]")
    write(user, "root.md", "[[Plan]]")
    assert paths_of(services.vault.backlinks(user, "f/Plan.md")) == [
        "root.md",
        "team/notes.md",
    ]
    write(user, "team/Plan.md", "two")  # in the linking note's own folder
    assert paths_of(services.vault.backlinks(user, "team/Plan.md")) == ["team/notes.md"]
    assert paths_of(services.vault.backlinks(user, "f/Plan.md")) == ["root.md"]
    services.vault.delete(user, "team/Plan.md")
    assert paths_of(services.vault.backlinks(user, "f/Plan.md")) == [
        "root.md",
        "team/notes.md",
    ]


def test_a_move_keeps_every_link_pointing_where_it_did(services: Services, user: Caller) -> None:
    write = services.vault.write
    write(user, "a/Target.md", "target")
    write(user, "a/Sibling.md", "sibling")
    write(user, "b/Sibling.md", "other sibling")
    write(user, "Home.md", "home")
    # The moved note links relatively and by a bare name its old folder decided.
    write(user, "a/Mover.md", "[[./Target]] [[Sibling]] [[../Home]] [[Home]]")
    write(user, "x.md", '---\nup: "[[Mover]]"\n---\n[m](a/Mover.md) [[Mover|alias]]')
    services.vault.move(user, "a/Mover.md", "b/Moved.md")
    moved = services.vault.read(user, "b/Moved.md").markdown
    # ./Target would miss from b/, so it becomes the name only that note has; "Sibling"
    # would now pick b/Sibling.md (own folder), so it names a/Sibling; ../Home and
    # Home still reach Home.md from b/ and are kept as written.
    assert moved == "[[Target]] [[a/Sibling]] [[../Home]] [[Home]]"
    assert services.vault.read(user, "x.md").markdown == (
        '---\nup: "[[Moved]]"\n---\n[m](b/Moved.md) [[Moved|alias]]'
    )
    assert paths_of(services.vault.backlinks(user, "a/Target.md")) == ["b/Moved.md"]
    assert paths_of(services.vault.backlinks(user, "a/Sibling.md")) == ["b/Moved.md"]
    assert paths_of(services.vault.backlinks(user, "b/Sibling.md")) == []
    assert paths_of(services.vault.backlinks(user, "b/Moved.md")) == ["x.md"]


def test_a_folder_move_keeps_a_bare_link_that_still_resolves(
    services: Services, user: Caller
) -> None:
    services.vault.write(user, "Unique.md", "u")
    services.vault.write(user, "src.md", "[[Unique]] and [[Unique#Part|p]]")
    services.vault.move(user, "Unique.md", "archive/Unique.md")
    assert services.vault.read(user, "src.md").markdown == "[[Unique]] and [[Unique#Part|p]]"
    assert paths_of(services.vault.backlinks(user, "archive/Unique.md")) == ["src.md"]


def test_inbound_counts_follow_the_tie_breaks(services: Services, user: Caller) -> None:
    write = services.vault.write
    write(user, "x/Plan.md", "one")
    write(user, "y/Plan.md", "two")
    write(user, "y/a.md", "[[Plan]]")  # y/Plan.md: its own folder
    write(user, "b.md", "[[Plan]]")  # x/Plan.md: same length, alphabetical
    write(user, "c.md", "[[Plan]]")
    counts = services.vault.links.inbound_counts_all(user.account_id)
    assert counts["x/Plan.md"] == 2 and counts["y/Plan.md"] == 1


def test_a_moved_notes_dangling_relative_links_follow_its_new_folder(
    services: Services, user: Caller
) -> None:
    """[[./Target]] in a note moved from a/ to b/ names b/Target from then on, though it
    reached nothing when the note moved (ADR 0038's former gap); embeds of files too."""
    write = services.vault.write
    write(user, "a/Note.md", "see [[./Target]] and ![[./pic.png]] and [[../Top]]")
    services.vault.move(user, "a/Note.md", "b/c/Note.md")
    assert services.vault.read(user, "b/c/Note.md").markdown == (
        "see [[./Target]] and ![[./pic.png]] and [[../Top]]"  # the text as written
    )
    write(user, "a/Target.md", "the old folder's")
    write(user, "b/c/Target.md", "the new folder's")
    write(user, "b/Top.md", "above the new folder")
    assert paths_of(services.vault.backlinks(user, "b/c/Target.md")) == ["b/c/Note.md"]
    assert paths_of(services.vault.backlinks(user, "a/Target.md")) == []
    assert paths_of(services.vault.backlinks(user, "b/Top.md")) == ["b/c/Note.md"]
    services.attachments.put(user, "b/c/pic.png", b"png")
    services.attachments.put(user, "a/pic.png", b"png")
    assert services.attachments.linked_from(user, "b/c/pic.png") == ["b/c/Note.md"]
    assert services.attachments.linked_from(user, "a/pic.png") == []
