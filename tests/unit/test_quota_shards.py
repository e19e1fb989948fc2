"""The quota shards' arithmetic and the conflict test (adapters/aws/quota.py, backoff.py):
pure functions, no table."""

from __future__ import annotations

from botocore.exceptions import ClientError
from hypothesis import given
from hypothesis import strategies as st

from memvault.adapters.aws import keys, quota
from memvault.adapters.aws.backoff import Backoff, is_conflict
from memvault.domain.write_plan import Cost


def shards(frees: list[tuple[int, int]]) -> quota.State:
    items = [
        {"pk": "A#a", "sk": keys.quota_sk(i), "notes_free": n, "bytes_free": b}
        for i, (n, b) in enumerate(frees)
    ]
    account = {"pk": "A#a", "sk": "ACCOUNT", "max_notes": 10, "max_bytes": 10}
    return quota.State("A#a", account, items)


@given(st.integers(min_value=0, max_value=10**12), st.integers(min_value=0, max_value=10**12))
def test_headroom_spreads_over_every_shard_exactly_and_never_negative(n: int, b: int) -> None:
    values = quota.shard_values(n, b)
    assert len(values) == quota.SHARDS
    assert sum(v[0] for v in values) == n and sum(v[1] for v in values) == b
    assert all(v[0] >= 0 and v[1] >= 0 and not v[2] for v in values)
    assert max(v[0] for v in values) - min(v[0] for v in values) <= 1


def test_a_negative_headroom_sits_on_shard_0_and_marks_the_others() -> None:
    values = quota.shard_values(-3, 50)
    assert values[0] == (-3, 50, False)
    assert all(v == (0, 0, True) for v in values[1:])


@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.integers(0, 200)),
        min_size=quota.SHARDS,
        max_size=quota.SHARDS,
    ),
    st.integers(0, 40),
    st.integers(0, 400),
)
def test_a_take_never_asks_a_shard_for_more_than_it_holds(
    frees: list[tuple[int, int]], notes: int, size: int
) -> None:
    state = shards(frees)
    total_n, total_b = state.free
    takes = quota.allocate(state, Cost(notes, size))
    held = {keys.quota_sk(i): f for i, f in enumerate(frees)}
    assert all(t[0] <= held[sk][0] and t[1] <= held[sk][1] for sk, t in takes.items())
    assert sum(t[0] for t in takes.values()) == min(notes, total_n)
    assert sum(t[1] for t in takes.values()) == min(size, total_b)


def test_a_commit_that_does_not_fit_is_refused_with_the_limit_it_passes() -> None:
    state = shards([(1, 100)] + [(0, 0)] * (quota.SHARDS - 1))
    assert quota.refusal(state, "a", Cost(1, 100)) is None
    notes = quota.refusal(state, "a", Cost(2, 1))
    size = quota.refusal(state, "a", Cost(1, 101))
    assert notes is not None and getattr(notes, "code", None) == "vault_note_limit"
    assert size is not None and getattr(size, "code", None) == "vault_byte_limit"
    assert quota.refusal(state, "a", Cost(-5, -500)) is None  # freeing always fits


def cancelled(*codes: str) -> ClientError:
    reasons = [{"Code": c} for c in codes]
    return ClientError(
        {"Error": {"Code": "TransactionCanceledException"}, "CancellationReasons": reasons},
        "TransactWriteItems",
    )


def test_only_a_refusal_for_a_held_item_is_a_conflict_to_send_again() -> None:
    assert is_conflict(cancelled("None", "TransactionConflict"))
    assert not is_conflict(cancelled("ConditionalCheckFailed", "TransactionConflict"))
    assert not is_conflict(cancelled("None", "ConditionalCheckFailed"))
    single = ClientError({"Error": {"Code": "TransactionConflictException"}}, "UpdateItem")
    assert is_conflict(single)
    throttled = ClientError({"Error": {"Code": "ThrottlingException"}}, "UpdateItem")
    assert not is_conflict(throttled)


def test_backoff_pauses_between_tries_only_and_stays_under_its_cap() -> None:
    pauses: list[float] = []
    tries = list(Backoff(6, base=0.01, cap=0.05, sleep=pauses.append))
    assert tries == [0, 1, 2, 3, 4, 5]
    assert len(pauses) == 5
    assert all(0 <= p <= min(0.05, 0.01 * 2 ** (i)) for i, p in enumerate(pauses))
