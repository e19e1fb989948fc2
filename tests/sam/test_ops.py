"""Operations on the deployed stack (ADR 0031), through the functions' entrypoints on moto
and the local OpenSearch node: the upkeep schedule drains what another function queued
while search was down and publishes the queue's age, a function's idle moment drains its
own queue once search answers, only the ops path creates the index (at deploy time, as a
custom resource, or by command), and a retention run out of time continues next run.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from memvault.adapters.aws.search import OpenSearchIndex, make_client
from memvault.container import build_services
from memvault.lambda_powertools import UnsupportedEvent
from memvault.services.context import Caller, Surface
from memvault.services.retention import DAY_SECONDS
from memvault.settings import get_settings
from tests.sam.test_events import _environment
from tests.sam.test_handlers import admin_key, context, emf_metrics, event, load_function
from tests.support.aws import REGION, create_resources, serial_moto
from tests.support.backends import require_opensearch
from tests.support.clock import FakeClock
from tests.support.opensearch import drop_vector_indices
from tests.support.servers import free_port

NOTE = "projects/launch.md"


@dataclass
class OpsStack:
    load: Callable[..., ModuleType]
    node: str
    index: str
    down: str  # a URL nobody answers

    def index_exists(self) -> bool:
        client = make_client(self.node, auth="none", region=None, timeout=30.0)
        return bool(client.indices.exists(index=self.index))


@pytest.fixture
def stack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[OpsStack]:
    node = require_opensearch()
    index = f"memvault-ops-{uuid.uuid4().hex[:12]}"
    with serial_moto():
        table, bucket = create_resources()
        base = _environment(table, bucket, node, index, tmp_path / "data")

        def load(name: str, **env: str) -> ModuleType:
            """functions/<name> cold-started with the stack's environment and ``env``."""
            for key, value in {**base, **env}.items():
                monkeypatch.setenv(key, value)
            get_settings.cache_clear()
            return load_function(name)

        try:
            yield OpsStack(load, node, index, f"http://127.0.0.1:{free_port()}")
        finally:
            get_settings.cache_clear()
            OpenSearchIndex(
                make_client(node, auth="none", region=None, timeout=30.0), index
            ).drop_index()
            drop_vector_indices(node, index)


def _body(response: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(response["body"])
    return body


def _metric(stdout: str, name: str) -> list[float]:
    """Each value of the metric Powertools printed (a blob holds a number or a list)."""
    values: list[float] = []
    for blob in emf_metrics(stdout):
        value = blob.get(name)
        if value is not None:
            values += [float(v) for v in value] if isinstance(value, list) else [float(value)]
    return values


def test_the_upkeep_schedule_indexes_what_another_function_queued_while_search_was_down(
    stack: OpsStack, capsys: pytest.CaptureFixture[str]
) -> None:
    api = {"MEMVAULT_OPENSEARCH_CREATE_INDEX": "false"}  # as template.yaml sets it
    down = stack.load("management", MEMVAULT_OPENSEARCH_URL=stack.down, **api)
    key = admin_key(down)
    put = down.handler(event("management_put_note", key), context("management"))
    refused = down.handler(event("management_search", key), context("management"))
    assert put["statusCode"] == 201, put["body"]
    assert refused["statusCode"] == 503
    assert _body(refused)["error"]["code"] == "search_unavailable"

    ops_down = stack.load("ops", MEMVAULT_OPENSEARCH_URL=stack.down)
    capsys.readouterr()
    waiting = ops_down.handler(event("retention_schedule"), context("ops"))
    assert set(waiting["errors"]) == {"search_queue_drained"}
    assert waiting["counts"]["holds_released"] == 0  # settled even with search down
    assert waiting["queue_age_seconds"] > 0
    assert _metric(capsys.readouterr().out, "SearchQueueAgeSeconds") == [
        pytest.approx(waiting["queue_age_seconds"])
    ]

    # Search is back. An API function may not make the index, so until the ops path has
    # made it, a search says so.
    api_up = stack.load("management", **api)
    missing = api_up.handler(event("management_search", key), context("management"))
    assert missing["statusCode"] == 503
    assert _body(missing)["error"]["code"] == "search_index_missing"
    assert not stack.index_exists()

    ops = stack.load("ops")
    ran = ops.handler(event("retention_schedule"), context("ops"))
    assert ran["errors"] == {}
    assert ran["counts"]["search_queue_drained"] == 1
    assert ran["queue_age_seconds"] is None
    assert _metric(capsys.readouterr().out, "SearchQueueAgeSeconds") == [0.0]
    found = api_up.handler(event("management_search", key), context("management"))
    assert found["statusCode"] == 200, found["body"]
    assert [h["path"] for h in _body(found)["results"]] == [NOTE]
    again = ops.handler(event("retention_schedule"), context("ops"))
    assert again["counts"]["search_queue_drained"] == 0


class Gate:
    """A TCP forwarder to the search node on loopback that can be shut (connections are
    refused... reset at once) and opened again: a search outage and its end."""

    def __init__(self, target: str) -> None:
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port.rstrip("/")))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.open = True
        # Cleared: a new connection waits here before it is forwarded (a slow node).
        self.flowing = threading.Event()
        self.flowing.set()
        self.live: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if not self.open:
                client.close()
                continue
            threading.Thread(target=self._forward, args=(client,), daemon=True).start()

    def _forward(self, client: socket.socket) -> None:
        self.flowing.wait(timeout=30)
        upstream = socket.create_connection(self.target)
        with self.lock:
            self.live += [client, upstream]
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()

    def shut(self) -> None:
        self.open = False
        with self.lock:
            for s in self.live:
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
            self.live.clear()

    def close(self) -> None:
        self.shut()
        self.listener.close()
        with self.lock:
            for s in self.live:
                s.close()


