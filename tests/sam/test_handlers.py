"""Every function's entrypoint, invoked with the events/ API Gateway and EventBridge events
against moto (DynamoDB, S3, Secrets Manager) and the local OpenSearch node.

Each test sets the MEMVAULT_* environment the template gives the function, then loads
functions/<name>/app.py as Lambda would (a fresh module: a cold start), and invokes the
handler several times (a warm function). management and mcp go through Mangum; the
inference app is served by uvicorn as Lambda Web Adapter runs it (run.sh), and the
event is replayed to it as the adapter does, as an HTTP request.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import boto3
import httpx
import pytest
import uvicorn

from memvault.adapters.aws.search import OpenSearchIndex, make_client
from memvault.container import build_services
from memvault.domain.models import Toggles
from memvault.services.context import Caller, Surface
from memvault.services.retention import DAY_SECONDS
from memvault.settings import Settings, get_settings
from memvault.tools import TOOL_NAMES
from tests.support.aws import REGION
from tests.support.backends import aws_settings
from tests.support.clock import FakeClock
from tests.support.opensearch import drop_vector_indices
from tests.support.servers import free_port
from tests.support.upstream import ScriptedUpstream
from tests.support.upstream.steps import Reply

ROOT = Path(__file__).resolve().parents[2]
EVENTS = ROOT / "events"
ACCOUNT = "acme"


def event(name: str, key: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EVENTS / f"{name}.json").read_text(encoding="utf-8"))
    if key is not None and "headers" in data:
        data["headers"]["Authorization"] = f"Bearer {key}"
        data["multiValueHeaders"]["Authorization"] = [f"Bearer {key}"]
    return data


def context(name: str) -> Any:
    return SimpleNamespace(
        function_name=f"memvault-{name}",
        function_version="$LATEST",
        memory_limit_in_mb=1024,
        invoked_function_arn=f"arn:aws:lambda:{REGION}:123456789012:function:memvault-{name}",
        aws_request_id=str(uuid.uuid4()),
        get_remaining_time_in_millis=lambda: 29_000,
    )


def load_function(name: str) -> ModuleType:
    """functions/<name>/app.py as a fresh module: what a cold start imports."""
    path = ROOT / "functions" / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"memvault_fn_{name}_{uuid.uuid4().hex}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def deployed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """The function environment of template.yaml, on moto and the local node. The index
    named here does not exist yet: the first write creates it (no cold start touches it,
    ADR 0031; MEMVAULT_OPENSEARCH_CREATE_INDEX is left at its default, true)."""
    with aws_settings(tmp_path) as base:
        index = f"memvault-fn-{uuid.uuid4().hex[:12]}"
        env = {
            "MEMVAULT_BACKEND": "aws",
            "MEMVAULT_AWS_REGION": REGION,
            "MEMVAULT_TABLE": base.table,
            "MEMVAULT_BUCKET": base.bucket,
            "MEMVAULT_OPENSEARCH_URL": str(base.opensearch_url),
            "MEMVAULT_OPENSEARCH_AUTH": "none",
            "MEMVAULT_OPENSEARCH_INDEX": index,
            "MEMVAULT_OPENSEARCH_REFRESH": "true",
            "MEMVAULT_OPENSEARCH_REPLICAS": "0",
            "MEMVAULT_DATA_DIR": str(tmp_path / "data"),
            "AWS_REGION": REGION,
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_NAMESPACE": "memvault",
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        try:
            yield get_settings()
        finally:
            get_settings.cache_clear()
            OpenSearchIndex(
                make_client(str(base.opensearch_url), auth="none", region=None, timeout=30.0),
                index,
            ).drop_index()
            drop_vector_indices(str(base.opensearch_url), index)


def admin_key(module: ModuleType, *, mcp: bool = True) -> str:
    module.services.accounts.create_account(ACCOUNT, account_id=ACCOUNT)
    toggles = Toggles(recall=True, tools=True, mcp=mcp)
    issued = module.services.accounts.issue_key(ACCOUNT, name="t", toggles=toggles, admin=True)
    return str(issued.secret)


def emf_metrics(stdout: str) -> list[dict[str, Any]]:
    """The CloudWatch embedded-metric-format blobs Powertools printed."""
    blobs = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [b for b in blobs if "_aws" in b]


def metric_total(blobs: list[dict[str, Any]], name: str) -> float:
    """A metric's sum over the blobs (a value is a number, or a list of them)."""
    total = 0.0
    for blob in blobs:
        value = blob.get(name, 0)
        total += sum(value) if isinstance(value, list) else value
    return total


