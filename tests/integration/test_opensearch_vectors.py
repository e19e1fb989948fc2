"""OpenSearchVectorIndex against the real OpenSearch node with the k-NN plugin (ADR 0026).

Start a node with ``scripts/opensearch/start.sh`` and export MEMVAULT_TEST_OPENSEARCH_URL.
Without it the node-backed tests skip, or fail when CI=true. Tests share one vector
prefix made for this module (dropped at the end), each in its own account; the few that
need indices of their own (missing, refresh) take a prefix of their own.
"""

from __future__ import annotations

import math
import os
import socket
import uuid
from collections.abc import Iterator, Sequence

import pytest

from memvault.adapters.aws import vectors as vectors_module
from memvault.adapters.aws.search import make_client
from memvault.adapters.aws.vectors import MIN_CANDIDATES, OpenSearchVectorIndex, chunk_id
from memvault.errors import ServiceUnavailable
from memvault.ports import ChunkVector, VectorHit
from tests.support.opensearch import opensearch_url, require_reason

MODEL = "model-a"
DIM = 8


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
def client(url: str) -> Iterator[object]:
    c = make_client(url, auth="none", region=None, timeout=30.0)
    yield c
    c.close()


def new_index(client: object, **kw: object) -> OpenSearchVectorIndex:
    return OpenSearchVectorIndex(
        client,  # type: ignore[arg-type]
        f"memvault-test-vectors-{uuid.uuid4().hex[:10]}",
        **{"refresh": "true", "create_missing": True, **kw},  # type: ignore[arg-type]
    )


@pytest.fixture(scope="module")
def vix(client: object) -> Iterator[OpenSearchVectorIndex]:
    ix = new_index(client)
    try:
        yield ix
    finally:
        ix.drop_indices()


@pytest.fixture
def acct() -> str:
    return f"acct-{uuid.uuid4().hex[:10]}"


def unit(*values: float, dim: int = DIM) -> list[float]:
    v = [float(x) for x in values] + [0.0] * (dim - len(values))
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


def chunks(
    path: str,
    vectors: Sequence[Sequence[float]],
    *,
    model: str = MODEL,
    tags: tuple[str, ...] = (),
    note_id: str = "",
) -> list[ChunkVector]:
    return [
        ChunkVector(
            note_id=note_id or f"id-{path}",
            path=path,
            chunk_index=i,
            heading=f"H{i}",
            offset=100 * i,
            length=50,
            text=f"{path} chunk {i}",
            tags=tags,
            vector=list(v),
            model=model,
            updated_at=1_780_000_000.0 + i,
        )
        for i, v in enumerate(vectors)
    ]


def near(
    ix: OpenSearchVectorIndex, acct: str, vector: Sequence[float], **kw: object
) -> list[VectorHit]:
    kw.setdefault("model", MODEL)
    kw.setdefault("limit", 10)
    return ix.nearest(acct, vector, **kw)  # type: ignore[arg-type]


def keys(hits: Sequence[VectorHit]) -> list[tuple[str, int]]:
    return [(h.path, h.chunk_index) for h in hits]


# ---------------------------------------------------------------------- the engine
def test_the_index_is_lucene_hnsw_in_cosine_space(
    vix: OpenSearchVectorIndex, client: object, acct: str
) -> None:
    vix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1)]))
    mapping = client.indices.get_mapping(index=vix.index_name(DIM))  # type: ignore[attr-defined]
    field = mapping[vix.index_name(DIM)]["mappings"]["properties"]["vector"]
    assert field["dimension"] == DIM
    assert field["method"]["engine"] == "lucene"
    assert field["method"]["space_type"] == "cosinesimil"
    assert field["method"]["name"] == "hnsw"


