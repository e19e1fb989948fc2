"""The bounded memo behind the process-wide caches."""

from __future__ import annotations

from memvault.domain.memo import Memo


def test_least_recently_used_entries_go_first() -> None:
    memo: Memo[str, int] = Memo(2)
    memo.put("a", 1)
    memo.put("b", 2)
    assert memo.get("a") == 1  # used: b is now the oldest
    memo.put("c", 3)
    assert len(memo) == 2
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (1, None, 3)


def test_entries_expire_when_they_have_an_age_limit() -> None:
    now = [100.0]
    memo: Memo[str, int] = Memo(10, max_age=30.0, clock=lambda: now[0])
    memo.put("a", 1)
    now[0] = 129.9
    assert memo.get("a") == 1
    now[0] = 130.0
    assert memo.lookup("a") == (False, None) and len(memo) == 0
    forever: Memo[str, int] = Memo(10, clock=lambda: now[0])
    forever.put("a", 1)
    now[0] = 1e12
    assert forever.get("a") == 1


def test_a_held_none_is_told_apart_from_nothing() -> None:
    memo: Memo[str, int | None] = Memo(10)
    memo.put("nothing found", None)
    assert memo.lookup("nothing found") == (True, None)
    assert memo.lookup("never asked") == (False, None)
    memo.clear()
    assert memo.lookup("nothing found") == (False, None)
