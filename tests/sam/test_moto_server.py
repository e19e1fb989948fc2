"""The local path without Docker (README, "Local testing without Docker"): moto_server
for DynamoDB, S3 and Secrets Manager over HTTP, the local OpenSearch node, and each
function's handler invoked on files of events/ through scripts/local_lambda.py, the
script the README tells people to run. No in-process moto here: every AWS call crosses
a loopback socket to the moto_server process, as it would to the real services.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from memvault.adapters.aws.search import OpenSearchIndex, make_client
from memvault.settings import get_settings
from tests.support.backends import require_opensearch
from tests.support.opensearch import drop_vector_indices
from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("local_lambda", ROOT / "scripts/local_lambda.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def moto_server() -> Iterator[str]:
    port = free_port()
    binary = Path(sys.executable).parent / "moto_server"
    process = subprocess.Popen(
        [str(binary), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{url}/moto-api/", timeout=1.0)
                break
            except httpx.TransportError:
                assert process.poll() is None, "moto_server exited"
                assert time.monotonic() < deadline, "moto_server did not start"
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


def _event(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "events" / f"{name}.json").read_text())
    return data


def test_each_function_answers_events_on_moto_server_and_the_local_node(
    moto_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    node = require_opensearch()
    local = _script()
    index = f"memvault-ms-{uuid.uuid4().hex[:12]}"
    env = local.environment(moto_server, node)
    env["MEMVAULT_OPENSEARCH_INDEX"] = index
    env["MEMVAULT_OPENSEARCH_REFRESH"] = "true"
    env["MEMVAULT_EMBEDDINGS"] = "off"  # the notes index only (no k-NN on the local node)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    try:
        local.create(moto_server)
        local.create(moto_server)  # again: what exists is left as it is
        key = local.issue_key("acme")
        ops = local.load_function("ops")
        made = local.invoke("ops", {"action": "init-search"}, ops)
        management = local.load_function("management")
        put = local.invoke(
            "management", local.with_key(_event("management_put_note"), key), management
        )
        got = local.invoke(
            "management", local.with_key(_event("management_get_note"), key), management
        )
        found = local.invoke(
            "management", local.with_key(_event("management_search"), key), management
        )
        tools = local.invoke("mcp", local.with_key(_event("mcp_tools_list"), key))
        swept = local.invoke("retention", _event("retention_schedule"))
        upkeep = local.invoke("ops", _event("retention_schedule"), ops)
        inference = local.load_function("inference")
        health = local.invoke("inference", _event("healthz"), inference)
        refused = local.invoke("inference", _event("retention_schedule"), inference)
    finally:
        get_settings.cache_clear()
        OpenSearchIndex(
            make_client(node, auth="none", region=None, timeout=30.0), index
        ).drop_index()
        drop_vector_indices(node, index)

    assert made == {"index": index, "created": True}
    assert put["statusCode"] == 201, put["body"]
    assert "Ship the beta on Friday." in json.loads(got["body"])["markdown"]
    assert [h["path"] for h in json.loads(found["body"])["results"]] == ["projects/launch.md"]
    assert tools["statusCode"] == 200, tools["body"]
    assert "memory_search" in {t["name"] for t in json.loads(tools["body"])["result"]["tools"]}
    assert swept["unfinished"] == [] and "deleted_notes_purged" in swept["counts"]
    assert upkeep["errors"] == {} and upkeep["queue_age_seconds"] is None
    assert health["statusCode"] == 200 and json.loads(health["body"])["backend"] == "aws"
    assert refused["statusCode"] == 400
    assert json.loads(refused["body"])["error"]["code"] == "unsupported_event"
    # The stack's data is on moto_server, not in this process: read it back over HTTP.
    import boto3

    ddb = boto3.client("dynamodb", region_name=local.REGION, endpoint_url=moto_server)
    assert ddb.describe_table(TableName=local.TABLE)["Table"]["ItemCount"] >= 0
    s3 = boto3.client("s3", region_name=local.REGION, endpoint_url=moto_server)
    assert s3.list_objects_v2(Bucket=local.BUCKET)["KeyCount"] >= 1
