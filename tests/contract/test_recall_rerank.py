"""Recall's second stage on both backends (ADR 0051): of the notes the search finds, the
one whose few lines answer the message is placed first, ahead of a long note holding the
same words scattered; RecallService(rerank_pool=0) keeps the search's order."""

from __future__ import annotations

from memvault.container import Services
from memvault.services.context import Caller
from memvault.services.recall import RecallService
from tests.contract.test_search_modes import require_vectors
from tests.unit.test_rerank import FILLER

# The words often, each line far from the others (a short note: the search ranks it first)...
WORDS = ("pottery", "kids", "workshop") * 3
SCATTERED = "\n".join(["# Week"] + [line for w in WORDS for line in (f"- {w}", *FILLER[:6])])
# ...the words once, together, in a long note.
FOCUSED = "\n".join(
    ["# Saturday", *FILLER, "- took the kids to a pottery workshop", *FILLER, *FILLER]
)

QUESTION = "What pottery workshop did we take the kids to?"


def test_recall_places_the_note_with_the_passage_first(services: Services, user: Caller) -> None:
    services.vault.write(user, "journal/week.md", SCATTERED)
    services.vault.write(user, "journal/saturday.md", FOCUSED)
    services.vault.write(user, "journal/other.md", "# Other\n\n- nothing to do with it\n")
    order = services.vault.search(user, QUESTION, mode="keyword", skip_common_terms=True)
    assert [h.path for h in order][:2] == ["journal/week.md", "journal/saturday.md"]
    args = {"max_notes": 5, "token_budget": 2000, "mode": "keyword"}
    block = RecallService(services.vault).recall(user, QUESTION, **args)  # type: ignore[arg-type]
    assert block is not None and block.paths == ("journal/saturday.md", "journal/week.md")
    plain = RecallService(services.vault, rerank_pool=0).recall(user, QUESTION, **args)  # type: ignore[arg-type]
    assert plain is not None and plain.paths == ("journal/week.md", "journal/saturday.md")
    # One note placed: the better one, not the search's first.
    args["max_notes"] = 1
    one = RecallService(services.vault).recall(user, QUESTION, **args)  # type: ignore[arg-type]
    assert one is not None and one.paths == ("journal/saturday.md",)


# ADR 0070: recall's pool keeps the keyword half as deep as a search page's (10 notes).
ANSWER = (
    "# Storage\n\nAfter comparing options the team settled on PostgreSQL; MySQL lacked the JSON"
    " columns and SQLite the concurrent writers.\n"
)
HOBBIES = ("garden", "trip", "piano", "recipes", "running", "books", "movies")
HOBBIES += ("birthday", "painting", "hiking", "camping", "chess", "football", "knitting")


def _mentions(hobby: str) -> str:
    """A note holding the message's word once, about something else."""
    return (
        f"# {hobby.title()}\n\n- We spent the afternoon on {hobby} and talked about the weekend.\n"
        f"- The kids enjoyed the {hobby} lesson and want to go again next month.\n"
        f"- Someone mentioned a database of {hobby} clubs in town.\n"
        f"- Everyone was tired but happy after the {hobby} day.\n"
    )


def test_a_note_found_by_meaning_is_recalled_past_many_notes_holding_a_word(
    services: Services, user: Caller
) -> None:
    """More than ten notes hold the message's one topic word in passing; the answer holds
    none of its words. Recall still places it: the notes the keyword half ranks past its
    tenth do not crowd it out of the pool (ADR 0070)."""
    require_vectors(services)
    services.vault.write(user, "decisions/storage.md", ANSWER)
    for hobby in HOBBIES:
        services.vault.write(user, f"log/{hobby}.md", _mentions(hobby))
    question = "Which database did we choose?"
    keyword = services.vault.search(user, question, mode="keyword", limit=20)
    assert len(keyword) == len(HOBBIES) and "decisions/storage.md" not in {h.path for h in keyword}
    args = {"max_notes": 12, "token_budget": 4000, "mode": "hybrid"}
    block = RecallService(services.vault).recall(user, question, **args)  # type: ignore[arg-type]
    assert block is not None and "decisions/storage.md" in block.paths
