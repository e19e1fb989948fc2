"""GET /v1/usage counts embedding calls (usage records with api_format "embeddings") on
their own, per day and key and in the totals, within requests and cost."""

from __future__ import annotations

from tests.support.servers import LiveServer


def test_embedding_calls_are_counted_apart(live_server: LiveServer) -> None:
    with live_server.client() as c:
        before = c.get("/v1/usage").json()["totals"]
        assert before["embeddings"] == {"calls": 0, "cost_micros": 0}
        assert c.post("/v1/memories", json={"slug": "u", "name": "U"}).status_code == 201
        for text in ("Ana rides a Brompton.", "Ana commutes 12 km."):
            r = c.post("/v1/memories/u/items", json={"item_type": "fact", "text": text})
            assert r.status_code == 201 and r.json()["embedded"] is True
        guardrail = {"item_type": "guardrail", "text": "EUR only."}  # never embedded
        assert c.post("/v1/memories/u/items", json=guardrail).status_code == 201
        usage = c.get("/v1/usage").json()
    totals = usage["totals"]
    assert totals["embeddings"]["calls"] == 2
    assert totals["requests"] >= 2
    assert totals["embeddings"]["cost_micros"] <= totals["cost_micros"]
    [row] = [r for r in usage["days"] if r["embeddings"]["calls"]]
    assert row["embeddings"]["calls"] == 2
