"""A short in-process cache of API keys by hash: authentication without a GetItem.

Every request authenticates, and on DynamoDB that is one GetItem per request; a warm
Lambda serving one caller makes the same lookup again and again. Keys found are kept
for ``KEY_CACHE_TTL_SECONDS``. A change to a key made through this process (revoke,
toggles, settings, its owner disabled or given keys) empties the cache at once;
**another warm process keeps using what it cached for up to the TTL**, so a revoked key
may still authenticate there for that long (a disabled or removed member's keys too, on
the inference and MCP routes; management routes read the member on every request).
Unknown hashes are never cached, so a key issued anywhere works at once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from memvault.adapters.aws.bodies import BodyStore
from memvault.adapters.aws.dynamo import Table
from memvault.adapters.aws.store import DynamoVaultStore
from memvault.domain.identity import Member
from memvault.domain.models import ApiKey

KEY_CACHE_TTL_SECONDS = 30.0
KEY_CACHE_MAX = 1024


class KeyCachingStore(DynamoVaultStore):
    """DynamoVaultStore whose ``key_by_hash`` answers from a TTL cache when it can."""

    def __init__(
        self,
        table: Table,
        bodies: BodyStore,
        *,
        ttl: float = KEY_CACHE_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(table, bodies)
        self.key_cache_ttl = ttl  # 0 turns the cache off
        self._clock = clock
        self._lock = threading.Lock()
        self._keys: dict[str, tuple[float, ApiKey]] = {}

    def key_by_hash(self, key_hash: str) -> ApiKey | None:
        now = self._clock()
        with self._lock:
            hit = self._keys.get(key_hash)
        if hit is not None and hit[0] > now:
            return hit[1]
        key = super().key_by_hash(key_hash)
        if key is not None and self.key_cache_ttl > 0:
            with self._lock:
                if len(self._keys) >= KEY_CACHE_MAX:
                    self._keys.clear()  # simpler than LRU; refilled by the next lookups
                self._keys[key_hash] = (now + self.key_cache_ttl, key)
        return key

    def forget_keys(self) -> None:
        with self._lock:
            self._keys.clear()

    # Every change to a key goes through these; whatever their arguments, drop the cache
    # (changes are rare, and the next lookup of each key reads it again).
    def put_key(self, *args: Any, **kwargs: Any) -> None:
        self.forget_keys()
        super().put_key(*args, **kwargs)

    def update_key(self, *args: Any, **kwargs: Any) -> ApiKey:
        try:
            return super().update_key(*args, **kwargs)
        finally:
            self.forget_keys()

    # A member disabled, enabled or given keys changes their keys' records too.
    def update_member(self, *args: Any, **kwargs: Any) -> Member:
        try:
            return super().update_member(*args, **kwargs)
        finally:
            self.forget_keys()

    def give_keys(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().give_keys(*args, **kwargs)
        finally:
            self.forget_keys()
