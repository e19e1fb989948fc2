"""Search modes on both backends: keyword, semantic and hybrid, through the vault service.

What a user sees: a note that says the same thing in other words is found by meaning
(semantic, hybrid) where the words alone find nothing; ``min_score`` drops weaker hits;
a search by meaning that vectors cannot answer runs as keyword and says why; a hybrid hit
names the chunk that matched, so a caller can read around it; recall brings the passage
that matched, not the head of a long note; another organisation's notes never appear.

The AWS cases run on OpenSearch k-NN (adapters/aws/vectors.py, ADR 0026): they need a
node with the k-NN plugin (scripts/opensearch/start.sh loads it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from memvault.container import Services, build_services
from memvault.domain.models import Toggles
from memvault.domain.recall import PASSAGE_MARK
from memvault.errors import InvalidInput, ServiceUnavailable
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller
from memvault.services.hybrid import FALLBACK_FAILED, FALLBACK_OFF
from memvault.services.recall import RecallService
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.opensearch import opensearch_url

STORAGE = (
    "# Storage\n\nAfter comparing options the team settled on PostgreSQL; MySQL lacked the JSON"
    " columns and SQLite the concurrent writers.\n"
)
NOTES = {
    "decisions/storage.md": STORAGE,
    "notes/pets.md": "# Pets\n\nThe dog needs a walk every morning and the cat eats twice a day.\n",
    "notes/car.md": "# Car\n\nThe car goes in for its service on Tuesday; the tyres are worn.\n",
    "notes/cooking.md": "# Cooking\n\nBake the sourdough at 230 degrees for forty minutes.\n",
}
# Not one of its words is in the storage note (nor a stem of one).
PARAPHRASE = "which database did we choose"


def require_vectors(services: Services) -> None:
    """Skip (fail under CI) when the backend's vector index cannot answer: a node without
    the k-NN plugin (one started before the plugin was added)."""
    assert services.vectors is not None, f"no vector index on {services.settings.backend}"
    if services.settings.backend == "aws" and not node_has_knn():
        reason = "the local OpenSearch node has no k-NN plugin (opensearch-knn) loaded"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def node_has_knn() -> bool:
    url = opensearch_url()
    if url is None:
        return False
    plugins = httpx.get(f"{url}/_cat/plugins", params={"format": "json"}, timeout=5).json()
    return any("knn" in str(p.get("component", "")).lower() for p in plugins)


@pytest.fixture
def vsvc(services: Services, user: Caller) -> Services:
    require_vectors(services)
    for path, markdown in NOTES.items():
        services.vault.write(user, path, markdown)
    return services


def paths(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [hit.path for hit in hits]


def test_a_paraphrase_is_found_by_meaning_not_by_its_words(vsvc: Services, user: Caller) -> None:
    keyword = vsvc.vault.search_outcome(user, PARAPHRASE, mode="keyword")
    assert keyword.hits == [] and keyword.mode == "keyword" and keyword.fallback is None

    for mode in ("semantic", "hybrid"):
        found = vsvc.vault.search_outcome(user, PARAPHRASE, mode=mode)
        assert found.mode == mode and found.fallback is None
        # Only the storage note clears the default cut-off (0.4): the others are unrelated.
        assert paths(found.hits) == ["decisions/storage.md"]
        [hit] = found.hits
        assert 0.4 <= hit.score < 1.0
        assert hit.title == "Storage" and hit.note_id


def test_vectors_on_make_hybrid_the_default(vsvc: Services, user: Caller) -> None:
    outcome = vsvc.vault.search_outcome(user, PARAPHRASE)
    assert outcome.mode == "hybrid"
    assert paths(outcome.hits) == ["decisions/storage.md"]


def test_a_hybrid_hit_names_the_chunk_that_matched(vsvc: Services, user: Caller) -> None:
    [hit] = vsvc.vault.search(user, PARAPHRASE, mode="hybrid")
    assert hit.chunks, "a hit found by meaning names its chunk"
    best = hit.chunks[0]
    assert best.heading == "Storage"
    note = vsvc.vault.read(user, hit.path)
    # The offset and length locate the passage in the note's markdown (memory_read's offset).
    assert note.markdown[best.offset : best.offset + best.length] == best.text
    assert "PostgreSQL" in best.text
    assert "PostgreSQL" in hit.snippet  # no highlighted snippet: the chunk's text instead

    # A note found by its words too keeps its highlighted snippet.
    [both] = vsvc.vault.search(user, "sourdough baking", mode="hybrid")
    assert both.path == "notes/cooking.md" and "<mark>" in both.snippet.lower()


def test_a_hybrid_hit_found_by_its_words_shows_what_keyword_search_shows(
    vsvc: Services, user: Caller
) -> None:
    """A hit the keyword half brought keeps the keyword search's snippet, title, tags, id
    and time; only its score and chunks are the fusion's (ADR 0078)."""
    text = "the car and the dog"
    words = {hit.path: hit for hit in vsvc.vault.search(user, text, mode="keyword")}
    hybrid = vsvc.vault.search(user, text, mode="hybrid", min_score=0.0)
    found = [hit for hit in hybrid if hit.path in words]
    assert {hit.path for hit in found} >= {"notes/car.md", "notes/pets.md"}
    for hit in found:
        assert "<mark>" in hit.snippet.lower()
        assert replace(hit, score=words[hit.path].score, chunks=()) == words[hit.path]