def test_a_function_drains_its_own_queue_at_an_idle_moment_once_search_answers(
    stack: OpsStack,
) -> None:
    gate = Gate(stack.node)
    try:
        fn = stack.load("management", MEMVAULT_OPENSEARCH_URL=gate.url)
        fn.powertools.idle.every_s = 0.0  # no pause between idle drains, for the test
        key = admin_key(fn)
        first = fn.handler(event("management_put_note", key), context("management"))
        assert first["statusCode"] == 201  # the index is made by this first write
        gate.shut()
        edited = event("management_put_note", key)
        edited["body"] = edited["body"].replace("Friday", "Thursday")
        written = fn.handler(edited, context("management"))
        assert written["statusCode"] == 200, written["body"]
        assert fn.services.store.queued_reindex("acme") == [NOTE]
        fn.handler(event("healthz"), context("management"))  # idle: search still down
        assert fn.services.store.queued_reindex("acme") == [NOTE]

        gate.open = True
        health = fn.handler(event("healthz"), context("management"))
        assert health["statusCode"] == 200
        # The idle moment after that request indexed the edit: no write needed.
        assert fn.services.store.queued_reindex("acme") == []
        thursday = event("management_search", key)
        thursday["queryStringParameters"] = {"q": "thursday"}
        thursday["multiValueQueryStringParameters"] = {"q": ["thursday"]}
        found = fn.handler(thursday, context("management"))
        assert [h["path"] for h in _body(found)["results"]] == [NOTE]
    finally:
        gate.close()


def test_an_idle_moment_never_runs_into_the_end_of_the_invocation(stack: OpsStack) -> None:
    gate = Gate(stack.node)
    try:
        fn = stack.load("management", MEMVAULT_OPENSEARCH_URL=gate.url)
        fn.powertools.idle.every_s = 0.0
        key = admin_key(fn)
        gate.shut()
        fn.handler(event("management_put_note", key), context("management"))
        assert fn.services.vault.indexing.pending
        gate.open = True
        # Search is back, but the invocation has 2 s left: the idle drain leaves it be.
        late = context("management")
        late.get_remaining_time_in_millis = lambda: 2_000
        fn.handler(event("healthz"), late)
        assert fn.services.store.queued_reindex("acme") == [NOTE]
        fn.handler(event("healthz"), context("management"))  # 29 s left: time enough
        assert fn.services.store.queued_reindex("acme") == []
    finally:
        gate.close()


class CloudFormation:
    """Where a custom resource sends its outcome (CloudFormation's presigned URL)."""

    def __init__(self) -> None:
        self.responses: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_PUT(self) -> None:
                length = int(self.headers["content-length"])
                outer.responses.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/cfn-response?sig=x"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def request(self, kind: str) -> dict[str, Any]:
        out: dict[str, Any] = {
            "RequestType": kind,
            "ServiceToken": f"arn:aws:lambda:{REGION}:123456789012:function:memvault-ops",
            "ResponseURL": self.url,
            "StackId": f"arn:aws:cloudformation:{REGION}:123456789012:stack/memvault/abc",
            "RequestId": str(uuid.uuid4()),
            "LogicalResourceId": "SearchIndex",
            "ResourceType": "Custom::SearchIndex",
            "ResourceProperties": {"Index": "memvault-notes"},
        }
        if kind != "Create":
            out["PhysicalResourceId"] = "memvault-search-index"
        return out


def test_the_search_index_is_made_at_deploy_time_and_never_fails_a_deploy(
    stack: OpsStack,
) -> None:
    cfn = CloudFormation()
    try:
        unreachable = stack.load("ops", MEMVAULT_OPENSEARCH_URL=stack.down)
        unreachable.handler(cfn.request("Create"), context("ops"))
        ops = stack.load("ops", MEMVAULT_OPENSEARCH_SHARDS="2")  # the template's SearchShards
        ops.handler(cfn.request("Create"), context("ops"))
        ops.handler(cfn.request("Update"), context("ops"))
        ops.handler(cfn.request("Delete"), context("ops"))
    finally:
        cfn.server.shutdown()
        cfn.server.server_close()
    down, created, updated, deleted = cfn.responses
    assert [r["Status"] for r in cfn.responses] == ["SUCCESS"] * 4
    assert down["Data"]["Created"] == "false" and "search" in down["Data"]["Error"]
    assert created["Data"] == {"Index": stack.index, "Created": "true"}
    assert updated["Data"] == {"Index": stack.index, "Created": "false"}
    assert deleted["Data"] == {"Index": stack.index}
    assert len({r["PhysicalResourceId"] for r in cfn.responses}) == 1
    assert stack.index_exists()  # a stack update or delete never drops the index
    client = make_client(stack.node, auth="none", region=None, timeout=30.0)
    made = client.indices.get_settings(index=stack.index)[stack.index]["settings"]["index"]
    assert (made["number_of_shards"], made["number_of_replicas"]) == ("2", "0")


