"""Turning a user's search text into engine-neutral terms.

User text is never passed to an engine as query syntax: it is split into word terms
here, and each adapter quotes or escapes the terms in its own engine's syntax. Terms
are OR-ed (BM25 rewards notes matching more of them), so a whole sentence, such as the
last user message used for recall, still finds the notes that share its key words.
English stop words are dropped, as OpenSearch's English analyzer does, unless the text
has nothing else (so a search for "the who" still searches).

Recall searches a whole message, whose common words (found in a large share of the
vault) say little about which note it means, yet cost the most to match: both engines
score every note holding a term they search. A search with ``skip_common_terms`` sorts
the message's terms by how many of the account's notes hold them (``select_terms``):

- a *common* term (in more than a quarter of the notes) is left out: under the ranking's
  BM25 a term in half the notes or more adds nothing to relevance anyway (its IDF is
  floored near zero), and one between a quarter and half adds a fraction of a rare
  term's weight;
- a *frequent* term (in more than 2% of them) still adds to the score of the notes the
  message's rarer terms match, but brings in no note by itself: Lucene's common-terms
  query, with a cutoff twenty times as high as the 0.1% its documentation shows;
- a term no note holds is left out: it would add nothing to any note's score.

When a message has no rarer term, its frequent terms match (and failing those, its
common ones), so a search for only common words still finds what holds them. Relevance
is the same as a search for every kept term would give the notes it matches: BM25 sums
over terms, and each term's weight is counted over the account's notes, whatever the
query's shape (the 0-1 score divides by the kept terms' weight: domain.ranking).
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memvault.domain.memo import Memo

MAX_TERMS = 64

# Lucene's English stop set, the one OpenSearch's `english` analyzer uses.
ENGLISH_STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)

_WORD = re.compile(r"\w+", re.UNICODE)


def search_terms(text: str) -> list[str]:
    """Distinct lower-cased word terms of ``text``, stop words dropped, at most MAX_TERMS."""
    words = _WORD.findall(unicodedata.normalize("NFC", text).casefold())
    distinct = list(dict.fromkeys(w for w in words if w.strip("_")))
    meaningful = [w for w in distinct if w not in ENGLISH_STOP_WORDS]
    return (meaningful or distinct)[:MAX_TERMS]


# A term found in more than this share of the account's notes is common...
COMMON_TERM_SHARE = 0.25
# ...and in more than this share, frequent...
FREQUENT_TERM_SHARE = 0.02
# ...provided it is in more than this many: below that, matching it costs next to nothing,
# so a small vault is always searched for every term.
COMMON_TERM_FLOOR = 100


def common_term_cutoff(total_notes: int) -> int:
    """The most of an account's notes a term may be found in and still not be common."""
    return max(COMMON_TERM_FLOOR, int(total_notes * COMMON_TERM_SHARE))


def frequent_term_cutoff(total_notes: int) -> int:
    """The most of an account's notes a term may be found in and still match by itself."""
    return max(COMMON_TERM_FLOOR, int(total_notes * FREQUENT_TERM_SHARE))


def without_common_terms(
    terms: Sequence[str], note_counts: Mapping[str, int], cutoff: int
) -> list[str]:
    """The ``terms`` found in at least one and at most ``cutoff`` notes; when none is,
    the common ones (a search for only common words still finds what holds them).

    A term no note holds adds nothing to any note's relevance, so leaving it out changes
    no result; it only saves the engine the work of looking for it in every match.
    """
    kept = [term for term in terms if 0 < note_counts.get(term, 0) <= cutoff]
    return kept or [term for term in terms if note_counts.get(term, 0) > cutoff]


@dataclass(frozen=True, slots=True)
class TermSelection:
    """What a search looks for: the notes holding any of ``matching``, scored by every
    term in ``matching`` and ``scoring`` (which adds to the score of those notes and brings
    in none of its own)."""

    matching: tuple[str, ...]
    scoring: tuple[str, ...] = ()

    @classmethod
    def every(cls, terms: Sequence[str]) -> TermSelection:
        """Every term matches: a plain search."""
        return cls(tuple(terms))

    @property
    def terms(self) -> tuple[str, ...]:
        return self.matching + self.scoring


def select_terms(terms: Sequence[str], note_counts: Mapping[str, int], total: int) -> TermSelection:
    """``terms`` as a search that leaves out common terms (without_common_terms) and lets
    frequent ones only score, given how many of the account's ``total`` notes hold each."""
    kept = without_common_terms(terms, note_counts, common_term_cutoff(total))
    frequent = frequent_term_cutoff(total)
    matching = tuple(term for term in kept if note_counts.get(term, 0) <= frequent)
    if not matching:
        return TermSelection(tuple(kept))
    return TermSelection(
        matching, tuple(term for term in kept if note_counts.get(term, 0) > frequent)
    )