def test_similarity_is_the_cosine_and_hits_carry_the_chunk(
    vix: OpenSearchVectorIndex, acct: str
) -> None:
    vix.upsert_chunks(
        acct,
        "notes/a.md",
        chunks("notes/a.md", [unit(1), unit(1, 1), unit(0, 1), unit(-1)], note_id="n1"),
    )
    hits = near(vix, acct, unit(1))
    assert keys(hits) == [
        ("notes/a.md", 0),
        ("notes/a.md", 1),
        ("notes/a.md", 2),
        ("notes/a.md", 3),
    ]
    expected = [1.0, math.sqrt(0.5), 0.0, -1.0]
    assert [h.similarity for h in hits] == pytest.approx(expected, abs=1e-5)
    first = hits[1]
    assert (first.note_id, first.heading, first.offset, first.length) == ("n1", "H1", 100, 50)
    assert first.text == "notes/a.md chunk 1" and first.updated_at == 1_780_000_001.0


def test_a_rewrite_replaces_every_chunk_of_the_note(vix: OpenSearchVectorIndex, acct: str) -> None:
    vix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1, i) for i in range(6)]))
    vix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(0, 1), unit(0, 1, 1)]))
    assert keys(near(vix, acct, unit(1))) == [("a.md", 0), ("a.md", 1)]
    assert vix.indexed_models(acct) == {MODEL: 2}
    vix.upsert_chunks(acct, "a.md", [])
    assert near(vix, acct, unit(1)) == [] and vix.indexed_paths(acct, ["a.md"]) == {}


def test_filters_run_inside_the_knn_query_and_never_empty_a_page(
    vix: OpenSearchVectorIndex, acct: str
) -> None:
    # 150 chunks outside the folder match better than the two inside it: a post-filter
    # over the engine's top k would find nothing in the folder.
    vix.upsert_chunks(
        acct, "work/db.md", chunks("work/db.md", [unit(0.2, 1), unit(0.1, 1)], tags=("Infra/DB",))
    )
    for n in range(15):
        vix.upsert_chunks(acct, f"other/n{n}.md", chunks(f"other/n{n}.md", [unit(1)] * 10))
    assert len(near(vix, acct, unit(1), limit=MIN_CANDIDATES)) == MIN_CANDIDATES
    assert keys(near(vix, acct, unit(1), folder="work/")) == [("work/db.md", 0), ("work/db.md", 1)]
    assert keys(near(vix, acct, unit(1), tag="infra")) == [("work/db.md", 0), ("work/db.md", 1)]
    assert keys(near(vix, acct, unit(1), tag="#INFRA/db", limit=1)) == [("work/db.md", 0)]
    assert near(vix, acct, unit(1), tag="infra/d") == []
    assert near(vix, acct, unit(1), folder="nowhere/") == []


def test_models_are_never_mixed(vix: OpenSearchVectorIndex, acct: str) -> None:
    vix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1)], model="model-a"))
    vix.upsert_chunks(acct, "b.md", chunks("b.md", [unit(1)], model="model-b"))
    assert keys(near(vix, acct, unit(1), model="model-b")) == [("b.md", 0)]
    assert near(vix, acct, unit(1), model="model-c") == []
    assert vix.indexed_models(acct) == {"model-a": 1, "model-b": 1}
    assert vix.indexed_paths(acct, ["a.md", "b.md", "c.md"]) == {
        "a.md": "model-a",
        "b.md": "model-b",
    }


def test_another_account_never_appears_and_never_changes_what_one_sees(
    vix: OpenSearchVectorIndex, acct: str
) -> None:
    other = f"{acct}-other"
    vix.upsert_chunks(acct, "mine.md", chunks("mine.md", [unit(1, 0.5), unit(0.5, 1), unit(0, 1)]))
    probes = [
        {"limit": 10},
        {"limit": 2},
        {"limit": 1, "folder": "mi"},
        {"limit": 10, "tag": "x"},
    ]
    before = [near(vix, acct, unit(1), **p) for p in probes]
    models_before = vix.indexed_models(acct)
    # The same path, closer vectors, more of them, the same tag: none of it is the account's.
    for n in range(30):
        vix.upsert_chunks(other, f"mine{n}.md", chunks(f"mine{n}.md", [unit(1)] * 4, tags=("x",)))
    vix.upsert_chunks(other, "mine.md", chunks("mine.md", [unit(1)] * 5))
    assert [near(vix, acct, unit(1), **p) for p in probes] == before
    assert vix.indexed_models(acct) == models_before == {MODEL: 3}
    assert vix.indexed_paths(acct, ["mine.md", "mine0.md"]) == {"mine.md": MODEL}
    # And the other account's operations never touch this one's chunks.
    vix.delete_notes(other, ["mine.md"])
    vix.clear(other)
    assert near(vix, other, unit(1)) == [] and vix.indexed_models(other) == {}
    assert [near(vix, acct, unit(1), **p) for p in probes] == before


