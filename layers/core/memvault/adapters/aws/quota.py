"""The account's quota in shards, so writers of different notes do not share an item.

Every commit used to update the account item (note count, bytes, revision) inside its
transaction: on DynamoDB two transactions on one item at once conflict, so two writers
of *different* notes in one organisation refused each other. The counters now live in
``QUOTA_SHARDS`` shard items (``A#<account> / ACCOUNT#Q<nn>``, ADR 0033), each holding

    notes_free, bytes_free     a share of the headroom (limit minus usage)
    note_count, total_bytes    the usage written through this shard (may be negative:
                               a note created through one shard can be deleted
                               through another)
    revision                   commits through this shard
    import_lock, lock_expires  the bulk commit's lock, on every shard at once
    deficit                    "the headroom is all on shard 0" (see below)

A commit picks a shard at random and, in its own transaction, takes what it adds from
that shard's headroom on the condition that the shard has it (``notes_free >= n``), and
gives back what it frees. Headroom moves only by such conditional takes, so the sum
over shards never goes below zero and the limit is never passed, however many writers
race. When the chosen shard lacks the headroom (or another transaction holds it), the
commit reads every shard (one Query) and either refuses (the sum is short: the exact
quota error) or takes from as many shards as it needs, each on its own condition.

Usage, headroom and revision are the sums over the shards and the ``ACCOUNT`` item
(whose own counters are those of accounts stored before shards; the first commit that
finds no shard moves its headroom into shards, ``migrate``).

Limits lowered below usage leave a negative headroom, which cannot be spread over
shards without letting a shard with headroom admit a write the sum refuses: it goes to
shard 0 and every other shard carries ``deficit``, which fails their commits'
conditions, so every commit goes through shard 0 alone until it is back to zero or
more and the headroom is spread out again (``heal``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import dynamo, keys
from memvault.adapters.aws.clients import error_code
from memvault.adapters.aws.dynamo import Item, Table, serialize, values
from memvault.domain import write_plan
from memvault.domain.models import Limits
from memvault.errors import Conflict, NotFound, QuotaExceeded, ServiceUnavailable

SHARDS = keys.QUOTA_SHARDS
SHARD_PREFIX = keys.quota_sk(0)[:-2]
# How many times a commit re-plans its takes after losing a race for headroom.
ATTEMPTS = 20


class QuotaRetry(Exception):
    """A commit's transaction was refused over its shard: ``read`` when the shard's
    condition failed (read the shards and plan again), else another transaction held
    an item (try another shard)."""

    def __init__(self, *, read: bool) -> None:
        super().__init__("quota shard refused")
        self.read = read


def is_shard(sk: str | None) -> bool:
    return sk is not None and sk.startswith(SHARD_PREFIX)


def spread(total: int) -> list[int]:
    """``total`` (>= 0) in SHARDS near-equal shares, the larger ones first."""
    share, extra = divmod(total, SHARDS)
    return [share + (1 if i < extra else 0) for i in range(SHARDS)]


def shard_values(notes_free: int, bytes_free: int) -> list[tuple[int, int, bool]]:
    """(notes_free, bytes_free, deficit) of each shard for the given total headroom."""
    if notes_free >= 0 and bytes_free >= 0:
        return list(zip(spread(notes_free), spread(bytes_free), [False] * SHARDS, strict=True))
    return [(notes_free, bytes_free, False)] + [(0, 0, True)] * (SHARDS - 1)


def shard_items(pk: str, notes_free: int, bytes_free: int) -> list[Item]:
    items: list[Item] = []
    for i, (n, b, deficit) in enumerate(shard_values(notes_free, bytes_free)):
        item: Item = {
            keys.TABLE_PK: pk,
            keys.TABLE_SK: keys.quota_sk(i),
            "notes_free": n,
            "bytes_free": b,
            "note_count": 0,
            "total_bytes": 0,
            "revision": 0,
        }
        if deficit:
            item["deficit"] = True
        items.append(item)
    return items


@dataclass
class State:
    """Every item of an account's quota: the ``ACCOUNT`` item and its shards."""

    pk: str
    account: Item | None
    shards: list[Item]

    def _sum(self, name: str) -> int:
        items = ([self.account] if self.account else []) + self.shards
        return sum(int(i.get(name, 0)) for i in items)

    @property
    def usage(self) -> write_plan.Usage:
        return write_plan.Usage(self._sum("note_count"), self._sum("total_bytes"))

    @property
    def revision(self) -> int:
        return self._sum("revision")

    @property
    def free(self) -> tuple[int, int]:
        return self._sum("notes_free"), self._sum("bytes_free")

    @property
    def limits(self) -> Limits:
        assert self.account is not None
        return Limits(max_notes=self.account["max_notes"], max_bytes=self.account["max_bytes"])

    @property
    def lock(self) -> tuple[str, float] | None:
        for item in ([self.account] if self.account else []) + self.shards:
            if "import_lock" in item:
                return str(item["import_lock"]), float(item["lock_expires"])
        return None

    @property
    def deficit(self) -> bool:
        return any(s.get("deficit") for s in self.shards)


