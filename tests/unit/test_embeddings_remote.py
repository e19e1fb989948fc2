"""The paid embedders: OpenAI-compatible on the scripted upstream, Bedrock on Stubber."""

from __future__ import annotations

import io
import json
import math
import socket
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from memvault.adapters.embeddings import build_embedder
from memvault.adapters.embeddings.bedrock import TITAN_V2, BedrockEmbedder
from memvault.adapters.embeddings.openai import OpenAIEmbedder
from memvault.domain.pricing import PriceTable
from memvault.errors import ServiceUnavailable
from memvault.settings import Settings
from tests.support.upstream import Fault, Malformed, ScriptedUpstream

PRICES = PriceTable.load(None)


@pytest.fixture(scope="module")
def upstream_server() -> Iterator[ScriptedUpstream]:
    with ScriptedUpstream() as server:
        yield server


@pytest.fixture
def upstream(upstream_server: ScriptedUpstream) -> Iterator[ScriptedUpstream]:
    upstream_server.reset()
    yield upstream_server
    upstream_server.reset()


def openai(upstream: ScriptedUpstream, **overrides: Any) -> OpenAIEmbedder:
    values: dict[str, Any] = {
        "embeddings": "openai",
        "openai_base_url": f"{upstream.base_url}/v1",
        "openai_api_key": "sk-gateway",
        **overrides,
    }
    settings = Settings(**values)
    embedder = build_embedder(settings, PRICES)
    assert isinstance(embedder, OpenAIEmbedder)
    return embedder


def embedding_calls(upstream: ScriptedUpstream) -> list[Any]:
    return [r for r in upstream.requests if r.path == "/v1/embeddings"]


def test_batches_keep_input_order_and_are_priced(upstream: ScriptedUpstream) -> None:
    embedder = openai(upstream, embeddings_batch_size=2, embeddings_dimension=32)
    texts = ["alpha beta", "gamma", "alpha beta", "delta epsilon zeta", "gamma"]
    out = embedder.embed(texts)
    calls = embedding_calls(upstream)
    assert [len(c.json["input"]) for c in calls] == [2, 2, 1]
    assert calls[0].headers["authorization"] == "Bearer sk-gateway"
    assert calls[0].json["model"] == "text-embedding-3-small"
    assert calls[0].json["dimensions"] == 32
    assert out.model == "text-embedding-3-small" and out.dimension == 32
    assert out.vectors[0] == out.vectors[2] and out.vectors[1] == out.vectors[4]
    assert out.vectors[0] != out.vectors[1]
    for vector in out.vectors:
        assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, rel_tol=1e-6)
    assert out.input_tokens == 9  # the upstream counts one token per word
    # $0.02 per million tokens, rounded up to a whole micro-dollar.
    assert out.cost_micros == math.ceil(9 * 0.02)


def test_its_own_base_url_and_key_win_over_the_gateways(upstream: ScriptedUpstream) -> None:
    embedder = openai(
        upstream,
        openai_base_url="http://127.0.0.1:9/v1",
        embeddings_base_url=f"{upstream.base_url}/v1",
        embeddings_api_key="sk-embeddings",
        embeddings_model="text-embedding-3-large",
        embeddings_dimension=16,
    )
    assert len(embedder.embed(["one"]).vectors[0]) == 16
    (call,) = embedding_calls(upstream)
    assert call.headers["authorization"] == "Bearer sk-embeddings"
    assert call.json["model"] == "text-embedding-3-large"


@pytest.mark.parametrize(
    "step",
    [
        Fault(status=500),
        Fault(status=429),
        Fault(status=401),
        Malformed(body=b"not json"),
        Malformed(body=b'{"data": [{"index": 0}]}', content_type="application/json"),
    ],
)
def test_a_failed_call_is_unavailable(upstream: ScriptedUpstream, step: Any) -> None:
    upstream.enqueue_embeddings(step)
    with pytest.raises(ServiceUnavailable) as info:
        openai(upstream, embeddings_dimension=8).embed(["text"])
    assert info.value.code == "embeddings_unavailable"
    assert "text" not in str(info.value)  # no input in the message


