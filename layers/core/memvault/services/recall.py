"""Recall: the vault's notes that match the last user message, as one memory block.

The gateway calls this before dispatch on keys with the ``recall`` toggle and puts the
block ahead of the last user message (domain.recall describes the block). Errors from
storage or search (ServiceUnavailable and the like) propagate: the gateway turns them
into the notice "memory recall unavailable: the vault could not be read".
"""

from __future__ import annotations

from collections.abc import Callable

from memvault.domain.recall import RecallBlock, RecallNote, assemble_recall
from memvault.gateway.tokens import count_tokens as default_count_tokens
from memvault.services.context import Caller
from memvault.services.vault import MAX_SEARCH_LIMIT, VaultService

# Only this much of the message is the query. Search keeps at most 64 distinct terms
# (domain.query.MAX_TERMS), which a few hundred words already supply, so a longer query
# finds nothing more; but normalising and splitting a pasted megabyte on every request
# would cost time before dispatch.
MAX_QUERY_CHARS = 2_000


class RecallService:
    def __init__(
        self, vault: VaultService, count_tokens: Callable[[str], int] = default_count_tokens
    ) -> None:
        self.vault = vault
        self.count_tokens = count_tokens

    def recall(
        self, caller: Caller, message_text: str, *, max_notes: int, token_budget: int
    ) -> RecallBlock | None:
        """The memory block for ``message_text``, or None when nothing is recalled.

        Recall is automatic, not something the user or the model asked for, so its search
        does not spend the account's search budget (charge=False).
        """
        query = query_text(message_text)
        if not query.strip() or max_notes < 1 or token_budget < 1:
            return None
        # No snippets: the notes are read whole below, and snippets cost engine time.
        # A message's common words tell its notes apart least and cost the most to match.
        hits = self.vault.search(
            caller,
            query,
            limit=min(max_notes, MAX_SEARCH_LIMIT),
            charge=False,
            snippets=False,
            skip_common_terms=True,
        )
        # Read in one go; a note deleted (or moved) since the search is left out.
        scores = {hit.path: hit.score for hit in hits}
        notes = [
            RecallNote(
                path=note.path,
                title=note.title,
                updated_at=note.updated_at,
                markdown=note.markdown,
                score=scores[note.path],
            )
            for note in self.vault.read_many(caller, [hit.path for hit in hits])
        ]
        return assemble_recall(
            notes, max_notes=max_notes, token_budget=token_budget, count_tokens=self.count_tokens
        )


def query_text(message_text: str) -> str:
    """The first MAX_QUERY_CHARS of the message, not ending in a cut-off word."""
    if len(message_text) <= MAX_QUERY_CHARS:
        return message_text
    head = message_text[:MAX_QUERY_CHARS]
    if not message_text[MAX_QUERY_CHARS].isspace():
        # A half word would search for a term the message does not contain.
        space = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
        if space > 0:
            head = head[:space]
    return head
