"""The scripted steps and the request log, shared by the test thread and the server loop."""

from __future__ import annotations

import threading
import time
from collections import deque

from .steps import RecordedRequest, Reply, Step


class Script:
    """FIFO of steps plus a default; every access is under one lock (two threads touch it)."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._queue: deque[Step] = deque()
        self._default: Step | None = None
        # Faults for POST /v1/embeddings, played before it answers (its own queue: an
        # embedding call never takes a chat step).
        self._embedding_steps: deque[Step] = deque()
        self._requests: list[RecordedRequest] = []
        self._pauses = 0  # streams that sent their head and now hold the rest back

    def enqueue(self, *steps: Step) -> None:
        with self._changed:
            self._queue.extend(steps)

    def set_default(self, step: Step | None) -> None:
        with self._changed:
            self._default = step

    def enqueue_embeddings(self, *steps: Step) -> None:
        with self._changed:
            self._embedding_steps.extend(steps)

    def next_embedding_step(self) -> Step | None:
        with self._changed:
            return self._embedding_steps.popleft() if self._embedding_steps else None

    def reset(self) -> None:
        with self._changed:
            self._queue.clear()
            self._embedding_steps.clear()
            self._default = None
            self._requests.clear()
            self._pauses = 0

    def next_step(self) -> Step:
        with self._changed:
            if self._queue:
                return self._queue.popleft()
            # Rendering never mutates a step, so one default can serve any number of requests.
            return self._default if self._default is not None else Reply(text="ok")

    def record(self, request: RecordedRequest) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()

    def requests(self) -> list[RecordedRequest]:
        """A snapshot, so callers can iterate while the server keeps appending."""
        with self._changed:
            return list(self._requests)

    def wait_for_requests(self, n: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self._requests) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"expected {n} upstream requests, got {len(self._requests)} in {timeout}s"
                    )
                self._changed.wait(left)

    def paused(self) -> None:
        with self._changed:
            self._pauses += 1
            self._changed.notify_all()

    def wait_for_pauses(self, n: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._pauses < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"expected {n} paused streams, got {self._pauses}")
                self._changed.wait(left)