def test_management_handler_serves_events_warm(
    deployed: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    records = Records()
    logging.getLogger("memvault").addHandler(records)
    try:
        fn = load_function("management")
        key = admin_key(fn)
        put = fn.handler(event("management_put_note", key), context("management"))
        got = fn.handler(event("management_get_note", key), context("management"))
        found = fn.handler(event("management_search", key), context("management"))
        health = fn.handler(event("healthz"), context("management"))
        refused = fn.handler(event("management_get_note", "mvk_wrong"), context("management"))
    finally:
        logging.getLogger("memvault").removeHandler(records)

    assert put["statusCode"] in (200, 201), put["body"]
    assert got["statusCode"] == 200
    note = json.loads(got["body"])
    assert note["path"] == "projects/launch.md" and "Ship the beta on Friday." in note["markdown"]
    hits = json.loads(found["body"])["results"]
    assert [h["path"] for h in hits] == ["projects/launch.md"]
    assert json.loads(health["body"])["backend"] == "aws"
    assert refused["statusCode"] == 401
    # The index did not exist before: the function's first write created it.
    assert OpenSearchIndex(
        make_client(str(deployed.opensearch_url), auth="none", region=None, timeout=30.0),
        deployed.opensearch_index,
    ).client.indices.exists(index=deployed.opensearch_index)
    # memvault's own log lines carry the API Gateway request id as correlation id.
    put_id = event("management_put_note")["requestContext"]["requestId"]
    assert any(getattr(r, "correlation_id", None) == put_id for r in records.records)
    metrics = emf_metrics(capsys.readouterr().out)
    assert metric_total(metrics, "Invocations") == 5
    assert {m["service"] for m in metrics} == {"management"}


def test_mcp_handler_answers_again_and_again_when_warm(deployed: Settings) -> None:
    fn = load_function("mcp")
    key = admin_key(fn)
    init = fn.handler(event("mcp_initialize", key), context("mcp"))
    assert init["statusCode"] == 200, init["body"]
    assert json.loads(init["body"])["result"]["protocolVersion"] == "2025-06-18"
    for _ in range(3):  # Mangum re-runs the lifespan each time; the endpoint must not care
        listed = fn.handler(event("mcp_tools_list", key), context("mcp"))
        assert listed["statusCode"] == 200, listed["body"]
        tools = [t["name"] for t in json.loads(listed["body"])["result"]["tools"]]
        assert tools == list(TOOL_NAMES)


def test_mcp_handler_allows_only_its_own_api_host(deployed: Settings) -> None:
    fn = load_function("mcp")
    key = admin_key(fn)
    ok = fn.handler(event("mcp_tools_list", key), context("mcp"))
    forged = event("mcp_tools_list", key)
    forged["headers"]["Host"] = forged["multiValueHeaders"]["Host"][0] = "evil.example.com"
    refused = fn.handler(forged, context("mcp"))
    assert ok["statusCode"] == 200
    assert refused["statusCode"] in (400, 403, 421), refused


def _serve(app: Any) -> Iterator[str]:
    """uvicorn on 127.0.0.1, as run.sh starts it for Lambda Web Adapter."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _replay(base_url: str, ev: dict[str, Any]) -> tuple[int, str, list[str]]:
    """The event as Lambda Web Adapter sends it to the app; the streamed body's lines."""
    headers = {k: v for k, v in ev["headers"].items() if k.lower() != "host"}
    with (
        httpx.Client(base_url=base_url, timeout=30.0) as client,
        client.stream(ev["httpMethod"], ev["path"], headers=headers, content=ev["body"]) as resp,
    ):
        lines = list(resp.iter_lines())
        return resp.status_code, resp.headers.get("content-type", ""), lines


@pytest.mark.parametrize(
    ("name", "marker"),
    [("inference_chat", "data: [DONE]"), ("inference_messages", "event: message_stop")],
)
def test_inference_app_streams_through_the_web_adapter_path(
    deployed: Settings, monkeypatch: pytest.MonkeyPatch, name: str, marker: str
) -> None:
    sm = boto3.client("secretsmanager", region_name=REGION)
    openai_arn = sm.create_secret(Name="s/openai", SecretString="sk-from-secrets")["ARN"]
    anthropic_arn = sm.create_secret(Name="s/anthropic", SecretString="sk-ant-from-secrets")["ARN"]
    with ScriptedUpstream() as upstream:
        monkeypatch.setenv("MEMVAULT_OPENAI_BASE_URL", upstream.base_url + "/v1")
        monkeypatch.setenv("MEMVAULT_ANTHROPIC_BASE_URL", upstream.base_url)
        monkeypatch.setenv("MEMVAULT_OPENAI_API_KEY_SECRET", openai_arn)
        monkeypatch.setenv("MEMVAULT_ANTHROPIC_API_KEY_SECRET", anthropic_arn)
        get_settings.cache_clear()
        fn = load_function("inference")
        key = admin_key(fn)
        upstream.enqueue(Reply(text="We ship the beta on Friday."), Reply(text="Again: Friday."))
        for base_url in _serve(fn.app):
            first = _replay(base_url, event(name, key))
            second = _replay(base_url, event(name, key))  # the same warm process
        requests = upstream.requests

    for status, content_type, lines in (first, second):
        assert status == 200, lines
        assert content_type.startswith("text/event-stream")
        assert marker in lines
        assert sum(1 for line in lines if line.startswith("data: ")) >= 3
    text = "".join(first[2])
    assert "Friday" in text or "Fri" in text
    sent = {r.headers.get("authorization") or r.headers.get("x-api-key") for r in requests}
    assert sent <= {"Bearer sk-from-secrets", "sk-ant-from-secrets"} and sent


def test_retention_handler_runs_on_the_schedule_event(
    deployed: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    fn = load_function("retention")
    # A note deleted 31 days ago (the default keep period is 30) and one deleted today.
    past = build_services(deployed, clock=FakeClock(time.time() - 31 * DAY_SECONDS))
    past.accounts.create_account(ACCOUNT, account_id=ACCOUNT)
    caller = Caller(account_id=ACCOUNT, surface=Surface.REST)
    past.vault.write(caller, "gone.md", "# Gone")
    past.vault.delete(caller, "gone.md")
    fn.services.vault.write(caller, "kept.md", "# Kept")
    fn.services.vault.delete(caller, "kept.md")

    first = fn.handler(event("retention_schedule"), context("retention"))
    second = fn.handler(event("retention_schedule"), context("retention"))

    assert first["counts"]["deleted_notes_purged"] == 1
    assert second["counts"]["deleted_notes_purged"] == 0
    assert set(first["counts"]) == {
        "holds_released",
        "usage_expired",
        "deleted_notes_purged",
        "sessions_expired",
        "invitations_expired",
        "audit_events_expired",
        "memory_items_expired",
        "orphan_files_dropped",
    }
    assert fn.services.store.list_versions(ACCOUNT, "gone.md") == []
    assert [v.version for v in fn.services.store.list_versions(ACCOUNT, "kept.md")] == [1]
    metrics = emf_metrics(capsys.readouterr().out)
    assert metric_total(metrics, "Invocations") == 2
    assert metric_total(metrics, "deleted_notes_purged") == 1
