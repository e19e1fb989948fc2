"""Note vectors on both backends: kept in step with writes through the search outbox.

What a user sees: a note becomes searchable by meaning once its chunks are indexed
(``vector_status``), deletes and moves take its vectors along, erasure leaves none, another
organisation sees nothing, an embedder outage never refuses a write and heals on the next
drain, and a model change re-embeds through the outbox.

The AWS backend's VectorIndex is OpenSearch k-NN (adapters/aws/vectors.py, ADR 0026) on
the real local node; its adapter-level tests are tests/integration/test_opensearch_vectors.py.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memvault.cli.serve import drain_outbox_in_background
from memvault.container import Services, build_services
from memvault.errors import ServiceUnavailable
from memvault.ports import VectorHit
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller, Surface
from memvault.services.vault import build_put
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.upstream import Fault, ScriptedUpstream

DECISION = "# Database\n\nAfter a long week of comparing options we picked Postgres for storage.\n"
GARDEN = "# Garden\n\nMy grandmother grows tomatoes and basil in her garden every summer.\n"


def require_vectors(svc: Services) -> None:
    # Both backends have a vector index whenever embeddings are on: never a skip.
    assert svc.vectors is not None, f"no vector index on {svc.settings.backend}"


@pytest.fixture
def vsvc(services: Services) -> Services:
    require_vectors(services)
    return services


def nearest(
    svc: Services, text: str, account: str = LOCAL_ACCOUNT_ID, **kw: object
) -> list[VectorHit]:
    assert svc.vectors is not None and svc.embedding.embedder is not None
    vector = svc.embedding.embed_query(account, text)
    return svc.vectors.nearest(
        account,
        vector,
        model=svc.embedding.embedder.model,
        limit=10,
        **kw,  # type: ignore[arg-type]
    )


def test_a_written_note_is_found_by_meaning_and_reports_indexed(
    vsvc: Services, user: Caller
) -> None:
    vsvc.vault.write(user, "work/decisions.md", DECISION)
    vsvc.vault.write(user, "home/garden.md", GARDEN)
    hits = nearest(vsvc, "which database did we choose")
    assert hits[0].path == "work/decisions.md"
    best = hits[0]
    note = vsvc.vault.read(user, "work/decisions.md")
    assert best.note_id == note.id and best.heading == "Database"
    assert note.markdown[best.offset : best.offset + best.length] == best.text
    assert -1.0 <= best.similarity <= 1.0
    assert vsvc.vault.vector_status(user, "work/decisions.md") == "indexed"
    model = vsvc.embedding.model
    assert model is not None
    assert set(vsvc.vectors.indexed_models(LOCAL_ACCOUNT_ID)) == {model}  # type: ignore[union-attr]


def test_hits_without_texts_are_filled_to_the_whole_hits(vsvc: Services, user: Caller) -> None:
    # What a hybrid search asks for (ADR 0076): the chunks' keys and scores first, then
    # the texts of the ones it keeps, the same as asked whole.
    vsvc.vault.write(user, "work/decisions.md", DECISION)
    nearest(vsvc, "which database did we choose")  # a matrix held, then patched
    vsvc.vault.write(user, "home/garden.md", GARDEN)
    whole = nearest(vsvc, "which database did we choose")
    light = nearest(vsvc, "which database did we choose", texts=False)
    assert [(h.path, h.chunk_index, h.similarity) for h in light] == [
        (h.path, h.chunk_index, h.similarity) for h in whole
    ]
    assert vsvc.vectors is not None and vsvc.embedding.model is not None
    filled = vsvc.vectors.with_texts(LOCAL_ACCOUNT_ID, vsvc.embedding.model, light)
    assert filled == whole and whole[0].path == "work/decisions.md"


def test_holding_a_model_is_answered_per_account_and_model(vsvc: Services, user: Caller) -> None:
    # what every hybrid search asks first: answered without counting the chunks
    model = vsvc.embedding.model
    assert model is not None
    index = vsvc.vectors
    assert index is not None
    assert not index.holds_model(LOCAL_ACCOUNT_ID, model)
    vsvc.vault.write(user, "work/decisions.md", DECISION)
    assert index.holds_model(LOCAL_ACCOUNT_ID, model)
    assert not index.holds_model(LOCAL_ACCOUNT_ID, model + "-other")
    assert not index.holds_model("other-org", model)
    vsvc.vault.delete(user, "work/decisions.md")
    assert not index.holds_model(LOCAL_ACCOUNT_ID, model)


def test_folder_and_tag_filters_are_inside_the_query(vsvc: Services, user: Caller) -> None:
    vsvc.vault.write(user, "work/decisions.md", DECISION)
    vsvc.vault.write(user, "home/db.md", "---\ntags: [infra/db]\n---\n" + DECISION)
    for i in range(12):  # better matches outside the folder must not empty the page
        vsvc.vault.write(user, f"other/n{i}.md", DECISION)
    in_work = nearest(vsvc, "which database did we choose", folder="work/")
    assert {h.path for h in in_work} == {"work/decisions.md"}
    tagged = nearest(vsvc, "which database did we choose", tag="infra")
    assert {h.path for h in tagged} == {"home/db.md"}
    assert nearest(vsvc, "database", tag="nothing-tagged-so") == []


def test_another_organisation_sees_no_vectors(vsvc: Services, user: Caller) -> None:
    vsvc.accounts.create_account("other", account_id="other-org")
    other = Caller(account_id="other-org", surface=Surface.REST)
    vsvc.vault.write(user, "work/decisions.md", DECISION)
    assert nearest(vsvc, "which database did we choose", account="other-org") == []
    assert vsvc.vectors.indexed_models("other-org") == {}  # type: ignore[union-attr]
    vsvc.vault.write(other, "theirs.md", GARDEN)
    theirs = nearest(vsvc, "which database did we choose", account="other-org")
    assert {h.path for h in theirs} == {"theirs.md"}
    mine = nearest(vsvc, "tomatoes in the garden")
    assert "theirs.md" not in {h.path for h in mine}


def test_delete_and_move_take_the_vectors_along(vsvc: Services, user: Caller) -> None:
    vsvc.vault.write(user, "a.md", DECISION)
    vsvc.vault.write(user, "b.md", GARDEN)
    vsvc.vault.move(user, "a.md", "archive/a.md")
    paths = {h.path for h in nearest(vsvc, "which database did we choose")}
    assert "a.md" not in paths and "archive/a.md" in paths
    assert vsvc.vault.vector_status(user, "archive/a.md") == "indexed"
    vsvc.vault.delete(user, "b.md")
    assert "b.md" not in {h.path for h in nearest(vsvc, "tomatoes in the garden")}


def test_erasure_leaves_no_vector(vsvc: Services, user: Caller) -> None:
    vsvc.vault.write(user, "secret.md", DECISION)
    vsvc.vault.delete(user, "secret.md")
    vsvc.vault.purge(user, "secret.md")
    assert nearest(vsvc, "which database did we choose") == []
    assert vsvc.vectors.indexed_models(LOCAL_ACCOUNT_ID) == {}  # type: ignore[union-attr]


# ---------------------------------------------------------------------- the embedder fails
@pytest.fixture(scope="module")
def upstream_server() -> Iterator[ScriptedUpstream]:
    with ScriptedUpstream() as server:
        yield server


@pytest.fixture
def upstream(upstream_server: ScriptedUpstream) -> Iterator[ScriptedUpstream]:
    upstream_server.reset()
    yield upstream_server
    upstream_server.reset()


@pytest.fixture
def remote(
    tmp_path: Path, backend: str, clock: FakeClock, upstream: ScriptedUpstream
) -> Iterator[Services]:
    """Services embedding through the OpenAI-compatible adapter on the scripted upstream."""
    with backend_settings(
        tmp_path,
        backend,
        embeddings="openai",
        openai_base_url=f"{upstream.base_url}/v1",
        openai_api_key="sk-test",
        embeddings_dimension=64,
    ) as settings:
        svc = build_services(settings, clock=clock)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        require_vectors(svc)
        yield svc


def test_an_embedder_outage_never_refuses_a_write_and_heals_on_the_next_drain(
    remote: Services, user: Caller, upstream: ScriptedUpstream
) -> None:
    upstream.enqueue_embeddings(Fault(status=503))
    outcome = remote.vault.write(user, "work/decisions.md", DECISION)
    assert outcome.created
    assert remote.vault.read(user, "work/decisions.md").markdown == DECISION
    assert remote.vault.vector_status(user, "work/decisions.md") == "pending"
    assert nearest(remote, "we picked Postgres for storage") == []
    # Keyword search does not wait for vectors.
    assert [h.path for h in remote.vault.search(user, "Postgres", mode="keyword")] == [
        "work/decisions.md"
    ]
    remote.vault.indexing.drain(LOCAL_ACCOUNT_ID)
    assert remote.vault.vector_status(user, "work/decisions.md") == "indexed"
    assert nearest(remote, "we picked Postgres for storage")[0].path == "work/decisions.md"


def test_a_drain_while_the_embedder_is_still_down_keeps_the_note_queued(
    remote: Services, user: Caller, upstream: ScriptedUpstream
) -> None:
    upstream.enqueue_embeddings(Fault(status=500), Fault(status=429))
    remote.vault.write(user, "n.md", DECISION)
    assert remote.vault.indexing.drain(LOCAL_ACCOUNT_ID) == 0
    assert remote.vault.vector_status(user, "n.md") == "pending"
    assert remote.store.queued_reindex(LOCAL_ACCOUNT_ID) == ["n.md"]
    remote.vault.indexing.drain(LOCAL_ACCOUNT_ID)
    assert remote.store.queued_reindex(LOCAL_ACCOUNT_ID) == []
    assert remote.vault.vector_status(user, "n.md") == "indexed"


def test_remote_embeddings_are_billed_to_the_organisation(
    remote: Services, user: Caller, upstream: ScriptedUpstream
) -> None:
    remote.billing.set_balance(LOCAL_ACCOUNT_ID, 1_000_000)
    remote.vault.write(user, "n.md", DECISION)
    calls = [r for r in upstream.requests if r.path == "/v1/embeddings"]
    assert len(calls) == 1 and calls[0].headers["authorization"] == "Bearer sk-test"
    records = remote.ledger.usage_between(LOCAL_ACCOUNT_ID, "1970-01-01", "2999-12-31")
    (record,) = [r for r in records if r.api_format == "embeddings"]
    assert record.model == "text-embedding-3-small" and record.outcome == "index"
    assert record.input_tokens > 0 and record.cost_micros > 0
    assert remote.billing.balance(LOCAL_ACCOUNT_ID).balance_micros == 1_000_000 - record.cost_micros


# ---------------------------------------------------------------------- model changes
def test_a_model_change_re_embeds_through_the_outbox(
    tmp_path: Path, backend: str, clock: FakeClock
) -> None:
    with backend_settings(tmp_path, backend) as first_settings:
        first = build_services(first_settings, clock=clock)
        require_vectors(first)
        first.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        user = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)
        first.vault.write(user, "a.md", DECISION)
        first.vault.write(user, "b.md", GARDEN)
        old_model = first.embedding.model
        # The same storage, now configured with a smaller local model (another name).
        changed = first_settings.model_copy(update={"embeddings_dimension": 128})
        second = build_services(changed, clock=clock)
        new_model = second.embedding.model
        assert new_model is not None and new_model != old_model
        assert second.vault.vector_status(user, "a.md") == "pending"
        # Searches never mix models: the new model finds nothing until notes re-embed.
        assert nearest(second, "which database did we choose") == []
        # The first write after the change spots the old model and queues every note in
        # the outbox; a drain (in the background, or a bounded part per write) embeds them.
        second.vault.write(user, "c.md", "a note about nothing much\n")
        assert set(second.store.queued_reindex(LOCAL_ACCOUNT_ID)) == {"a.md", "b.md", "c.md"}
        second.vault.write(user, "d.md", "another small note\n")
        assert second.store.queued_reindex(LOCAL_ACCOUNT_ID) == []
        assert second.vectors.indexed_models(LOCAL_ACCOUNT_ID).keys() == {new_model}  # type: ignore[union-attr]
        assert nearest(second, "which database did we choose")[0].path == "a.md"
        assert second.vault.vector_status(user, "b.md") == "indexed"


def test_a_bulk_commit_leaves_its_vectors_to_the_outbox(
    tmp_path: Path, backend: str, clock: FakeClock
) -> None:
    with backend_settings(tmp_path, backend, embeddings_inline_notes=2) as settings:
        svc = build_services(settings, clock=clock)
        require_vectors(svc)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        user = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)
        notes = {"a.md": DECISION, "b.md": GARDEN, "c.md": "a third note\n"}
        svc.vault.commit(user, [build_put(p, m) for p, m in notes.items()])
        assert [svc.vault.vector_status(user, p) for p in notes] == ["pending"] * 3
        # Keyword search has them at once; vectors come with the drain.
        assert [h.path for h in svc.vault.search(user, "Postgres", mode="keyword")] == ["a.md"]
        assert svc.vault.indexing.pending
        assert svc.vault.indexing.drain_pending() == 3
        assert [svc.vault.vector_status(user, p) for p in notes] == ["indexed"] * 3
        assert nearest(svc, "which database did we choose")[0].path == "a.md"
        # A small commit is embedded with the write.
        svc.vault.write(user, "d.md", "tomatoes again\n")
        assert svc.vault.vector_status(user, "d.md") == "indexed"


def test_a_bulk_drain_embeds_in_worker_processes_on_both_backends(
    tmp_path: Path, backend: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A drain of many notes chunks and embeds them in worker processes (ADR 0048); what
    # reaches either index is what one core would have stored, found by meaning the same.
    import memvault.services.vector_workers as vector_workers

    monkeypatch.setattr(vector_workers, "PARALLEL_MIN_NOTES", 8)
    monkeypatch.setattr(vector_workers, "PART", 4)
    with backend_settings(tmp_path, backend, embeddings_inline_notes=2) as settings:
        svc = build_services(settings, clock=clock)
        require_vectors(svc)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        user = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)
        notes = {"a.md": DECISION, "b.md": GARDEN}
        notes |= {f"n{i}.md": f"# Log {i}\n\nnote number {i} about the weather\n" for i in range(8)}
        svc.vault.commit(user, [build_put(p, m) for p, m in notes.items()])
        workers = svc.vault.indexing.vectors.workers  # type: ignore[union-attr]
        assert workers is not None
        started = []
        real = workers._ensure_pool

        def counted():  # type: ignore[no-untyped-def]
            started.append(True)
            return real()

        monkeypatch.setattr(workers, "_ensure_pool", counted)
        assert svc.vault.indexing.drain_pending() == len(notes)
        assert started and workers._pool is None  # used, and stopped once drained
        assert [svc.vault.vector_status(user, p) for p in notes] == ["indexed"] * len(notes)
        hit = nearest(svc, "which database did we choose")[0]
        assert (hit.path, hit.heading) == ("a.md", "Database")
        assert DECISION[hit.offset : hit.offset + hit.length] == hit.text


def test_a_drain_indexes_the_text_of_a_note_changed_since_its_bulk_commit(
    tmp_path: Path, backend: str, clock: FakeClock
) -> None:
    # The drain that embeds a bulk commit skips the text this process indexed with the
    # commit (ADR 0048), but not a later version written by another process whose own
    # text indexing failed (it queued the note).
    with backend_settings(tmp_path, backend, embeddings_inline_notes=2) as settings:
        svc = build_services(settings, clock=clock)
        require_vectors(svc)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        user = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)
        notes = {"a.md": DECISION, "b.md": GARDEN, "c.md": "a third note\n"}
        svc.vault.commit(user, [build_put(p, m) for p, m in notes.items()])
        other = build_services(settings, clock=clock)  # another process, same vault
        down = ServiceUnavailable("search is down", code="search_unavailable")

        def unavailable(*_args: object, **_kwargs: object) -> None:
            raise down

        other.index.upsert = unavailable  # type: ignore[method-assign]
        other.vault.write(user, "c.md", "the zebra moved to the savanna\n")
        assert [h.path for h in svc.vault.search(user, "zebra", mode="keyword")] == []
        assert svc.vault.indexing.drain_pending() == 3
        assert [h.path for h in svc.vault.search(user, "zebra", mode="keyword")] == ["c.md"]
        assert [h.path for h in svc.vault.search(user, "Postgres", mode="keyword")] == ["a.md"]
        assert [svc.vault.vector_status(user, p) for p in notes] == ["indexed"] * 3


def test_the_server_embeds_a_bulk_commit_in_the_background(
    tmp_path: Path, backend: str, clock: FakeClock
) -> None:
    with backend_settings(tmp_path, backend, embeddings_inline_notes=1) as settings:
        svc = build_services(settings, clock=clock)
        require_vectors(svc)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        user = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)
        svc.vault.commit(user, [build_put("a.md", DECISION), build_put("b.md", GARDEN)])
        assert svc.vault.vector_status(user, "a.md") == "pending"
        stop = threading.Event()
        thread = drain_outbox_in_background(svc, every=0.01, stop=stop)
        try:
            deadline = time.monotonic() + 10
            while svc.vault.vector_status(user, "b.md") != "indexed":
                assert time.monotonic() < deadline, "the background drain never embedded b.md"
                time.sleep(0.01)
        finally:
            stop.set()
            thread.join(timeout=5)
        assert not svc.vault.indexing.pending
        assert svc.store.queued_reindex(LOCAL_ACCOUNT_ID) == []


def test_reindex_vectors_re_embeds_every_note(
    tmp_path: Path, backend: str, clock: FakeClock
) -> None:
    with backend_settings(tmp_path, backend) as settings:
        svc = build_services(settings, clock=clock)
        require_vectors(svc)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        user = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)
        svc.vault.write(user, "a.md", DECISION)
        changed = build_services(
            settings.model_copy(update={"embeddings_dimension": 64}), clock=clock
        )
        assert changed.vault.reindex(LOCAL_ACCOUNT_ID, vectors=True) == 1
        assert changed.vectors.indexed_models(LOCAL_ACCOUNT_ID).keys() == {changed.embedding.model}  # type: ignore[union-attr]
        assert changed.vault.vector_status(user, "a.md") == "indexed"


def test_embeddings_off_keeps_writes_and_reports_off(
    tmp_path: Path, backend: str, clock: FakeClock
) -> None:
    with backend_settings(tmp_path, backend, embeddings="off") as settings:
        svc = build_services(settings, clock=clock)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        user = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)
        svc.vault.write(user, "a.md", DECISION)
        assert svc.embedding.model is None and svc.vectors is None
        assert svc.vault.vector_status(user, "a.md") == "off"


def test_a_note_reads_while_the_vector_index_is_down(
    vsvc: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    vsvc.vault.write(user, "a.md", DECISION)

    def down(*_args: object, **_kwargs: object) -> None:
        raise ServiceUnavailable("vectors are down", code="search_unavailable")

    monkeypatch.setattr(vsvc.vectors, "indexed_paths", down)
    assert vsvc.vault.read(user, "a.md").markdown == DECISION
    assert vsvc.vault.vector_status(user, "a.md") == "pending"
