"""The search index is checked (or made) on first need, never at start (ADR 0031): against
the real local node, a node that accepts connections and never answers, and a port
nobody listens on."""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterator

import pytest

from memvault.adapters.aws.search import OpenSearchIndex, make_client
from memvault.domain.models import SearchDoc, SearchQuery
from memvault.errors import ServiceUnavailable
from tests.support.backends import require_opensearch
from tests.support.servers import free_port

NOW = 1_780_000_000.0


def doc(path: str, body: str) -> SearchDoc:
    return SearchDoc(
        note_id=uuid.uuid4().hex,
        path=path,
        title=path,
        tags=(),
        body=body,
        updated_at=NOW,
        inbound_links=0,
    )


class Silent:
    """A node that accepts every connection and never answers (a black-holed domain)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(conn)

    def close(self) -> None:
        self.listener.close()
        for conn in self.accepted:
            conn.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    node = Silent()
    try:
        yield node
    finally:
        node.close()


def test_nothing_is_sent_until_an_operation_needs_the_index() -> None:
    url = require_opensearch()
    name = f"memvault-lazy-{uuid.uuid4().hex[:10]}"
    client = make_client(url, auth="none", region=None, timeout=10.0)
    ix = OpenSearchIndex(client, name, refresh="true", create_missing=True, shards=2)
    try:
        assert not client.indices.exists(index=name)  # built, and nothing made yet
        assert ix.search("a", SearchQuery("anything"), now=NOW) == []  # made on first need
        made = client.indices.get_settings(index=name)[name]["settings"]["index"]
        assert made["number_of_shards"] == "2"
        ix.upsert("a", [doc("n.md", "kumquat")])
        assert [h.path for h in ix.search("a", SearchQuery("kumquat"), now=NOW)] == ["n.md"]
    finally:
        ix.drop_index()


def test_without_create_missing_a_missing_index_is_named_until_it_is_made() -> None:
    url = require_opensearch()
    name = f"memvault-lazy-{uuid.uuid4().hex[:10]}"
    client = make_client(url, auth="none", region=None, timeout=10.0)
    ix = OpenSearchIndex(client, name, refresh="true")
    try:
        for _ in range(2):  # asked again each time, not remembered
            with pytest.raises(ServiceUnavailable) as err:
                ix.search("a", SearchQuery("anything"), now=NOW)
            assert err.value.code == "search_index_missing" and name in err.value.message
        OpenSearchIndex(client, name).create_index()  # the ops path
        assert ix.search("a", SearchQuery("anything"), now=NOW) == []
        assert not client.indices.exists(index=f"{name}-other")
    finally:
        ix.drop_index()


def test_a_node_that_times_out_is_not_asked_again_for_a_while(silent: Silent) -> None:
    client = make_client(silent.url, auth="none", region=None, timeout=0.3)
    ix = OpenSearchIndex(client, "memvault-nowhere", create_missing=True)
    with pytest.raises(ServiceUnavailable) as first:
        ix.upsert("a", [doc("n.md", "text")])
    assert first.value.code == "search_unavailable"
    asked = len(silent.accepted)
    assert asked >= 1
    for _ in range(3):  # during the pause: the same answer, no new connection
        with pytest.raises(ServiceUnavailable) as again:
            ix.search("a", SearchQuery("text"), now=NOW)
        assert again.value.code == "search_unavailable"
        with pytest.raises(ServiceUnavailable):
            ix.upsert("a", [doc("n.md", "text")])
    assert len(silent.accepted) == asked


def test_a_refused_connection_is_tried_again_at_once() -> None:
    url = require_opensearch()
    name = f"memvault-lazy-{uuid.uuid4().hex[:10]}"
    refused = make_client(f"http://127.0.0.1:{free_port()}", auth="none", region=None, timeout=2.0)
    ix = OpenSearchIndex(refused, name, refresh="true", create_missing=True)
    with pytest.raises(ServiceUnavailable):
        ix.upsert("a", [doc("n.md", "text")])
    ix.client = make_client(url, auth="none", region=None, timeout=10.0)  # the node is back
    try:
        ix.upsert("a", [doc("n.md", "quince")])  # no pause after a refusal
        assert [h.path for h in ix.search("a", SearchQuery("quince"), now=NOW)] == ["n.md"]
    finally:
        ix.drop_index()
