"""OpenSearchIndex against a real OpenSearch node (the OpenSearch test tier).

Start a node with ``scripts/opensearch/start.sh`` and export MEMVAULT_TEST_OPENSEARCH_URL
(see tests/opensearch_node.py). Without it the node-backed tests skip, or fail when
CI=true. Every test works in its own account inside one index made for this module
(dropped at the end), so tests never see each other's notes.
"""

from __future__ import annotations

import copy
import os
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opensearchpy import AWSV4SignerAuth, RequestsHttpConnection
from opensearchpy.exceptions import RequestError

from memvault.adapters.aws import search as search_module
from memvault.adapters.aws.search import (
    INDEX_BODY,
    MAX_ANALYZED_OFFSET,
    SCHEMA_VERSION,
    OpenSearchIndex,
    doc_id,
    make_client,
    tag_keys,
)
from memvault.adapters.sqlite.db import Database
from memvault.adapters.sqlite.search import SqliteSearchIndex
from memvault.domain import ranking
from memvault.domain.markdown import SEARCH_BODY_LIMIT_BYTES
from memvault.domain.models import SearchDoc, SearchHit, SearchQuery
from memvault.domain.query import TermSelection, held, search_terms
from memvault.errors import InvalidInput, ServiceUnavailable
from tests.support.hostile_queries import HOSTILE_QUERIES
from tests.support.opensearch import opensearch_url, require_reason

NOW = 1_780_000_000.0
DAY = 86_400.0


# ---------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def url() -> str:
    found = opensearch_url()
    if found is None:
        reason = require_reason()
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail(f"CI=true but the OpenSearch tier cannot run: {reason}")
        pytest.skip(reason)
    return found


@pytest.fixture(scope="module")
def index(url: str) -> Iterator[OpenSearchIndex]:
    client = make_client(url, auth="none", region=None, timeout=30.0)
    # refresh="true" keeps the suite fast (wait_for waits up to the 1 s refresh interval
    # per write); test_default_refresh_makes_writes_visible covers the default.
    ix = OpenSearchIndex(client, f"memvault-test-{uuid.uuid4().hex[:12]}", refresh="true")
    assert ix.create_index(replicas=0) is True
    assert ix.create_index(replicas=0) is False  # idempotent
    try:
        yield ix
    finally:
        ix.drop_index()
        client.close()


@pytest.fixture
def acct() -> str:
    return f"acct-{uuid.uuid4().hex[:10]}"


def doc(
    path: str,
    body: str,
    *,
    title: str | None = None,
    tags: tuple[str, ...] = (),
    updated_at: float = NOW,
    inbound: int = 0,
) -> SearchDoc:
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    return SearchDoc(
        note_id=f"id:{path}",
        path=path,
        title=stem if title is None else title,
        tags=tags,
        body=body,
        updated_at=updated_at,
        inbound_links=inbound,
    )


def search(
    ix: OpenSearchIndex,
    account: str,
    text: str,
    *,
    folder: str = "",
    tag: str | None = None,
    limit: int = 10,
    now: float = NOW,
) -> list[SearchHit]:
    return ix.search(account, SearchQuery(text, folder=folder, tag=tag, limit=limit), now=now)


def paths(hits: list[SearchHit]) -> list[str]:
    return [h.path for h in hits]


def relevance(ix: OpenSearchIndex, account: str, text: str, limit: int = 100) -> dict[str, float]:
    """path -> the BM25 relevance alone (the same query without the multiplier)."""
    terms = search_terms(text)
    corpus, counts = ix.statistics(account, terms)
    selection = held(TermSelection.every(terms), counts)
    weights = {t: ranking.idf(corpus.notes, counts[t]) for t in selection.terms}
    body = ix.search_body(
        account, SearchQuery(text, limit=limit), selection, weights, corpus, now=NOW, scored=False
    )
    resp: dict[str, Any] = ix.client.search(index=ix.index, body=body, routing=account)
    return {h["_source"]["path"]: float(h["_score"]) for h in resp["hits"]["hits"]}