def read_state(table: Table, pk: str) -> State:
    """The account item and its shards: one Query (their sort keys share ``ACCOUNT``)."""
    account: Item | None = None
    shards: list[Item] = []
    for item in table.query(pk, keys.ACCOUNT_SK):
        if item[keys.TABLE_SK] == keys.ACCOUNT_SK:
            account = item
        elif is_shard(item[keys.TABLE_SK]):
            shards.append(item)
    return State(pk, account, sorted(shards, key=lambda s: str(s[keys.TABLE_SK])))


def refusal(state: State, account_id: str, cost: write_plan.Cost) -> Exception | None:
    """Why a commit costing ``cost`` cannot be written now, or None when it fits."""
    if state.account is None:
        return NotFound(f"no account {account_id!r}", code="account_not_found")
    if state.lock is not None:
        return Conflict(
            "an import is in progress on this vault; retry when it has finished",
            code="import_in_progress",
        )
    notes_free, bytes_free = state.free
    usage, limits = state.usage, state.limits
    if cost.notes > 0 and notes_free < cost.notes:
        return QuotaExceeded(
            f"the vault would hold {usage.note_count + cost.notes} notes; its limit is"
            f" {limits.max_notes}",
            code="vault_note_limit",
        )
    if cost.bytes > 0 and bytes_free < cost.bytes:
        return write_plan.byte_limit_refusal(usage, limits, cost)
    return None


# ------------------------------------------------------------------ commit actions
def _update(
    table: Table,
    pk: str,
    sk: str,
    *,
    take: tuple[int, int],
    usage: tuple[int, int] = (0, 0),
    give: tuple[int, int] = (0, 0),
    revision: int = 0,
    lock_id: str | None = None,
    release: bool = False,
) -> dict[str, Any]:
    """One shard's update: take headroom (on the condition it is there), give some back,
    record usage; outside a bulk commit, on the condition that no lock or deficit bars
    it; in one (``lock_id``), on the condition that the lock is still that one."""
    conditions = ["attribute_exists(pk)"]
    if lock_id is None:
        conditions += ["attribute_not_exists(import_lock)", "attribute_not_exists(deficit)"]
    else:
        conditions.append("import_lock = :lock")
    attrs: dict[str, Any] = {
        ":fn": give[0] - take[0],
        ":fb": give[1] - take[1],
        ":un": usage[0],
        ":ub": usage[1],
        ":rev": revision,
    }
    if take[0] > 0:
        conditions.append("notes_free >= :tn")
        attrs[":tn"] = take[0]
    if take[1] > 0:
        conditions.append("bytes_free >= :tb")
        attrs[":tb"] = take[1]
    update = "ADD notes_free :fn, bytes_free :fb, note_count :un, total_bytes :ub, revision :rev"
    if lock_id is not None:
        attrs[":lock"] = lock_id
    if release:
        update += " REMOVE import_lock, lock_expires"
    return {
        "Update": {
            "TableName": table.name,
            "Key": dynamo.key(pk, sk),
            "UpdateExpression": update,
            "ConditionExpression": " AND ".join(conditions),
            "ExpressionAttributeValues": values(attrs),
        }
    }


def _split(cost: write_plan.Cost) -> tuple[tuple[int, int], tuple[int, int]]:
    """(what a cost takes, what it gives back), per counter."""
    return (max(cost.notes, 0), max(cost.bytes, 0)), (max(-cost.notes, 0), max(-cost.bytes, 0))


def optimistic(
    table: Table, pk: str, cost: write_plan.Cost, *, avoid: str | None = None
) -> list[dict[str, Any]]:
    """A commit's shard update with no read: all of it on one shard picked at random
    (other than ``avoid``, the one a conflict was just met on)."""
    take, give = _split(cost)
    usage = (cost.notes, cost.bytes)
    choices = [keys.quota_sk(i) for i in range(SHARDS)]
    sk = random.choice([c for c in choices if c != avoid] or choices)
    return [_update(table, pk, sk, take=take, give=give, usage=usage, revision=1)]


def allocate(state: State, cost: write_plan.Cost) -> dict[str, tuple[int, int]]:
    """Which shard gives how much of what ``cost`` takes (the state has enough): the
    shards with the most headroom first; in a deficit, shard 0 alone."""
    take, _give = _split(cost)
    shards = [s for s in state.shards if not s.get("deficit")]
    takes: dict[str, list[int]] = {}
    for dim, name in enumerate(("notes_free", "bytes_free")):
        need = take[dim]
        for shard in sorted(shards, key=lambda s: -int(s[name])):
            if need <= 0:
                break
            got = min(int(shard[name]), need)
            if got > 0:
                takes.setdefault(shard[keys.TABLE_SK], [0, 0])[dim] = got
                need -= got
    return {sk: (t[0], t[1]) for sk, t in takes.items()}