def test_delete_notes_and_clear(vix: OpenSearchVectorIndex, acct: str) -> None:
    for p in ("a.md", "b.md", "c.md"):
        vix.upsert_chunks(acct, p, chunks(p, [unit(1), unit(1, 1)]))
    vix.delete_notes(acct, ["a.md", "missing.md"])
    assert {h.path for h in near(vix, acct, unit(1))} == {"b.md", "c.md"}
    vix.delete_notes(acct, [])
    vix.clear(acct)
    assert near(vix, acct, unit(1)) == [] and vix.indexed_models(acct) == {}


def test_a_zero_vector_chunk_is_indexed_but_near_nothing(
    vix: OpenSearchVectorIndex, acct: str
) -> None:
    vix.upsert_chunks(acct, "z.md", chunks("z.md", [[0.0] * DIM, unit(1)]))
    assert keys(near(vix, acct, unit(1))) == [("z.md", 1)]
    assert vix.indexed_models(acct) == {MODEL: 2}
    assert vix.indexed_paths(acct, ["z.md"]) == {"z.md": MODEL}
    assert near(vix, acct, [0.0] * DIM) == []
    assert near(vix, acct, unit(1), limit=0) == []


def test_a_new_dimension_gets_its_own_index_and_takes_the_note_along(
    vix: OpenSearchVectorIndex, acct: str
) -> None:
    vix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1)] * 3))
    vix.upsert_chunks(acct, "b.md", chunks("b.md", [unit(1)]))
    vix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1, dim=4)], model="model-4d"))
    assert keys(near(vix, acct, unit(1))) == [("b.md", 0)]
    assert keys(near(vix, acct, unit(1, dim=4), model="model-4d")) == [("a.md", 0)]
    assert near(vix, acct, unit(1, dim=5)) == []  # no index of that dimension
    assert vix.indexed_models(acct) == {MODEL: 1, "model-4d": 1}
    assert vix.indexed_paths(acct, ["a.md", "b.md"]) == {"a.md": "model-4d", "b.md": MODEL}
    vix.delete_notes(acct, ["a.md"])
    assert vix.indexed_models(acct) == {MODEL: 1}


def test_malformed_chunks_are_refused_before_anything_is_sent(
    vix: OpenSearchVectorIndex, acct: str
) -> None:
    with pytest.raises(ValueError):
        vix.upsert_chunks(acct, "a.md", chunks("b.md", [unit(1)]))
    with pytest.raises(ValueError):
        vix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1), unit(1, dim=4)]))
    with pytest.raises(ValueError):
        vix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1), unit(1)])[1:])
    assert vix.indexed_models(acct) == {}


