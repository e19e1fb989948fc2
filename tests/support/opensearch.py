"""The real OpenSearch node of the AWS test tier: finds it, and keeps fresh indices on it.

The node is started by ``scripts/opensearch/start.sh`` (an embedded OpenSearch 2.19 on
127.0.0.1, no Docker) and its URL is handed to the tests through
``MEMVAULT_TEST_OPENSEARCH_URL``::

    scripts/opensearch/start.sh            # exit 3: java/mvn missing -> skip the tier
    export MEMVAULT_TEST_OPENSEARCH_URL=http://127.0.0.1:9200
    pytest ...
    scripts/opensearch/stop.sh

Use ``opensearch_url()`` to get the URL (``None`` when unusable) and ``require_reason()``
for the skip message, e.g.
``pytest.mark.skipif(opensearch_url() is None, reason=require_reason())``.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import urllib.error
import urllib.request
import uuid
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memvault.adapters.aws.vectors import OpenSearchVectorIndex

ENV_VAR = "MEMVAULT_TEST_OPENSEARCH_URL"
START_HINT = (
    "start one with scripts/opensearch/start.sh and export "
    f"{ENV_VAR}=http://127.0.0.1:9200 (or the OPENSEARCH_PORT it used)"
)
_TIMEOUT_S = 3.0
_HEALTHY = frozenset({"green", "yellow"})


def _configured_url() -> str | None:
    url = os.environ.get(ENV_VAR, "").strip()
    return url.rstrip("/") or None


def probe(url: str) -> str | None:
    """None when ``url`` answers ``/_cluster/health`` green or yellow, else why not."""
    # Never route the loopback node through an HTTP proxy from the environment.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{url}/_cluster/health", timeout=_TIMEOUT_S) as resp:
            body = json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        return f"OpenSearch at {url} answered HTTP {exc.code} to /_cluster/health"
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"OpenSearch at {url} did not answer /_cluster/health ({reason})"
    except ValueError as exc:
        return f"OpenSearch at {url} sent a non-JSON /_cluster/health answer ({exc})"
    status = body.get("status") if isinstance(body, dict) else None
    if status not in _HEALTHY:
        return f"OpenSearch at {url} is not ready (cluster status {status!r})"
    return None


_healthy: set[str] = set()


def opensearch_url() -> str | None:
    """The test node's base URL if ``MEMVAULT_TEST_OPENSEARCH_URL`` is set and healthy.

    A node found healthy once is not probed again by this process (every AWS test asks).
    """
    url = _configured_url()
    if url is None:
        return None
    if url not in _healthy:
        if probe(url) is not None:
            return None
        _healthy.add(url)
    return url


def require_reason() -> str:
    """Why the OpenSearch tier cannot run, for a skip message; "" when it can."""
    url = _configured_url()
    if url is None:
        return f"{ENV_VAR} is not set: no real OpenSearch node for this tier; {START_HINT}"
    problem = probe(url)
    if problem is None:
        return ""
    return f"{problem}; {START_HINT}"


class IndexPool:
    """Fresh, empty memvault indices made ahead of time on the test node.

    Every AWS-backend test gets an index of its own, as before: scores no longer depend
    on other accounts' notes (ADR 0017), but tests that sweep the whole index (retention,
    reindex, the index's own admin) must not see each other's documents. Creating an
    index takes 0.2-0.3 s and dropping one 0.1-0.15 s, both cluster-state updates the
    node makes one at a time for every test process, so an index handed back is emptied
    and reused (ADR 0053): when its settings, mappings and aliases are still those it was
    made with and no index named after it appeared, its documents are deleted (a few
    milliseconds) and the next test takes it; otherwise (a test dropped, closed,
    re-mapped or downgraded it) it is dropped and a new one made. Both happen on a
    background thread while the tests run, so a test takes an index that is already
    there.
    """

    def __init__(self, url: str, *, ahead: int = 2) -> None:
        from memvault.adapters.aws.search import OpenSearchIndex, make_client

        self._client = make_client(url, auth="none", region=None, timeout=60.0)
        self._index_of = lambda name: OpenSearchIndex(self._client, name)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="index-pool")
        self._ready: deque[Future[str]] = deque()
        self._ahead = ahead
        self._prefix = f"memvault-test-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._made = itertools.count()
        self._pristine: dict[str, object] = {}  # each index's state as made
        self._refill()
        # Vector index prefixes (ADR 0026) are reused, emptied between tests: a k-NN
        # index of each dimension is made once per prefix, on first use, instead of once
        # per test (emptying one takes about 30 ms, making one 0.2-0.3 s).
        self._vector_made = itertools.count()
        self._vectors_ready: deque[Future[str]] = deque()
        for _ in range(ahead):
            done: Future[str] = Future()
            done.set_result(f"{self._prefix}-v{next(self._vector_made)}")
            self._vectors_ready.append(done)

    def _create(self) -> str:
        name = f"{self._prefix}-{next(self._made)}"
        self._index_of(name).create_index()
        self._pristine[name] = self._state(name)
        return name

    def _state(self, name: str) -> dict[str, object]:
        """The index's settings, mappings and aliases, and those of any index named
        after it (``<name>-vectors-d*``: a test that named no vector prefix of its own)."""
        return dict(self._client.indices.get(index=f"{name},{name}-*", allow_no_indices=True))

    def _recycle(self, name: str) -> str:
        """``name`` emptied for the next test; a new index when the test changed it."""
        try:
            if self._state(name) == self._pristine[name]:
                self._client.indices.refresh(index=name)
                self._client.delete_by_query(
                    index=name,
                    body={"query": {"match_all": {}}},
                    conflicts="proceed",
                    refresh=True,
                )
                if self._client.count(index=name)["count"] == 0:
                    return name
        except Exception:
            pass  # missing, closed or unreadable: made anew below
        self._drop(name)
        return self._create()

    def _refill(self) -> None:
        while len(self._ready) < self._ahead:
            self._ready.append(self._worker.submit(self._create))

    def take(self) -> str:
        """The name of an empty index at memvault's mapping that exists on the node."""
        name = self._ready.popleft().result()
        self._refill()
        return name

    def give_back(self, name: str) -> None:
        """Empty the index for a later test, or drop it, and any vector index named
        after it, and make a new one (in the background: nothing waits for it)."""
        self._ready.append(self._worker.submit(self._recycle, name))

    def _drop(self, name: str) -> None:
        self._pristine.pop(name, None)
        self._index_of(name).drop_index()
        self._vectors_of(f"{name}-vectors").drop_indices()

    def take_vectors(self) -> str:
        """A vector index prefix whose indices (if any) hold no document."""
        if not self._vectors_ready:
            return f"{self._prefix}-v{next(self._vector_made)}"
        return self._vectors_ready.popleft().result()

    def give_back_vectors(self, prefix: str) -> None:
        """Empty the prefix's vector indices (in the background) for a later test."""
        self._vectors_ready.append(self._worker.submit(self._empty_vectors, prefix))

    def _vectors_of(self, prefix: str) -> OpenSearchVectorIndex:
        from memvault.adapters.aws.vectors import OpenSearchVectorIndex

        return OpenSearchVectorIndex(self._client, prefix)

    def _empty_vectors(self, prefix: str) -> str:
        """``prefix`` emptied; a new prefix when that fails (dropped at close)."""
        pattern = f"{prefix}-d*"
        indices = self._client.indices
        try:
            if indices.get_alias(index=pattern, allow_no_indices=True):
                indices.refresh(index=pattern)
                self._client.delete_by_query(
                    index=pattern,
                    body={"query": {"match_all": {}}},
                    conflicts="proceed",
                    refresh=True,
                )
        except Exception:
            return f"{self._prefix}-v{next(self._vector_made)}"
        return prefix

    def close(self) -> None:
        for pending in self._ready:
            with contextlib.suppress(Exception):
                self._index_of(pending.result()).drop_index()
        self._ready.clear()
        for number in range(next(self._vector_made)):
            with contextlib.suppress(Exception):
                self._vectors_of(f"{self._prefix}-v{number}").drop_indices()
        self._worker.shutdown(wait=True)


def drop_vector_indices(url: str, index: str) -> None:
    """Drop the vector indices named after the notes index ``index`` (the default prefix,
    ``<index>-vectors``, ADR 0026): what a test that names its own notes index and writes
    notes with embeddings on leaves on the node."""
    from memvault.adapters.aws.search import make_client
    from memvault.adapters.aws.vectors import OpenSearchVectorIndex

    client = make_client(url, auth="none", region=None, timeout=30.0)
    try:
        OpenSearchVectorIndex(client, f"{index}-vectors").drop_indices()
    finally:
        client.close()


_pools: dict[str, IndexPool] = {}


def index_pool(url: str) -> IndexPool:
    """The process's pool for the node at ``url`` (closed when the process exits)."""
    pool = _pools.get(url)
    if pool is None:
        pool = _pools[url] = IndexPool(url)
        atexit.register(pool.close)
    return pool
