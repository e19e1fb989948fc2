"""Making sure a remote resource exists on first need, not at start (ADR 0031).

A Lambda function must start, and serve what does not need search, while the OpenSearch
domain is unreachable; so no cold start creates or checks an index. Instead an adapter
wraps its idempotent "check (or create) my index" in an ``EnsureOnce`` and calls it before
the first operation that needs the index: the first healthy call does the work, and the
success is remembered for the life of the process. A failure is remembered for
``retry_after`` seconds, during which calls fail at once with the same error instead of
each waiting out a connection timeout (a write then goes to the search outbox straight
away); the first call after that tries again.

``OpenSearchIndex`` (adapters/aws/search.py) uses it for the notes index; any other index
(a vector index, say) does the same: ``EnsureOnce(lambda: self.create_index(...))`` and
``self._ready()`` before its first request.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

RETRY_AFTER_S = 5.0


class EnsureOnce:
    """Runs ``ensure`` until it succeeds once; after a failure that ``pause_on`` accepts
    (by default any), fails fast for ``retry_after`` seconds."""

    def __init__(
        self,
        ensure: Callable[[], object],
        *,
        retry_after: float = RETRY_AFTER_S,
        pause_on: Callable[[Exception], bool] = lambda _exc: True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ensure = ensure
        self._pause_on = pause_on
        self._retry_after = retry_after
        self._clock = clock
        self._lock = threading.Lock()
        self._done = False
        self._failed_at: float | None = None
        self._error: BaseException | None = None

    @property
    def done(self) -> bool:
        return self._done

    def __call__(self) -> None:
        if self._done:
            return
        with self._lock:  # concurrent first calls wait for one attempt's outcome
            if self._done:
                return
            if (
                self._error is not None
                and self._failed_at is not None
                and self._clock() - self._failed_at < self._retry_after
            ):
                raise self._error.with_traceback(None)
            try:
                self._ensure()
            except Exception as exc:
                if self._pause_on(exc):
                    self._error, self._failed_at = exc, self._clock()
                raise
            self._done, self._error, self._failed_at = True, None, None

    def end_pause(self) -> None:
        """Forget the last failure (the resource answered again): the next call tries at
        once rather than failing fast until ``retry_after`` has passed."""
        self._error = self._failed_at = None

    def reset(self) -> None:
        """Forget the success (the resource vanished): the next call ensures again."""
        self._done = False
