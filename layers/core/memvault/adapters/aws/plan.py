"""A commit's plan: the batch of changes simulated in memory over the items it touches.

The planning (``planning``) fills it; the commit (``commit``, or ``bulk`` for one too
large for a DynamoDB transaction) writes it through ``transaction``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memvault.adapters.aws.dynamo import Item
from memvault.domain import write_plan
from memvault.domain.models import Note
from memvault.ports import PriorState


@dataclass
class Plan:
    """A batch of changes simulated in memory, ready to be written as final states."""

    account_id: str
    pk: str
    originals: dict[str, Item | None] = field(default_factory=dict)  # sort key -> item
    finals: dict[str, Item | None] = field(default_factory=dict)
    new_versions: list[tuple[Item, str]] = field(default_factory=list)  # (version item, md)
    # (note id, version, its body's object key when known) of versions past the kept 50
    trimmed_versions: list[tuple[str, int, str | None]] = field(default_factory=list)
    cost: write_plan.Cost = write_plan.FREE  # what the changes add to the account's counters
    results: list[Note | None] = field(default_factory=list)
    previous: list[PriorState | None] = field(default_factory=list)
    tombs_loaded: bool = False  # every tombstone of the account is already in originals
    # Items whose original state was not read (the file-name index): written without a
    # condition, since their state follows from the note items' conditions.
    blind: set[str] = field(default_factory=set)
    # Whether originals may come from the thread's recent reads or be assumed (a first
    # attempt); the items taken that way, whose conditions a stale read would fail.
    optimistic: bool = False
    unverified: set[str] = field(default_factory=set)
    # Items read as absent that must still be absent when the transaction runs.
    absent_checks: set[str] = field(default_factory=set)
    tombs_queried: set[str] = field(default_factory=set)  # tombstone prefixes read

    def set(self, sk: str, item: Item | None) -> None:
        self.finals[sk] = item

    def set_blind(self, sk: str, item: Item | None) -> None:
        self.finals[sk] = item
        self.blind.add(sk)

    def current(self, sk: str) -> Item | None:
        return self.finals[sk] if sk in self.finals else self.originals.get(sk)

    def changed_keys(self) -> list[str]:
        return [
            sk
            for sk, item in self.finals.items()
            if sk in self.blind or item != self.originals.get(sk)
        ]


class StaleRead(Exception):
    """A commit's condition failed on an item it had not read itself: plan it again."""