def test_operators_commands_make_the_index_and_reindex(stack: OpsStack) -> None:
    ops = stack.load("ops")
    assert ops.handler({"action": "init-search"}, context("ops")) == {
        "index": stack.index,
        "created": True,
    }
    assert ops.handler({"action": "init-search"}, context("ops"))["created"] is False
    api = stack.load("management", MEMVAULT_OPENSEARCH_CREATE_INDEX="false")
    key = admin_key(api)
    api.handler(event("management_put_note", key), context("management"))
    OpenSearchIndex(
        make_client(stack.node, auth="none", region=None, timeout=30.0), stack.index
    ).clear("acme")
    assert ops.handler({"action": "reindex", "account": "acme"}, context("ops")) == {
        "reindexed": {"acme": 1},
        "left": [],
    }
    assert ops.handler({"action": "reindex", "all": True}, context("ops"))["reindexed"] == {
        "acme": 1
    }
    found = api.handler(event("management_search", key), context("management"))
    assert [h["path"] for h in _body(found)["results"]] == [NOTE]
    for bad, says in [
        ({"action": "reindex"}, "one of them"),
        ({"action": "reindex", "account": "nobody"}, "no organisation 'nobody'"),
        ({"action": "explode"}, "ops command"),
        ({"hello": "world"}, "no known shape"),
    ]:
        with pytest.raises(UnsupportedEvent, match=says):
            ops.handler(bad, context("ops"))


def test_init_search_makes_the_embedders_vector_index_too(stack: OpsStack) -> None:
    """With embeddings on, init-search also makes the chunk index of the embedder's
    dimension (the local model: 256), so the API functions, which may not create indices,
    store a note's vectors from its first write (ADR 0026); with them off, none."""
    client = make_client(stack.node, auth="none", region=None, timeout=30.0)
    vectors = f"{stack.index}-vectors-d256"
    stack.load("ops").handler({"action": "init-search"}, context("ops"))
    assert not client.indices.exists(index=vectors)  # the stack's embeddings are off
    ops = stack.load("ops", MEMVAULT_EMBEDDINGS="local")
    assert ops.handler({"action": "init-search"}, context("ops"))["created"] is False
    assert client.indices.exists(index=vectors)
    api = stack.load(
        "management", MEMVAULT_OPENSEARCH_CREATE_INDEX="false", MEMVAULT_EMBEDDINGS="local"
    )
    api.handler(event("management_put_note", admin_key(api)), context("management"))
    client.indices.refresh(index=vectors)
    assert client.count(index=vectors)["count"] >= 1  # the note's chunks


def _ticking(name: str, remaining: list[int]) -> SimpleNamespace:
    """A Lambda context whose remaining time is read from ``remaining`` in turn (the
    last value once the list runs out)."""
    ctx = context(name)
    ctx.get_remaining_time_in_millis = lambda: (
        remaining.pop(0) if len(remaining) > 1 else remaining[0]
    )
    return ctx  # type: ignore[no-any-return]


def test_a_retention_run_out_of_time_leaves_the_rest_for_the_next_run(
    stack: OpsStack, capsys: pytest.CaptureFixture[str]
) -> None:
    fn = stack.load("retention", MEMVAULT_OPENSEARCH_URL=stack.down)  # needs no search
    settings = fn.services.settings
    past = build_services(settings, clock=FakeClock(time.time() - 31 * DAY_SECONDS))
    past.accounts.create_account("acme", account_id="acme")
    caller = Caller(account_id="acme", surface=Surface.REST)
    for i in range(3):
        past.vault.write(caller, f"gone/{i}.md", f"# Gone {i}")
        past.vault.delete(caller, f"gone/{i}.md")
    capsys.readouterr()

    # Time enough for the first two sweeps, then under the 20 s reserve.
    short = fn.handler(event("retention_schedule"), _ticking("retention", [60_000, 60_000, 5_000]))
    assert "deleted_notes_purged" in short["unfinished"]
    assert "deleted_notes_purged" not in short["counts"]
    assert set(short["counts"]) == {"holds_released", "usage_expired"}
    assert len(fn.services.store.list_versions("acme", "gone/0.md")) == 1
    assert _metric(capsys.readouterr().out, "SweepsUnfinished") == [len(short["unfinished"])]

    full = fn.handler(event("retention_schedule"), _ticking("retention", [600_000]))
    assert full["unfinished"] == []
    assert full["counts"]["deleted_notes_purged"] == 3
    for i in range(3):
        assert fn.services.store.list_versions("acme", f"gone/{i}.md") == []
