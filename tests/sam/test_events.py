"""Every function's entrypoint invoked with every file of events/, with the search domain
up (the local node) and down (a port nobody listens on), on moto.

One stack per module and search state (a table and bucket on moto, the function
environment template.yaml gives, each function loaded once as a cold start, the
inference app on uvicorn as Lambda Web Adapter runs it), then one test per (function,
event) pair. The "down" stack is the cold-start test: every function must start with
OpenSearch unreachable, serve what needs no search, queue writes for indexing, and
answer a search 503 ``search_unavailable``. Events a function does not serve get a
clear answer (``unsupported_event``, a 404 for a route another function serves), never
a traceback.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import boto3
import pytest

from memvault.adapters.aws.search import OpenSearchIndex, make_client
from memvault.domain.models import Toggles
from memvault.lambda_powertools import UnsupportedEvent
from memvault.settings import get_settings
from tests.sam.test_handlers import _replay, _serve, context, event, load_function
from tests.support.aws import REGION, create_resources, serial_moto
from tests.support.backends import require_opensearch
from tests.support.opensearch import drop_vector_indices
from tests.support.servers import free_port
from tests.support.upstream import ScriptedUpstream
from tests.support.upstream.steps import Reply

EVENTS = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "events").glob("*.json"))
FUNCTIONS = ("management", "mcp", "inference", "retention", "ops", "jobs")
# EventBridge events that are no API request: the schedule, and S3's Object Created (jobs).
NOT_HTTP = {"retention_schedule", "jobs_object_created"}
ACCOUNT = "acme"
NOTE = "projects/launch.md"


@dataclass
class Stack:
    search: str  # "up" or "down"
    functions: dict[str, ModuleType]
    key: str
    inference_url: str
    upstream: ScriptedUpstream
    index: str
    opensearch_url: str


def _environment(
    table: str, bucket: str, search_url: str, index: str, data: Path
) -> dict[str, str]:
    return {
        "MEMVAULT_BACKEND": "aws",
        "MEMVAULT_AWS_REGION": REGION,
        "MEMVAULT_TABLE": table,
        "MEMVAULT_BUCKET": bucket,
        "MEMVAULT_OPENSEARCH_URL": search_url,
        "MEMVAULT_OPENSEARCH_AUTH": "none",
        "MEMVAULT_OPENSEARCH_INDEX": index,
        "MEMVAULT_OPENSEARCH_REFRESH": "true",
        "MEMVAULT_OPENSEARCH_REPLICAS": "0",
        "MEMVAULT_OPENSEARCH_TIMEOUT": "2",
        "MEMVAULT_DATA_DIR": str(data),
        "MEMVAULT_PASSWORD_HASH_COST": "low",
        # The notes index only: vector search (a k-NN index) has its own tests.
        "MEMVAULT_EMBEDDINGS": "off",
        "AWS_REGION": REGION,
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "memvault",
    }


@pytest.fixture(scope="module", params=["up", "down"])
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    node = require_opensearch()
    # Down: a loopback port nobody listens on (connection refused at once).
    search_url = node if request.param == "up" else f"http://127.0.0.1:{free_port()}"
    index = f"memvault-ev-{uuid.uuid4().hex[:12]}"
    with pytest.MonkeyPatch.context() as mp, serial_moto(), ScriptedUpstream() as upstream:
        table, bucket = create_resources()
        env = _environment(table, bucket, search_url, index, tmp_path_factory.mktemp("data"))
        sm = boto3.client("secretsmanager", region_name=REGION)
        suffix = uuid.uuid4().hex[:8]
        env["MEMVAULT_OPENAI_API_KEY_SECRET"] = sm.create_secret(
            Name=f"ev-{suffix}/openai", SecretString="sk-from-secrets"
        )["ARN"]
        env["MEMVAULT_ANTHROPIC_API_KEY_SECRET"] = sm.create_secret(
            Name=f"ev-{suffix}/anthropic", SecretString="sk-ant-from-secrets"
        )["ARN"]
        env["MEMVAULT_OPENAI_BASE_URL"] = upstream.base_url + "/v1"
        env["MEMVAULT_ANTHROPIC_BASE_URL"] = upstream.base_url
        for name, value in env.items():
            mp.setenv(name, value)
        get_settings.cache_clear()
        try:
            # Each function's cold start: with search down, none of them may fail.
            functions = {name: load_function(name) for name in FUNCTIONS}
            mgmt = functions["management"].services
            mgmt.accounts.create_account(ACCOUNT, account_id=ACCOUNT)
            issued = mgmt.accounts.issue_key(
                ACCOUNT, name="t", toggles=Toggles(recall=True, tools=True, mcp=True), admin=True
            )
            key = str(issued.secret)
            put = functions["management"].handler(
                event("management_put_note", key), context("management")
            )
            assert put["statusCode"] in (200, 201), put["body"]
            for url in _serve(functions["inference"].app):
                yield Stack(request.param, functions, key, url, upstream, index, node)
        finally:
            get_settings.cache_clear()
            OpenSearchIndex(
                make_client(node, auth="none", region=None, timeout=30.0), index
            ).drop_index()
            drop_vector_indices(node, index)


def _error(response: dict[str, Any]) -> dict[str, Any]:
    error: dict[str, Any] = json.loads(response["body"])["error"]
    return error


def _invoke_http(stack: Stack, function: str, name: str) -> dict[str, Any]:
    """An API Gateway function's response to the event (the key put in)."""
    return dict(stack.functions[function].handler(event(name, stack.key), context(function)))


