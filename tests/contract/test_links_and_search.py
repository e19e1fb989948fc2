"""Links, backlinks, renames, ranked search and tenant isolation, on every backend."""

from __future__ import annotations

import pytest

from memvault.container import Services
from memvault.domain import ranking
from memvault.errors import Conflict, InvalidInput, NotFound, RateLimited
from memvault.services.context import Caller, Surface
from tests.support.clock import FakeClock
from tests.support.hostile_queries import HOSTILE_QUERIES


def paths_of(notes: list) -> list[str]:  # type: ignore[type-arg]
    return [n.path for n in notes]


def test_backlinks_resolve_like_obsidian(services: Services, user: Caller) -> None:
    services.vault.write(user, "projects/Plan.md", "# Plan")
    services.vault.write(user, "a.md", "see [[Plan]]")  # unique file name
    services.vault.write(user, "b.md", "see [[projects/Plan|the plan]]")  # exact path
    services.vault.write(user, "c.md", "see [[Plan#Goals]] and ![[Plan]]")  # heading, embed
    services.vault.write(user, "d.md", "see [[Other]]")  # dangling
    services.vault.write(user, "e.md", "`[[Plan]]` in code is not a link")
    assert paths_of(services.vault.backlinks(user, "projects/Plan.md")) == ["a.md", "b.md", "c.md"]


def test_ambiguous_bare_links_resolve_as_obsidian_does(services: Services, user: Caller) -> None:
    services.vault.write(user, "x/Plan.md", "one")
    services.vault.write(user, "a.md", "[[Plan]]")
    services.vault.write(user, "y/b.md", "[[Plan]]")
    assert paths_of(services.vault.backlinks(user, "x/Plan.md")) == ["a.md", "y/b.md"]
    # Now "Plan" is shared: y/b.md's own folder wins for it; a.md (at the root, no
    # candidate there) gets the shortest path, then alphabetical: x/Plan.md.
    services.vault.write(user, "y/Plan.md", "two")
    assert paths_of(services.vault.backlinks(user, "x/Plan.md")) == ["a.md"]
    assert paths_of(services.vault.backlinks(user, "y/Plan.md")) == ["y/b.md"]
    services.vault.write(user, "Plan.md", "root")  # the exact vault path wins a bare link
    assert paths_of(services.vault.backlinks(user, "Plan.md")) == ["a.md", "y/b.md"]
    assert services.vault.backlinks(user, "x/Plan.md") == []


def test_dangling_link_resolves_when_its_note_appears(services: Services, user: Caller) -> None:
    services.vault.write(user, "a.md", "[[Later]]")
    services.vault.write(user, "notes/Later.md", "here now")
    assert paths_of(services.vault.backlinks(user, "notes/Later.md")) == ["a.md"]


def test_move_rewrites_links_and_keeps_history(services: Services, user: Caller) -> None:
    services.vault.write(user, "Plan.md", "v1")
    services.vault.write(user, "Plan.md", "v2 links [[Plan#Top]]")
    services.vault.write(user, "a.md", "see [[Plan|the plan]] and ![[Plan]]\n```\n[[Plan]]\n```\n")
    services.vault.write(user, "b.md", "unrelated [[Other]]")
    moved = services.vault.move(user, "Plan.md", "archive/Roadmap.md")
    assert moved.path == "archive/Roadmap.md"
    a = services.vault.read(user, "a.md").markdown
    assert a == "see [[Roadmap|the plan]] and ![[Roadmap]]\n```\n[[Plan]]\n```\n"
    assert services.vault.read(user, "b.md").markdown == "unrelated [[Other]]"
    assert services.vault.read(user, "archive/Roadmap.md").markdown == "v2 links [[Roadmap#Top]]"
    assert [v.version for v in services.vault.versions(user, "archive/Roadmap.md")][-1] == 1
    assert paths_of(services.vault.backlinks(user, "archive/Roadmap.md")) == [
        "a.md",
        "archive/Roadmap.md",
    ]
    with pytest.raises(NotFound):
        services.vault.read(user, "Plan.md")


