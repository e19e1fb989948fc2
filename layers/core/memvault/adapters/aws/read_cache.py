"""What this process has just read, so one operation does not read it twice.

Requests are what the AWS backend pays for, and several operations read a note and then
write it (an append reads the text it appends to; a move reads the note it moves and
the notes whose links it rewrites). Two caches keep those second reads away:

- ``BodyCache``: note markdown by S3 object key. Body objects are immutable (every write
  uploads a new key), so an entry can never be stale; the cache is bounded by size.
- ``RecentItems``: note items the current thread read a moment ago, handed once to the
  commit that follows. Such an item may be stale, so the commit that uses one makes its
  write conditional on the item being unchanged and, when that condition fails, plans
  again from fresh reads (``DynamoVaultStore._commit``): a cached item can cost a retry,
  never a wrong outcome.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

Item = dict[str, Any]

# A read is reused only by what follows it at once (the commit of the same operation).
RECENT_TTL_SECONDS = 5.0
RECENT_MAX_ITEMS = 32
BODY_CACHE_MAX_CHARS = 8 * 1024 * 1024


class BodyCache:
    """Markdown by body object key, least recently used out first."""

    def __init__(self, max_chars: int = BODY_CACHE_MAX_CHARS) -> None:
        self.max_chars = max_chars
        self._lock = threading.Lock()
        self._texts: OrderedDict[str, str] = OrderedDict()
        self._chars = 0

    def get(self, object_key: str) -> str | None:
        with self._lock:
            text = self._texts.get(object_key)
            if text is not None:
                self._texts.move_to_end(object_key)
            return text

    def clear(self) -> None:
        with self._lock:
            self._texts.clear()
            self._chars = 0

    def put(self, object_key: str, text: str) -> None:
        if len(text) > self.max_chars // 4:
            return  # one huge note must not flush everything else
        with self._lock:
            if object_key in self._texts:
                return
            self._texts[object_key] = text
            self._chars += len(text)
            while self._chars > self.max_chars:
                _, dropped = self._texts.popitem(last=False)
                self._chars -= len(dropped)


class RecentItems:
    """Items this thread read in the last few seconds, each handed out at most once."""

    def __init__(
        self, ttl: float = RECENT_TTL_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.ttl = ttl
        self.clock = clock
        self._local = threading.local()

    def _entries(self) -> OrderedDict[tuple[str, str], tuple[float, Item]]:
        entries: OrderedDict[tuple[str, str], tuple[float, Item]] | None = getattr(
            self._local, "entries", None
        )
        if entries is None:
            entries = OrderedDict()
            self._local.entries = entries
        return entries

    def remember(self, pk: str, sk: str, item: Item) -> None:
        entries = self._entries()
        entries[(pk, sk)] = (self.clock() + self.ttl, item)
        entries.move_to_end((pk, sk))
        while len(entries) > RECENT_MAX_ITEMS:
            entries.popitem(last=False)

    def take(self, pk: str, sk: str) -> Item | None:
        found = self._entries().pop((pk, sk), None)
        if found is None or found[0] < self.clock():
            return None
        return found[1]

    def forget(self) -> None:
        self._entries().clear()
