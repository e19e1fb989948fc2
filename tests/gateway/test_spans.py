"""memvault.spans: the gateway marks its steps, in order, for a recorder that asks.

bench/gateway_timeline.py reads a request's timeline from these marks; without a
recorder they do nothing (a check of one global).
"""

from __future__ import annotations

from memvault import spans
from tests.gateway.conftest import issue_key, openai_client
from tests.support.servers import LiveServer
from tests.support.upstream import Reply, ScriptedUpstream

STEPS = [
    spans.ROUTE,
    spans.BODY_READ,
    spans.WORKER_START,
    spans.WORKER_DONE,
    spans.WORKER_RESUMED,
    spans.UPSTREAM_CALL,
    spans.UPSTREAM_ANSWER,
    spans.HEADERS,
]


def test_a_request_reaches_each_mark_in_order(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    key = issue_key(sqlite_gateway)
    upstream.enqueue(Reply(text="Friday."))
    seen: list[str] = []
    spans.install(seen.append)
    try:
        answer = openai_client(sqlite_gateway, key).chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "When do we ship?"}]
        )
    finally:
        spans.install(None)

    assert answer.choices[0].message.content == "Friday."
    first_reached = [name for i, name in enumerate(seen) if name not in seen[:i]]
    assert first_reached == STEPS
