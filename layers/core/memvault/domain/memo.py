"""One bounded memo for the process-wide caches (token counts, term counts, recall
blocks): least recently used out first, entries optionally expiring, thread-safe (the
gateway works in worker threads). Pure: the clock is passed in.

What a memo may hold is its caller's decision; each says why its keys can never serve
one account another's answer.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def text_digest(text: str) -> bytes:
    """A 128-bit BLAKE2b digest of ``text``, the key memos keep instead of the text:
    entries stay small however long the text, and no text, crafted or not, can take
    another's entry. Lone surrogates are digested as they are."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class Memo(Generic[K, V]):
    def __init__(
        self,
        max_entries: int,
        *,
        max_age: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_entries = max_entries
        self.max_age = max_age  # seconds an entry is kept; None: until pushed out
        self.clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, key: K) -> tuple[bool, V | None]:
        """(True, value) when ``key`` is held and fresh, else (False, None): for memos
        whose values may themselves be None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return False, None
            if self.max_age is not None and self.clock() >= entry[0]:
                del self._entries[key]
                return False, None
            self._entries.move_to_end(key)
            return True, entry[1]

    def get(self, key: K) -> V | None:
        return self.lookup(key)[1]

    def put(self, key: K, value: V) -> None:
        expires = self.clock() + self.max_age if self.max_age is not None else 0.0
        with self._lock:
            self._entries[key] = (expires, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