def held(selection: TermSelection, counts: Mapping[str, int]) -> TermSelection:
    """The selection less the terms no note holds (they add nothing to any note's score,
    so both engines leave them out of the query and of its weight); when none of its
    matching terms is held any more (counts moved since recall selected them), its
    scoring ones match."""
    matching = tuple(t for t in selection.matching if counts.get(t, 0) > 0)
    scoring = tuple(t for t in selection.scoring if counts.get(t, 0) > 0)
    if not matching:
        return TermSelection(scoring)
    return TermSelection(matching, scoring)


# Recall searches a whole message on every request, and messages share most of their
# words: what an account's notes say about a term's frequency is remembered for
# TERM_COUNTS_MAX_AGE seconds, so the next message rarely has anything to count. A count
# that old can only misjudge a term whose frequency crossed a cutoff meanwhile: one just
# grown common or frequent is still searched as before (a little slower), one just grown
# rare is still left out or only scores (recall then leans on the message's other words,
# as when it was common). A term no note held is never remembered: a note written since
# must be found at once.
#
# Counts are also what ranking weighs terms by (domain.ranking.idf): an adapter that knows
# when the account's notes change passes a ``version`` that every change moves (SQLite: a
# generation its writes bump in the same transaction), so counts of an older version are
# never served again; within one process the OpenSearch adapter moves it on each write.
TERM_COUNTS_MAX_AGE = 60.0
TERM_COUNTS_MAX_ENTRIES = 65_536


@dataclass(frozen=True, slots=True)
class Corpus:
    """What ranking needs of an account's notes as a whole: how many there are and, where
    the engine does not track it itself, their total length in tokens (domain.ranking's
    D summed over the notes, offsets included)."""

    notes: int
    tokens: int | None = None


# How an engine counts: (terms to count, the account's note count if known) ->
# (the account's note count, notes per term, each counted at most to one past the cutoff).
TermCounter = Callable[[list[str], int | None], tuple[int, dict[str, int]]]


class TermCounts:
    """Per account (and version): its corpus and its terms' note counts, each kept
    TERM_COUNTS_MAX_AGE seconds, least recently used out first. The account is in every
    key; the values are numbers, so no entry can serve one account another's answer."""

    # Keys no term can be (terms are word characters): the account's note count, and its
    # notes' total length in tokens.
    _NOTES = ""
    _TOKENS = "\0tokens"

    def __init__(
        self,
        *,
        max_age: float = TERM_COUNTS_MAX_AGE,
        max_entries: int = TERM_COUNTS_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # (account, version, term) -> count.
        self._counts: Memo[tuple[str, int, str], int] = Memo(
            max_entries, max_age=max_age, clock=clock
        )

    def lookup(
        self, account_id: str, terms: Sequence[str], *, version: int = 0
    ) -> tuple[int | None, dict[str, int]]:
        """The account's note count (None if not known) and the counts known of ``terms``."""
        total = self._counts.get((account_id, version, self._NOTES))
        counts = {
            t: c for t in terms if (c := self._counts.get((account_id, version, t))) is not None
        }
        return total, counts

    def lookup_corpus(
        self, account_id: str, terms: Sequence[str], *, version: int = 0
    ) -> tuple[Corpus | None, dict[str, int]]:
        """As ``lookup``, with the account's corpus (None unless its note count and its
        token total are both known)."""
        total, counts = self.lookup(account_id, terms, version=version)
        tokens = self._counts.get((account_id, version, self._TOKENS))
        corpus = None if total is None or tokens is None else Corpus(total, tokens)
        return corpus, counts

    def remember(
        self,
        account_id: str,
        total: int | Corpus,
        counts: Mapping[str, int],
        *,
        version: int = 0,
    ) -> None:
        corpus = total if isinstance(total, Corpus) else Corpus(total)
        self._counts.put((account_id, version, self._NOTES), corpus.notes)
        if corpus.tokens is not None:
            self._counts.put((account_id, version, self._TOKENS), corpus.tokens)
        for term, count in counts.items():
            if count > 0:
                self._counts.put((account_id, version, term), count)

    def clear(self) -> None:
        """Forget every count (tests use it to make the next search count afresh)."""
        self._counts.clear()


def distinctive_terms(
    account_id: str,
    terms: Sequence[str],
    memo: TermCounts,
    count: TermCounter,
    *,
    version: int = 0,
) -> TermSelection:
    """``terms`` selected by how many of the account's notes hold each (select_terms),
    counting through ``count`` only what ``memo`` does not know."""
    total, counts = memo.lookup(account_id, terms, version=version)
    unknown = [term for term in terms if term not in counts]
    if total is None or (unknown and not _small(total)):
        total, fresh = count(unknown, total)
        memo.remember(account_id, total, fresh, version=version)
        counts.update(fresh)
    return selection(terms, counts, total)


def selection(terms: Sequence[str], counts: Mapping[str, int], total: int) -> TermSelection:
    """select_terms, except in a vault too small for any term to be common, where every
    term is searched."""
    if _small(total):
        # A small vault: no term is common or frequent, and every search is cheap.
        return TermSelection.every(terms)
    return select_terms(terms, counts, total)


def _small(total: int) -> bool:
    """A vault of ``total`` notes, in which no term can be common."""
    return total <= common_term_cutoff(total)
