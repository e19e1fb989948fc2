"""The gateway's response cache storage, on every backend: per organisation, expiry on
read, eviction oldest first past the byte bound, large bodies, erasure."""

from __future__ import annotations

from typing import Any

from memvault.container import Services
from memvault.domain.response_cache import CachedAnswer
from memvault.ports import ResponseCache
from memvault.services.context import Caller


def cache_bounded_at(services: Services, max_bytes: int) -> ResponseCache:
    """The backend's cache over the test's storage, with a small byte bound."""
    if services.settings.backend == "sqlite":
        from memvault.adapters.sqlite.response_cache import SqliteResponseCache

        return SqliteResponseCache(services.store.db, max_bytes=max_bytes)  # type: ignore[attr-defined]
    from memvault.adapters.aws.response_cache import DynamoResponseCache

    store: Any = services.store
    return DynamoResponseCache(store.table, store.bodies, max_bytes=max_bytes)


def answer(body: bytes, created_at: float, *, tokens: int = 10) -> CachedAnswer:
    return CachedAnswer(
        status=200,
        content_type="application/json",
        body=body,
        model="gpt-4o-mini",
        input_tokens=tokens,
        output_tokens=tokens // 2,
        cost_micros=42,
        created_at=created_at,
    )


def test_an_answer_is_read_back_within_its_organisation_until_it_expires(
    services: Services, user: Caller, clock: Any
) -> None:
    cache, now = services.response_cache, clock.now
    cache.put(user.account_id, "d1", answer(b'{"a": 1}', now), expires_at=now + 60)
    got = cache.get(user.account_id, "d1", now=now)
    assert got == answer(b'{"a": 1}', now)
    assert cache.get("someone-else", "d1", now=now) is None  # never across organisations
    assert cache.get(user.account_id, "d2", now=now) is None
    assert cache.get(user.account_id, "d1", now=now + 60) is None  # expired on read


def test_a_large_streamed_body_round_trips_byte_for_byte(
    services: Services, user: Caller, clock: Any
) -> None:
    body = b"".join(b'data: {"i": %d, "pad": "%s"}\n\n' % (i, b"x" * 900) for i in range(600))
    assert len(body) > 500_000  # past what a DynamoDB item holds inline
    cached = CachedAnswer(200, "text/event-stream", body, "m", 1, 2, 3, clock.now)
    services.response_cache.put(user.account_id, "big", cached, expires_at=clock.now + 60)
    assert services.response_cache.get(user.account_id, "big", now=clock.now) == cached


def test_past_the_byte_bound_the_oldest_answers_go_first(
    services: Services, user: Caller, clock: Any
) -> None:
    bound = 3000
    cache = cache_bounded_at(services, bound)
    size = bound // 3 + 1  # three of them do not fit
    for i in range(4):
        cache.put(user.account_id, f"d{i}", answer(b"x" * size, clock.now + i), expires_at=1e12)
    present = [d for d in ("d0", "d1", "d2", "d3") if cache.get(user.account_id, d, now=clock.now)]
    assert present == ["d2", "d3"]
    cache.put(user.account_id, "huge", answer(b"x" * (bound + 1), clock.now), expires_at=1e12)
    assert cache.get(user.account_id, "huge", now=clock.now) is None  # never cached


def test_clear_erases_the_organisations_answers_only(
    services: Services, user: Caller, clock: Any
) -> None:
    cache, now = services.response_cache, clock.now
    cache.put(user.account_id, "a", answer(b"1", now), expires_at=now + 60)
    cache.put(user.account_id, "b", answer(b"2", now), expires_at=now + 60)
    cache.put("other-org", "a", answer(b"3", now), expires_at=now + 60)
    assert cache.clear(user.account_id) == 2
    assert cache.get(user.account_id, "a", now=now) is None
    assert cache.get("other-org", "a", now=now) is not None