def _home(state: State, takes: dict[str, tuple[int, int]]) -> str:
    if takes:
        return next(iter(takes))
    if state.deficit:
        return keys.quota_sk(0)
    return str(random.choice([s[keys.TABLE_SK] for s in state.shards]))


def gathered(
    table: Table, state: State, cost: write_plan.Cost, *, lock_id: str | None = None
) -> list[dict[str, Any]]:
    """The shard updates that take ``cost`` from the shards as read (enough, checked by
    ``refusal``): each on its own condition, so a race lost meanwhile fails them."""
    takes = allocate(state, cost)
    home = _home(state, takes)
    _take, give = _split(cost)
    touched = dict.fromkeys([home, *takes])
    if lock_id is not None:  # the bulk commit's last step releases every shard
        touched |= dict.fromkeys(s[keys.TABLE_SK] for s in state.shards)
    actions = []
    for sk in touched:
        is_home = sk == home
        actions.append(
            _update(
                table,
                state.pk,
                sk,
                take=takes.get(sk, (0, 0)),
                give=give if is_home else (0, 0),
                usage=(cost.notes, cost.bytes) if is_home else (0, 0),
                revision=1 if is_home or lock_id is not None else 0,
                lock_id=lock_id,
                release=lock_id is not None,
            )
        )
    return actions


def prepare(table: Table, account_id: str, cost: write_plan.Cost) -> State:
    """The shards as they are now, ready for ``gathered``: migrated from an account item
    stored before shards, healed of a deficit that is paid off; raises the refusal when
    the commit cannot be written."""
    pk = keys.account_pk(account_id)
    for _ in range(ATTEMPTS):
        state = read_state(table, pk)
        if state.account is not None and not state.shards and state.lock is None:
            migrate(table, state)
            continue
        if state.account is not None and state.deficit and state.lock is None:
            notes_free, bytes_free = state.free
            if notes_free >= 0 and bytes_free >= 0:
                heal(table, state)
                continue
        problem = refusal(state, account_id, cost)
        if problem is not None:
            raise problem
        return state
    raise contended()


def contended() -> ServiceUnavailable:
    return ServiceUnavailable(
        "the vault's quota is under heavy contention; retry shortly", code="quota_contended"
    )


# ------------------------------------------------------------------ rewriting the shards
def _pinned(state: State) -> list[tuple[str, Item]]:
    return [(s[keys.TABLE_SK], s) for s in state.shards]


def _rewrite(
    table: Table,
    state: State,
    notes_free: int,
    bytes_free: int,
    extra: Sequence[dict[str, Any]] = (),
) -> bool:
    """Set every shard's headroom to a spread of the totals, on the condition that no
    shard moved since ``state`` was read. False when one did (read again)."""
    actions = list(extra)
    for (sk, shard), (n, b, deficit) in zip(
        _pinned(state), shard_values(notes_free, bytes_free), strict=True
    ):
        update = "SET notes_free = :n, bytes_free = :b"
        update += ", deficit = :t" if deficit else " REMOVE deficit"
        attrs: dict[str, Any] = {
            ":n": n,
            ":b": b,
            ":on": shard["notes_free"],
            ":ob": shard["bytes_free"],
        }
        if deficit:
            attrs[":t"] = True
        actions.append(
            {
                "Update": {
                    "TableName": table.name,
                    "Key": dynamo.key(state.pk, sk),
                    "UpdateExpression": update,
                    "ConditionExpression": "notes_free = :on AND bytes_free = :ob"
                    " AND attribute_not_exists(import_lock)",
                    "ExpressionAttributeValues": values(attrs),
                }
            }
        )
    return _transact_or_false(table, actions)


def _transact_or_false(table: Table, actions: list[dict[str, Any]]) -> bool:
    try:
        table.transact(actions)
    except ClientError as exc:
        if error_code(exc) == "TransactionCanceledException":
            return False
        raise
    return True


def heal(table: Table, state: State) -> bool:
    """Spread a headroom that is back to zero or more over every shard again."""
    notes_free, bytes_free = state.free
    return _rewrite(table, state, notes_free, bytes_free)


