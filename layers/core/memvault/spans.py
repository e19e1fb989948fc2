"""Named moments in a gateway request, for a timing tool to see; nothing unless it asks.

The gateway calls ``mark(name)`` as a request reaches each of its steps. With no
recorder installed (always, in a server) a mark is one function call and a check of a
module global against None: well under a microsecond for all of a request's marks. A
tool that wants a timeline (bench/gateway_timeline.py) installs a recorder, which is
called with the name, on the thread that reached the step, and reads its own clock.

The marks, in the order a non-streaming request reaches them (a request that makes more
than one trip to the worker thread, or more than one provider call, reaches some again):

- ``ROUTE``: the inference route's handler is called;
- ``BODY_READ``: the request body is read whole;
- ``WORKER_START``: the gateway's worker thread starts a call (for the first: the key
  check, parsing, recall and the hold; a call that finds the thread full runs on the
  default pool instead, without this mark and the next);
- ``WORKER_DONE``: the worker thread has finished it;
- ``WORKER_RESUMED``: the event loop has resumed the request with its result;
- ``UPSTREAM_CALL``: a whole (non-streaming) provider call is about to be sent;
- ``UPSTREAM_ANSWER``: the provider's answer to it is read whole;
- ``HEADERS``: memvault's response headers are computed (x-gateway-overhead-ms).

The overhead header keeps its own clock (``gateway.upstream.Timer``): it must be right
for every request, and marks do nothing until a recorder is installed.
"""

from __future__ import annotations

from collections.abc import Callable

ROUTE = "gateway.route"
BODY_READ = "gateway.body_read"
WORKER_START = "gateway.worker_start"
WORKER_DONE = "gateway.worker_done"
WORKER_RESUMED = "gateway.worker_resumed"
UPSTREAM_CALL = "gateway.upstream_call"
UPSTREAM_ANSWER = "gateway.upstream_answer"
HEADERS = "gateway.headers"

Recorder = Callable[[str], None]

_recorder: Recorder | None = None


def install(recorder: Recorder | None) -> None:
    """Send every mark of this process to ``recorder`` from now on (None: to nothing).
    It runs on the request's path, so it must be quick and must not raise."""
    global _recorder
    _recorder = recorder


def mark(name: str) -> None:
    """The request in progress reached step ``name``."""
    recorder = _recorder
    if recorder is not None:
        recorder(name)