def expected_scores(
    ix: OpenSearchIndex, docs: list[SearchDoc], text: str, now: float = NOW
) -> dict[str, float]:
    """path -> the 0-1 score domain.ranking defines, computed here in Python over ``docs``
    alone (one account's notes), from the tokens the node's analyzer gives."""

    def tokens(field: str, values: tuple[str, ...] | list[str]) -> list[str]:
        out: list[str] = []
        for value in values:
            body = {"field": field, "text": value}
            out += [
                t["token"] for t in ix.client.indices.analyze(index=ix.index, body=body)["tokens"]
            ]
        return out

    fields = {
        d.path: {
            "path": tokens("path", [d.path]),
            "title": tokens("title", [d.title]),
            "tags": tokens("tags", list(d.tags)),
            "body": tokens("body", [d.body]),
        }
        for d in docs
    }
    length = {p: sum(map(len, f.values())) + ranking.LENGTH_OFFSET for p, f in fields.items()}
    avgdl = ranking.average_length(len(docs), sum(length.values()))

    def freq(path: str, term: str) -> float:
        wanted = tokens("body", [term])
        return sum(
            ranking.FIELD_WEIGHTS[name] * sum(found.count(t) for t in wanted)
            for name, found in fields[path].items()
        )

    terms = [t for t in search_terms(text) if any(freq(d.path, t) for d in docs)]
    idf = {t: ranking.idf(len(docs), sum(1 for d in docs if freq(d.path, t))) for t in terms}
    weight = ranking.query_weight(idf.values())
    scores = {}
    for d in docs:
        rel = sum(
            ranking.term_relevance(idf[t], f, length[d.path], avgdl)
            for t in terms
            if (f := freq(d.path, t))
        )
        if rel:
            final = ranking.final_score(rel, d.updated_at, d.inbound_links, now)
            scores[d.path] = ranking.score(final, weight)
    return scores


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ---------------------------------------------------------------------- basics
def test_upsert_search_delete_clear(index: OpenSearchIndex, acct: str) -> None:
    index.upsert(
        acct,
        [
            doc("a.md", "pomegranate seeds", title="Fruit", tags=("Food/Fruit", "todo")),
            doc("b.md", "pomegranate juice", updated_at=NOW - 5 * DAY, inbound=2),
            doc("c.md", "nothing related"),
        ],
    )
    hits = search(index, acct, "pomegranate")
    assert sorted(paths(hits)) == ["a.md", "b.md"]
    a = next(h for h in hits if h.path == "a.md")
    assert a.note_id == "id:a.md"
    assert a.title == "Fruit"
    assert a.tags == ("Food/Fruit", "todo")  # original spelling
    assert a.updated_at == NOW
    assert isinstance(a.score, float) and a.score > 0

    # Upsert replaces (same account + path = same document), never duplicates.
    index.upsert(acct, [doc("a.md", "now about quinces", title="Fruit")])
    assert paths(search(index, acct, "pomegranate")) == ["b.md"]
    assert paths(search(index, acct, "quinces")) == ["a.md"]

    index.delete(acct, ["b.md", "never-indexed.md"])  # a missing path is ignored
    assert search(index, acct, "pomegranate") == []
    index.delete(acct, [])  # no-op

    index.clear(acct)
    assert search(index, acct, "quinces") == []
    assert search(index, acct, "nothing") == []
    index.clear(acct)  # clearing an empty account is fine


def test_default_refresh_makes_writes_visible(index: OpenSearchIndex, acct: str) -> None:
    ix = OpenSearchIndex(index.client, index.index)  # refresh="wait_for"
    assert ix.refresh == "wait_for"
    ix.upsert(acct, [doc("n.md", "durian")])
    assert paths(search(ix, acct, "durian")) == ["n.md"]
    ix.delete(acct, ["n.md"])
    assert search(ix, acct, "durian") == []
    ix.upsert(acct, [doc("m.md", "durian")])
    ix.clear(acct)
    assert search(ix, acct, "durian") == []


def test_text_without_terms_returns_nothing(index: OpenSearchIndex, acct: str) -> None:
    index.upsert(acct, [doc("n.md", "anything")])
    assert search(index, acct, "!!! ??? ...") == []


def test_limit_is_respected(index: OpenSearchIndex, acct: str) -> None:
    index.upsert(acct, [doc(f"n{i}.md", "lychee") for i in range(7)])
    assert len(search(index, acct, "lychee", limit=3)) == 3
    assert len(search(index, acct, "lychee", limit=100)) == 7


def test_english_stemming(index: OpenSearchIndex, acct: str) -> None:
    index.upsert(acct, [doc("n.md", "The migrations were running slowly")])
    assert paths(search(index, acct, "migration run")) == ["n.md"]
    index.upsert(acct, [doc("m.md", "one migration run")])
    assert sorted(paths(search(index, acct, "migrations running"))) == ["m.md", "n.md"]


