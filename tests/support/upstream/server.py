"""ScriptedUpstream: a fake model provider on 127.0.0.1 that plays scripted steps.

It speaks OpenAI Chat Completions (POST /v1/chat/completions), Anthropic Messages
(POST /v1/messages) and GET /v1/models, so the gateway can be tested against both.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from types import TracebackType

import uvicorn

from .app import UpstreamApp
from .script import Script
from .steps import RecordedRequest, Step

_START_TIMEOUT = 10.0


class ScriptedUpstream:
    def __init__(self) -> None:
        self._script = Script()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self.base_url = ""

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> ScriptedUpstream:
        if self._thread is not None:
            raise RuntimeError("ScriptedUpstream already started")
        # Bind before starting so the port is known and no other process can take it.
        # proto=IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on accepted sockets whose
        # listener says TCP, and without it Nagle holds each response's second write
        # until the client's delayed ACK, adding ~40 ms to every answer.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(
            UpstreamApp(self._script, self._stopping_event),
            interface="asgi3",
            lifespan="off",
            # None: leave the process's logging config alone (the default dictConfig
            # would reconfigure loggers under pytest and under other servers).
            log_config=None,
            access_log=False,
            # Scripted pauses end as soon as stop() sets the event; this bounds the rest.
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._run,
            args=(self._server, sock),
            name=f"scripted-upstream-{port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("scripted upstream did not start")
            time.sleep(0.01)
        self.base_url = f"http://127.0.0.1:{port}"
        return self

    def _run(self, server: uvicorn.Server, sock: socket.socket) -> None:
        async def serve() -> None:
            self._loop = asyncio.get_running_loop()
            self._stopping = asyncio.Event()
            await server.serve(sockets=[sock])

        asyncio.run(serve())

    def _stopping_event(self) -> asyncio.Event:
        assert self._stopping is not None, "requests arrive only after serve() has begun"
        return self._stopping

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._loop = self._stopping = None
        self._server = None
        self._thread = None

    def __enter__(self) -> ScriptedUpstream:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- script ----------------------------------------------------------------------

    def enqueue(self, *steps: Step) -> None:
        """FIFO: each POST to a model endpoint consumes one step."""
        self._script.enqueue(*steps)

    def enqueue_embeddings(self, *steps: Step) -> None:
        """FIFO for POST /v1/embeddings: each call plays one (a Fault or a Hang) before
        the route answers with real vectors again (upstream/embeddings.py)."""
        self._script.enqueue_embeddings(*steps)

    def set_default(self, step: Step | None) -> None:
        """The step used when the queue is empty; None means Reply(text="ok")."""
        self._script.set_default(step)

    def reset(self) -> None:
        self._script.reset()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order (a snapshot)."""
        return self._script.requests()

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> None:
        """Block until at least n requests were recorded; TimeoutError otherwise."""
        self._script.wait_for_requests(n, timeout)

    def wait_for_pause(self, n: int = 1, timeout: float = 5.0) -> None:
        """Block until n streams have sent every event before their pause_after_events
        (all of it written to memvault's connection); TimeoutError otherwise."""
        self._script.wait_for_pauses(n, timeout)
