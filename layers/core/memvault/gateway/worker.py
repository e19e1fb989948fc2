"""Where the gateway's blocking work runs: one thread of its own, in arrival order.

A gateway request makes up to three trips off the event loop: the key check, parsing
and planning (recall included) before dispatch; memory tool calls between rounds; and
settling with the usage record after the answer. On the default pool, one request's
settlement (sent off once the client has its answer) and the next request's planning
ran on two threads at once, contending for the GIL and each reading through its own
SQLite connection. Run one after the other on one thread, a request with a new message
took about 0.2 ms less end to end (eight interleaved A/B comparisons against the same
vault, from 0.47 ms less to 0.20 ms more; bench/README.md).

One thread must not make requests wait on each other, though: a call finding the thread
busy with one call and another already waiting runs on the default pool instead. So
at most one call waits, behind one other, and bursts spread as before.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from memvault import spans

T = TypeVar("T")

# Calls the thread takes at once: the one it runs and one waiting behind it.
MAX_IN_FLIGHT = 2


class GatewayWorker:
    def __init__(self, *, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        self._max_in_flight = max_in_flight
        self._lock = threading.Lock()
        self._in_flight = 0
        self._executor: ThreadPoolExecutor | None = None

    async def run(self, fn: Callable[..., T], /, *args: object) -> T:
        """``fn(*args)`` off the event loop, with the caller's context variables (as
        ``asyncio.to_thread``): on the gateway's thread unless it is full."""
        with self._lock:
            own = self._in_flight < self._max_in_flight
            if own:
                self._in_flight += 1
        if not own:
            result = await asyncio.to_thread(fn, *args)
        else:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(1, thread_name_prefix="memvault-gateway")
            context = contextvars.copy_context()
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(self._executor, self._call, context, fn, args)
        spans.mark(spans.WORKER_RESUMED)
        return result

    def _call(
        self, context: contextvars.Context, fn: Callable[..., T], args: tuple[object, ...]
    ) -> T:
        spans.mark(spans.WORKER_START)
        try:
            return context.run(fn, *args)
        finally:
            spans.mark(spans.WORKER_DONE)
            with self._lock:
                self._in_flight -= 1

    def close(self) -> None:
        """Let the thread end once its calls are done. The next call starts another:
        Mangum runs the app's lifespan, which closes this, around every invocation."""
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False)