def test_analyzer_is_english_plus_word_splitting(index: OpenSearchIndex, acct: str) -> None:
    def tokens(text: str, **how: str) -> list[str]:
        resp = index.client.indices.analyze(index=index.index, body={"text": text, **how})
        return [t["token"] for t in resp["tokens"]]

    plain = (
        "The quick brown foxes were jumping over the lazy dogs' kennels; John is running "
        "migrations in Zürich with émigrés 日本語 and running_totals"
    )
    # Token for token the built-in english analyzer on text without glued punctuation...
    assert tokens(plain, field="body") == tokens(plain, analyzer="english")
    # ...but tokens glued by '.', ':', ',', "'" are split as search_terms splits queries.
    glued = "guides/deploy.md config.yaml col:umn 1,000 John's"
    assert tokens(glued, analyzer="english") == [
        "guid",
        "deploy.md",
        "config.yaml",
        "col:umn",
        "1,000",
        "john",
    ]
    assert tokens(glued, field="path") == [
        "guid",
        "deploi",
        "md",
        "config",
        "yaml",
        "col",
        "umn",
        "1",
        "000",
        "john",
        "s",
    ]
    # The index splits words exactly where search_terms splits the query.
    mixed = "Re: v1.2.3 of node.js — it's 日本語テキスト, हिन्दी लेख and naïve façades_x; 🎉ok"
    query_side = {t for term in search_terms(mixed) for t in tokens(term, field="body")}
    assert query_side == set(tokens(mixed, field="body"))
    # Tokens glued by '.', ':', ',' are split like search_terms splits the query.
    index.upsert(
        acct,
        [
            doc("infra/Kubernetes.md", "nothing else", title="Cluster"),
            doc("c.md", "edit config.yaml and col:umn and 1,000", title="Cfg"),
        ],
    )
    assert paths(search(index, acct, "kubernetes")) == ["infra/Kubernetes.md"]
    assert paths(search(index, acct, "config.yaml")) == ["c.md"]
    assert paths(search(index, acct, "yaml")) == ["c.md"]
    assert paths(search(index, acct, "umn")) == ["c.md"]


# ---------------------------------------------------------------------- ranking
def test_title_hit_outranks_body_hit(index: OpenSearchIndex, acct: str) -> None:
    index.upsert(
        acct,
        [
            doc("body.md", "a note about deploying things", title="Notes"),
            doc("title.md", "a note about other things", title="Deploying"),
        ],
    )
    assert paths(search(index, acct, "deploying")) == ["title.md", "body.md"]


def test_recency_breaks_ties(index: OpenSearchIndex, acct: str) -> None:
    index.upsert(
        acct,
        [
            doc("old.md", "kumquat notes", updated_at=NOW - 90 * DAY),
            doc("new.md", "kumquat notes", updated_at=NOW),
        ],
    )
    hits = search(index, acct, "kumquat")
    assert paths(hits) == ["new.md", "old.md"]
    # Same relevance: the final scores' ratio is the multiplier ratio.
    want = ranking.multiplier(NOW, 0, NOW) / ranking.multiplier(NOW - 90 * DAY, 0, NOW)
    final = [h.score / (1 - h.score) for h in hits]  # the same query weight divides both
    assert final[0] / final[1] == pytest.approx(want, rel=1e-6)


def test_inbound_links_break_ties(index: OpenSearchIndex, acct: str) -> None:
    index.upsert(acct, [doc("lonely.md", "quince facts"), doc("popular.md", "quince facts")])
    assert paths(search(index, acct, "quince")) == ["lonely.md", "popular.md"]  # path order
    index.set_inbound(acct, {"popular.md": 4, "not-indexed.md": 9})  # missing path ignored
    assert paths(search(index, acct, "quince")) == ["popular.md", "lonely.md"]
    index.set_inbound(acct, {"popular.md": 0, "lonely.md": 1})
    assert paths(search(index, acct, "quince")) == ["lonely.md", "popular.md"]
    index.set_inbound(acct, {})  # no-op


def test_equal_scores_order_by_path(index: OpenSearchIndex, acct: str) -> None:
    # Paths of equal length in tokens ("a" would be a stop word: one token fewer).
    index.upsert(acct, [doc(p, "guava") for p in ("b.md", "d.md", "C.md", "é.md")])
    hits = search(index, acct, "guava")
    assert len({h.score for h in hits}) == 1
    assert paths(hits) == ["C.md", "b.md", "d.md", "é.md"]  # code point order, like SQLite