def test_move_uses_a_full_path_when_the_new_name_is_not_unique(
    services: Services, user: Caller
) -> None:
    services.vault.write(user, "x/Target.md", "other note with that name")
    services.vault.write(user, "Plan.md", "p")
    services.vault.write(user, "a.md", "[[Plan]]")
    services.vault.move(user, "Plan.md", "y/Target.md")
    assert services.vault.read(user, "a.md").markdown == "[[y/Target]]"
    assert paths_of(services.vault.backlinks(user, "y/Target.md")) == ["a.md"]


def test_move_onto_an_existing_note_is_refused_atomically(services: Services, user: Caller) -> None:
    services.vault.write(user, "a.md", "a [[b]]")
    services.vault.write(user, "b.md", "b")
    services.vault.write(user, "c.md", "c")
    with pytest.raises(Conflict):
        services.vault.move(user, "b.md", "c.md")
    assert services.vault.read(user, "a.md").markdown == "a [[b]]"
    assert services.vault.read(user, "b.md").markdown == "b"


def test_search_finds_ranks_and_snippets(services: Services, user: Caller) -> None:
    services.vault.write(user, "guides/deploy.md", "# Deploying\n\nUse blue green deployments.")
    services.vault.write(user, "misc.md", "# Misc\n\nWe once talked about deploying on fridays.")
    services.vault.write(user, "cats.md", "# Cats\n\nNothing relevant.")
    hits = services.vault.search(user, "deploying")
    assert hits[0].path == "guides/deploy.md"  # title match outranks a body match
    assert set(paths_of(hits)) == {"guides/deploy.md", "misc.md"}
    assert "<mark>" in hits[1].snippet
    assert all(h.score > 0 for h in hits)
    assert hits[0].score >= hits[1].score


def test_scores_are_between_zero_and_one_in_any_vault(services: Services, user: Caller) -> None:
    # The only match of a one-note vault (raw BM25: 2.1e-6, every idf at its floor).
    services.vault.write(user, "only.md", "# Kestrel\n\nA kestrel hovering over the field.")
    [only] = services.vault.search(user, "kestrel", mode="keyword")
    assert 0.5 < only.score < ranking.SCORE_MAX
    services.vault.write(user, "b.md", "# Field notes\n\nkestrel, buzzard and a field of barley")
    services.vault.write(user, "c.md", "barley prices " * 200)
    for text in ("kestrel", "field barley", "kestrel buzzard barley prices", "the", "zzzabsent"):
        for hit in services.vault.search(user, text, mode="keyword"):
            assert 0.0 < hit.score < ranking.SCORE_MAX < 1.0, (text, hit)


def test_a_note_holding_each_word_once_at_average_length_scores_one_half(
    services: Services, user: Caller, clock: FakeClock
) -> None:
    # Two notes of one length (so each is the average), each word in one of them.
    services.vault.write(user, "x.md", "lynx otter")
    services.vault.write(user, "y.md", "vole newt")
    clock.advance(200 * 365 * 86400)  # recency ~0 and no links: the multiplier is ~1
    [hit] = services.vault.search(user, "lynx otter", mode="keyword")
    assert hit.path == "x.md"
    assert hit.score == pytest.approx(0.5, abs=1e-3)


def test_scores_are_comparable_across_queries(services: Services, user: Caller) -> None:
    # The score says how much of the query a note holds and how strongly, on one scale
    # for every query: a note holding all of one query's words, often and in its title,
    # outscores a weak match of one word of another, and a fixed cutoff (0.4) tells them
    # apart.
    vault = services.vault
    vault.write(
        user,
        "db/Postgres migration.md",
        "# Postgres migration\n\nSteps for the postgres migration: dump, restore, verify.",
    )
    vault.write(user, "ops/Runbook.md", "# Runbook\n\n" + "on call rotation " * 40 + "kubernetes")
    vault.write(user, "ops/Deploy.md", "# Deploy\n\nhelm charts and the rollout checklist")
    for i in range(6):
        vault.write(user, f"misc/n{i}.md", f"# Note {i}\n\nweekly notes about coffee {i}")
    strong = vault.search(user, "postgres migration", mode="keyword")[0]
    assert strong.path == "db/Postgres migration.md"
    hits = {h.path: h for h in vault.search(user, "kubernetes helm rollout", mode="keyword")}
    weak = hits["ops/Runbook.md"]  # one of the three words, once, in a long note
    assert strong.score > 0.6 and weak.score < 0.2
    assert strong.score > 0.4 > weak.score
    # Within a query too: holding more of its words scores higher.
    assert hits["ops/Deploy.md"].score > weak.score


