"""No score or ranking an account observes depends on another account's notes.

An account is an organisation's vault. What its searches rank by (how many notes it has,
how many of them hold each word, how long they are) is counted over its own notes only,
on every backend (ADR 0017): on SQLite each account has an FTS5 table of its own, and on
OpenSearch, where accounts share shards and their statistics, the relevance is computed
in a script from the account's own counts.

Each test takes account B's full results (paths, order, scores, titles, tags, snippets)
for several queries, changes account A's vault so that every statistic a shared index
would read moves (many notes, long notes, the same words in titles, tags and bodies, the
same paths), and asserts that B's results are exactly what they were. The term counts an
index remembers are dropped before each look, so B's are counted again from what the
index holds, not served from before A wrote.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

from memvault.container import Services
from memvault.domain.query import TermCounts
from memvault.services.context import Caller, Surface

B_NOTES = {
    "projects/Acme merger.md": (
        "---\ntags: [finance, deals]\n---\n# Acme merger\n\n"
        "The acmecorpmerger closes in March. Board review of the merger timeline on Friday.\n"
    ),
    "projects/Hiring plan.md": (
        "# Hiring plan\n\nTwo engineers for the platform team; budget approved at the board"
        " meeting. #hiring\n"
    ),
    "finance/Quarterly budget.md": (
        "# Quarterly budget\n\nBudget review: travel, hiring, tooling. The acmecorpmerger"
        " fees are separate. #finance\n"
    ),
    "daily/2026-11-20.md": "Standup: launch checklist, merger paperwork, lunch with the board.\n",
    "ideas/Launch.md": "# Launch\n\nLaunch the beta on Friday. See [[Hiring plan]].\n",
    "misc/Lunch spots.md": "Good lunch spots near the office, and one for the launch party.\n",
}

# (text, search options): plain searches, filtered ones, and recall's kind.
QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("acmecorpmerger", {}),
    ("merger timeline board", {}),
    ("quarterly budget review", {}),
    ("launch friday lunch", {}),
    ("board", {"folder": "projects"}),
    ("budget", {"tag": "finance"}),
    (
        "What did the board decide about the acmecorpmerger timeline?",
        {"skip_common_terms": True, "snippets": False},
    ),
]


def import_notes(services: Services, caller: Caller, notes: dict[str, str]) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in notes.items():
            archive.writestr(path, text)
    buffer.seek(0)
    services.transfer.import_zip(caller, buffer)


def forget_counts(services: Services) -> None:
    """Drop the term counts the index remembers, so the next search counts afresh."""
    for name in ("term_counts", "doc_counts"):
        if hasattr(services.index, name):
            setattr(services.index, name, TermCounts())


Observed = list[list[tuple[object, ...]]]


def observe(services: Services, caller: Caller) -> Observed:
    """Every hit of every query, field for field, counted afresh."""
    forget_counts(services)
    return [
        [
            (h.path, h.note_id, h.title, h.tags, h.score, h.snippet, h.updated_at)
            for h in services.vault.search(caller, text, limit=50, charge=False, **options)
        ]
        for text, options in QUERIES
    ]


def rival_notes(count: int, *, variant: int = 0) -> dict[str, str]:
    """Notes of another organisation that hold B's words in every field, many times, in
    notes far longer than B's, under B's own paths too."""
    notes = dict.fromkeys(B_NOTES, "acmecorpmerger " * (3 + variant) + "board " * 50)
    filler = "merger timeline budget review hiring launch lunch friday quarterly " * 30
    for i in range(count):
        words = "acmecorpmerger board " * (i % 9 + variant) + filler * (1 + i % 4)
        notes[f"bulk/{variant}/Acmecorpmerger {i:03}.md"] = (
            f"---\ntags: [finance, hiring, board{i % 3}]\n---\n# Merger board {i}\n\n{words}\n"
        )
    return notes


def test_another_accounts_notes_never_change_a_search(services: Services, user: Caller) -> None:
    services.accounts.create_account("rival org", account_id="rival")
    rival = Caller(account_id="rival", surface=Surface.REST)
    import_notes(services, user, B_NOTES)
    before = observe(services, user)
    assert all(before), "every query finds something"

    import_notes(services, rival, rival_notes(60))  # many notes, long ones, B's words
    assert observe(services, user) == before
    import_notes(services, rival, rival_notes(60, variant=1))  # B's paths rewritten too
    assert observe(services, user) == before
    for i in range(0, 40, 2):
        services.vault.delete(rival, f"bulk/0/Acmecorpmerger {i:03}.md")
    services.vault.move(rival, "projects/Acme merger.md", "archive/Acme merger.md")
    assert observe(services, user) == before
    services.index.clear("rival")  # a whole account gone from the index at once
    assert observe(services, user) == before
    assert services.vault.reindex("rival") == 6 + 60 + 60 - 20  # and back
    assert observe(services, user) == before
    # Their searches see their own notes, scored over their own vault.
    theirs = services.vault.search(rival, "acmecorpmerger", limit=5, charge=False)
    assert len(theirs) == 5 and all(h.path.startswith(("bulk/", "projects/")) for h in theirs)


def test_the_same_notes_score_the_same_in_any_account(services: Services, user: Caller) -> None:
    # A vault copied into another account after a third account's many notes arrived gives
    # the copy exactly the results the original gave before they did: nothing but an
    # account's own notes counts.
    for account_id in ("twin", "rival"):
        services.accounts.create_account(account_id, account_id=account_id)
    twin = Caller(account_id="twin", surface=Surface.REST)
    rival = Caller(account_id="rival", surface=Surface.REST)
    import_notes(services, user, B_NOTES)
    alone = observe(services, user)
    import_notes(services, rival, rival_notes(80))
    import_notes(services, twin, B_NOTES)

    def without_ids(observed: Observed) -> Observed:
        return [[hit[:1] + hit[2:] for hit in hits] for hits in observed]

    assert without_ids(observe(services, twin)) == without_ids(alone)
