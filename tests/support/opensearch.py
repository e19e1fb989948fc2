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
import fnmatch
import itertools
import json
import os
import subprocess
import threading
import urllib.error
import urllib.request
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

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


# ---------------------------------------------------------------- deferred refreshes
# Endpoints that write documents, and those whose answer reads nothing but the documents
# themselves in real time (a get, an mget) or the index's own metadata: none of them needs
# the writes before it refreshed. Every other request (a search, a count, a delete- or
# update-by-query, stats, a close...) first refreshes the written indices it names.
_WRITES = frozenset({"_bulk", "_doc", "_create", "_update", "_delete_by_query", "_update_by_query"})
_NO_REFRESH_NEEDED = frozenset({"_mget", "_source", "_mapping", "_alias", "_aliases", "_settings"})
_FORCING = frozenset({"true", "wait_for", ""})


class DeferredRefresh:
    """Writes to the pool's indices refresh once, when something next reads them (ADR 0065).

    The AWS tier runs memvault with ``opensearch_refresh="true"``, so each bulk write forced
    a refresh of its index: about one refresh per write, the node's main cost (a new Lucene
    segment and a reader opened over it, 10-20 ms of the node's CPU each). memvault's
    requests are sent as they are; only here, at the client's transport, a write to one of
    the pool's indices that asks for a refresh is sent without it, and the index is marked
    written. The next request that reads a written index (a search, a count, a
    delete-by-query, its stats: anything but a realtime get, an mget, or the index's
    mapping, aliases and settings) first refreshes it, on a client of its own, so every
    read still sees every write that returned before it, as with ``refresh=true``. Ten
    writes and then a search cost one refresh instead of ten.

    Written indices are refreshed before this process starts another (``subprocess``),
    which reads the node without this transport. Indices that are not the pool's (the
    adapter tests' own, which test the refresh itself) are never touched.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._prefixes: list[str] = []
        self._written: dict[str, int] = {}  # index -> a stamp, renewed by each write
        self._stamps = itertools.count(1)
        self._refresh: dict[str, Callable[[str], object]] = {}  # prefix -> its pool's refresh
        self._original: Any = None
        self.deferred = 0  # writes sent without their refresh
        self.refreshes = 0  # refreshes sent instead

    def manage(self, prefix: str, refresh: Callable[[str], object]) -> None:
        """Defer the refreshes of writes to indices named ``prefix``*; ``refresh`` refreshes
        a comma-separated list of them without this transport."""
        with self._lock:
            self._prefixes.append(prefix)
            self._refresh[prefix] = refresh
        self._install()

    def _managed(self, name: str) -> str | None:
        return next((p for p in self._prefixes if name.startswith(p)), None)

    def _install(self) -> None:
        if self._original is not None:
            return
        from opensearchpy.transport import Transport

        self._original = original = Transport.perform_request
        deferred = self

        def perform_request(
            transport: Any, method: str, url: str, params: Any = None, *args: Any, **kw: Any
        ) -> Any:
            return deferred._perform(original, transport, method, url, params, args, kw)

        setattr(Transport, "perform_request", perform_request)  # noqa: B010
        popen_init = subprocess.Popen.__init__

        def popen(process: Any, *args: Any, **kwargs: Any) -> None:
            deferred.refresh_all()
            popen_init(process, *args, **kwargs)

        setattr(subprocess.Popen, "__init__", popen)  # noqa: B010

    def _perform(
        self,
        original: Any,
        transport: Any,
        method: str,
        url: str,
        params: Any,
        args: tuple[Any, ...],
        kw: dict[str, Any],
    ) -> Any:
        parts = [p for p in url.split("?", 1)[0].split("/") if p]
        named = parts[0].split(",") if parts and not parts[0].startswith("_") else []
        endpoint = next((p for p in parts if p.startswith("_")), "")
        if endpoint == "_bulk" and not named and self._forces(params):
            named = _bulk_indices(args[0] if args else kw.get("body"))
        if endpoint in _WRITES and named and self._forces(params):
            prefixes = [self._managed(n) for n in named]
            if all(prefixes) and not any("*" in n for n in named):
                if endpoint in ("_delete_by_query", "_update_by_query"):
                    self._refresh_matching(named)  # they act on what is refreshed
                params = {k: v for k, v in dict(params).items() if k != "refresh"}
                answer = original(transport, method, url, params, *args, **kw)
                self._mark(named)
                return answer
        elif endpoint == "_refresh":
            stamps = self._matching(named)
            answer = original(transport, method, url, params, *args, **kw)
            self._forget(stamps)
            return answer
        elif method == "DELETE" and named and len(parts) == 1:
            answer = original(transport, method, url, params, *args, **kw)
            self._forget(self._matching(named))
            return answer
        elif not (endpoint in _NO_REFRESH_NEEDED or (not endpoint and method in ("HEAD", "GET"))):
            self._refresh_matching(named)
        return original(transport, method, url, params, *args, **kw)

    @staticmethod
    def _forces(params: Mapping[str, Any] | None) -> bool:
        """A refresh asked for, by a request that ends when its writes are done (not a
        task left running: ``wait_for_completion=false`` refreshes when the task ends)."""
        if not params or "refresh" not in params:
            return False
        return _text(params["refresh"]) in _FORCING and (
            _text(params.get("wait_for_completion", "true")) != "false"
        )

    def _mark(self, names: list[str]) -> None:
        with self._lock:
            for name in names:
                self._written[name] = next(self._stamps)
            self.deferred += 1

    def _matching(self, patterns: list[str]) -> dict[str, int]:
        """The written indices a request naming ``patterns`` (none: every index) reads."""
        with self._lock:
            if not self._written:
                return {}
            if not patterns or any(p in ("_all", "*") for p in patterns):
                return dict(self._written)
            return {
                name: stamp
                for name, stamp in self._written.items()
                if any(fnmatch.fnmatchcase(name, p) for p in patterns)
            }

    def _forget(self, stamps: dict[str, int]) -> None:
        """Unmark the indices refreshed, unless written again since their stamp was read."""
        with self._lock:
            for name, stamp in stamps.items():
                if self._written.get(name) == stamp:
                    del self._written[name]

    def _refresh_matching(self, patterns: list[str]) -> None:
        stamps = self._matching(patterns)
        if not stamps:
            return
        by_prefix: dict[str, list[str]] = {}
        for name in stamps:
            prefix = self._managed(name)
            if prefix is not None:
                by_prefix.setdefault(prefix, []).append(name)
        for prefix, names in by_prefix.items():
            # A written index dropped meanwhile: ignore_unavailable in the pool's refresh.
            self._refresh[prefix](",".join(sorted(names)))
            with self._lock:
                self.refreshes += 1
        self._forget(stamps)

    def refresh_all(self) -> None:
        """Refresh every written index (before another process reads the node)."""
        self._refresh_matching([])


def _text(value: object) -> str:
    return (value.decode() if isinstance(value, bytes) else str(value)).lower()


def _bulk_indices(body: Any) -> list[str]:
    """The indices a bulk body's actions name ([] when one names none: not deferred)."""
    if isinstance(body, bytes):
        body = body.decode("utf-8")
    if not isinstance(body, str):
        return []
    names: set[str] = set()
    lines = iter(line for line in body.split("\n") if line.strip())
    for line in lines:
        (op, meta), *rest = json.loads(line).items()
        name = meta.get("_index") if isinstance(meta, dict) else None
        if rest or op not in ("index", "create", "update", "delete") or not name:
            return []
        names.add(name)
        if op != "delete":
            next(lines, None)  # its document
    return sorted(names)


deferred_refresh = DeferredRefresh()


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
        self.deferred = os.environ.get("MEMVAULT_TEST_DEFERRED_REFRESH", "1") != "0"
        if self.deferred:
            # The pool's indices, and the vector indices memvault makes under its prefixes,
            # refresh only when asked (DeferredRefresh): without a schedule, a written
            # index is refreshed once when it is read, not also every second meanwhile.
            self._client.indices.put_index_template(
                name=self._prefix,
                body={
                    "index_patterns": [f"{self._prefix}-*"],
                    "template": {"settings": {"index": {"refresh_interval": "-1"}}},
                },
            )
            deferred_refresh.manage(
                self._prefix,
                lambda names: self._client.indices.refresh(index=names, ignore_unavailable=True),
            )
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
                if not self.deferred:  # else the count refreshes it, if it was written
                    self._client.indices.refresh(index=name)
                if self._client.count(index=name)["count"] == 0:
                    return name  # nothing written (or only deleted): nothing to delete
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
                if not self.deferred:  # else the count refreshes what was written
                    indices.refresh(index=pattern)
                if self._client.count(index=pattern)["count"]:
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
        if self.deferred:
            with contextlib.suppress(Exception):
                self._client.indices.delete_index_template(name=self._prefix)


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