def test_relevance_dominates_recency_and_links(index: OpenSearchIndex, acct: str) -> None:
    # tests/contract/test_links_and_search.py::test_relevance_dominates_recency_and_links
    three_years = 3 * 365 * DAY
    index.upsert(
        acct,
        [
            doc(
                "strong.md",
                "# Walrus\n\nwalrus walrus walrus habitat",
                title="Walrus",
                updated_at=NOW - three_years,
            ),
            doc(
                "weak.md",
                "a long note that mentions a walrus once " + "x " * 300,
                updated_at=NOW,
                inbound=20,
            ),
        ],
    )
    assert paths(search(index, acct, "walrus"))[0] == "strong.md"


def test_scores_are_the_ranking_formula(index: OpenSearchIndex, acct: str) -> None:
    docs = [
        doc("fresh.md", "tamarind chutney recipe", updated_at=NOW, inbound=0),
        doc("old.md", "tamarind tamarind paste", updated_at=NOW - 400 * DAY, inbound=3),
        doc("future.md", "tamarind", updated_at=NOW + 10 * DAY, inbound=1),  # age clamps to 0
        doc(
            "linked.md", "a chutney note", title="Tamarind", updated_at=NOW - 31.5 * DAY, inbound=50
        ),
        doc("tagged.md", "spices", tags=("tamarind", "food/chutney"), updated_at=NOW - 2 * DAY),
        doc("deep/tamarind/path.md", "nothing", updated_at=NOW - 0.25 * DAY, inbound=7),
        doc("other.md", "the long unrelated note " * 20),
    ]
    index.upsert(acct, docs)
    for text in ("tamarind chutney", "tamarind", "chutney recipe paste", "tamarind absentword"):
        want = expected_scores(index, docs, text)
        hits = search(index, acct, text, limit=100)
        assert sorted(paths(hits)) == sorted(want), text
        for hit in hits:
            # Lucene adds and multiplies scores as 32-bit floats.
            assert hit.score == pytest.approx(want[hit.path], rel=1e-5), (text, hit)
            assert 0.0 < hit.score < ranking.SCORE_MAX
        # And the order is Python's ORDER BY score DESC, path over those scores.
        assert paths(hits) == sorted(want, key=lambda p: (-want[p], p)), text


def test_both_backends_give_the_same_scores(
    index: OpenSearchIndex, acct: str, tmp_path: Path
) -> None:
    # One formula on both (domain.ranking): where FTS5's tokenizer and the english
    # analyzer split text alike (no stop words, possessives or diacritics here), the
    # SQLite and OpenSearch indexes give the same hits, in the same order, with the same
    # scores (to Lucene's 32-bit floats).
    docs = [
        doc(
            "notes/alpha.md",
            "kiwi mango kiwi orchard harvest",
            title="Kiwi harvest",
            tags=("fruit",),
        ),
        doc("notes/beta.md", "mango smoothie recipe", updated_at=NOW - 20 * DAY, inbound=3),
        doc("notes/gamma.md", "orchard tractor maintenance " * 10, title="Tractor"),
        doc("deep/kiwi/path.md", "nothing else", inbound=1, tags=("fruit/tropical",)),
        doc("notes/delta.md", "weekly planning notes", updated_at=NOW - 400 * DAY),
    ]
    index.upsert(acct, docs)
    db = Database(tmp_path / "search.sqlite3")
    embedded = SqliteSearchIndex(db)
    embedded.upsert(acct, docs)
    try:
        for text in (
            "kiwi",
            "mango orchard",
            "kiwi mango tractor recipe",
            "fruit",
            "harvest notes",
        ):
            query = SearchQuery(text, limit=100)
            engine = index.search(acct, query, now=NOW)
            sqlite = embedded.search(acct, query, now=NOW)
            assert engine and paths(engine) == paths(sqlite), text
            for a, b in zip(engine, sqlite, strict=True):
                assert a.score == pytest.approx(b.score, rel=1e-5), (text, a, b)
    finally:
        db.close()


def test_a_note_holding_every_term_once_at_average_length_scores_one_half(
    index: OpenSearchIndex, acct: str
) -> None:
    # Two notes of equal length: the average. Each term is in one of them (idf equal).
    index.upsert(acct, [doc("x.md", "lynx otter", title=""), doc("y.md", "vole newt", title="")])
    [hit] = search(index, acct, "lynx otter", now=NOW + 10**12)  # recency ~0: multiplier 1
    assert hit.score == pytest.approx(0.5, rel=1e-4)