def test_search_stems_english(services: Services, user: Caller) -> None:
    services.vault.write(user, "n.md", "The migrations were running slowly")
    assert paths_of(services.vault.search(user, "migration run")) == ["n.md"]


def test_search_filters_by_folder_and_tag(services: Services, user: Caller) -> None:
    services.vault.write(user, "work/a.md", "budget review #finance/q3")
    services.vault.write(user, "work-old/b.md", "budget review #finance")
    services.vault.write(user, "home/c.md", "budget review")
    assert paths_of(services.vault.search(user, "budget", folder="work")) == ["work/a.md"]
    assert set(paths_of(services.vault.search(user, "budget", tag="finance"))) == {
        "work/a.md",
        "work-old/b.md",
    }
    assert paths_of(services.vault.search(user, "budget", tag="finance/q3")) == ["work/a.md"]


@pytest.mark.parametrize("text", HOSTILE_QUERIES)
def test_search_syntax_in_user_text_never_raises(
    services: Services, user: Caller, text: str
) -> None:
    services.vault.write(user, "n.md", "a note about columns and NEAR things")
    results = services.vault.search(user, text, mode="keyword")
    assert isinstance(results, list)


def test_search_ignores_the_body_past_256_kib(services: Services, user: Caller) -> None:
    filler = "lorem " * (256 * 1024 // 6 + 10)
    services.vault.write(user, "long.md", filler + " zebracorn")
    services.vault.write(user, "short.md", "a zebracorn here")
    assert paths_of(services.vault.search(user, "zebracorn")) == ["short.md"]


def test_recency_breaks_ties(services: Services, user: Caller, clock: FakeClock) -> None:
    services.vault.write(user, "old.md", "kumquat notes")
    clock.advance(90 * 86400)
    services.vault.write(user, "new.md", "kumquat notes")
    assert paths_of(services.vault.search(user, "kumquat")) == ["new.md", "old.md"]


def test_inbound_links_break_ties(services: Services, user: Caller) -> None:
    services.vault.write(user, "lonely.md", "quince facts")
    services.vault.write(user, "popular.md", "quince facts")
    for i in range(4):
        services.vault.write(user, f"ref{i}.md", "see [[popular]]")
    assert paths_of(services.vault.search(user, "quince")) == ["popular.md", "lonely.md"]
    services.vault.delete(user, "ref0.md")
    services.vault.move(user, "popular.md", "moved.md")
    assert paths_of(services.vault.search(user, "quince")) == ["moved.md", "lonely.md"]


def test_relevance_dominates_recency_and_links(
    services: Services, user: Caller, clock: FakeClock
) -> None:
    services.vault.write(user, "strong.md", "# Walrus\n\nwalrus walrus walrus habitat")
    clock.advance(3 * 365 * 86400)
    services.vault.write(user, "weak.md", "a long note that mentions a walrus once " + "x " * 300)
    for i in range(20):
        services.vault.write(user, f"ref{i}.md", "[[weak]]")
    assert paths_of(services.vault.search(user, "walrus"))[0] == "strong.md"


def test_deleted_notes_leave_search(services: Services, user: Caller) -> None:
    services.vault.write(user, "n.md", "pomegranate")
    services.vault.delete(user, "n.md")
    assert services.vault.search(user, "pomegranate") == []


def test_empty_query_is_refused(services: Services, user: Caller) -> None:
    with pytest.raises(InvalidInput):
        services.vault.search(user, "   ")


def test_reindex_rebuilds_search_from_storage(services: Services, user: Caller) -> None:
    services.vault.write(user, "n.md", "persimmon")
    services.index.clear(user.account_id)
    assert services.vault.search(user, "persimmon", mode="keyword") == []
    assert services.vault.reindex(user.account_id) == 1
    assert paths_of(services.vault.search(user, "persimmon", mode="keyword")) == ["n.md"]


def test_tenants_never_see_each_other(services: Services, user: Caller) -> None:
    services.accounts.create_account("other", account_id="other")
    other = Caller(account_id="other", surface=Surface.REST)
    services.vault.write(user, "shared-name.md", "secret apricot plan [[x]]")
    services.vault.write(other, "mine.md", "other apricot")
    services.vault.write(other, "x.md", "x")
    assert paths_of(services.vault.search(other, "apricot")) == ["mine.md"]
    assert paths_of(services.vault.search(other, "secret")) == []
    with pytest.raises(NotFound):
        services.vault.read(other, "shared-name.md")
    assert paths_of(services.vault.list_notes(other).items) == ["mine.md", "x.md"]
    assert services.vault.backlinks(other, "x.md") == []
    with pytest.raises(NotFound):
        services.vault.versions(other, "shared-name.md")
    with pytest.raises(NotFound):
        services.vault.delete(other, "shared-name.md")
    services.vault.write(other, "shared-name.md", "other's own")
    assert services.vault.read(user, "shared-name.md").markdown == "secret apricot plan [[x]]"


def test_budgets_are_per_account_and_kind_and_refill(
    services: Services, user: Caller, clock: FakeClock
) -> None:
    services.vault.write(user, "n.md", "fig")
    for _ in range(60):  # a burst of 60
        services.vault.search(user, "fig")
    with pytest.raises(RateLimited) as err:
        services.vault.search(user, "fig")
    assert err.value.retry_after >= 1
    services.vault.write(user, "m.md", "writes have their own bucket")
    services.accounts.create_account("other", account_id="other")
    services.vault.search(Caller(account_id="other"), "fig")  # another account is unaffected
    clock.advance(1.0)  # 120 a minute: two searches back after a second
    services.vault.search(user, "fig")
    services.vault.search(user, "fig")
    with pytest.raises(RateLimited):
        services.vault.search(user, "fig")


def test_write_budget_is_shared_by_surfaces(services: Services, clock: FakeClock) -> None:
    rest = Caller(account_id="local", surface=Surface.REST)
    mcp = Caller(account_id="local", surface=Surface.MCP)
    for i in range(30):
        services.vault.write(rest, f"r{i}.md", "x")
        services.vault.write(mcp, f"m{i}.md", "x")
    with pytest.raises(RateLimited):
        services.vault.write(rest, "one-more.md", "x")
    with pytest.raises(RateLimited):
        services.vault.write(mcp, "one-more.md", "x")


def test_snippets_are_escaped_text_with_marked_hits(services: Services, user: Caller) -> None:
    services.vault.write(user, "x.md", "a <script>alert(1)</script> note about <mark>kiwi</mark>")
    [hit] = services.vault.search(user, "kiwi")
    assert "<script>" not in hit.snippet and "&lt;script&gt;" in hit.snippet
    assert "<mark>kiwi</mark>" in hit.snippet
    assert "&lt;mark&gt;" in hit.snippet  # the note's own tag stays text


def test_search_without_snippets_finds_the_same_notes_in_the_same_order(
    services: Services, user: Caller
) -> None:
    vault = services.vault
    vault.write(user, "a.md", "# Alpha\nlaunch plan for the beta launch")
    vault.write(user, "b.md", "# Beta\nthe launch slipped a week")
    vault.write(user, "c.md", "# Gamma\nnothing relevant here")
    with_snippets = vault.search(user, "beta launch", limit=5)
    without = vault.search(user, "beta launch", limit=5, snippets=False)
    assert [(h.path, h.score, h.title, h.tags) for h in without] == [
        (h.path, h.score, h.title, h.tags) for h in with_snippets
    ]
    assert all(h.snippet for h in with_snippets)
    assert all(h.snippet == "" for h in without)
