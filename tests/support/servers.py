"""memvault on a real HTTP server for the tests that speak to it over a socket.

Starting and stopping a uvicorn server costs about 0.15-0.3 s (its main loop notices a
stop only every 0.1 s), and a thousand tests did it once each. Instead one server runs
per test process, on 127.0.0.1, in a background thread, in front of a *switchboard*: an
ASGI app that hands each request to the app of the test that is running. Each test still
gets its own ``create_app(services)`` over its own fresh storage, and its own admin key;
only the socket, the event loop and uvicorn are shared.

Between tests the switchboard closes the finished app's gateway (what the app's lifespan
would do: its upstream session and worker), so nothing of one test survives into the next.
A request that arrives while no test app is mounted is answered 503.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn

from memvault.api.app import create_app
from memvault.container import Services
from tests.support.clock import FakeClock

Scope = dict[str, Any]
_START_TIMEOUT_S = 20.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LiveServer:
    url: str
    services: Services
    admin_key: str
    clock: FakeClock

    def client(self, key: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key or self.admin_key}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60.0)


class _Switchboard:
    """The ASGI app uvicorn serves: forwards every request to the mounted test app."""

    def __init__(self) -> None:
        self.app: Any = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            # uvicorn's own lifespan: the test apps' lifespans are run by mount/unmount.
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        app = self.app
        if app is None:
            if scope["type"] == "http":
                await send({"type": "http.response.start", "status": 503, "headers": []})
                await send({"type": "http.response.body", "body": b"no test app mounted"})
            return
        await app(scope, receive, send)


class UvicornThread:
    """uvicorn serving ``app`` on 127.0.0.1 in a background thread, until ``stop``."""

    def __init__(self, app: Any) -> None:
        # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets accepted from a
        # listener that says TCP (without it Nagle adds ~40 ms to a two-write answer).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        config = uvicorn.Config(app, host="127.0.0.1", log_level="warning")
        self._server = uvicorn.Server(config)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(
            target=self._run, args=(sock,), name=f"uvicorn-{self.url}", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"uvicorn did not start on {self.url}")
            time.sleep(0.01)

    def _run(self, sock: socket.socket) -> None:
        async def serve() -> None:
            self.loop = asyncio.get_running_loop()
            await self._server.serve(sockets=[sock])

        asyncio.run(serve())

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """``app`` on a server of its own for the block (benchmarks); yields its URL."""
    server = UvicornThread(app)
    try:
        yield server.url
    finally:
        server.stop()


class SharedServer:
    """One uvicorn server per process; ``serve`` mounts a test's app on it."""

    def __init__(self) -> None:
        self._switchboard = _Switchboard()
        self._server = UvicornThread(self._switchboard)
        self.url = self._server.url

    def mount(self, app: Any) -> None:
        self._switchboard.app = app

    def unmount(self) -> None:
        app, self._switchboard.app = self._switchboard.app, None
        gateway = getattr(getattr(app, "state", None), "gateway", None)
        loop = self._server.loop
        if gateway is not None and loop is not None:
            # What the app's lifespan does at shutdown, on the loop the gateway ran on.
            closing = asyncio.run_coroutine_threadsafe(gateway.aclose(), loop)
            closing.result(timeout=10)


_shared: SharedServer | None = None
_shared_lock = threading.Lock()


def shared_server() -> SharedServer:
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = SharedServer()
        return _shared


def serve(svc: Services, clock: FakeClock) -> Iterator[LiveServer]:
    """memvault over ``svc`` on the process's real HTTP server, for one test."""
    issued = svc.accounts.bootstrap_local()
    assert issued is not None
    server = shared_server()
    server.mount(create_app(svc))
    try:
        yield LiveServer(server.url, svc, issued.secret, clock)
    finally:
        server.unmount()
