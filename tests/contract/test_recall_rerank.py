"""Recall's second stage on both backends (ADR 0051): of the notes the search finds, the
one whose few lines answer the message is placed first, ahead of a long note holding the
same words scattered; RecallService(rerank_pool=0) keeps the search's order."""

from __future__ import annotations

from memvault.container import Services
from memvault.services.context import Caller
from memvault.services.recall import RecallService
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
