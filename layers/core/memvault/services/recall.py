"""Recall: the vault's notes that match the last user message, as one memory block.

The gateway calls this before dispatch on keys with the ``recall`` toggle and puts the
block ahead of the last user message (domain.recall describes the block). Errors from
storage or search (ServiceUnavailable and the like) propagate: the gateway turns them
into the notice "memory recall unavailable: the vault could not be read".

What was recalled for a message is remembered while the vault stays as it was (its
revision, which every commit moves) and for at most MEMO_MAX_AGE_SECONDS. An agent loop
recalls for the same question on every step; remembered, the steps after the first
skip the search and the assembly, and their block is byte for byte the first one's, so
the provider's cached prefix keeps matching. The age limit bounds what the revision
cannot see: on AWS a note is indexed just after its commit, so a recall in between
finds the index as it was, and recency moves scores as time passes.

A new message often recalls notes recalled before; how each was placed (whole, or the
excerpt chosen for its room) is remembered too (domain.recall.new_placement_memo), so
only the search and the reads are new work.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from memvault.domain.memo import Memo, text_digest
from memvault.domain.models import Note, SearchHit
from memvault.domain.passages import keyword_passages
from memvault.domain.query import search_terms
from memvault.domain.recall import (
    Passage,
    PlacementMemo,
    RecallBlock,
    RecallNote,
    assemble_recall,
    new_placement_memo,
)
from memvault.domain.rerank import Candidate, rerank
from memvault.services.context import Caller
from memvault.services.hybrid import KEYWORD_POOL
from memvault.services.vault import MAX_SEARCH_LIMIT, VaultService, parse_mode
from memvault.tokens import recall_count_tokens as default_count_tokens

# Only this much of the message is the query. Search keeps at most 64 distinct terms
# (domain.query.MAX_TERMS), which a few hundred words already supply, so a longer query
# finds nothing more; but normalising and splitting a pasted megabyte on every request
# would cost time before dispatch.
MAX_QUERY_CHARS = 2_000
# Recall asks the search for this many notes, reads them and places the best max_notes
# after domain.rerank orders them by their best passage (ADR 0051): on LoCoMo a pool of 10
# kept most of the gain, 20 all of it, 30 no more.
RERANK_POOL = 20
# The pool's keyword half stays as deep as a search page's (services.hybrid.KEYWORD_POOL),
# the rest of the pool coming from the fused list (ADR 0070): keyword hits ranked 11-20
# are the notes holding the message's words at low weight, which the second stage, lexical
# too, promoted over notes found by meaning (LoCoMo, all five conversations in one vault,
# multi-hop recall@5 0.593 -> 0.625; chosen in each of five leave-one-conversation-out folds).
POOL_KEYWORD_LIMIT = KEYWORD_POOL
# Blocks are a few kB each (2,000 tokens by default), so this is a few MB at most.
MEMO_MAX_ENTRIES = 1024
MEMO_MAX_AGE_SECONDS = 30.0

# (account, vault revision, notes, token budget, query digest, search mode, min_score):
# the account is in the key because revisions of different vaults can be equal; the mode
# and cut-off are the ones that run (the organisation's may change at the same revision).
MemoKey = tuple[str, int, int, int, bytes, str, float | None]
RecallMemo = Memo[MemoKey, RecallBlock | None]


def new_recall_memo(clock: Callable[[], float] = time.monotonic) -> RecallMemo:
    return Memo(MEMO_MAX_ENTRIES, max_age=MEMO_MAX_AGE_SECONDS, clock=clock)


class RecallService:
    def __init__(
        self,
        vault: VaultService,
        count_tokens: Callable[[str], int] = default_count_tokens,
        memo: RecallMemo | None = None,
        placements: PlacementMemo | None = None,
        min_score: float | None = None,
        rerank_pool: int = RERANK_POOL,
    ) -> None:
        self.vault = vault
        # 0: no second stage (the search's order; bench/retrieval.py compares).
        self.rerank_pool = rerank_pool
        # Recall's cut-off (None: the search's own, domain.fusion.DEFAULT_MIN_SCORE).
        self.min_score = min_score
        self.count_tokens = count_tokens
        self.memo = memo if memo is not None else new_recall_memo()
        # How notes were placed, for this counter (domain.recall.new_placement_memo).
        self.placements = placements if placements is not None else new_placement_memo()

    def recall(
        self,
        caller: Caller,
        message_text: str,
        *,
        max_notes: int,
        token_budget: int,
        vault_revision: int | None = None,
        mode: str | None = None,
    ) -> RecallBlock | None:
        """The memory block for ``message_text``, or None when nothing is recalled.

        With ``vault_revision`` (the account's, read for this request) a block recalled
        for the same message at the same revision is reused; without it, recall runs.
        Recall is automatic, not something the user or the model asked for, so its search
        does not spend the account's search budget (charge=False). ``mode`` is the search
        mode (a key's override; None: the organisation's default, else the deployment's):
        a semantic or hybrid search brings each note's matched passages, and a note too
        long for its share of the budget is placed as them (domain.recall).
        """
        query = query_text(message_text)
        if not query.strip() or max_notes < 1 or token_budget < 1:
            return None
        # The key's mode, else the organisation's, else the deployment's; this service's
        # cut-off, else the organisation's (services.search_defaults).
        asked, min_score = self.vault.search_defaults.resolve(
            caller.account_id,
            parse_mode(mode) if mode is not None else None,
            self.min_score,
            self.vault.default_mode,
        )
        run = partial(
            self._recall,
            caller,
            query,
            max_notes=max_notes,
            token_budget=token_budget,
            mode=asked.value,
            min_score=min_score,
        )
        if vault_revision is None:
            return run()
        key = (
            caller.account_id,
            vault_revision,
            max_notes,
            token_budget,
            text_digest(query),
            asked.value,
            min_score,
        )
        found, block = self.memo.lookup(key)
        if not found:
            block = run()
            self.memo.put(key, block)
        return block

    def _recall(
        self,
        caller: Caller,
        query: str,
        *,
        max_notes: int,
        token_budget: int,
        mode: str,
        min_score: float | None,
    ) -> RecallBlock | None:
        # No snippets: the notes are read whole below, and snippets cost engine time.
        # A message's common words tell its notes apart least and cost the most to match.
        pool = max(max_notes, self.rerank_pool) if self.rerank_pool else max_notes
        hits = self.vault.search(
            caller,
            query,
            limit=min(pool, MAX_SEARCH_LIMIT),
            charge=False,
            snippets=False,
            skip_common_terms=True,
            mode=mode,
            min_score=min_score,
            keyword_limit=POOL_KEYWORD_LIMIT if self.rerank_pool else None,
        )
        # Read in one go; a note deleted (or moved) since the search is left out.
        by_path = {hit.path: hit for hit in hits}
        terms = search_terms(query)
        # A note this short fits its equal share of the budget whole (at 2 characters a
        # token, denser than prose): it never needs passages.
        short_chars = 2 * token_budget // max(1, max_notes)
        read = self.vault.read_many(caller, [hit.path for hit in hits])
        if self.rerank_pool:
            by_note = {note.path: note for note in read}
            order = rerank(
                query, [Candidate(n.path, by_path[n.path].score, n.markdown) for n in read]
            )
            read = [by_note[r.path] for r in order]
        notes = [
            RecallNote(
                path=note.path,
                title=note.title,
                updated_at=note.updated_at,
                markdown=note.markdown,
                score=by_path[note.path].score,
                passages=_passages(note, by_path[note.path], terms, short_chars),
            )
            for note in read[:max_notes]
        ]
        return assemble_recall(
            notes,
            max_notes=max_notes,
            token_budget=token_budget,
            count_tokens=self.count_tokens,
            placements=self.placements,
        )


def _passages(
    note: Note, hit: SearchHit, terms: list[str], short_chars: int
) -> tuple[Passage, ...]:
    """The note's matched chunks (a semantic or hybrid hit's), else the chunks holding the
    most of the message's words (domain.passages): what stands for a long note."""
    matched = tuple(
        Passage(heading=c.heading, offset=c.offset, length=c.length)
        for c in hit.chunks
        # A chunk read before a later edit may no longer be where it was.
        if note.markdown[c.offset : c.offset + c.length] == c.text
    )
    if matched:
        return matched
    if len(note.markdown) <= short_chars:
        return ()  # fits its share of the budget whole: no passages needed
    spans = keyword_passages(note.markdown, terms=terms)
    return tuple(Passage(heading=s.heading, offset=s.offset, length=s.length) for s in spans)


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