def test_an_answer_of_the_wrong_size_is_unavailable(upstream: ScriptedUpstream) -> None:
    # Configured for 1536 dimensions, the upstream answers 64 (no dimensions sent).
    with pytest.raises(ServiceUnavailable):
        openai(upstream).embed(["text"])


def test_an_unreachable_upstream_is_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = Settings(embeddings="openai", openai_base_url=f"http://127.0.0.1:{port}/v1")
    embedder = build_embedder(settings, PRICES)
    assert embedder is not None
    with pytest.raises(ServiceUnavailable):
        embedder.embed(["text"])


# ---------------------------------------------------------------------- Bedrock
def titan_answer(vector: list[float], tokens: int) -> dict[str, Any]:
    """InvokeModel's answer for Titan Text Embeddings V2, as the service sends it."""
    payload = json.dumps(
        {"embedding": vector, "embeddingsByType": {"float": vector}, "inputTextTokenCount": tokens}
    ).encode()
    return {
        "body": StreamingBody(io.BytesIO(payload), len(payload)),
        "contentType": "application/json",
    }


@pytest.fixture
def bedrock() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client(
        "bedrock-runtime",
        region_name="eu-west-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",
    )
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def test_titan_v2_embeds_each_text_and_prices_its_tokens(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    for text, vector, tokens in (("first text", [3.0, 4.0], 2), ("second", [0.0, 2.0], 1)):
        stubber.add_response(
            "invoke_model",
            titan_answer(vector + [0.0] * 254, tokens),
            expected_params={
                "modelId": TITAN_V2,
                "body": json.dumps({"inputText": text, "dimensions": 256, "normalize": True}),
                "contentType": "application/json",
                "accept": "application/json",
            },
        )
    price = PRICES.price(TITAN_V2)
    embedder = BedrockEmbedder(client, dimension=256, price=price)
    out = embedder.embed(["first text", "second"])
    assert out.model == TITAN_V2 and out.dimension == 256
    assert out.vectors[0][:2] == pytest.approx([0.6, 0.8])
    assert out.vectors[1][:2] == pytest.approx([0.0, 1.0])
    assert out.input_tokens == 3
    assert out.cost_micros == 1  # 3 tokens at $0.02 per million, rounded up


@pytest.mark.parametrize("code", ["ThrottlingException", "AccessDeniedException"])
def test_a_bedrock_error_is_unavailable(bedrock: tuple[Any, Stubber], code: str) -> None:
    client, stubber = bedrock
    stubber.add_client_error("invoke_model", service_error_code=code, http_status_code=429)
    embedder = BedrockEmbedder(client, dimension=256, price=PRICES.price(TITAN_V2))
    with pytest.raises(ServiceUnavailable) as info:
        embedder.embed(["text"])
    assert code in str(info.value)


def test_a_bedrock_answer_of_the_wrong_size_is_unavailable(bedrock: tuple[Any, Stubber]) -> None:
    client, stubber = bedrock
    stubber.add_response("invoke_model", titan_answer([1.0] * 512, 1))
    embedder = BedrockEmbedder(client, dimension=256, price=PRICES.price(TITAN_V2))
    with pytest.raises(ServiceUnavailable):
        embedder.embed(["text"])


def test_titan_v2_dimensions_are_checked() -> None:
    with pytest.raises(ValueError):
        BedrockEmbedder(object(), dimension=300, price=PRICES.price(TITAN_V2))


def test_the_factory_builds_bedrock_from_settings() -> None:
    settings = Settings(embeddings="bedrock", aws_region="eu-west-1", embeddings_dimension=512)
    embedder = build_embedder(settings, PRICES)
    assert isinstance(embedder, BedrockEmbedder)
    assert (embedder.model, embedder.dimension) == (TITAN_V2, 512)
