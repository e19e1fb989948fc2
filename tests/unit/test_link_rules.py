"""domain.links: links resolve as Obsidian resolves them (a table of cases), and the
link text chosen for a note always names it unambiguously."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.domain import links, paths
from memvault.domain.markdown import parse_note

VAULT = [
    "Home.md",
    "Plan.md",
    "a/Plan.md",
    "b/Plan.md",
    "a/b/Plan.md",
    "x/y/Note.md",
    "z/y/Note.md",
    "zz/Deep/Note.md",
    "Projects/Alpha/Spec.md",
    "Projects/Beta/Spec.md",
    "Café.md",
    "only/Here.md",
    "docs/Filters.md",
]


def maps(vault: list[str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    by_key = {paths.link_key(p): p for p in vault}
    by_name: dict[str, list[str]] = {}
    for p in vault:
        by_name.setdefault(paths.name_key(p), []).append(p)
    return by_key, by_name


def resolve(target: str, source: str, vault: list[str] = VAULT) -> str | None:
    by_key, by_name = maps(vault)
    return links.resolve(links.stored_key(target, source), source, by_key, by_name)


CASES = [
    # (written target, linking note, expected note or None: the rule that decides)
    ("Plan", "x/y/Note.md", "Plan.md"),  # exact vault path of a bare name wins
    ("Plan", "a/Other.md", "Plan.md"),  # ...even over the linking note's own folder
    ("a/Plan", "Home.md", "a/Plan.md"),  # exact vault path with a folder
    ("b/Plan", "Home.md", "b/Plan.md"),  # exact path beats the suffix match a/b/Plan.md
    ("y/Note", "Home.md", "x/y/Note.md"),  # suffix tie: same length, alphabetical
    ("y/Note", "z/y/Other.md", "z/y/Note.md"),  # suffix tie: the linking note's folder
    ("Note", "Home.md", "x/y/Note.md"),  # shortest path first (zz/Deep/Note.md is longer)
    ("Note", "zz/Deep/x.md", "zz/Deep/Note.md"),  # own folder beats shortest
    ("eep/Note", "Home.md", None),  # a suffix only matches at a folder boundary
    ("Spec", "Projects/Beta/Index.md", "Projects/Beta/Spec.md"),
    ("Spec", "Home.md", "Projects/Beta/Spec.md"),  # shortest path (Beta < Alpha)
    ("alpha/spec", "Home.md", "Projects/Alpha/Spec.md"),  # partial path, case-folded
    ("./Note", "x/y/Other.md", "x/y/Note.md"),  # relative to the linking note's folder
    ("./Note", "Home.md", None),  # relative: exact path only (no Note.md at the root)
    ("../Home", "only/Here.md", "Home.md"),
    ("../y/Note", "z/q/Other.md", "z/y/Note.md"),
    ("../../Home", "only/Here.md", None),  # climbs out of the vault
    ("/Plan", "a/b/Other.md", "Plan.md"),  # leading slash: from the root
    ("/y/Note", "Home.md", None),  # leading slash: exact, never by suffix
    ("/Projects/Alpha/Spec", "Home.md", "Projects/Alpha/Spec.md"),
    ("Here.md", "Home.md", "only/Here.md"),  # an explicit .md is the same note
    ("HERE", "Home.md", "only/Here.md"),  # case-insensitive
    ("Cafe\u0301", "Home.md", "Café.md"),  # NFC
    ("Missing", "Home.md", None),
    ("  Home  ", "a/x.md", "Home.md"),  # surrounding spaces are not part of the name
]


@pytest.mark.parametrize(("target", "source", "expected"), CASES)
def test_a_link_resolves_by_the_rules(target: str, source: str, expected: str | None) -> None:
    assert resolve(target, source) == expected


def test_every_key_that_can_resolve_to_a_note_is_a_key_pointing_at_it() -> None:
    by_key, by_name = maps(VAULT)
    for target, source, expected in CASES:
        if expected is not None:
            key = links.stored_key(target, source)
            assert key in links.keys_pointing_at(expected), (target, source)
            assert expected in links.candidates(key, by_key, by_name)


def test_link_text_names_the_note_unambiguously() -> None:
    by_key, by_name = maps(VAULT)
    assert links.link_text("only/Here.md", by_key, by_name) == "Here"
    assert links.link_text("a/Plan.md", by_key, by_name) == "a/Plan"
    # "b/Plan" is b/Plan.md's exact path, so a/b/Plan.md needs its whole path.
    assert links.link_text("a/b/Plan.md", by_key, by_name) == "a/b/Plan"
    assert links.link_text("x/y/Note.md", by_key, by_name) == "x/y/Note"
    assert links.link_text("zz/Deep/Note.md", by_key, by_name) == "Deep/Note"
    assert links.link_text("Plan.md", by_key, by_name) == "Plan"


@given(st.sampled_from(VAULT), st.sampled_from(VAULT))
def test_the_chosen_link_text_resolves_to_its_note_from_anywhere(target: str, source: str) -> None:
    by_key, by_name = maps(VAULT)
    text = links.link_text(target, by_key, by_name)
    assert resolve(text, source) == target


def test_links_are_read_in_every_form_obsidian_reads() -> None:
    markdown = (
        '---\nrelated: "[[Home]]"\nmore: ["[[a/Plan]]", "x"]\n---\n'
        "[[Filters#`wikilink`|`wikilink`]] and [[Note#^block-id]] and ![[Plan#Goals|w]]\n"
        "a [markdown link](Projects/Alpha/Spec.md#Goals), an embed ![pic](only/Here.md),\n"
        "[spaces](<Some Note.md>), [encoded](Some%20Other.md) and [bare](Home)\n"
        "not links: [web](https://example.com/x.md), [anchor](#Top), `[[Code]]`, "
        "[m](mailto:a@b.c), [[x]](Home.md)\n"
    )
    found = [
        (link.kind, link.target, link.heading, link.embed)
        for link in parse_note("n.md", markdown).links
    ]
    assert found == [
        ("property", "Home", None, False),
        ("property", "a/Plan", None, False),
        ("wikilink", "Filters", "`wikilink`", False),
        ("wikilink", "Note", "^block-id", False),
        ("wikilink", "Plan", "Goals", True),
        ("markdown", "Projects/Alpha/Spec.md", "Goals", False),
        ("markdown", "only/Here.md", None, True),
        ("markdown", "Some Note.md", None, False),
        ("markdown", "Some Other.md", None, False),
        ("markdown", "Home", None, False),
        ("wikilink", "x", None, False),
    ]


def test_code_spans_still_hide_links_that_start_inside_them() -> None:
    links_found = parse_note("n.md", "`code [[A]]` and ``[[B#`c`]]`` and [[C#`d`]]").links
    assert [link.target for link in links_found] == ["C"]