def test_another_accounts_notes_never_move_a_score(index: OpenSearchIndex) -> None:
    # tests/contract/test_tenant_statistics.py, at the index: every statistic a score
    # reads is the account's own, however the shard's move.
    mine, theirs = f"mine-{uuid.uuid4().hex[:8]}", f"theirs-{uuid.uuid4().hex[:8]}"
    index.upsert(
        mine,
        [
            doc("merger.md", "acmecorpmerger draft terms", title="Merger"),
            doc("notes.md", "weekly notes on the acmecorpmerger and hiring", tags=("work",)),
            doc("misc.md", "lunch plans", updated_at=NOW - 40 * DAY, inbound=2),
        ],
    )
    queries = ["acmecorpmerger", "merger hiring", "lunch notes terms", "work"]

    def results() -> list[list[tuple[str, float, str]]]:
        index.term_counts.clear()  # count afresh: nothing remembered from before
        return [[(h.path, h.score, h.snippet) for h in search(index, mine, q)] for q in queries]

    before = results()
    assert all(before)
    index.upsert(
        theirs,
        [
            doc(
                f"bulk/{i}.md",
                "acmecorpmerger " * (i % 7 + 1) + "hiring lunch notes terms " * 40,
                title="Merger" if i % 2 else "Acmecorpmerger",
                tags=("work",),
            )
            for i in range(60)
        ],
    )
    assert len(search(index, theirs, "acmecorpmerger", limit=100)) == 60
    assert results() == before
    index.delete(theirs, [f"bulk/{i}.md" for i in range(30)])
    assert results() == before
    index.clear(theirs)
    assert results() == before


# ---------------------------------------------------------------------- filters
def test_folder_filter_is_an_exact_prefix(index: OpenSearchIndex, acct: str) -> None:
    index.upsert(
        acct,
        [
            doc("work/a.md", "budget review"),
            doc("work/deeper/d.md", "budget review"),
            doc("work-old/b.md", "budget review"),
            doc("home/c.md", "budget review"),
            doc("Work/e.md", "budget review"),
        ],
    )
    assert sorted(paths(search(index, acct, "budget", folder="work/"))) == [
        "work/a.md",
        "work/deeper/d.md",
    ]
    assert paths(search(index, acct, "budget", folder="Work/")) == ["Work/e.md"]
    assert paths(search(index, acct, "budget", folder="work/deeper/")) == ["work/deeper/d.md"]
    assert search(index, acct, "budget", folder="wor/") == []
    assert len(search(index, acct, "budget")) == 5


def test_tag_filter_matches_nested_tags_case_insensitively(
    index: OpenSearchIndex, acct: str
) -> None:
    index.upsert(
        acct,
        [
            doc("a.md", "budget review", tags=("finance/Q3",)),
            doc("b.md", "budget review", tags=("Finance",)),
            doc("c.md", "budget review", tags=("financial",)),
            doc("d.md", "budget review"),
        ],
    )
    assert sorted(paths(search(index, acct, "budget", tag="finance"))) == ["a.md", "b.md"]
    assert sorted(paths(search(index, acct, "budget", tag="FINANCE"))) == ["a.md", "b.md"]
    assert sorted(paths(search(index, acct, "budget", tag="#finance"))) == ["a.md", "b.md"]
    assert paths(search(index, acct, "budget", tag="finance/q3")) == ["a.md"]
    assert search(index, acct, "budget", tag="fin") == []
    assert search(index, acct, "budget", tag="q3") == []
    assert tag_keys(("Project/Alpha/One", "x")) == [
        "project/alpha/one",
        "project",
        "project/alpha",
        "x",
    ]


def test_tenants_never_see_each_other(index: OpenSearchIndex) -> None:
    one, two = f"one-{uuid.uuid4().hex[:8]}", f"two-{uuid.uuid4().hex[:8]}"
    index.upsert(one, [doc("shared.md", "secret apricot plan"), doc("a.md", "apricot")])
    index.upsert(two, [doc("shared.md", "other apricot")])
    assert doc_id(one, "shared.md") != doc_id(two, "shared.md")
    assert sorted(paths(search(index, one, "apricot"))) == ["a.md", "shared.md"]
    assert paths(search(index, two, "apricot")) == ["shared.md"]
    assert search(index, two, "secret") == []
    assert search(index, two, "plan") == []
    # Writes stay in their account too.
    index.delete(two, ["shared.md", "a.md"])
    assert sorted(paths(search(index, one, "apricot"))) == ["a.md", "shared.md"]
    index.set_inbound(two, {"a.md": 40})
    index.clear(two)
    hits = search(index, one, "apricot")
    assert sorted(paths(hits)) == ["a.md", "shared.md"]
    # Scored over account one's notes alone.
    want = expected_scores(
        index, [doc("shared.md", "secret apricot plan"), doc("a.md", "apricot")], "apricot"
    )
    for hit in hits:
        assert hit.score == pytest.approx(want[hit.path], rel=1e-5)
    assert relevance(index, one, "apricot").keys() == want.keys()


