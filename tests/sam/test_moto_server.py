"""The local path without Docker (README, "Local testing without Docker"): moto_server
for DynamoDB, S3 and Secrets Manager over HTTP, the local OpenSearch node, and each
function's handler invoked on files of events/ through scripts/local_lambda.py, the
script the README tells people to run. No in-process moto here: every AWS call crosses
a loopback socket to the moto_server process, as it would to the real services.
"""

from __future__ import annotations

import importlib.util
import json
import os
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
import yaml

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


# One cold start in a fresh interpreter: functions/<name>/app.py loaded as Lambda loads
# it, then whether opensearch-py was imported; management then writes a note and
# searches for it by meaning and by words (its first search builds both indices'
# adapters), and reports what the search answered and whether opensearch-py is loaded.
_COLD_START = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("local_lambda", sys.argv[1])
local = importlib.util.module_from_spec(spec)
spec.loader.exec_module(local)
name, key = sys.argv[2], sys.argv[3]
module = local.load_function(name)
out = {"at_init": "opensearchpy" in sys.modules}
if name == "management":
    def event(file):
        with open(file) as f:
            return local.with_key(json.load(f), key)
    put = local.invoke(name, event(sys.argv[4] + "/management_put_note.json"), module)
    search = event(sys.argv[4] + "/management_search.json")
    search["queryStringParameters"]["mode"] = "hybrid"
    search["multiValueQueryStringParameters"]["mode"] = ["hybrid"]
    found = local.invoke(name, search, module)
    out.update(put=put["statusCode"], found=json.loads(found["body"]))
    out["after"] = "opensearchpy" in sys.modules
print(json.dumps(out))
"""


def _function_env(name: str) -> dict[str, str]:
    """The MEMVAULT_* values template.yaml sets for one function (retention: no
    embedder), on top of the stack-wide ones."""
    local = _script()
    template = yaml.load((ROOT / "template.yaml").read_text(encoding="utf-8"), local._CfnLoader)
    for res in template["Resources"].values():
        props = res.get("Properties") or {}
        if res["Type"] == "AWS::Serverless::Function" and Path(props["CodeUri"]).name == name:
            variables = (props.get("Environment") or {}).get("Variables") or {}
            return {k: str(v) for k, v in variables.items() if isinstance(v, str | int)}
    return {}


def test_no_cold_start_imports_opensearch_and_the_first_search_works(
    moto_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21: opensearch-py (with requests and aiohttp under it) is imported on a
    function's first search, not at its cold start (ADR 0052). Every function of
    functions/ (each in a fresh interpreter, at once) starts without it; the management
    function's first search then builds the notes and vector adapters and finds the note
    on the real node, through the hybrid path (k-NN on the vectors written with it)."""
    node = require_opensearch()
    local = _script()
    index = f"memvault-cs-{uuid.uuid4().hex[:12]}"
    env = local.environment(moto_server, node)
    env["MEMVAULT_OPENSEARCH_INDEX"] = index
    env["MEMVAULT_OPENSEARCH_REFRESH"] = "true"
    env["MEMVAULT_OPENSEARCH_CREATE_INDEX"] = "true"  # the first write makes both indices
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    functions = sorted(p.parent.name for p in (ROOT / "functions").glob("*/app.py"))
    try:
        local.create(moto_server)
        key = local.issue_key("cold-start")  # an organisation of its own: the note is new
        script = str(ROOT / "scripts/local_lambda.py")
        runs = {
            name: subprocess.Popen(
                [sys.executable, "-c", _COLD_START, script, name, key, str(ROOT / "events")],
                cwd=ROOT / "functions" / name,
                env={**os.environ, **_function_env(name), "PYTHONDONTWRITEBYTECODE": "1"},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name in functions
        }
        results: dict[str, dict[str, Any]] = {}
        for name, run in runs.items():
            stdout, stderr = run.communicate(timeout=240)
            assert run.returncode == 0, f"{name}:\n{stderr}"
            results[name] = json.loads(stdout.strip().splitlines()[-1])
    finally:
        get_settings.cache_clear()
        OpenSearchIndex(
            make_client(node, auth="none", region=None, timeout=30.0), index
        ).drop_index()
        drop_vector_indices(node, index)

    assert {"inference", "management", "mcp", "ops", "retention"} <= set(results)
    assert [n for n, r in results.items() if r["at_init"]] == []
    management = results["management"]
    assert management["put"] == 201
    assert management["found"]["mode"] == "hybrid", management["found"]
    assert [h["path"] for h in management["found"]["results"]] == ["projects/launch.md"]
    assert management["after"] is True
