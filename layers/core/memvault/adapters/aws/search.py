"""SearchIndex on OpenSearch (the AWS backend).

One index holds every account's notes. Tenant isolation is structural, never a ranking
hint: every document is routed by its account (so one account lives on one shard) and
every query carries ``routing`` *and* a ``term`` filter on ``account``.

Ranking is domain.ranking's formula, computed from the account's own statistics: a
shard's BM25 statistics (document counts, term frequencies, average field lengths) are
those of every account routed to it, so the engine's own ``_score`` would let one
account's notes move another's scores (ADR 0017). Instead each field has a ``tf``
subfield whose similarity scores a term ``boost × freq``, and a ``length`` subfield
(``token_count``) with its length in tokens; each query term is a ``script_score`` over a
``multi_match`` of the ``tf`` subfields with ranking.FIELD_WEIGHTS as boosts (so its
``_score`` is the term's weighted frequency F), returning ``ranking.term_relevance`` from
the account's idf and average length (``TERM_SCRIPT``); a bool query sums the terms, and a
``function_score`` multiplies the sum by the Painless ``RANKING_SCRIPT`` multiplier
``1 + RECENCY_WEIGHT × recency + LINK_WEIGHT × links`` from the doc's ``updated_at`` and
``inbound_links`` (``boost_mode: multiply``). Both scripts evaluate the same double
arithmetic in the same order as domain.ranking (and FTS5's bm25()); the engine keeps the
best ``limit`` matches by the final score over *all* matches, ties broken by path
(``ORDER BY score DESC, path``, like the SQLite backend), and the 0-1 score is
``ranking.score`` of it.

The account's statistics (its note count, its notes' total length, each term's note
count) come from one filtered aggregation request and are remembered per account in
``term_counts`` for TERM_COUNTS_MAX_AGE seconds, as recall's term counts always were: a
score can lag the account's own writes of the last minute, never follow another
account's.

User text is never query syntax: only ``domain.query.search_terms`` terms are sent, as a
``multi_match`` query string (analysed, never parsed), so no user text can make the
engine fail.

Text analysis is OpenSearch's ``english`` analyzer rebuilt as a custom analyzer (same
tokenizer and filters, checked token-for-token in the integration tests) with one char
filter in front that turns every character Python's ``re`` does not count as a word
character into a space. The standard tokenizer alone keeps ``deploy.md``, ``config.yaml``,
``node.js``, ``col:umn``, ``1,000`` or ``हिन्दी`` (letters joined by combining marks) as
single tokens, which the terms from ``search_terms`` (split at exactly those characters,
like the SQLite tokenizer) could never match; with the char filter the notes and the
query split alike. It costs indexing CPU on big bodies (about 2x the plain analyzer on a
256 KiB body), and each field is analysed three times (the field, ``tf``, ``length``).

The index is made (or checked) on first need, never at start (``EnsureOnce``, ADR 0031):
by ``create_index`` at deploy time, from the ops function or ``memvault init-search``, or
by the first operation that needs it when ``create_missing`` is on. An index made before
these subfields (no ``_meta.memvault_schema``, or an older one) is upgraded in place by
``create_index``: the similarity is added (the index is closed for that, a few
seconds), the subfields are added to the mapping, and an update-by-query task fills them
in the background; until it reaches a note, that note is not found. ``check`` refuses an
index still at an older schema.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Literal
from urllib.parse import urlsplit

from opensearchpy import (
    AWSV4SignerAuth,
    OpenSearch,
    RequestsHttpConnection,
    Urllib3HttpConnection,
)
from opensearchpy.exceptions import (
    ConnectionTimeout,
    NotFoundError,
    OpenSearchException,
    RequestError,
)

from memvault.adapters.aws.lazy import EnsureOnce
from memvault.domain import query as query_terms
from memvault.domain import ranking
from memvault.domain.markdown import SEARCH_BODY_LIMIT_BYTES
from memvault.domain.models import SearchDoc, SearchHit, SearchQuery
from memvault.domain.paths import fold
from memvault.errors import InvalidInput, ServiceUnavailable

__all__ = [
    "INDEX_BODY",
    "RANKING_SCRIPT",
    "SCHEMA_VERSION",
    "TERM_SCRIPT",
    "OpenSearchIndex",
    "doc_id",
    "make_client",
    "tag_keys",
]

log = logging.getLogger(__name__)

UNAVAILABLE_MESSAGE = (
    "search is unavailable right now; notes are safe and will be searchable again when it recovers"
)

SNIPPET_OPEN = "<mark>"
SNIPPET_CLOSE = "</mark>"
SNIPPET_CHARS = 120

# Highlighting re-analyses the body; OpenSearch refuses (the whole search fails) past
# index.highlight.max_analyzed_offset characters (default 1,000,000). Bodies are cut to
# SEARCH_BODY_LIMIT_BYTES of UTF-8, which is at most that many UTF-16 units, so the
# default is enough; the index states a bound with a 4x margin anyway.
MAX_ANALYZED_OFFSET = 4 * SEARCH_BODY_LIMIT_BYTES

# Bulk requests are cut to this many bytes (Amazon OpenSearch refuses HTTP bodies over
# 10 MiB on the smallest instance types); a 500-note reindex batch of 256 KiB bodies
# would otherwise be a single 128 MiB request.
BULK_MAX_BYTES = 5 * 1024 * 1024
# Bulk items the node rejected for back-pressure (HTTP 429) are retried this many times.
BULK_RETRIES = 3
BULK_BACKOFF_S = 0.25

# delete_by_query of a whole account (reindex) can take longer than one search.
CLEAR_TIMEOUT_S = 120.0

_ANALYZER = "memvault_english"

# The mapping's version, in its _meta: 2 added the ``tf`` and ``length`` subfields.
SCHEMA_VERSION = 2
_META = {"memvault_schema": SCHEMA_VERSION}
_TF_SIMILARITY = "memvault_tf"
# A term's score in a field is its frequency there times the query's boost: no shard
# statistic enters it (the similarity's script sees only this document and the query).
SIMILARITY: dict[str, Any] = {
    _TF_SIMILARITY: {"type": "scripted", "script": {"source": "return query.boost * doc.freq;"}}
}
TEXT_FIELDS = tuple(ranking.FIELD_WEIGHTS)
_SUBFIELDS: dict[str, Any] = {
    # Frequencies only: no positions or norms are needed to count.
    "tf": {
        "type": "text",
        "analyzer": _ANALYZER,
        "similarity": _TF_SIMILARITY,
        "index_options": "freqs",
        "norms": False,
    },
    # The tokens the field's analysis emits (stop words dropped are not counted), as
    # Lucene counts a field's length.
    "length": {"type": "token_count", "analyzer": _ANALYZER, "enable_position_increments": False},
}
_TF_FIELDS = [f"{name}.tf^{weight}" for name, weight in ranking.FIELD_WEIGHTS.items()]
_LENGTH_FIELDS = [f"{name}.length" for name in TEXT_FIELDS]

INDEX_SETTINGS: dict[str, Any] = {
    "index": {
        "number_of_shards": 1,
        "highlight": {"max_analyzed_offset": MAX_ANALYZED_OFFSET},
        "similarity": SIMILARITY,
    },
    "analysis": {
        "char_filter": {
            # Python's ``\w`` is exactly [\p{L}\p{N}_]: every other character separates
            # words here as it does in domain.query.search_terms (marks included, as
            # Python's \w excludes them). One character in, one out: highlight offsets
            # need no correction (bar astral symbols, which the char filter corrects).
            "memvault_word_chars": {
                "type": "pattern_replace",
                "pattern": r"[^\p{L}\p{N}_]",
                "replacement": " ",
            }
        },
        "filter": {
            # The built-in `english` analyzer, filter by filter.
            "memvault_english_possessive": {"type": "stemmer", "language": "possessive_english"},
            "memvault_english_stop": {"type": "stop", "stopwords": "_english_"},
            "memvault_english_stemmer": {"type": "stemmer", "language": "english"},
        },
        "analyzer": {
            _ANALYZER: {
                "type": "custom",
                "char_filter": ["memvault_word_chars"],
                "tokenizer": "standard",
                "filter": [
                    "memvault_english_possessive",
                    "lowercase",
                    "memvault_english_stop",
                    "memvault_english_stemmer",
                ],
            }
        },
    },
}

INDEX_MAPPINGS: dict[str, Any] = {
    "dynamic": "strict",
    "_meta": _META,
    # An index/update/delete without routing is refused rather than sent to a wrong shard.
    "_routing": {"required": True},
    "properties": {
        "account": {"type": "keyword"},
        "note_id": {"type": "keyword"},
        "path": {
            "type": "text",
            "analyzer": _ANALYZER,
            "fields": {"keyword": {"type": "keyword"}, **_SUBFIELDS},
        },
        "title": {"type": "text", "analyzer": _ANALYZER, "fields": _SUBFIELDS},
        # Original spellings, kept in _source for display.
        "tags": {"type": "text", "analyzer": _ANALYZER, "fields": _SUBFIELDS},
        # Folded tags and their ancestors: a filter on "project" matches "project/alpha".
        "tag_keys": {"type": "keyword"},
        "body": {"type": "text", "analyzer": _ANALYZER, "fields": _SUBFIELDS},
        "updated_at": {"type": "double"},
        "inbound_links": {"type": "integer"},
    },
}

INDEX_BODY: dict[str, Any] = {"settings": INDEX_SETTINGS, "mappings": INDEX_MAPPINGS}

# ranking.term_relevance in Painless, from the account's statistics (params) and the
# note's token counts: same operations in the same order, in doubles. ``_score`` is F,
# the term's frequency in the note weighted by field (the tf similarity's boost x freq).
TERM_SCRIPT = """
double d = params.offset;
for (def n : doc['path.length']) { d += n; }
for (def n : doc['title.length']) { d += n; }
for (def n : doc['tags.length']) { d += n; }
for (def n : doc['body.length']) { d += n; }
double f = _score;
double k = params.k1 * (1 - params.b + params.b * d / params.avgdl);
return params.idf * ((f * (params.k1 + 1.0)) / (f + k));
""".strip()

# ranking.multiplier in Painless: same operations in the same order, in doubles.
RANKING_SCRIPT = """
double recency = 0.0;
if (doc['updated_at'].size() != 0) {
  double ageDays = Math.max(0.0, params.now - doc['updated_at'].value) / params.seconds_per_day;
  recency = 1.0 / (1.0 + ageDays / params.half_life_days);
}
double n = 0.0;
if (doc['inbound_links'].size() != 0) {
  n = Math.max(0L, doc['inbound_links'].value);
}
double links = n / (n + params.link_saturation);
return 1.0 + params.recency_weight * recency + params.link_weight * links;
""".strip()

_SOURCE_FIELDS = ["note_id", "path", "title", "tags", "updated_at"]
_REFRESH_VALUES = ("wait_for", "true", "false")


def doc_id(account_id: str, path: str) -> str:
    """The document id of a note: one per (account, path), opaque to both."""
    return hashlib.sha256(f"{account_id}\0{path}".encode()).hexdigest()


def tag_keys(tags: Sequence[str]) -> list[str]:
    """Folded tags and every ancestor: ``Project/Alpha`` -> ``project/alpha``, ``project``.

    A filter ``t`` matches a tag ``k`` exactly when ``k == t`` or ``k`` starts with
    ``t + "/"`` (the SQLite backend's test), i.e. when ``t`` is ``k`` or ``k`` cut before
    one of its slashes.
    """
    keys: dict[str, None] = {}
    for tag in tags:
        key = fold(tag)
        keys[key] = None
        for i, ch in enumerate(key):
            if ch == "/" and i > 0:
                keys[key[:i]] = None
    return list(keys)


def _tag_filter(tag: str) -> str:
    return fold(tag).lstrip("#")


def _term_match(term: str) -> dict[str, Any]:
    """Notes holding ``term`` in a searched field; scored (by the tf similarity) with its
    weighted frequency F: the sum over fields of weight x occurrences."""
    return {"multi_match": {"query": term, "fields": _TF_FIELDS, "type": "most_fields"}}


def _term_clause(term: str, weight: float, avg_length: float) -> dict[str, Any]:
    """Notes holding ``term``, scored by its share of the relevance (TERM_SCRIPT)."""
    return {
        "script_score": {
            "query": _term_match(term),
            "script": {
                "lang": "painless",
                "source": TERM_SCRIPT,
                "params": {
                    "idf": float(weight),
                    "avgdl": float(avg_length),
                    "offset": float(ranking.LENGTH_OFFSET),
                    "k1": float(ranking.BM25_K1),
                    "b": float(ranking.BM25_B),
                },
            },
        }
    }


def make_client(
    url: str, *, auth: Literal["sigv4", "none"], region: str | None, timeout: float
) -> OpenSearch:
    """An OpenSearch client for ``url``.

    ``sigv4`` signs every request for Amazon OpenSearch Service (service ``es``) with the
    default boto3 credential chain (refreshed role credentials included); ``none`` is
    plain HTTP(S) for a local node. ``timeout`` is the per-request timeout in seconds.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"the OpenSearch URL must be http(s)://host[:port], not {url!r}")
    use_ssl = parts.scheme == "https"
    host: dict[str, Any] = {
        "host": parts.hostname,
        "port": parts.port or (443 if use_ssl else 80),
    }
    if parts.path.strip("/"):
        host["url_prefix"] = parts.path.rstrip("/")
    common: dict[str, Any] = {
        "hosts": [host],
        "use_ssl": use_ssl,
        "verify_certs": use_ssl,
        "ssl_show_warn": use_ssl,
        "timeout": timeout,
        "max_retries": 2,
        "retry_on_timeout": False,
        "retry_on_status": (502, 503, 504),
    }
    if auth == "none":
        return OpenSearch(connection_class=Urllib3HttpConnection, **common)
    if auth != "sigv4":
        raise ValueError(f"unknown OpenSearch auth {auth!r}; use 'sigv4' or 'none'")
    import boto3

    session = boto3.Session()
    credentials = session.get_credentials()
    if credentials is None:
        raise ValueError("no AWS credentials found to sign OpenSearch requests (sigv4)")
    signing_region = region or session.region_name
    if not signing_region:
        raise ValueError("an AWS region is needed to sign OpenSearch requests (sigv4)")
    return OpenSearch(
        http_auth=AWSV4SignerAuth(credentials, signing_region, "es"),
        connection_class=RequestsHttpConnection,
        **common,
    )