def test_every_request_is_routed_by_account(index: OpenSearchIndex) -> None:
    mapping = index.client.indices.get_mapping(index=index.index)[index.index]["mappings"]
    assert mapping["_routing"] == {"required": True}
    settings = index.client.indices.get_settings(index=index.index)[index.index]["settings"]
    assert int(settings["index"]["highlight"]["max_analyzed_offset"]) == MAX_ANALYZED_OFFSET


# ---------------------------------------------------------------------- snippets
def test_snippet_marks_hits_and_escapes_html(index: OpenSearchIndex, acct: str) -> None:
    index.upsert(
        acct,
        [
            doc("x.md", "Beware <script>alert('x')</script> & the <b>kumquat</b> grows."),
            doc("t.md", "<i>Body</i> without the word & more", title="Kumquat"),
        ],
    )
    hits = {h.path: h for h in search(index, acct, "kumquat")}
    x = hits["x.md"].snippet
    assert "<mark>kumquat</mark>" in x
    assert "&lt;script&gt;" in x and "<script>" not in x and "<b>" not in x
    assert "&amp;" in x
    # A title-only hit still shows the (escaped) start of the body, without marks.
    t = hits["t.md"].snippet
    assert t.startswith("&lt;i&gt;Body&lt;")
    assert "<mark>" not in t and "<i>" not in t


def test_empty_body_gives_an_empty_snippet(index: OpenSearchIndex, acct: str) -> None:
    index.upsert(acct, [doc("e.md", "", title="Mangosteen")])
    assert [(h.path, h.snippet) for h in search(index, acct, "mangosteen")] == [("e.md", "")]


@pytest.mark.parametrize("text", HOSTILE_QUERIES)
def test_search_syntax_in_user_text_never_raises(
    index: OpenSearchIndex, acct: str, text: str
) -> None:
    # Same list as tests/contract/test_links_and_search.py.
    index.upsert(acct, [doc("n.md", "a note about columns and NEAR things")])
    results = search(index, acct, text)
    assert isinstance(results, list)


def test_query_with_many_terms(index: OpenSearchIndex, acct: str) -> None:
    index.upsert(acct, [doc("n.md", "word17 appears here")])
    text = " ".join(f"word{i}" for i in range(500))  # search_terms keeps 64
    assert paths(search(index, acct, text)) == ["n.md"]


