"""POST /v1/embeddings through memvault, from the official openai SDK: passed through to
the OpenAI-compatible upstream (the scripted one) with the memvault key checked, priced
from the price table and recorded in usage; refusals and upstream failures in OpenAI's
error shape, the hold released."""

from __future__ import annotations

import time

import httpx
import openai
import pytest

from memvault.domain.models import UsageRecord
from memvault.domain.pricing import cost_micros
from tests.gateway.conftest import issue_key, openai_client
from tests.support.servers import LiveServer
from tests.support.upstream import Fault, ScriptedUpstream

MODEL = "text-embedding-3-small"


def client_usage(server: LiveServer, count: int) -> list[UsageRecord]:
    deadline = time.monotonic() + 10
    while True:
        found = [
            r
            for r in server.services.ledger.usage_between("local", "2000-01-01", "2999-12-31")
            if r.outcome == "client"
        ]
        if len(found) >= count:
            return found
        assert time.monotonic() < deadline, f"expected {count} usage records, found {len(found)}"
        time.sleep(0.05)


def test_embeddings_pass_through_priced_and_recorded(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    billing = sqlite_gateway.services.billing
    billing.set_balance("local", 1_000_000)
    key = issue_key(sqlite_gateway)
    answer = openai_client(sqlite_gateway, key).embeddings.create(
        model=MODEL, input=["the cat sat", "on the mat today"], dimensions=8
    )
    assert [len(d.embedding) for d in answer.data] == [8, 8]
    assert answer.usage.prompt_tokens == 7  # the scripted upstream: a token a word
    [request] = [r for r in upstream.requests if r.path == "/v1/embeddings"]
    assert request.headers["authorization"] == "Bearer sk-upstream-openai"
    assert request.json == {
        "model": MODEL,
        "input": ["the cat sat", "on the mat today"],
        "dimensions": 8,
        "encoding_format": "base64",  # as the SDK sends it: the body goes up unchanged
    }
    [record] = client_usage(sqlite_gateway, 1)
    cost = cost_micros(billing.price(MODEL), 7, 0)
    assert record.api_format == "embeddings" and record.model == MODEL
    assert (record.input_tokens, record.cost_micros, record.status) == (7, cost, 200)
    assert record.key_id and record.key_id != ""
    balance = billing.balance("local")
    assert balance.held_micros == 0 and balance.balance_micros == 1_000_000 - cost


def test_refusals_and_failures_are_openai_shaped_and_release_the_hold(
    sqlite_gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    billing = sqlite_gateway.services.billing
    billing.set_balance("local", 1_000_000)
    key = issue_key(sqlite_gateway)
    url = sqlite_gateway.url + "/v1/embeddings"
    auth = {"authorization": f"Bearer {key}"}
    for body in [{"model": MODEL}, {"model": MODEL, "input": ""}, {"input": "x"}]:
        refused = httpx.post(url, json=body, headers=auth, timeout=20)
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert set(error) == {"message", "type", "param", "code"}
        assert error["type"] == "invalid_request_error"
    with pytest.raises(openai.AuthenticationError):
        openai_client(sqlite_gateway, "mv_wrong").embeddings.create(model=MODEL, input="x")
    upstream.enqueue_embeddings(Fault(500), Fault(429, headers={"retry-after": "2"}))
    with pytest.raises(openai.InternalServerError) as failed:
        openai_client(sqlite_gateway, key).embeddings.create(model=MODEL, input="x")
    assert failed.value.status_code == 502
    with pytest.raises(openai.RateLimitError) as limited:
        openai_client(sqlite_gateway, key).embeddings.create(model=MODEL, input="x")
    assert limited.value.response.headers["retry-after"] == "2"
    assert billing.balance("local").held_micros == 0
    assert billing.balance("local").balance_micros == 1_000_000
    billing.set_balance("local", 0)
    with pytest.raises(openai.APIStatusError) as broke:
        openai_client(sqlite_gateway, key).embeddings.create(model=MODEL, input="x")
    assert broke.value.status_code == 402
    assert len([r for r in upstream.requests if r.path == "/v1/embeddings"]) == 2
    assert client_usage(sqlite_gateway, 0) == []