# What an API function answers each event it does not serve: the route lives elsewhere.
ROUTES = {
    "management": {"healthz", "management_get_note", "management_put_note", "management_search"},
    "mcp": {"healthz", "mcp_initialize", "mcp_tools_list"},
    "inference": {"healthz", "inference_chat", "inference_messages"},
}


@pytest.mark.parametrize("name", EVENTS)
@pytest.mark.parametrize("function", ["management", "mcp"])
def test_buffered_api_functions_answer_every_event(stack: Stack, function: str, name: str) -> None:
    response = _invoke_http(stack, function, name)
    status = response["statusCode"]
    if name in NOT_HTTP:
        assert status == 400
        error = _error(response)
        assert error["code"] == "unsupported_event"
        assert "EventBridge event" in error["message"] and function in error["message"]
    elif name not in ROUTES[function]:
        assert status == 404, response["body"]
    elif name == "management_search" and stack.search == "down":
        assert status == 503
        assert _error(response)["code"] == "search_unavailable"
    elif name == "management_search":
        assert status == 200
        assert [h["path"] for h in json.loads(response["body"])["results"]] == [NOTE]
    elif name == "management_get_note":
        assert status == 200
        assert "Ship the beta on Friday." in json.loads(response["body"])["markdown"]
    elif name == "management_put_note":
        assert status in (200, 201), response["body"]
        written = json.loads(response["body"])
        # The same markdown the stack was built with: no new version.
        assert written["note"]["path"] == NOTE and written["changed"] is False
    elif name == "healthz":
        assert status == 200 and json.loads(response["body"])["backend"] == "aws"
    else:  # MCP's own requests
        assert status == 200, response["body"]
        assert "result" in json.loads(response["body"])


@pytest.mark.parametrize("name", EVENTS)
def test_the_inference_app_answers_every_event(stack: Stack, name: str) -> None:
    ev = event(name, stack.key)
    if name in NOT_HTTP:
        # Lambda Web Adapter passes a non-HTTP event to the app as POST /events.
        ev = {
            "httpMethod": "POST",
            "path": "/events",
            "headers": {"content-type": "application/json"},
            "body": json.dumps(ev),
        }
    if name in ("inference_chat", "inference_messages"):
        stack.upstream.enqueue(Reply(text="We ship the beta on Friday."))
    status, content_type, lines = _replay(stack.inference_url, ev)
    body = "\n".join(lines)
    if name in NOT_HTTP:
        assert status == 400
        assert json.loads(body)["error"]["code"] == "unsupported_event"
    elif name not in ROUTES["inference"]:
        assert status == 404, body
    elif name == "healthz":
        assert status == 200
    else:
        assert status == 200, body
        assert content_type.startswith("text/event-stream")
        text = "".join(
            json.loads(line[6:]).get("choices", [{}])[0].get("delta", {}).get("content") or ""
            if name == "inference_chat"
            else (json.loads(line[6:]).get("delta") or {}).get("text") or ""
            for line in lines
            if line.startswith("data: {")
        )
        assert text == "We ship the beta on Friday."


@pytest.mark.parametrize("name", EVENTS)
@pytest.mark.parametrize("function", ["retention", "ops"])
def test_scheduled_functions_run_on_the_schedule_and_refuse_the_rest(
    stack: Stack, function: str, name: str
) -> None:
    fn = stack.functions[function]
    if name != "retention_schedule":
        shape = "EventBridge event" if name in NOT_HTTP else "API Gateway request"
        with pytest.raises(UnsupportedEvent, match=shape):
            fn.handler(event(name, stack.key), context(function))
        return
    result = fn.handler(event(name), context(function))
    if function == "retention":
        assert result["unfinished"] == []
        assert result["counts"]["deleted_notes_purged"] == 0
        return
    assert result["counts"]["holds_released"] == 0
    if stack.search == "up":
        assert result["errors"] == {}
        assert result["queue_age_seconds"] is None
    else:  # the outbox waits; the holds were still settled
        assert set(result["errors"]) == {"search_queue_drained"}
        assert result["queue_age_seconds"] is not None and result["queue_age_seconds"] >= 0


@pytest.mark.parametrize("name", EVENTS)
def test_the_job_function_runs_jobs_on_object_created_and_refuses_the_rest(
    stack: Stack, name: str
) -> None:
    """With search up or down: an export needs no search, and a stray object's event
    (no such job) is answered, its object deleted."""
    fn = stack.functions["jobs"]
    if name != "jobs_object_created":
        shape = "EventBridge event" if name in NOT_HTTP else "API Gateway request"
        with pytest.raises(UnsupportedEvent, match=shape):
            fn.handler(event(name, stack.key), context("jobs"))
        return
    assert fn.handler(event(name), context("jobs")) == {
        "jobs": [{"job_id": "imp_000000000000000000000000", "status": None}]
    }
    caller = fn.services.callers.for_key(stack.key)[0]
    job = fn.services.jobs.create_export(caller)
    ev = event(name)
    ev["detail"]["object"]["key"] = f"jobs/run/{ACCOUNT}/{job.id}"
    assert fn.handler(ev, context("jobs")) == {"jobs": [{"job_id": job.id, "status": "succeeded"}]}
    done = fn.services.jobs.get(caller, job.id)
    assert done.notes == 1 and done.blob_bytes