def migrate(table: Table, state: State) -> bool:
    """Move the headroom of an account item stored before shards into new shards (its
    usage and revision stay on it, as the base the shards' sums add to)."""
    assert state.account is not None
    account = state.account
    notes_free = int(account.get("notes_free", account["max_notes"] - account["note_count"]))
    bytes_free = int(account.get("bytes_free", account["max_bytes"] - account["total_bytes"]))
    actions: list[dict[str, Any]] = [
        {
            "Update": {
                "TableName": table.name,
                "Key": dynamo.key(state.pk, keys.ACCOUNT_SK),
                "UpdateExpression": "SET notes_free = :zero, bytes_free = :zero",
                "ConditionExpression": "attribute_not_exists(import_lock)"
                " AND note_count = :nc AND total_bytes = :tb",
                "ExpressionAttributeValues": values(
                    {
                        ":zero": 0,
                        ":nc": account["note_count"],
                        ":tb": account["total_bytes"],
                    }
                ),
            }
        }
    ]
    actions += [
        {
            "Put": {
                "TableName": table.name,
                "Item": serialize(item),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }
        for item in shard_items(state.pk, notes_free, bytes_free)
    ]
    return _transact_or_false(table, actions)


def set_limits(table: Table, account_id: str, limits: Limits) -> None:
    """New limits, the shards' headroom moved by the change, in one transaction."""
    pk = keys.account_pk(account_id)
    for _ in range(ATTEMPTS):
        state = read_state(table, pk)
        if state.account is None:
            raise NotFound(f"no account {account_id!r}", code="account_not_found")
        if state.lock is not None:
            raise Conflict(
                "an import is in progress on this vault; change its limits when it has finished",
                code="import_in_progress",
            )
        if not state.shards:
            migrate(table, state)
            continue
        usage = state.usage
        account_update = {
            "Update": {
                "TableName": table.name,
                "Key": dynamo.key(pk, keys.ACCOUNT_SK),
                "UpdateExpression": "SET max_notes = :mn, max_bytes = :mb, max_files = :mf,"
                " max_file_bytes = :mfb",
                "ConditionExpression": "attribute_exists(pk)",
                "ExpressionAttributeValues": values(
                    {
                        ":mn": limits.max_notes,
                        ":mb": limits.max_bytes,
                        ":mf": limits.max_files,
                        ":mfb": limits.max_file_bytes,
                    }
                ),
            }
        }
        account_free = state.account.get("notes_free", 0), state.account.get("bytes_free", 0)
        if account_free != (0, 0):
            continue  # not migrated yet
        if _rewrite(
            table,
            state,
            limits.max_notes - usage.note_count,
            limits.max_bytes - usage.total_bytes,
            [account_update],
        ):
            return
    raise contended()


def lock_all(table: Table, state: State, lock_id: str, expires: float) -> bool:
    """The bulk commit's lock on every shard, on the condition that none moved since
    ``state`` (whose headroom was checked): the headroom is then fixed until release."""
    actions = []
    for sk, shard in _pinned(state):
        actions.append(
            {
                "Update": {
                    "TableName": table.name,
                    "Key": dynamo.key(state.pk, sk),
                    "UpdateExpression": "SET import_lock = :lock, lock_expires = :expires",
                    "ConditionExpression": "attribute_not_exists(import_lock)"
                    " AND notes_free = :on AND bytes_free = :ob",
                    "ExpressionAttributeValues": values(
                        {
                            ":lock": lock_id,
                            ":expires": expires,
                            ":on": shard["notes_free"],
                            ":ob": shard["bytes_free"],
                        }
                    ),
                }
            }
        )
    return _transact_or_false(table, actions)


def renew_all(table: Table, state: State, lock_id: str, expires: float) -> bool:
    """Move the bulk commit's lease on to ``expires`` on every shard it holds (its
    heartbeat, ADR 0041). False when the lock is no longer ``lock_id``'s."""
    actions = [
        {
            "Update": {
                "TableName": table.name,
                "Key": dynamo.key(state.pk, sk),
                "UpdateExpression": "SET lock_expires = :expires",
                "ConditionExpression": "import_lock = :lock",
                "ExpressionAttributeValues": values({":lock": lock_id, ":expires": expires}),
            }
        }
        for sk, _shard in _pinned(state)
    ]
    return _transact_or_false(table, actions)


def unlock_all(table: Table, state: State, lock_id: str) -> bool:
    """Release ``lock_id`` wherever it is held, and move the revision (what was recalled
    from a rolled-back import's chunks must not outlive it). False: not held."""
    holders = [
        i[keys.TABLE_SK]
        for i in ([state.account] if state.account else []) + state.shards
        if i.get("import_lock") == lock_id
    ]
    if not holders:
        return False
    actions = [
        {
            "Update": {
                "TableName": table.name,
                "Key": dynamo.key(state.pk, sk),
                "UpdateExpression": "REMOVE import_lock, lock_expires ADD revision :one",
                "ConditionExpression": "import_lock = :lock",
                "ExpressionAttributeValues": values({":lock": lock_id, ":one": 1}),
            }
        }
        for sk in holders
    ]
    return _transact_or_false(table, actions)
