"""A note's outgoing links, each with the path it resolves to now, on every backend: what
the dashboard follows a link by before it has the vault's whole list of notes."""

from __future__ import annotations

import pytest

from memvault.container import Services
from memvault.errors import NotFound
from memvault.services.context import Caller, Surface


def resolved(services: Services, user: Caller, path: str) -> list[tuple[str, str, str | None]]:
    return [(link.kind, link.target, to) for link, to in services.vault.outgoing(user, path)]


def test_each_link_resolves_by_obsidians_rules_from_its_own_note(
    services: Services, user: Caller
) -> None:
    services.vault.write(user, "deep/folder/Far away.md", "# Far")
    services.vault.write(user, "x/Plan.md", "# Plan x")
    services.vault.write(user, "y/Plan.md", "# Plan y")
    services.vault.write(user, "y/b.md", "# b")
    services.vault.write(user, "Home.md", "# Home")
    services.attachments.put(user, "img/diagram.png", b"\x89PNG not really")
    services.vault.write(
        user,
        "y/Hub.md",
        "---\nup: '[[Home]]'\n---\n"
        "[[Far away]] [[Plan|the plan]] [[x/Plan#Goals]] [[./b]] [[../../Out]] "
        "[[Missing]] ![[diagram.png]] [b](b.md) `[[Far away]]` in code\n",
    )
    assert resolved(services, user, "y/hub.md") == [  # any case reads the note
        ("property", "Home", "Home.md"),
        ("wikilink", "Far away", "deep/folder/Far away.md"),  # a unique name, anywhere
        ("wikilink", "Plan", "y/Plan.md"),  # the tie goes to the linking note's folder
        ("wikilink", "x/Plan", "x/Plan.md"),
        ("wikilink", "./b", "y/b.md"),
        ("wikilink", "../../Out", None),  # climbs out of the vault
        ("wikilink", "Missing", None),
        ("wikilink", "diagram.png", "img/diagram.png"),  # an attachment
        ("markdown", "b.md", "y/b.md"),
    ]
    links = [link for link, _ in services.vault.outgoing(user, "y/Hub.md")]
    assert (links[2].alias, links[3].heading, links[7].embed) == ("the plan", "Goals", True)


def test_the_answer_follows_the_vault_as_it_is_now(services: Services, user: Caller) -> None:
    services.vault.write(user, "a.md", "[[Later]] [[Gone]]")
    services.vault.write(user, "Gone.md", "# Gone")
    assert resolved(services, user, "a.md") == [
        ("wikilink", "Later", None),
        ("wikilink", "Gone", "Gone.md"),
    ]
    services.vault.write(user, "notes/Later.md", "# Later")
    services.vault.delete(user, "Gone.md")
    assert resolved(services, user, "a.md") == [
        ("wikilink", "Later", "notes/Later.md"),
        ("wikilink", "Gone", None),
    ]
    services.vault.write(user, "b.md", "no links here")
    assert services.vault.outgoing(user, "b.md") == []


def test_a_missing_note_and_another_accounts_notes(services: Services, user: Caller) -> None:
    with pytest.raises(NotFound):
        services.vault.outgoing(user, "nowhere.md")
    services.accounts.create_account("other", account_id="other")
    other = Caller(account_id="other", surface=Surface.REST)
    services.vault.write(other, "Secret.md", "# Theirs")
    services.vault.write(user, "a.md", "[[Secret]]")
    assert resolved(services, user, "a.md") == [("wikilink", "Secret", None)]
    with pytest.raises(NotFound):
        services.vault.outgoing(other, "a.md")
