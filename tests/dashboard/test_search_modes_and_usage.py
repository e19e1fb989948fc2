"""The search page's modes (keyword, semantic, hybrid), its minimum score and a hit that
opens its note at the matched passage; a note's vector status; the usage page's
attribution fields. Headless Chromium against memvault on a real server (vectors on,
the local embedding model)."""

from __future__ import annotations

import re

from memvault.services.accounts import LOCAL_ACCOUNT_ID
from tests.dashboard.conftest import Page
from tests.dashboard.helpers import put

PARAPHRASE = "which database did we choose"


def test_semantic_search_finds_a_paraphrase_keyword_does_not_and_opens_at_the_match(
    tab: Page,
) -> None:
    put(
        tab.server,
        "decisions/storage.md",
        "# Decisions\n\nSome context first.\n\n## Storage\n\nAfter comparing options the team"
        " settled on PostgreSQL; MySQL lacked the JSON columns and SQLite the concurrent"
        " writers.\n",
    )
    put(tab.server, "notes/cooking.md", "# Cooking\n\nBake the sourdough at 230 degrees.\n")
    # First as before the vault's first embedding (its vectors not there yet): a search by
    # meaning runs as keyword, and the page says so and why.
    services = tab.server.services
    assert services.vectors is not None
    services.vectors.clear(LOCAL_ACCOUNT_ID)
    tab.start_session_with_key()
    page = tab.page
    tab.goto("/dashboard/search?q=sourdough&mode=semantic")
    page.get_by_text("1 result · keyword search").wait_for()
    fallback = page.locator(".search-fallback")
    assert "Searched by keyword instead" in fallback.inner_text()
    assert "no vectors" in fallback.inner_text()
    tab.screenshot("search-fallback")
    assert tab.axe() == []
    services.vault.reindex(LOCAL_ACCOUNT_ID, vectors=True)

    page.get_by_label("Words").fill("")
    page.get_by_label("Mode").select_option("keyword")
    page.get_by_label("Words").fill(PARAPHRASE)
    page.get_by_text("0 results · keyword search").wait_for()
    page.get_by_text("Nothing matches").wait_for()

    page.get_by_label("Mode").select_option("semantic")
    page.get_by_text("1 result · semantic search").wait_for()
    hit = page.locator(".results li", has_text="storage.md")
    matched = hit.get_by_role("link", name="matched under “Storage”")
    matched.wait_for()
    assert page.locator(".search-fallback").count() == 0  # vectors answered
    tab.screenshot("search-modes")
    assert tab.axe() == []

    page.get_by_label("Min score").fill("0.99")
    page.get_by_text("0 results · semantic search").wait_for()
    page.get_by_label("Min score").fill("")
    matched.click()
    page.wait_for_url(re.compile(r".*/dashboard/vault/decisions/storage\.md\?at=\d+$"))
    page.locator(".markdown-body h2.matched-heading", has_text="Storage").wait_for()
    assert page.locator(".markdown-body .matched-heading").count() == 1
    page.locator(".note-meta .vector-status", has_text="vectors: indexed").wait_for()
    tab.screenshot("note-at-match")
    assert tab.axe() == []


def test_the_usage_page_shows_embedding_calls_and_tracked_since(tab: Page) -> None:
    with tab.server.client() as http:
        assert http.post("/v1/memories", json={"slug": "u", "name": "U"}).status_code == 201
        fact = {"item_type": "fact", "text": "Ana rides a 2019 Brompton."}
        assert http.post("/v1/memories/u/items", json=fact).status_code == 201
        usage = http.get("/v1/usage").json()
    assert usage["totals"]["embeddings"]["calls"] == 1
    tab.sign_in_with_key()
    page = tab.page
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Usage").click()
    page.get_by_text(f"Tracked since {usage['tracked_since']}").wait_for()
    stats = page.locator("dl.stats")
    stats.wait_for()

    def stat(label: str) -> str:
        return str(
            stats.locator(
                "div", has=page.locator("dt", has_text=re.compile(f"^{re.escape(label)}$"))
            )
            .locator("dd")
            .inner_text()
        )

    assert stat("Embedding calls") == "1"
    assert stat("Memory fact-search embeddings (memory_search_embed)") == "0"
    assert stat("Injected tokens from vault recall (estimate)") == "0"
    assert stat("Injected tokens from memory profiles (estimate)") == "0"
    chart = page.locator(
        "section.chart", has=page.get_by_role("heading", name="Embedding calls", exact=True)
    )
    chart.locator("summary").click()
    [day] = [r["day"] for r in usage["days"] if r["embeddings"]["calls"]]
    row = chart.get_by_role("row", name=re.compile(day))
    assert row.locator("td").last.inner_text() == "1"
    tab.screenshot("usage-fields")
    assert tab.axe() == []