def test_a_256_kib_body_indexes_and_highlights(index: OpenSearchIndex, acct: str) -> None:
    tail = " zebracorn <end>"
    filler = "lorem ipsum " * (SEARCH_BODY_LIMIT_BYTES // 12)
    body = filler[: SEARCH_BODY_LIMIT_BYTES - len(tail)] + tail
    assert len(body.encode("utf-8")) == SEARCH_BODY_LIMIT_BYTES
    # Multi-byte text: fewer characters, same bytes.
    wide = ("日本語テキスト " * SEARCH_BODY_LIMIT_BYTES)[
        : SEARCH_BODY_LIMIT_BYTES // 3 - 4
    ] + " okapi"
    assert len(wide.encode("utf-8")) <= SEARCH_BODY_LIMIT_BYTES
    index.upsert(acct, [doc("long.md", body), doc("wide.md", wide), doc("short.md", "a zebracorn")])
    hits = {h.path: h for h in search(index, acct, "zebracorn")}
    assert set(hits) == {"long.md", "short.md"}
    assert "<mark>zebracorn</mark>" in hits["long.md"].snippet
    assert len(hits["long.md"].snippet) < 400
    okapi = search(index, acct, "okapi")
    assert paths(okapi) == ["wide.md"]
    assert "<mark>okapi</mark>" in okapi[0].snippet
    # A title-only hit on a long body: the no-match snippet is the body's start.
    index.upsert(acct, [doc("long.md", body, title="Giraffe")])
    giraffe = search(index, acct, "giraffe")
    assert paths(giraffe) == ["long.md"]
    assert giraffe[0].snippet.startswith("lorem ipsum lorem")


def test_bulk_upsert_larger_than_one_request(
    index: OpenSearchIndex, acct: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Writes are cut into bulk requests of at most BULK_MAX_BYTES (5 MiB for real):
    # 40 notes of ~8 KiB over 64 KiB requests make several, all applied and visible.
    monkeypatch.setattr(search_module, "BULK_MAX_BYTES", 64 * 1024)
    calls: list[int] = []
    real_bulk = index.client.bulk

    def counting_bulk(**kwargs: Any) -> Any:
        calls.append(len(kwargs["body"]))
        return real_bulk(**kwargs)

    monkeypatch.setattr(index.client, "bulk", counting_bulk)
    body = "filler " * (8 * 1024 // 7)
    index.upsert(acct, [doc(f"big/{i:02}.md", f"{body} marker{i % 3}") for i in range(40)])
    assert len(calls) >= 5
    assert all(size <= 64 * 1024 for size in calls)
    assert len(search(index, acct, "marker1", limit=100)) == 13
    assert len(search(index, acct, "filler", limit=100)) == 40
    index.set_inbound(acct, {f"big/{i:02}.md": i for i in range(40)})
    index.delete(acct, [f"big/{i:02}.md" for i in range(0, 40, 2)])
    assert len(search(index, acct, "filler", limit=100)) == 20


# ---------------------------------------------------------------------- failures
def legacy_body() -> dict[str, Any]:
    """The index body of the release before schema 2: no tf similarity, no tf and length
    subfields, no _meta."""
    body: dict[str, Any] = copy.deepcopy(INDEX_BODY)
    del body["settings"]["index"]["similarity"]
    del body["mappings"]["_meta"]
    for field in ("path", "title", "tags", "body"):
        spec = body["mappings"]["properties"][field]
        spec["fields"] = {k: v for k, v in spec.get("fields", {}).items() if k == "keyword"}
        if not spec["fields"]:
            del spec["fields"]
    body["settings"]["index"]["number_of_replicas"] = 0
    return body


def test_an_index_of_the_previous_schema_is_upgraded_in_place(url: str) -> None:
    client = make_client(url, auth="none", region=None, timeout=30.0)
    ix = OpenSearchIndex(client, f"memvault-legacy-{uuid.uuid4().hex[:8]}", refresh="true")
    client.indices.create(index=ix.index, body=legacy_body())
    docs = [
        doc("a.md", "pomegranate seeds and more seeds", title="Fruit"),
        doc("b.md", "a pomegranate", tags=("food",)),
        doc("c.md", "nothing related at all"),
    ]
    try:
        for d in docs:  # as the previous release wrote them
            client.index(
                index=ix.index,
                id=doc_id("acct", d.path),
                body=OpenSearchIndex._source("acct", d),
                routing="acct",
                refresh=True,
            )
        assert ix.schema() == 1
        with pytest.raises(ServiceUnavailable) as err:
            ix.check()
        assert err.value.code == "search_index_outdated"
        assert "memvault init-search" in err.value.message
        with pytest.raises(ServiceUnavailable):  # writes too: never half the new mapping
            OpenSearchIndex(client, ix.index).upsert("acct", docs[:1])

        assert ix.create_index() is False  # it exists: upgraded, not made
        assert ix.schema() == SCHEMA_VERSION
        ix.check()
        missing = {"query": {"bool": {"must_not": [{"exists": {"field": "body.length"}}]}}}
        deadline = time.monotonic() + 30
        while client.count(index=ix.index, body=missing)["count"]:
            assert time.monotonic() < deadline, "the update-by-query task did not finish"
            time.sleep(0.1)
        client.indices.refresh(index=ix.index)
        want = expected_scores(ix, docs, "pomegranate seeds")
        hits = search(ix, "acct", "pomegranate seeds")
        assert sorted(paths(hits)) == sorted(want) == ["a.md", "b.md"]
        for hit in hits:
            assert hit.score == pytest.approx(want[hit.path], rel=1e-5)
        assert "<mark>seeds</mark>" in hits[0].snippet
        assert ix.create_index() is False and ix.upgrade() is False  # nothing more to do
    finally:
        ix.drop_index()
        client.close()


def test_check_on_a_missing_index_names_it(url: str) -> None:
    client = make_client(url, auth="none", region=None, timeout=10.0)
    name = f"memvault-missing-{uuid.uuid4().hex[:8]}"
    ix = OpenSearchIndex(client, name)
    with pytest.raises(ServiceUnavailable) as err:
        ix.check()
    assert f"the search index {name!r} does not exist" in err.value.message
    assert "memvault init-search" in err.value.message
    assert "127.0.0.1" in err.value.message
    assert err.value.code == "search_index_missing"
    with pytest.raises(ServiceUnavailable) as err:
        ix.search("a", SearchQuery("anything"), now=NOW)
    assert name in err.value.message
    # Writes refuse too, and never auto-create the index with a dynamic mapping.
    with pytest.raises(ServiceUnavailable):
        ix.upsert("a", [doc("n.md", "text")])
    assert not client.indices.exists(index=name)
    client.close()


def test_an_unreachable_node_is_service_unavailable_quickly() -> None:
    port = unused_port()
    client = make_client(f"http://127.0.0.1:{port}", auth="none", region=None, timeout=1.0)
    ix = OpenSearchIndex(client, "memvault-nowhere")
    started = time.monotonic()
    with pytest.raises(ServiceUnavailable) as err:
        ix.search("a", SearchQuery("anything"), now=NOW)
    assert time.monotonic() - started < 5.0
    assert err.value.code == "search_unavailable"
    assert "notes are safe" in err.value.message
    with pytest.raises(ServiceUnavailable) as check_err:
        ix.check()
    assert check_err.value.details.get("host") == f"127.0.0.1:{port}"
    assert check_err.value.details.get("index") == "memvault-nowhere"
    with pytest.raises(ServiceUnavailable):
        ix.upsert("a", [doc("n.md", "text")])
    with pytest.raises(ServiceUnavailable):
        ix.clear("a")
    client.close()


def test_make_client_rejects_bad_urls() -> None:
    with pytest.raises(ValueError):
        make_client("127.0.0.1:9200", auth="none", region=None, timeout=1.0)
    with pytest.raises(ValueError):
        OpenSearchIndex(
            make_client("http://h", auth="none", region=None, timeout=1), "i", refresh="x"
        )


def test_a_partial_bulk_failure_is_service_unavailable(index: OpenSearchIndex, acct: str) -> None:
    bad = doc("bad.md", "okra", inbound=2**40)  # over the integer field: refused by the node
    with pytest.raises(ServiceUnavailable) as err:
        index.upsert(acct, [doc("good.md", "okra"), bad])
    assert err.value.code == "search_unavailable"
    assert paths(search(index, acct, "okra")) == ["good.md"]  # bulk is per item, not atomic


def test_throttled_bulk_items_are_retried(
    index: OpenSearchIndex, acct: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_module, "BULK_BACKOFF_S", 0.01)
    real_bulk = index.client.bulk
    bodies: list[str] = []

    def throttle_first_item_once(**kwargs: Any) -> Any:
        bodies.append(kwargs["body"])
        resp = real_bulk(**kwargs)
        if len(bodies) == 1:  # pretend the node rejected the first item (back-pressure)
            resp["errors"] = True
            resp["items"][0]["index"] = {"status": 429, "error": {"type": "es_rejected"}}
        return resp

    monkeypatch.setattr(index.client, "bulk", throttle_first_item_once)
    index.upsert(acct, [doc("a.md", "jackfruit"), doc("b.md", "jackfruit")])
    assert len(bodies) == 2
    assert '"a.md"' in bodies[1] and '"b.md"' not in bodies[1]  # only the rejected item
    assert sorted(paths(search(index, acct, "jackfruit"))) == ["a.md", "b.md"]


def test_an_engine_refusal_of_a_search_is_invalid_input(
    index: OpenSearchIndex, acct: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(**kwargs: Any) -> Any:
        raise RequestError(400, "search_phase_execution_exception", {})

    monkeypatch.setattr(index.client, "search", refuse)
    with pytest.raises(InvalidInput) as err:
        search(index, acct, "anything")
    assert err.value.code == "invalid_query"


def test_sigv4_client_signs_requests(
    url: str, index: OpenSearchIndex, acct: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The local node has no security plugin: it ignores the signature, so this checks
    # that a signed client is built and its requests go through (requests + SigV4 signer).
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    seen: list[dict[str, str]] = []
    real_signer = AWSV4SignerAuth.__call__

    def spy(self: Any, request: Any) -> Any:
        signed = real_signer(self, request)  # type: ignore[no-untyped-call]
        seen.append(dict(signed.headers))
        return signed

    monkeypatch.setattr(AWSV4SignerAuth, "__call__", spy)
    client = make_client(url, auth="sigv4", region="eu-west-1", timeout=10.0)
    assert client.transport.connection_class is RequestsHttpConnection
    signed = OpenSearchIndex(client, index.index, refresh="true")
    signed.upsert(acct, [doc("s.md", "sapodilla")])
    assert paths(search(signed, acct, "sapodilla")) == ["s.md"]
    assert seen and all("AWS4-HMAC-SHA256" in h.get("Authorization", "") for h in seen)
    assert all("/eu-west-1/es/aws4_request" in h["Authorization"] for h in seen)
    client.close()
