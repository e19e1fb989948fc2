"""The AWS tier's deferred refreshes (tests.support.opensearch.DeferredRefresh, ADR 0065)
keep their promise: a write to a pool index that asks for a refresh is sent without one,
and every later read, by this process or by one it starts, still sees it.

What the node holds is read here over plain HTTP, past the client's transport.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Iterator

import pytest

from memvault.adapters.aws.search import OpenSearchIndex, make_client
from memvault.adapters.aws.vectors import OpenSearchVectorIndex
from memvault.domain.models import SearchDoc, SearchQuery
from memvault.ports import ChunkVector
from tests.support.backends import require_opensearch
from tests.support.opensearch import index_pool

NOW = 1_780_000_000.0
_COUNT = """
import json, sys, urllib.request
print(json.load(urllib.request.urlopen(sys.argv[1]))["count"])
"""


def raw(url: str) -> dict[str, object]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=10) as resp:
        found: dict[str, object] = json.load(resp)
        return found


def external_refreshes(url: str, index: str) -> int:
    stats: dict = raw(f"{url}/{index}/_stats/refresh")  # type: ignore[type-arg]
    return int(stats["_all"]["primaries"]["refresh"]["external_total"])


def doc(path: str, body: str) -> SearchDoc:
    return SearchDoc(
        note_id=f"id:{path}",
        path=path,
        title=path,
        tags=(),
        body=body,
        updated_at=NOW,
        inbound_links=0,
    )


@pytest.fixture
def pooled() -> Iterator[tuple[str, str, str]]:
    """The node's URL, a pool index and a pool vector prefix."""
    url = require_opensearch()
    pool = index_pool(url)
    if not pool.deferred:
        pytest.skip("MEMVAULT_TEST_DEFERRED_REFRESH=0: writes refresh as memvault asks")
    name, prefix = pool.take(), pool.take_vectors()
    try:
        yield url, name, prefix
    finally:
        pool.give_back(name)
        pool.give_back_vectors(prefix)


def test_a_write_waits_for_no_refresh_and_every_later_read_sees_it(
    pooled: tuple[str, str, str],
) -> None:
    url, name, _ = pooled
    ix = OpenSearchIndex(make_client(url, auth="none", region=None, timeout=30.0), name)
    ix.refresh = "true"  # what the AWS tier's settings ask for
    acct = f"acct-{uuid.uuid4().hex[:8]}"
    before = external_refreshes(url, name)
    ix.upsert(acct, [doc("a.md", "durian")])
    ix.upsert(acct, [doc("b.md", "durian")])
    assert external_refreshes(url, name) == before  # neither write refreshed
    assert raw(f"{url}/{name}/_count")["count"] == 0  # so a reader past it sees nothing yet

    hits = ix.search(acct, SearchQuery("durian", limit=10), now=NOW)
    assert sorted(h.path for h in hits) == ["a.md", "b.md"]
    assert external_refreshes(url, name) == before + 1  # one refresh for both writes

    ix.delete(acct, ["a.md"])
    assert [h.path for h in ix.search(acct, SearchQuery("durian", limit=10), now=NOW)] == ["b.md"]
    ix.clear(acct)  # a delete-by-query acts on what is refreshed: the index is, first
    assert ix.search(acct, SearchQuery("durian", limit=10), now=NOW) == []


def test_a_process_started_after_a_write_sees_it(pooled: tuple[str, str, str]) -> None:
    url, name, _ = pooled
    ix = OpenSearchIndex(make_client(url, auth="none", region=None, timeout=30.0), name)
    ix.refresh = "true"
    ix.upsert(f"acct-{uuid.uuid4().hex[:8]}", [doc("a.md", "durian")])
    assert raw(f"{url}/{name}/_count")["count"] == 0
    counted = subprocess.run(
        [sys.executable, "-c", _COUNT, f"{url}/{name}/_count"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert counted.stdout.strip() == "1"


def test_vector_writes_named_in_the_bulk_body_are_deferred_too(
    pooled: tuple[str, str, str],
) -> None:
    url, _, prefix = pooled
    client = make_client(url, auth="none", region=None, timeout=30.0)
    vectors = OpenSearchVectorIndex(client, prefix, refresh="true", create_missing=True)
    acct = f"acct-{uuid.uuid4().hex[:8]}"
    chunk = ChunkVector(
        note_id="id:a.md",
        path="a.md",
        chunk_index=0,
        heading="",
        offset=0,
        length=6,
        text="durian",
        tags=(),
        vector=[1.0, 0.0, 0.0, 0.0],
        model="m",
        updated_at=NOW,
    )
    vectors.upsert_chunks(acct, "a.md", [chunk])
    vector_index = vectors.index_name(4)
    assert raw(f"{url}/{vector_index}/_count")["count"] == 0
    hits = vectors.nearest(acct, [1.0, 0.0, 0.0, 0.0], model="m", limit=5)
    assert [h.path for h in hits] == ["a.md"]
    assert raw(f"{url}/{vector_index}/_count")["count"] == 1
