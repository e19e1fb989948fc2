"""VectorIndex on OpenSearch k-NN (the AWS backend): one document per chunk (ADR 0026).

Chunks live in their own indices, apart from the notes index (whose mapping, made long
before vectors, cannot take ``index.knn``): one index per vector dimension, named
``<prefix>-d<dimension>`` (``prefix`` is ``MEMVAULT_OPENSEARCH_VECTOR_INDEX``, by default
``<notes index>-vectors``, so inside the functions' index-prefix access), since a
``knn_vector`` field's dimension is fixed by its mapping. Models of one dimension share
an index and are told apart by the ``model`` field; a model of another dimension gets an
index of its own, and the old model's chunks leave through the outbox's re-embedding
(each upsert removes the note's chunks from every dimension's index) or ``clear``.

The field is ``knn_vector`` with the ``lucene`` engine (HNSW, cosine space): Lucene's own
vector format, no native library, and what Amazon OpenSearch Service runs too. The
``faiss`` and ``nmslib`` engines need the plugin's JNI libraries, which the Maven Central
artifact does not ship (a faiss index fails its first write with ``UnsatisfiedLinkError``),
and faiss is the plugin's default engine: the mapping always names ``lucene``.

Tenant isolation is inside the query, never after it: every request is routed by the
account (its chunks live on one shard) and the k-NN query's own ``filter`` holds the
account, the model and any folder or tag, so the engine takes the best ``k`` among the
chunks that pass (Lucene's filtered HNSW search, exact when few pass); nothing is dropped
afterwards, so a filter never empties a page and no count crosses accounts. A hit's
``_score`` for the cosine space is ``(1 + cos) / 2``; ``similarity`` is the cosine.

A note's chunks have ids ``sha256(account, path, chunk index)``. Its first chunk's
document also holds the note's chunk count, so an upsert or delete reads (a realtime
``mget``, which sees writes not yet refreshed) the first chunk of the path in each
dimension's index and knows exactly which documents to overwrite or delete, in one bulk
request. A zero vector (a chunk with no known token) cannot be indexed in the cosine
space: its document is stored without a vector, so it counts as indexed but is never a
hit, as a zero vector matches nothing.

Indices are made on first need, never at start (``EnsureOnce``, ADR 0031): the first
upsert of a dimension creates its index when ``create_missing`` is on (the ops function,
local runs), else checks it and answers ``vector_index_missing`` (the write still stands;
the chunks wait in the outbox until the ops path has made it). Reads of a missing index
find nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import threading
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError, OpenSearchException, RequestError

from memvault.adapters.aws.lazy import EnsureOnce
from memvault.domain.tags import ancestor_keys, tag_key
from memvault.errors import ServiceUnavailable
from memvault.ports import ChunkVector, PackedChunks, VectorHit

__all__ = ["SCHEMA_VERSION", "OpenSearchVectorIndex", "chunk_id", "index_body"]

log = logging.getLogger(__name__)

UNAVAILABLE_MESSAGE = (
    "vector search is unavailable right now; notes are safe and will be searchable by"
    " meaning again when it recovers"
)

SCHEMA_VERSION = 1
ENGINE = "lucene"
SPACE = "cosinesimil"
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 128
# The engine is asked for at least this many neighbours (Lucene's beam width: more
# candidates, better recall), and the page is cut to the limit. A segment with at most
# this many chunks passing the filter is searched exactly.
MIN_CANDIDATES = 100
# A note's chunks (a 1 MB note cut into bounded chunks stays far below it).
MAX_CHUNKS = 10_000
# The list of dimension indices is read again after this long (a model of a new
# dimension configured in another process).
INDICES_MAX_AGE_S = 60.0
CLEAR_TIMEOUT_S = 120.0
# Bulk request bodies are cut to this many bytes (Amazon OpenSearch refuses HTTP bodies
# over 10 MiB on its smallest instance types), as the notes index's are.
BULK_MAX_BYTES = 5 * 1024 * 1024
# Documents per mget request.
MGET_MAX_DOCS = 1000

_REFRESH_VALUES = ("wait_for", "true", "false")
_HIT_FIELDS = [
    "note_id",
    "path",
    "chunk_index",
    "heading",
    "offset",
    "length",
    "text",
    "updated_at",
]
_STORED = {"index": False, "doc_values": False}


def index_body(dimension: int, *, shards: int = 1, replicas: int | None = None) -> dict[str, Any]:
    """The settings and mapping of the chunk index of one dimension."""
    index: dict[str, Any] = {"knn": True, "number_of_shards": shards}
    if replicas is not None:
        index["number_of_replicas"] = replicas
    return {
        "settings": {"index": index},
        "mappings": {
            "dynamic": "strict",
            "_meta": {"memvault_vectors_schema": SCHEMA_VERSION, "dimension": dimension},
            # A write without routing is refused rather than sent to a wrong shard.
            "_routing": {"required": True},
            # The vectors are in the HNSW graph; _source need not hold them a second time.
            "_source": {"excludes": ["vector"]},
            "properties": {
                "account": {"type": "keyword"},
                "model": {"type": "keyword"},
                "path": {"type": "keyword"},
                "tag_keys": {"type": "keyword"},
                "note_id": {"type": "keyword", **_STORED},
                "chunk_index": {"type": "integer", **_STORED},
                "chunks": {"type": "integer", **_STORED},  # on the first chunk: their count
                "heading": {"type": "keyword", **_STORED},
                "offset": {"type": "integer", **_STORED},
                "length": {"type": "integer", **_STORED},
                "text": {"type": "text", "index": False},
                "updated_at": {"type": "double", **_STORED},
                "vector": {
                    "type": "knn_vector",
                    "dimension": dimension,
                    "method": {
                        "name": "hnsw",
                        "engine": ENGINE,
                        "space_type": SPACE,
                        "parameters": {"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
                    },
                },
            },
        },
    }


def chunk_id(account_id: str, path: str, chunk_index: int) -> str:
    """The document id of one chunk: one per (account, path, chunk), opaque to both."""
    return hashlib.sha256(f"{account_id}\0{path}\0{chunk_index}".encode()).hexdigest()


def _usable(vector: Sequence[float]) -> list[float] | None:
    """The vector as floats, or None when the cosine space cannot take it (zero length,
    or a value that is not finite)."""
    values = [float(v) for v in vector]
    if not all(math.isfinite(v) for v in values) or not any(values):
        return None
    return values


class _Bulk:
    """Bulk actions, as request bodies of at most BULK_MAX_BYTES (an action and its
    source are never split)."""

    def __init__(self) -> None:
        self.bodies: list[list[str]] = []
        self._size = 0

    def add(self, *parts: Mapping[str, Any]) -> None:
        text = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in parts)
        size = len(text.encode("utf-8"))
        if not self.bodies or self._size + size > BULK_MAX_BYTES:
            self.bodies.append([])
            self._size = 0
        self.bodies[-1].append(text)
        self._size += size


class OpenSearchVectorIndex:
    """memvault's VectorIndex on OpenSearch k-NN, one index per dimension under ``prefix``."""

    def __init__(
        self,
        client: OpenSearch,
        prefix: str,
        *,
        refresh: str = "wait_for",
        create_missing: bool = False,
        shards: int = 1,
        replicas: int | None = None,
    ) -> None:
        if refresh not in _REFRESH_VALUES:
            raise ValueError(f"refresh must be one of {_REFRESH_VALUES}, not {refresh!r}")
        self.client = client
        self.prefix = prefix
        self.refresh = refresh
        self.create_missing = create_missing
        self.shards = shards
        self.replicas = replicas
        self._pattern = f"{prefix}-d*"
        self._name_re = re.compile(re.escape(prefix) + r"-d([1-9][0-9]*)")
        self._lock = threading.Lock()
        self._ready: dict[int, EnsureOnce] = {}
        self._known: set[str] = set()
        self._known_at = -math.inf

    # ------------------------------------------------------------------ indices
    def index_name(self, dimension: int) -> str:
        return f"{self.prefix}-d{dimension}"

    def create_index(self, dimension: int) -> bool:
        """Create the chunk index of ``dimension`` if it is missing (idempotent, safe when
        several processes race). True when created."""
        name = self.index_name(dimension)
        body = index_body(dimension, shards=self.shards, replicas=self.replicas)
        with self._errors():
            if self.client.indices.exists(index=name):
                self.check_index(dimension)
                return False
            try:
                self.client.indices.create(index=name, body=body)
            except RequestError as exc:
                if exc.error != "resource_already_exists_exception":
                    raise
                return False
            finally:
                self._known_at = -math.inf
        return True

    def check_index(self, dimension: int) -> None:
        """Raise ServiceUnavailable unless the chunk index of ``dimension`` exists with
        this memvault's mapping."""
        name = self.index_name(dimension)
        with self._errors():
            if not self.client.indices.exists(index=name):
                raise ServiceUnavailable(
                    f"the vector index {name!r} does not exist; run `memvault init-search`"
                    " (or the ops function's init-search)",
                    code="vector_index_missing",
                    index=name,
                )
            found: dict[str, Any] = self.client.indices.get_mapping(index=name)
        entry: dict[str, Any] = next(iter(found.values()), {})
        meta: dict[str, Any] = (entry.get("mappings") or {}).get("_meta") or {}
        if (
            meta.get("memvault_vectors_schema") != SCHEMA_VERSION
            or meta.get("dimension") != dimension
        ):
            raise ServiceUnavailable(
                f"the vector index {name!r} was not made by this memvault (schema"
                f" {meta.get('memvault_vectors_schema')!r}, dimension {meta.get('dimension')!r})",
                code="vector_index_outdated",
                index=name,
            )

    def drop_indices(self) -> None:
        """Drop every chunk index under the prefix (tests, teardown)."""
        with self._errors():
            for name in self._indices(fresh=True):
                self.client.indices.delete(index=name, ignore_unavailable=True)
        with self._lock:
            self._ready.clear()
            self._known, self._known_at = set(), -math.inf

    def _ensure(self, dimension: int) -> str:
        with self._lock:
            ready = self._ready.get(dimension)
            if ready is None:
                if self.create_missing:
                    ready = EnsureOnce(lambda: self.create_index(dimension))
                else:
                    ready = EnsureOnce(lambda: self.check_index(dimension))
                self._ready[dimension] = ready
        ready()
        name = self.index_name(dimension)
        with self._lock:
            self._known.add(name)
        return name

    def _indices(self, *, fresh: bool = False) -> list[str]:
        """The chunk indices under the prefix, read at most every INDICES_MAX_AGE_S."""
        now = time.monotonic()
        with self._lock:
            if not fresh and now - self._known_at < INDICES_MAX_AGE_S:
                return sorted(self._known)
        with self._errors():
            found = self.client.indices.get_alias(
                index=self._pattern, allow_no_indices=True, expand_wildcards="open"
            )
        names = {n for n in found if self._name_re.fullmatch(n)}
        with self._lock:
            self._known, self._known_at = names, now
        return sorted(names)

    # ------------------------------------------------------------------ writes
    def upsert_chunks(self, account_id: str, path: str, chunks: Sequence[ChunkVector]) -> None:
        self.upsert_notes(account_id, {path: chunks})

    def upsert_packed(self, account_id: str, notes: Sequence[PackedChunks]) -> None:
        self.upsert_notes(account_id, {p.note.path: p.chunk_vectors() for p in notes})

    def upsert_notes(self, account_id: str, notes: Mapping[str, Sequence[ChunkVector]]) -> None:
        """``upsert_chunks`` for several notes (path -> its chunks) in one ``mget`` and one
        bulk request (cut at BULK_MAX_BYTES, refreshed once, at the end): what an import or
        a re-embed should call, since every refresh waited for costs up to a second."""
        targets: dict[str, str | None] = {}
        for path, chunks in notes.items():
            for chunk in chunks:
                if chunk.path != path:
                    raise ValueError(f"chunk of {chunk.path!r} upserted under {path!r}")
            if sorted(c.chunk_index for c in chunks) != list(range(len(chunks))):
                raise ValueError(f"the chunks of {path!r} are not numbered 0..{len(chunks) - 1}")
            dimensions = {len(c.vector) for c in chunks}
            if len(dimensions) > 1:
                raise ValueError(
                    f"chunks of {path!r} have vectors of dimensions {sorted(dimensions)}"
                )
            targets[path] = self.index_name(dimensions.pop()) if chunks else None
        for dimension in sorted({len(c[0].vector) for c in notes.values() if c}):
            self._ensure(dimension)
        keep = {
            (targets[path], chunk_id(account_id, path, c.chunk_index))
            for path, chunks in notes.items()
            for c in chunks
        }
        bulk = _Bulk()
        for index, doc in self._stored(account_id, list(notes)):
            if (index, doc) not in keep:
                bulk.add({"delete": {"_index": index, "_id": doc, "routing": account_id}})
        for path, chunks in notes.items():
            for c in chunks:
                source: dict[str, Any] = {
                    "account": account_id,
                    "model": c.model,
                    "path": path,
                    "tag_keys": ancestor_keys(c.tags),
                    "note_id": c.note_id,
                    "chunk_index": c.chunk_index,
                    "heading": c.heading,
                    "offset": c.offset,
                    "length": c.length,
                    "text": c.text,
                    "updated_at": float(c.updated_at),
                }
                if c.chunk_index == 0:
                    source["chunks"] = len(chunks)
                vector = _usable(c.vector)
                if vector is not None:
                    source["vector"] = vector
                doc = chunk_id(account_id, path, c.chunk_index)
                action = {"_index": targets[path], "_id": doc, "routing": account_id}
                bulk.add({"index": action}, source)
        self._bulk(bulk, "store note vectors")

    def delete_notes(self, account_id: str, paths: Collection[str]) -> None:
        if not paths:
            return
        bulk = _Bulk()
        for index, doc in self._stored(account_id, list(dict.fromkeys(paths))):
            bulk.add({"delete": {"_index": index, "_id": doc, "routing": account_id}})
        self._bulk(bulk, "remove note vectors")

    def clear(self, account_id: str) -> None:
        names = self._indices(fresh=True)
        if not names:
            return
        with self._errors():
            # delete_by_query sees what is refreshed: refresh first, so nothing written
            # just before survives.
            self.client.indices.refresh(index=",".join(names))
            resp = self.client.delete_by_query(
                index=",".join(names),
                body={"query": {"bool": {"filter": [{"term": {"account": account_id}}]}}},
                routing=account_id,
                conflicts="proceed",
                refresh=self.refresh != "false",
                request_timeout=CLEAR_TIMEOUT_S,
            )
        if resp.get("failures") or resp.get("timed_out"):
            log.error(
                "vector index clear failed",
                extra={"account_id": account_id, "failures": (resp.get("failures") or [])[:3]},
            )
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE, code="search_unavailable")

    # ------------------------------------------------------------------ reads
    def nearest(
        self,
        account_id: str,
        vector: Sequence[float],
        *,
        model: str,
        limit: int,
        folder: str = "",
        tag: str | None = None,
        texts: bool = True,
    ) -> list[VectorHit]:
        # The hits come whole either way: OpenSearch sends each chunk's fields with it.
        query = _usable(vector)
        if limit <= 0 or query is None:
            return []  # a zero query vector is near nothing
        filters: list[dict[str, Any]] = [
            {"term": {"account": account_id}},
            {"term": {"model": model}},
        ]
        if folder:
            filters.append({"prefix": {"path": {"value": folder}}})
        if tag:
            filters.append({"term": {"tag_keys": tag_key(tag)}})
        k = max(limit, MIN_CANDIDATES)
        body = {
            "size": limit,
            "track_total_hits": False,
            "_source": _HIT_FIELDS,
            "query": {
                "knn": {
                    "vector": {"vector": query, "k": k, "filter": {"bool": {"filter": filters}}}
                }
            },
        }
        name = self.index_name(len(query))
        with self._errors():
            resp = self.client.search(
                index=name, body=body, routing=account_id, ignore_unavailable=True
            )
        return [self._hit(h) for h in resp["hits"]["hits"]]

    def with_texts(self, account_id: str, model: str, hits: Sequence[VectorHit]) -> list[VectorHit]:
        return list(hits)  # ``nearest`` gave them whole

    def indexed_models(self, account_id: str) -> dict[str, int]:
        body = {
            "size": 0,
            "track_total_hits": False,
            "query": {"bool": {"filter": [{"term": {"account": account_id}}]}},
            "aggs": {"models": {"terms": {"field": "model", "size": 1000}}},
        }
        with self._errors():
            resp = self.client.search(
                index=self._pattern, body=body, routing=account_id, allow_no_indices=True
            )
        buckets = ((resp.get("aggregations") or {}).get("models") or {}).get("buckets") or []
        return {str(b["key"]): int(b["doc_count"]) for b in sorted(buckets, key=lambda b: b["key"])}

    def holds_model(self, account_id: str, model: str) -> bool:
        body = {
            "size": 0,
            "terminate_after": 1,  # one chunk answers it: never count the account's chunks
            "track_total_hits": 1,
            "query": {
                "bool": {"filter": [{"term": {"account": account_id}}, {"term": {"model": model}}]}
            },
        }
        with self._errors():
            resp = self.client.search(
                index=self._pattern, body=body, routing=account_id, allow_no_indices=True
            )
        return int(((resp.get("hits") or {}).get("total") or {}).get("value") or 0) > 0

    def indexed_paths(self, account_id: str, paths: Collection[str]) -> dict[str, str]:
        """From each note's first chunk (a realtime read: a write just made is seen)."""
        wanted = list(dict.fromkeys(paths))
        out: dict[str, str] = {}
        for doc in self._heads(account_id, wanted):
            source = doc.get("_source") or {}
            path = str(source.get("path", ""))
            model = str(source.get("model", ""))
            if path in out:
                out[path] = min(out[path], model)
            else:
                out[path] = model
        return out

    # ------------------------------------------------------------------ internals
    def _heads(self, account_id: str, paths: Sequence[str]) -> list[dict[str, Any]]:
        """The first-chunk documents of ``paths`` found in any dimension's index."""
        names = self._indices()
        if not paths or not names:
            return []
        docs = [
            {
                "_index": name,
                "_id": chunk_id(account_id, path, 0),
                "routing": account_id,
                "_source": ["path", "model", "chunks"],
            }
            for name in names
            for path in paths
        ]
        found: list[dict[str, Any]] = []
        for start in range(0, len(docs), MGET_MAX_DOCS):
            with self._errors():
                resp = self.client.mget(
                    body={"docs": docs[start : start + MGET_MAX_DOCS]}, realtime=True
                )
            found.extend(d for d in resp.get("docs") or [] if d.get("found"))
        return found

    def _stored(self, account_id: str, paths: Sequence[str]) -> Iterator[tuple[str, str]]:
        """(index, id) of every chunk document stored for ``paths``."""
        for doc in self._heads(account_id, paths):
            source = doc.get("_source") or {}
            count = min(int(source.get("chunks") or 1), MAX_CHUNKS)
            path = str(source.get("path", ""))
            for i in range(count):
                yield str(doc["_index"]), chunk_id(account_id, path, i)

    @staticmethod
    def _hit(hit: Mapping[str, Any]) -> VectorHit:
        src = hit["_source"]
        score = float(hit.get("_score") or 0.0)  # (1 + cos) / 2 in the cosine space
        return VectorHit(
            note_id=str(src["note_id"]),
            path=str(src["path"]),
            chunk_index=int(src["chunk_index"]),
            heading=str(src.get("heading") or ""),
            offset=int(src["offset"]),
            length=int(src["length"]),
            text=str(src.get("text") or ""),
            similarity=max(-1.0, min(1.0, 2.0 * score - 1.0)),
            updated_at=float(src["updated_at"]),
        )

    def _bulk(self, bulk: _Bulk, what: str) -> None:
        failed = []
        for number, lines in enumerate(bulk.bodies):
            # Only the last request waits for (or forces) a refresh: it covers them all.
            last = number == len(bulk.bodies) - 1
            with self._errors():
                resp = self.client.bulk(
                    body="".join(lines), refresh=self.refresh if last else "false"
                )
            if not resp.get("errors"):
                continue
            for item in resp.get("items") or []:
                op, result = next(iter(item.items()))
                status = int(result.get("status", 0))
                if status >= 300 and not (status == 404 and op == "delete"):
                    failed.append(result)
        if failed:
            log.error(
                "vector bulk request partly failed",
                extra={"what": what, "failed": len(failed), "first": failed[0].get("error")},
            )
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE, code="search_unavailable")

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """OpenSearch failures as memvault errors (never an engine error to the user)."""
        try:
            yield
        except (NotFoundError, RequestError) as exc:
            log.error(
                "vector index refused a request",
                extra={"prefix": self.prefix, "error": str(exc)[:1000]},
            )
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE, code="search_unavailable") from exc
        except OpenSearchException as exc:
            log.warning(
                "vector index unavailable", extra={"prefix": self.prefix, "error": str(exc)[:500]}
            )
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE, code="search_unavailable") from exc
