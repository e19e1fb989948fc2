"""What memvault.lambda_powertools gives the functions beyond logs and metrics: the
inference function's per-request correlation ids and EMF business metrics, provider keys
that follow a rotation without a cold start (parameters.get_secret with a max age), and
Powertools Idempotency on the POST routes a client may retry (ADR 0032). On moto and
the local OpenSearch node, through the entrypoints as Lambda runs them.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest

from memvault.domain.models import Toggles
from memvault.settings import get_settings
from tests.sam.test_events import _environment
from tests.sam.test_handlers import (
    Records,
    _replay,
    _serve,
    admin_key,
    context,
    emf_metrics,
    event,
    load_function,
    metric_total,
)
from tests.sam.test_ops import Gate
from tests.support.aws import REGION, create_resources, load_template, serial_moto
from tests.support.backends import require_opensearch
from tests.support.opensearch import drop_vector_indices
from tests.support.upstream import ScriptedUpstream
from tests.support.upstream.steps import Reply

NOTE = "projects/launch.md"


@pytest.fixture
def load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., ModuleType]]:
    """Cold-start functions/<name> on a fresh moto stack and the local node."""
    node = require_opensearch()
    with serial_moto():
        table, bucket = create_resources()
        index = f"memvault-pt-{uuid.uuid4().hex[:12]}"
        base = _environment(table, bucket, node, index, tmp_path / "data")

        def cold_start(name: str, **env: str) -> ModuleType:
            for key, value in {**base, **env}.items():
                monkeypatch.setenv(key, value)
            get_settings.cache_clear()
            return load_function(name)

        try:
            yield cold_start
        finally:
            get_settings.cache_clear()
            from memvault.adapters.aws.search import OpenSearchIndex, make_client

            OpenSearchIndex(
                make_client(node, auth="none", region=None, timeout=30.0), index
            ).drop_index()
            drop_vector_indices(node, index)


# ---------------------------------------------------------------------- inference
def _secrets(openai: str) -> dict[str, str]:
    sm = boto3.client("secretsmanager", region_name=REGION)
    suffix = uuid.uuid4().hex[:8]
    return {
        "MEMVAULT_OPENAI_API_KEY_SECRET": sm.create_secret(
            Name=f"pt-{suffix}/openai", SecretString=openai
        )["ARN"],
        "MEMVAULT_ANTHROPIC_API_KEY_SECRET": sm.create_secret(
            Name=f"pt-{suffix}/anthropic", SecretString="sk-ant-1"
        )["ARN"],
    }


def _lwa_headers(request_id: str) -> dict[str, str]:
    """What Lambda Web Adapter adds to each request it hands the app."""
    return {
        "x-amzn-request-context": json.dumps({"requestId": request_id, "stage": "prod"}),
        "x-amzn-lambda-context": json.dumps(
            {
                "request_id": f"lambda-{request_id}",
                "deadline": int(time.time() * 1000) + 900_000,
                "invoked_function_arn": f"arn:aws:lambda:{REGION}:123456789012:function:inf",
            }
        ),
    }


def test_inference_logs_carry_the_request_id_and_each_request_its_business_metrics(
    load: Callable[..., ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    records = Records()
    logging.getLogger("memvault").addHandler(records)
    try:
        with ScriptedUpstream() as upstream:
            fn = load(
                "inference",
                MEMVAULT_OPENAI_BASE_URL=upstream.base_url + "/v1",
                MEMVAULT_ANTHROPIC_BASE_URL=upstream.base_url,
                **_secrets("sk-openai-1"),
            )
            key = admin_key(fn)
            caller_note = fn.services.vault
            from memvault.services.context import Caller, Surface

            caller_note.write(
                Caller(account_id="acme", surface=Surface.REST),
                NOTE,
                "# Launch plan\n\nShip the beta on Friday.",
            )
            upstream.enqueue(Reply(text="We ship the beta on Friday."))
            capsys.readouterr()
            chat = event("inference_chat", key)
            chat["headers"].update(_lwa_headers("req-inference-1"))
            for url in _serve(fn.app):
                status, _type, lines = _replay(url, chat)
                deadline = time.monotonic() + 10
                while not fn.services.ledger.usage_between("acme", "2000-01-01", "2999-12-31"):
                    assert time.monotonic() < deadline, "no usage record"
                    time.sleep(0.05)
    finally:
        logging.getLogger("memvault").removeHandler(records)
    assert status == 200, lines
    (usage,) = fn.services.ledger.usage_between("acme", "2000-01-01", "2999-12-31")
    billed = [r for r in records.records if r.getMessage() == "gateway request"]
    assert [getattr(r, "correlation_id", None) for r in billed] == ["req-inference-1"]
    blobs = emf_metrics(capsys.readouterr().out)
    assert metric_total([b for b in blobs if b.get("service") == "inference"], "Invocations") == 1
    (business,) = [b for b in blobs if "InputTokens" in b]
    assert business["api"] == "openai" and business["outcome"] == usage.outcome

    def value(name: str) -> float:
        return metric_total([business], name)

    assert value("InputTokens") == usage.input_tokens > 0
    assert value("OutputTokens") == usage.output_tokens > 0
    assert value("CostMicros") == usage.cost_micros
    assert value("Rounds") == usage.rounds
    assert value("RecalledNotes") == usage.recalled_notes == 1
    assert value("MemoryToolCalls") == 0


@pytest.mark.parametrize("max_age", ["0", "300"])
def test_a_rotated_provider_key_applies_after_its_max_age_without_a_cold_start(
    load: Callable[..., ModuleType], max_age: str
) -> None:
    with ScriptedUpstream() as upstream:
        secrets = _secrets("sk-openai-before")
        fn = load(
            "inference",
            MEMVAULT_OPENAI_BASE_URL=upstream.base_url + "/v1",
            MEMVAULT_ANTHROPIC_BASE_URL=upstream.base_url,
            MEMVAULT_SECRETS_MAX_AGE_SECONDS=max_age,
            **secrets,
        )
        key = admin_key(fn)
        upstream.enqueue(Reply(text="one"), Reply(text="two"))
        sm = boto3.client("secretsmanager", region_name=REGION)
        for url in _serve(fn.app):
            first, _, _ = _replay(url, event("inference_chat", key))
            sm.put_secret_value(
                SecretId=secrets["MEMVAULT_OPENAI_API_KEY_SECRET"],
                SecretString="sk-openai-after",
            )
            second, _, _ = _replay(url, event("inference_chat", key))
        sent = [r.headers.get("authorization") for r in upstream.requests]
    assert (first, second) == (200, 200)
    expected = "after" if max_age == "0" else "before"  # 300 s: the read is reused
    assert sent == ["Bearer sk-openai-before", f"Bearer sk-openai-{expected}"]


# ---------------------------------------------------------------------- idempotency
def _idempotency_table() -> str:
    props = load_template()["Resources"]["IdempotencyTable"]["Properties"]
    name = f"memvault-idem-{uuid.uuid4().hex[:8]}"
    boto3.client("dynamodb", region_name=REGION).create_table(
        TableName=name,
        AttributeDefinitions=props["AttributeDefinitions"],
        KeySchema=props["KeySchema"],
        BillingMode=props["BillingMode"],
    )
    return name


def _append(key: str, text: str, idempotency_key: str | None, **headers: str) -> dict[str, Any]:
    ev = event("management_put_note", key)
    ev["httpMethod"] = ev["requestContext"]["httpMethod"] = "POST"
    ev["path"] = f"/v1/notes/{NOTE}/append"
    ev["requestContext"]["requestId"] = str(uuid.uuid4())
    ev["body"] = json.dumps({"text": text})
    extra = {"Content-Type": "application/json", **headers}
    if idempotency_key is not None:
        extra["Idempotency-Key"] = idempotency_key
    for name, value in extra.items():
        ev["headers"][name] = value
        ev["multiValueHeaders"][name] = [value]
    return ev


def test_a_retried_post_with_an_idempotency_key_runs_once(
    load: Callable[..., ModuleType],
) -> None:
    fn = load("management", MEMVAULT_IDEMPOTENCY_TABLE=_idempotency_table())
    key = admin_key(fn)
    issued = fn.services.accounts.issue_key("acme", name="other", toggles=Toggles(), admin=True)
    other = str(issued.secret)
    ctx = context("management")
    assert fn.handler(event("management_put_note", key), ctx)["statusCode"] == 201

    first = fn.handler(_append(key, "\nOne.", "k-1"), ctx)
    retried = fn.handler(_append(key, "\nOne.", "k-1"), ctx)
    assert first["statusCode"] == retried["statusCode"] == 200, first["body"]
    assert json.loads(retried["body"]) == json.loads(first["body"])
    assert retried["headers"]["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first["headers"]
    markdown = fn.services.vault.read(_caller(), NOTE).markdown
    assert markdown.count("One.") == 1

    reused = fn.handler(_append(key, "\nTwo.", "k-1"), ctx)
    assert reused["statusCode"] == 409
    assert json.loads(reused["body"])["error"]["code"] == "idempotency_key_reused"
    # Another caller's key of the same name is its own request.
    theirs = fn.handler(_append(other, "\nOne.", "k-1"), ctx)
    assert theirs["statusCode"] == 200 and "idempotent-replayed" not in theirs["headers"]
    # No key: every request runs.
    for _ in range(2):
        assert fn.handler(_append(key, "\nThree.", None), ctx)["statusCode"] == 200
    markdown = fn.services.vault.read(_caller(), NOTE).markdown
    assert (markdown.count("One."), markdown.count("Three.")) == (2, 2)

    # A refused request is not kept: fixed and retried with its key, it runs.
    stale = fn.handler(_append(key, "\nFour.", "k-2", **{"If-Match": '"1"'}), ctx)
    assert stale["statusCode"] == 409, stale["body"]
    assert json.loads(stale["body"])["error"]["code"] == "version_conflict"
    fixed = fn.handler(_append(key, "\nFour.", "k-2"), ctx)
    assert fixed["statusCode"] == 200 and "idempotent-replayed" not in fixed["headers"]
    assert fn.services.vault.read(_caller(), NOTE).markdown.count("Four.") == 1

    bad = fn.handler(_append(key, "\nFive.", "x" * 300), ctx)
    assert bad["statusCode"] == 400
    assert json.loads(bad["body"])["error"]["code"] == "invalid_idempotency_key"


def _caller() -> Any:
    from memvault.services.context import Caller, Surface

    return Caller(account_id="acme", surface=Surface.REST)


def test_a_retry_while_the_first_request_still_runs_is_told_to_wait(
    load: Callable[..., ModuleType],
) -> None:
    """Two sandboxes, one table of records: the first append waits on a slow search node
    (its indexing after the commit) while its retry arrives at the other sandbox."""
    table = _idempotency_table()
    direct = load("management", MEMVAULT_IDEMPOTENCY_TABLE=table)
    key = admin_key(direct)
    ctx = context("management")
    assert direct.handler(event("management_put_note", key), ctx)["statusCode"] == 201
    gate = Gate(str(direct.services.settings.opensearch_url))
    try:
        slow = load(
            "management",
            MEMVAULT_IDEMPOTENCY_TABLE=table,
            MEMVAULT_OPENSEARCH_URL=gate.url,
            MEMVAULT_OPENSEARCH_TIMEOUT="10",
        )
        gate.flowing.clear()
        answers: dict[str, dict[str, Any]] = {}

        def run_first() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)  # Mangum's, off the main thread
            try:
                answers["first"] = slow.handler(_append(key, "\nOne.", "k"), ctx)
            finally:
                loop.close()

        first = threading.Thread(target=run_first)
        first.start()
        deadline = time.monotonic() + 10
        while "One." not in direct.services.vault.read(_caller(), NOTE).markdown:
            assert time.monotonic() < deadline, "the first append did not commit"
            time.sleep(0.02)
        waiting = direct.handler(_append(key, "\nOne.", "k"), ctx)
        gate.flowing.set()
        first.join(timeout=30)
    finally:
        gate.close()
    assert waiting["statusCode"] == 409
    assert json.loads(waiting["body"])["error"]["code"] == "request_in_progress"
    assert waiting["headers"]["retry-after"] == "1"
    assert answers["first"]["statusCode"] == 200, answers["first"]["body"]
    replayed = direct.handler(_append(key, "\nOne.", "k"), ctx)
    assert replayed["headers"]["idempotent-replayed"] == "true"
    assert json.loads(replayed["body"]) == json.loads(answers["first"]["body"])
    assert direct.services.vault.read(_caller(), NOTE).markdown.count("One.") == 1
