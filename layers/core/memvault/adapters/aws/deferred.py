"""The search adapter, built on first use.

opensearch-py imports requests (and, where it is installed, aiohttp) when it is first
imported: a few hundred milliseconds of a cold start. A function that never searches
(the retention sweep) should not pay them, so ``wiring.build`` hands the services a
``DeferredSearchIndex``: it builds the real ``OpenSearchIndex`` (importing opensearch-py)
on the first attribute anyone reads, then stands in for it. Building sends nothing
(ADR 0031), so deferring it changes no behaviour, only when the import happens.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class DeferredSearchIndex:
    """Stands in for the object ``build`` returns, which is built once, on first use."""

    __slots__ = ("_build", "_lock", "_target")

    def __init__(self, build: Callable[[], object]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._target: object | None = None

    @property
    def built(self) -> bool:
        """Whether the real adapter exists yet (opensearch-py has been imported)."""
        return self._target is not None

    def _get(self) -> object:
        target = self._target
        if target is None:
            with self._lock:
                if self._target is None:
                    self._target = self._build()
                target = self._target
        return target

    def __getattr__(self, name: str) -> Any:
        return getattr(self._get(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in DeferredSearchIndex.__slots__:
            object.__setattr__(self, name, value)
        else:  # a test's monkeypatch, say: it must reach the adapter itself
            setattr(self._get(), name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._get(), name)