def test_a_keyword_index_outage_fails_a_hybrid_search_as_a_keyword_one(
    vsvc: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keyword half runs beside the vector half (ADR 0078): its failure is still the
    search's, not an empty half."""

    def down(*_args: object, **_kwargs: object) -> list[object]:
        raise ServiceUnavailable("search is down", code="search_unavailable")

    monkeypatch.setattr(vsvc.index, "search", down)
    for mode in ("keyword", "hybrid"):
        with pytest.raises(ServiceUnavailable) as refused:
            vsvc.vault.search(user, "sourdough baking", mode=mode)
        assert refused.value.code == "search_unavailable"


def test_min_score_drops_weaker_hits(vsvc: Services, user: Caller) -> None:
    everything = vsvc.vault.search(user, PARAPHRASE, mode="semantic", min_score=0.0)
    assert paths(everything)[0] == "decisions/storage.md" and len(everything) > 1
    scores = [hit.score for hit in everything]
    assert scores == sorted(scores, reverse=True)
    strong = everything[0].score
    assert vsvc.vault.search(user, PARAPHRASE, mode="semantic", min_score=strong) == everything[:1]
    assert vsvc.vault.search(user, PARAPHRASE, mode="hybrid", min_score=strong + 0.01) == []

    # Keyword search cuts only when asked to.
    keyword = vsvc.vault.search(user, "car service tyres", mode="keyword")
    assert paths(keyword) == ["notes/car.md"]
    cut = keyword[0].score + 0.01
    assert vsvc.vault.search(user, "car service tyres", mode="keyword", min_score=cut) == []


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"mode": "fuzzy"}, "mode"),
        ({"min_score": 1.5}, "min_score"),
        ({"min_score": -0.1}, "min_score"),
    ],
)
def test_bad_modes_and_cut_offs_are_refused(
    services: Services, user: Caller, kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        services.vault.search(user, "anything", **kwargs)  # type: ignore[arg-type]
    assert refused.value.code == "invalid_input" and refused.value.details["field"] == field
    assert field in refused.value.message


def test_not_yet_indexed_falls_back_to_keyword_and_says_so(vsvc: Services, user: Caller) -> None:
    assert vsvc.vectors is not None
    vsvc.vectors.clear(LOCAL_ACCOUNT_ID)  # as before the vault's first embedding
    outcome = vsvc.vault.search_outcome(user, "sourdough", mode="hybrid")
    assert outcome.mode == "keyword" and outcome.fallback is not None
    assert "no vectors" in outcome.fallback and "keyword search ran" in outcome.fallback
    assert paths(outcome.hits) == ["notes/cooking.md"]  # keyword still answers
    assert vsvc.vault.search_outcome(user, PARAPHRASE, mode="semantic").hits == []

    vsvc.vault.reindex(LOCAL_ACCOUNT_ID, vectors=True)
    again = vsvc.vault.search_outcome(user, PARAPHRASE, mode="semantic")
    assert again.mode == "semantic" and again.fallback is None
    assert paths(again.hits) == ["decisions/storage.md"]


def test_an_empty_vault_is_searched_by_meaning_without_a_fallback(
    services: Services, user: Caller
) -> None:
    require_vectors(services)
    outcome = services.vault.search_outcome(user, PARAPHRASE, mode="hybrid")
    assert outcome.hits == [] and outcome.mode == "hybrid" and outcome.fallback is None


@pytest.fixture
def vectors_off(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[Services]:
    with backend_settings(tmp_path, backend, embeddings="off") as settings:
        svc = build_services(settings, clock=clock)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        yield svc


def test_with_vectors_off_searches_by_meaning_run_as_keyword_and_say_so(
    vectors_off: Services, user: Caller
) -> None:
    for path, markdown in NOTES.items():
        vectors_off.vault.write(user, path, markdown)
    default = vectors_off.vault.search_outcome(user, "sourdough")
    assert default.mode == "keyword" and default.fallback is None  # keyword is the default
    for mode in ("semantic", "hybrid"):
        outcome = vectors_off.vault.search_outcome(user, "sourdough", mode=mode)
        assert outcome.mode == "keyword" and outcome.fallback == FALLBACK_OFF
        assert paths(outcome.hits) == ["notes/cooking.md"] and outcome.hits[0].chunks == ()
    assert vectors_off.vault.search(user, PARAPHRASE, mode="hybrid") == []


def test_another_organisations_notes_are_never_found_by_meaning(
    vsvc: Services, user: Caller
) -> None:
    vsvc.accounts.create_account("other", account_id="other")
    other = Caller(account_id="other")
    vsvc.vault.write(other, "theirs.md", "# Engines\n\nWe went with MariaDB in the end.\n")
    for mode in ("semantic", "hybrid"):
        assert "theirs.md" not in paths(vsvc.vault.search(user, PARAPHRASE, mode=mode, min_score=0))
        found = vsvc.vault.search(other, PARAPHRASE, mode=mode, min_score=0)
        assert paths(found) == ["theirs.md"]


def test_recall_brings_the_passage_that_matched_not_the_head(vsvc: Services, user: Caller) -> None:
    filler = "\n\n".join(
        f"## Week {w}\n\n" + "Standup notes about the sprint board and the retro. " * 12
        for w in range(12)
    )
    long_note = f"# Project log\n\n{filler}\n\n## Decisions\n\n{STORAGE.split(chr(10), 2)[2]}"
    vsvc.vault.write(user, "log.md", long_note)
    block = RecallService(vsvc.vault).recall(
        user, "Which database did we choose?", max_notes=5, token_budget=300
    )
    assert block is not None and "log.md" in block.paths
    start = block.text.index('<note path="log.md"')
    element = block.text[start : block.text.index("</note>", start)]
    assert "PostgreSQL" in element  # the matched passage, where the head holds none of it
    assert 'heading="Decisions"' in element and PASSAGE_MARK in element
    assert "Week 0" not in element


@pytest.fixture
def keyword_default(tmp_path: Path, backend: str, clock: FakeClock) -> Iterator[Services]:
    with backend_settings(tmp_path, backend, search_mode="keyword") as settings:
        svc = build_services(settings, clock=clock)
        svc.accounts.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        yield svc


def test_the_deployments_search_mode_is_the_default_a_caller_can_override(
    keyword_default: Services, user: Caller
) -> None:
    require_vectors(keyword_default)
    for path, markdown in NOTES.items():
        keyword_default.vault.write(user, path, markdown)
    default = keyword_default.vault.search_outcome(user, PARAPHRASE)
    assert default.mode == "keyword" and default.hits == [] and default.fallback is None
    asked = keyword_default.vault.search_outcome(user, PARAPHRASE, mode="hybrid")
    assert asked.mode == "hybrid" and paths(asked.hits) == ["decisions/storage.md"]
    # Recall follows the default too: the paraphrase recalls nothing by its words.
    recall = RecallService(keyword_default.vault)
    assert recall.recall(user, PARAPHRASE, max_notes=5, token_budget=2000) is None
    block = recall.recall(user, PARAPHRASE, max_notes=5, token_budget=2000, mode="hybrid")
    assert block is not None and block.paths == ("decisions/storage.md",)


def test_a_keys_recall_mode_is_stored_and_refused_when_unknown(services: Services) -> None:
    issued = services.accounts.issue_key(LOCAL_ACCOUNT_ID, name="k", toggles=Toggles(recall=True))
    key = issued.key
    assert key.recall_mode is None  # the vault's default
    services.accounts.set_key_settings(
        LOCAL_ACCOUNT_ID, key.id, replace(key.settings, recall_mode="keyword")
    )
    stored = services.store.get_key(LOCAL_ACCOUNT_ID, key.id)
    assert stored is not None and stored.recall_mode == "keyword"
    with pytest.raises(InvalidInput, match="recall_mode"):
        services.accounts.set_key_settings(
            LOCAL_ACCOUNT_ID, key.id, replace(key.settings, recall_mode="fuzzy")
        )
    services.accounts.set_key_settings(
        LOCAL_ACCOUNT_ID, key.id, replace(key.settings, recall_mode=None)
    )
    again = services.store.get_key(LOCAL_ACCOUNT_ID, key.id)
    assert again is not None and again.recall_mode is None


def test_an_embedder_outage_runs_the_search_as_keyword_and_says_so(
    vsvc: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    def down(*_args: object, **_kwargs: object) -> list[float]:
        raise ServiceUnavailable("the embedding model is down", code="embeddings_unavailable")

    semantic = vsvc.vault.hybrid.semantic
    assert semantic is not None
    monkeypatch.setattr(semantic, "embed_query", down)
    for mode in ("semantic", "hybrid"):
        outcome = vsvc.vault.search_outcome(user, "sourdough baking", mode=mode)
        assert outcome.mode == "keyword" and outcome.fallback == FALLBACK_FAILED
        assert paths(outcome.hits) == ["notes/cooking.md"]
        assert "<mark>" in outcome.hits[0].snippet.lower()


def test_a_long_page_asks_for_as_many_chunks_a_note_as_a_page_of_ten(
    services: Services, user: Caller
) -> None:
    """A long note holds the 76 nearest chunks; a hybrid page of 20 (no cut-off) still
    lists the other note, whose chunk comes 77th: it asks for 6 chunks a note, as a page
    of 10 does (up to 100; ADR 0070), not 3."""
    require_vectors(services)
    part = STORAGE.split("\n", 2)[2].strip() + " "
    reviews = "\n\n".join(f"## Review {i}\n\n" + part * 4 for i in range(75))
    services.vault.write(user, "log.md", f"# Storage log\n\n{reviews}\n")
    backups = "# Backups\n\nThe nightly dump of the PostgreSQL storage goes to the second disk.\n"
    services.vault.write(user, "backups.md", backups)
    page = services.vault.search(user, PARAPHRASE, mode="hybrid", limit=20, min_score=0.0)
    assert paths(page) == ["log.md", "backups.md"]
    # A page of 10 is as before: the 60 nearest chunks, all the long note's.
    assert paths(services.vault.search(user, PARAPHRASE, mode="hybrid", min_score=0.0)) == [
        "log.md"
    ]