def test_upsert_notes_stores_many_notes_in_one_go(
    vix: OpenSearchVectorIndex, acct: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    vix.upsert_chunks(acct, "old.md", chunks("old.md", [unit(1)] * 4))
    vix.upsert_chunks(acct, "gone.md", chunks("gone.md", [unit(1)]))
    # Bodies cut small: the notes' actions spread over several bulk requests.
    monkeypatch.setattr(vectors_module, "BULK_MAX_BYTES", 2000)
    requests: list[object] = []
    bulk = vix.client.bulk

    def counting(**kw: object) -> object:
        requests.append(kw["refresh"])
        return bulk(**kw)

    monkeypatch.setattr(vix.client, "bulk", counting)
    batch = {f"n{i}.md": chunks(f"n{i}.md", [unit(1, i)] * 3) for i in range(8)}
    batch["old.md"] = chunks("old.md", [unit(0, 1)])
    batch["gone.md"] = []
    vix.upsert_notes(acct, batch)
    assert len(requests) > 1 and requests[-1] == "true" and set(requests[:-1]) == {"false"}
    assert vix.indexed_models(acct) == {MODEL: 8 * 3 + 1}
    assert vix.indexed_paths(acct, ["old.md", "gone.md", "n7.md"]) == {
        "old.md": MODEL,
        "n7.md": MODEL,
    }
    assert keys(near(vix, acct, unit(0, 1), limit=1)) == [("old.md", 0)]


# ---------------------------------------------------------------------- refresh, indices
def test_writes_not_yet_refreshed_are_still_replaced(client: object, acct: str) -> None:
    """With refresh=false a rewrite still finds the chunks it replaces (a realtime read
    of the note's first chunk), so no old chunk survives once the index refreshes."""
    ix = new_index(client, refresh="false")
    try:
        ix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1)] * 5))
        ix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1)] * 2))
        assert ix.indexed_paths(acct, ["a.md"]) == {"a.md": MODEL}
        ix.delete_notes(acct, ["a.md"])
        ix.upsert_chunks(acct, "b.md", chunks("b.md", [unit(1)]))
        client.indices.refresh(index=ix.index_name(DIM))  # type: ignore[attr-defined]
        assert keys(near(ix, acct, unit(1))) == [("b.md", 0)]
        assert ix.indexed_models(acct) == {MODEL: 1}
    finally:
        ix.drop_indices()


def test_without_create_missing_a_missing_index_is_reported_and_reads_find_nothing(
    client: object, acct: str
) -> None:
    ix = new_index(client, create_missing=False)
    assert near(ix, acct, unit(1)) == []
    assert ix.indexed_models(acct) == {} and ix.indexed_paths(acct, ["a.md"]) == {}
    ix.clear(acct)
    with pytest.raises(ServiceUnavailable) as info:
        ix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1)]))
    assert info.value.code == "vector_index_missing"
    maker = OpenSearchVectorIndex(client, ix.prefix, create_missing=True)  # type: ignore[arg-type]
    try:
        assert maker.create_index(DIM) is True and maker.create_index(DIM) is False
        ix2 = OpenSearchVectorIndex(client, ix.prefix, refresh="true")  # type: ignore[arg-type]
        ix2.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1)]))
        assert keys(near(ix2, acct, unit(1))) == [("a.md", 0)]
    finally:
        maker.drop_indices()


def test_an_index_of_another_mapping_is_refused(client: object, acct: str) -> None:
    ix = new_index(client)
    client.indices.create(index=ix.index_name(DIM), body={"mappings": {"properties": {}}})  # type: ignore[attr-defined]
    try:
        with pytest.raises(ServiceUnavailable) as info:
            ix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1)]))
        assert info.value.code == "vector_index_outdated"
    finally:
        ix.drop_indices()


def test_an_unreachable_node_is_service_unavailable(acct: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = make_client(f"http://127.0.0.1:{port}", auth="none", region=None, timeout=1.0)
    ix = OpenSearchVectorIndex(dead, "memvault-test-vectors-dead", create_missing=True)
    for call in (
        lambda: ix.upsert_chunks(acct, "a.md", chunks("a.md", [unit(1)])),
        lambda: near(ix, acct, unit(1)),
        lambda: ix.indexed_models(acct),
        lambda: ix.delete_notes(acct, ["a.md"]),
    ):
        with pytest.raises(ServiceUnavailable) as info:
            call()
        assert info.value.code == "search_unavailable"


def test_chunk_ids_are_per_account_path_and_chunk() -> None:
    ids = {chunk_id(a, p, i) for a in ("a", "b") for p in ("x.md", "y.md") for i in (0, 1)}
    assert len(ids) == 8