def _describe_host(client: OpenSearch) -> str:
    try:
        first = client.transport.hosts[0]
        return f"{first['host']}:{first['port']}"
    except (AttributeError, IndexError, KeyError, TypeError):
        return "the configured OpenSearch host"


class _BulkAction:
    __slots__ = ("lines", "size")

    def __init__(self, *parts: Mapping[str, Any]) -> None:
        self.lines = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in parts)
        self.size = len(self.lines.encode("utf-8"))


class OpenSearchIndex:
    """memvault's SearchIndex on one OpenSearch index shared by every account."""

    def __init__(
        self,
        client: OpenSearch,
        index: str,
        *,
        refresh: str = "wait_for",
        create_missing: bool = False,
        shards: int = 1,
        replicas: int | None = None,
    ) -> None:
        if refresh not in _REFRESH_VALUES:
            raise ValueError(f"refresh must be one of {_REFRESH_VALUES}, not {refresh!r}")
        self.client = client
        self.index = index
        self.refresh = refresh
        self.host = _describe_host(client)
        self.term_counts = query_terms.TermCounts()
        self._exists = False  # set once the index is seen, so writes never auto-create it
        # Nothing is sent at construction: the first operation that needs the index checks
        # it (or, with create_missing, creates it) once, and a failure is retried only
        # after a pause (adapters/aws/lazy.py, ADR 0031).
        # Only a node that timed out pauses the checks (the next calls would each wait out
        # the timeout again); a refused connection fails at once anyway, and a missing
        # index is asked about again on the next call (one HEAD), so it is found the moment
        # the ops path makes it.
        self._ready = EnsureOnce(
            (lambda: self.create_index(shards=shards, replicas=replicas))
            if create_missing
            else self.check,
            pause_on=_timed_out,
        )

    # ------------------------------------------------------------------ admin
    def create_index(self, *, shards: int = 1, replicas: int | None = None) -> bool:
        """Create the index with memvault's mapping if it is missing, or upgrade one made
        by an older memvault (``upgrade``). True when created."""
        with self._errors():
            if self.client.indices.exists(index=self.index):
                self.upgrade()
                self._exists = True
                return False
            body = json.loads(json.dumps(INDEX_BODY))
            body["settings"]["index"]["number_of_shards"] = shards
            if replicas is not None:
                body["settings"]["index"]["number_of_replicas"] = replicas
            try:
                self.client.indices.create(index=self.index, body=body)
            except RequestError as exc:
                if exc.error != "resource_already_exists_exception":
                    raise
                self._exists = True
                return False  # created concurrently
        self._exists = True
        return True

    def schema(self) -> int:
        """The schema version of the existing index's mapping (1: before versions)."""
        with self._errors():
            found: dict[str, Any] = self.client.indices.get_mapping(index=self.index)
        # Keyed by the concrete index (the configured name may be an alias of it).
        mapping: dict[str, Any] = _first(found).get("mappings") or {}
        return int((mapping.get("_meta") or {}).get("memvault_schema", 1))

    def upgrade(self) -> bool:
        """Bring an index made by an older memvault to SCHEMA_VERSION, in place; True when
        it had to. Safe to run again, and from several processes at once.

        The tf similarity can only be added to a closed index: the index is closed,
        given it and opened again (searches and writes fail meanwhile, a few seconds;
        writes wait in the search outbox). The new subfields are added to the mapping,
        and an update-by-query task, left running, re-indexes each note without them from
        its stored source; until it reaches a note, that note is not found.
        """
        if self.schema() >= SCHEMA_VERSION:
            return False
        log.warning("upgrading the search index", extra={"index": self.index})
        with self._errors():
            indices: dict[str, Any] = self.client.indices.get_settings(index=self.index)
            settings: dict[str, Any] = _first(indices).get("settings") or {}
            if _TF_SIMILARITY not in (settings.get("index", {}).get("similarity") or {}):
                self.client.indices.close(index=self.index)
                try:
                    self.client.indices.put_settings(
                        index=self.index, body={"index": {"similarity": SIMILARITY}}
                    )
                finally:
                    self.client.indices.open(index=self.index, wait_for_active_shards="1")
                self.client.cluster.health(
                    index=self.index,
                    wait_for_status="yellow",
                    params={"timeout": "30s"},
                    request_timeout=max(35.0, self._timeout()),
                )
            properties = INDEX_MAPPINGS["properties"]
            self.client.indices.put_mapping(
                index=self.index,
                body={"_meta": _META, "properties": {f: properties[f] for f in TEXT_FIELDS}},
            )
            self.client.update_by_query(
                index=self.index,
                body={"query": {"bool": {"must_not": [{"exists": {"field": "body.length"}}]}}},
                conflicts="proceed",
                refresh=True,
                wait_for_completion=False,
            )
        return True

    def reachable(self, timeout: float) -> bool:
        """Whether the node answers within about ``timeout`` seconds (never raises): a
        cheap probe before optional work, such as an idle moment's outbox drain."""
        try:
            answered = bool(self.client.ping(request_timeout=timeout))
        except Exception:
            return False
        if answered:
            self._ready.end_pause()  # the node is back: the next write checks at once
        return answered

    def drop_index(self) -> None:
        """Drop the index and everything in it (tests, teardown). Missing is fine."""
        with self._errors():
            self.client.indices.delete(index=self.index, ignore_unavailable=True)
        self._exists = False

    def check(self) -> None:
        """Raise ServiceUnavailable unless the node answers and the index exists, at this
        memvault's schema."""
        try:
            with self._errors():
                exists = bool(self.client.indices.exists(index=self.index))
            if exists and self.schema() < SCHEMA_VERSION:
                raise ServiceUnavailable(
                    f"the search index {self.index!r} on {self.host} was made by an older"
                    " memvault; run `memvault init-search` to upgrade it",
                    code="search_index_outdated",
                    index=self.index,
                    host=self.host,
                )
        except ServiceUnavailable as exc:
            if exc.code in ("search_index_missing", "search_index_outdated"):
                raise
            raise ServiceUnavailable(
                f"the search engine at {self.host} is unreachable or failing, so the search"
                f" index {self.index!r} cannot be checked ({exc.__cause__.__class__.__name__})",
                code="search_unavailable",
                index=self.index,
                host=self.host,
            ) from exc.__cause__
        if not exists:
            raise self._missing()
        self._exists = True

    # ------------------------------------------------------------------ writes
    def upsert(self, account_id: str, docs: Sequence[SearchDoc]) -> None:
        if not docs:
            return
        actions = [
            _BulkAction(
                {"index": {"_id": doc_id(account_id, d.path), "routing": account_id}},
                self._source(account_id, d),
            )
            for d in docs
        ]
        self._bulk(actions, "update the search index")

    def delete(self, account_id: str, paths: Collection[str]) -> None:
        if not paths:
            return
        actions = [
            _BulkAction({"delete": {"_id": doc_id(account_id, p), "routing": account_id}})
            for p in dict.fromkeys(paths)
        ]
        self._bulk(actions, "remove notes from the search index")

    def set_inbound(self, account_id: str, counts: Mapping[str, int]) -> None:
        if not counts:
            return
        actions = [
            _BulkAction(
                {
                    "update": {
                        "_id": doc_id(account_id, p),
                        "routing": account_id,
                        "retry_on_conflict": 3,
                    }
                },
                {"doc": {"inbound_links": max(0, int(n))}},
            )
            for p, n in counts.items()
        ]
        self._bulk(actions, "update link counts in the search index")

    def clear(self, account_id: str) -> None:
        with self._errors():
            resp = self.client.delete_by_query(
                index=self.index,
                body={"query": {"bool": {"filter": [{"term": {"account": account_id}}]}}},
                routing=account_id,
                conflicts="proceed",
                refresh=self.refresh != "false",
                request_timeout=max(CLEAR_TIMEOUT_S, self._timeout()),
            )
        failures = resp.get("failures") or []
        if failures or resp.get("timed_out"):
            log.error(
                "search index clear failed",
                extra={"account_id": account_id, "failures": failures[:3]},
            )
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE, code="search_unavailable")

    # ------------------------------------------------------------------ search
    def search(self, account_id: str, query: SearchQuery, *, now: float) -> list[SearchHit]:
        terms = query_terms.search_terms(query.text)
        if not terms or query.limit <= 0:
            return []
        try:
            self._ensure_index()
        except ServiceUnavailable as exc:
            if exc.code != "search_unavailable":
                raise  # missing or outdated: the message says what to run
            raise ServiceUnavailable(
                UNAVAILABLE_MESSAGE, code="search_unavailable", index=self.index, host=self.host
            ) from exc
        corpus, counts = self.statistics(account_id, terms)
        if corpus.notes <= 0:
            return []
        selection = query_terms.TermSelection.every(terms)
        if query.skip_common_terms and len(terms) > 1:
            selection = query_terms.selection(terms, counts, corpus.notes)
        # A term no note holds adds nothing to any note: it is left out of the query and
        # of its weight.
        selection = query_terms.held(selection, counts)
        if not selection.matching:
            return []  # no note holds any of them
        weights = {t: ranking.idf(corpus.notes, counts[t]) for t in selection.terms}
        body = self.search_body(account_id, query, selection, weights, corpus, now=now)
        with self._errors(searching=True):
            resp = self.client.search(index=self.index, body=body, routing=account_id)
        weight = ranking.query_weight(weights.values())
        return [self._hit(h, weight) for h in resp["hits"]["hits"]]

    def statistics(
        self, account_id: str, terms: Sequence[str]
    ) -> tuple[query_terms.Corpus, dict[str, int]]:
        """The account's corpus (its note count and total length) and how many of its
        notes hold each term, from ``term_counts`` or one request counting what it does
        not know (a term no note holds is counted again each time)."""
        corpus, counts = self.term_counts.lookup_corpus(account_id, terms)
        unknown = [term for term in dict.fromkeys(terms) if term not in counts]
        if corpus is None or unknown:
            corpus, fresh = self._count(account_id, unknown)
            self.term_counts.remember(account_id, corpus, fresh)
            counts.update(fresh)
        return corpus, counts

    def _count(
        self, account_id: str, terms: list[str]
    ) -> tuple[query_terms.Corpus, dict[str, int]]:
        """One request: the account's notes, their total length in tokens, and per term
        those holding it in a searched field. Confined to the account, as every query."""
        aggs: dict[str, Any] = {
            f"len{i}": {"sum": {"field": field}} for i, field in enumerate(_LENGTH_FIELDS)
        }
        for i, term in enumerate(terms):
            aggs[f"t{i}"] = {"filter": _term_match(term)}
        body = {
            "size": 0,
            "track_total_hits": True,
            "query": {"bool": {"filter": [{"term": {"account": account_id}}]}},
            "aggs": aggs,
        }
        with self._errors(searching=True):
            resp = self.client.search(index=self.index, body=body, routing=account_id)
        found = resp.get("aggregations") or {}
        tokens = sum(
            round(float((found.get(f"len{i}") or {}).get("value") or 0.0))
            for i in range(len(_LENGTH_FIELDS))
        )
        corpus = query_terms.Corpus(int(resp["hits"]["total"]["value"]), tokens)
        return corpus, {term: int(found[f"t{i}"]["doc_count"]) for i, term in enumerate(terms)}

    def search_body(
        self,
        account_id: str,
        query: SearchQuery,
        selection: query_terms.TermSelection,
        weights: Mapping[str, float],
        corpus: query_terms.Corpus,
        *,
        now: float,
        scored: bool = True,
    ) -> dict[str, Any]:
        """The request body of a search; ``scored=False`` leaves out the multiplier
        (relevance alone: what the ranking formula multiplies). ``weights`` holds each
        selected term's idf, and ``corpus`` the account's totals (its average length)."""
        relevance = self._relevance_query(account_id, query, selection, weights, corpus)
        if scored:
            script = {
                "lang": "painless",
                "source": RANKING_SCRIPT,
                "params": {
                    "now": float(now),
                    "seconds_per_day": float(ranking.SECONDS_PER_DAY),
                    "half_life_days": float(ranking.RECENCY_HALF_LIFE_DAYS),
                    "link_saturation": float(ranking.LINK_SATURATION),
                    "recency_weight": float(ranking.RECENCY_WEIGHT),
                    "link_weight": float(ranking.LINK_WEIGHT),
                },
            }
            top: dict[str, Any] = {
                "function_score": {
                    "query": relevance,
                    "functions": [{"script_score": {"script": script}}],
                    "boost_mode": "multiply",
                }
            }
        else:
            top = relevance
        body: dict[str, Any] = {
            "query": top,
            "size": query.limit,
            "sort": [{"_score": {"order": "desc"}}, {"path.keyword": {"order": "asc"}}],
            "track_total_hits": False,
            "_source": _SOURCE_FIELDS,
        }
        if query.snippets:
            body["highlight"] = {
                "type": "unified",
                "encoder": "html",
                "pre_tags": [SNIPPET_OPEN],
                "post_tags": [SNIPPET_CLOSE],
                "fields": {
                    "body": {
                        # The query searches the tf subfields; marks are the body's hits.
                        "highlight_query": {"match": {"body": " ".join(selection.terms)}},
                        "fragment_size": SNIPPET_CHARS,
                        "number_of_fragments": 1,
                        "no_match_size": SNIPPET_CHARS,
                    }
                },
            }
        return body

    # ------------------------------------------------------------------ internals
    def _relevance_query(
        self,
        account_id: str,
        query: SearchQuery,
        selection: query_terms.TermSelection,
        weights: Mapping[str, float],
        corpus: query_terms.Corpus,
    ) -> dict[str, Any]:
        """The relevance of the notes holding any matching term: the sum of one clause per
        term (a bool query's score is the sum of its matching clauses'). Scoring terms are
        optional clauses: they add their score to those notes and bring in none of their
        own, since the query has a ``must``."""
        avg_length = ranking.average_length(
            corpus.notes, (corpus.tokens or 0) + corpus.notes * ranking.LENGTH_OFFSET
        )

        def clauses(terms: Sequence[str]) -> list[dict[str, Any]]:
            return [_term_clause(t, weights[t], avg_length) for t in terms]

        filters: list[dict[str, Any]] = [{"term": {"account": account_id}}]
        if query.folder:
            filters.append({"prefix": {"path.keyword": {"value": query.folder}}})
        if query.tag and (tag := _tag_filter(query.tag)):
            filters.append({"term": {"tag_keys": tag}})
        relevance: dict[str, Any] = {
            "filter": filters,
            "must": [{"bool": {"should": clauses(selection.matching), "minimum_should_match": 1}}],
        }
        if selection.scoring:
            relevance["should"] = clauses(selection.scoring)
        return {"bool": relevance}

    @staticmethod
    def _source(account_id: str, doc: SearchDoc) -> dict[str, Any]:
        return {
            "account": account_id,
            "note_id": doc.note_id,
            "path": doc.path,
            "title": doc.title,
            "tags": list(doc.tags),
            "tag_keys": tag_keys(doc.tags),
            "body": doc.body,
            "updated_at": float(doc.updated_at),
            "inbound_links": max(0, int(doc.inbound_links)),
        }

    @staticmethod
    def _hit(hit: Mapping[str, Any], weight: float) -> SearchHit:
        """A hit with its 0-1 score (``weight``: the query's, ranking.query_weight)."""
        src = hit["_source"]
        fragments = (hit.get("highlight") or {}).get("body") or []
        score = hit.get("_score")
        if score is None:  # sorted by _score, so it is always tracked; be safe anyway
            sort = hit.get("sort") or [0.0]
            score = sort[0]
        return SearchHit(
            note_id=str(src["note_id"]),
            path=str(src["path"]),
            title=str(src.get("title") or ""),
            tags=tuple(str(t) for t in src.get("tags") or ()),
            score=ranking.score(float(score), weight),
            snippet=str(fragments[0]) if fragments else "",
            updated_at=float(src["updated_at"]),
        )

    def _timeout(self) -> float:
        try:
            return float(self.client.transport.kwargs.get("timeout") or 0.0)
        except (AttributeError, TypeError, ValueError):
            return 0.0

    def _missing(self) -> ServiceUnavailable:
        return ServiceUnavailable(
            f"the search index {self.index!r} does not exist on {self.host};"
            " run `memvault init-search`",
            code="search_index_missing",
            index=self.index,
            host=self.host,
        )

    @contextmanager
    def _errors(self, *, searching: bool = False) -> Iterator[None]:
        """OpenSearch failures as memvault errors (never an engine error to the user)."""
        try:
            yield
        except NotFoundError as exc:
            if exc.error == "index_not_found_exception":
                self._exists = False
                raise self._missing() from exc
            log.error("search engine 404", extra={"index": self.index, "error": str(exc)})
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE, code="search_unavailable") from exc
        except RequestError as exc:
            if exc.error == "index_closed_exception":  # closed for an upgrade, briefly
                log.warning("search index closed", extra={"index": self.index})
                raise ServiceUnavailable(
                    UNAVAILABLE_MESSAGE, code="search_unavailable", index=self.index
                ) from exc
            log.error("search engine refused a request", extra={"error": str(exc)[:2000]})
            if searching:
                raise InvalidInput(
                    "the search text could not be searched", code="invalid_query"
                ) from exc
            raise ServiceUnavailable(UNAVAILABLE_MESSAGE, code="search_unavailable") from exc
        except OpenSearchException as exc:
            # ConnectionError, ConnectionTimeout, TransportError (5xx, 429, 401/403)...
            log.warning(
                "search engine unavailable",
                extra={"index": self.index, "host": self.host, "error": str(exc)[:500]},
            )
            raise ServiceUnavailable(
                UNAVAILABLE_MESSAGE, code="search_unavailable", index=self.index, host=self.host
            ) from exc

    def _ensure_index(self) -> None:
        # Writing to a missing index would auto-create it with a dynamic (wrong) mapping.
        if not self._exists:
            self._ready.reset()
            self._ready()

    def _bulk(self, actions: Sequence[_BulkAction], what: str) -> None:
        self._ensure_index()
        pending = list(actions)
        for attempt in range(BULK_RETRIES + 1):
            retry: list[_BulkAction] = []
            failed: list[Mapping[str, Any]] = []
            chunks = list(_chunks(pending))
            for number, chunk in enumerate(chunks):
                # Every action of a call shares one routing value, so one shard: the
                # refresh after the last chunk makes all of them visible.
                last = number == len(chunks) - 1
                with self._errors():
                    resp = self.client.bulk(
                        index=self.index,
                        body="".join(a.lines for a in chunk),
                        refresh=self.refresh if last else "false",
                    )
                if not resp.get("errors"):
                    continue
                for action, item in zip(chunk, resp["items"], strict=True):
                    op, result = next(iter(item.items()))
                    status = int(result.get("status", 0))
                    if status < 300:
                        continue
                    if status == 404 and op in ("delete", "update"):
                        continue  # already gone / not indexed: nothing to do
                    if status == 429:
                        retry.append(action)
                    else:
                        failed.append(result)
            if failed:
                log.error(
                    "search bulk request partly failed",
                    extra={"what": what, "failed": len(failed), "first": failed[0]},
                )
                raise ServiceUnavailable(
                    UNAVAILABLE_MESSAGE, code="search_unavailable", index=self.index
                )
            if not retry:
                return
            pending = retry
            if attempt < BULK_RETRIES:
                time.sleep(BULK_BACKOFF_S * 2**attempt)
        log.error("search bulk request throttled", extra={"what": what, "left": len(pending)})
        raise ServiceUnavailable(UNAVAILABLE_MESSAGE, code="search_unavailable", index=self.index)


def _timed_out(exc: Exception) -> bool:
    """Whether ``exc`` (a ServiceUnavailable from ``_errors`` or ``check``) is a timeout."""
    cause = exc.__cause__
    while cause is not None and not isinstance(cause, ConnectionTimeout):
        cause = cause.__cause__
    return getattr(exc, "code", None) == "search_unavailable" and cause is not None


def _first(by_index: Mapping[str, Any]) -> dict[str, Any]:
    """The one index's entry of an answer keyed by index name ({} when there is none)."""
    for value in by_index.values():
        return dict(value)
    return {}


def _chunks(actions: Sequence[_BulkAction]) -> Iterator[list[_BulkAction]]:
    chunk: list[_BulkAction] = []
    size = 0
    for action in actions:
        if chunk and size + action.size > BULK_MAX_BYTES:
            yield chunk
            chunk, size = [], 0
        chunk.append(action)
        size += action.size
    if chunk:
        yield chunk
