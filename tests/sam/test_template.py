"""template.yaml, checked offline: cfn-lint, and the SAM transform's output asserted on."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest
from starlette.routing import Route

from memvault.api.app import create_app
from memvault.container import build_services
from memvault.settings import Settings
from memvault.surfaces import Surface
from tests.sam.template_helpers import (
    FUNCTIONS,
    ROOT,
    TEMPLATE,
    allow_statements,
    api_paths,
    resources,
    route,
    source,
    transformed,
)
from tests.support.aws import REGION, create_resources, serial_moto, table_definition

SURFACE_FUNCTION: dict[Surface, str] = {
    "management": "ManagementFunction",
    "inference": "InferenceFunction",
    "mcp": "McpFunction",
}


def test_cfn_lint_is_clean() -> None:
    cfn_lint = Path(sys.executable).with_name("cfn-lint")
    done = subprocess.run(
        [str(cfn_lint), "--format", "parseable", str(TEMPLATE)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == ""


def _surface_routes(tmp_path: Path, surface: Surface) -> list[tuple[str, str]]:
    """(method, a concrete path) for every route the surface's app serves: the OpenAPI
    schema's operations, plus the plain routes (/mcp) that are not in the schema."""
    svc = build_services(Settings(backend="sqlite", data_dir=tmp_path / surface))
    app = create_app(svc, surfaces=(surface,))
    found: set[tuple[str, str]] = set()
    for path, ops in app.openapi()["paths"].items():
        found |= {(m.upper(), path) for m in ops}
    for r in app.routes:
        if isinstance(r, Route) and r.path not in ("/docs/oauth2-redirect", "/redoc"):
            found |= {(m, r.path) for m in r.methods or () if m != "HEAD"}
    return sorted((m, re.sub(r"\{[^}]+\}", "x/y.md", p)) for m, p in found)


@pytest.mark.parametrize("surface", ["management", "inference", "mcp"])
def test_every_route_of_each_surface_reaches_its_function(tmp_path: Path, surface: Surface) -> None:
    routes = _surface_routes(tmp_path, surface)
    assert len(routes) >= (20 if surface == "management" else 2)
    for method, path in routes:
        if path in ("/healthz", "/openapi.json", "/docs") and surface != "management":
            continue  # every app has these; the API sends them to the management function
        found = route(method, path)
        assert found is not None, f"{method} {path} has no route"
        assert found[0] == SURFACE_FUNCTION[surface], f"{method} {path} -> {found[0]}"


def test_health_and_unknown_paths() -> None:
    assert route("GET", "/healthz") is not None
    assert route("GET", "/healthz")[0] == "ManagementFunction"  # type: ignore[index]
    # The gateway's paths never fall through to the management proxy.
    assert route("GET", "/v1/chat/completions") is None
    assert route("GET", "/elsewhere") is None


def test_inference_streams_and_nothing_else_does() -> None:
    for path, ops in api_paths().items():
        for op in ops.values():
            integration = op["x-amazon-apigateway-integration"]
            uri = integration["uri"]["Fn::Sub"]
            if "InferenceFunction" in uri:
                assert integration["responseTransferMode"] == "STREAM", path
                assert uri.endswith("/response-streaming-invocations"), path
                # Four tool rounds against a slow upstream: minutes, not the 29 s default.
                assert integration["timeoutInMillis"] >= 600_000, path
            else:
                assert "responseTransferMode" not in integration, path
                assert uri.endswith("/invocations"), path


def test_inference_runs_behind_lambda_web_adapter() -> None:
    fn = transformed()["Resources"]["InferenceFunction"]["Properties"]
    env = fn["Environment"]["Variables"]
    assert env["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap"
    assert env["AWS_LWA_INVOKE_MODE"] == "response_stream"
    assert env["AWS_LWA_READINESS_CHECK_PATH"] == "/healthz"
    assert fn["Handler"] == "run.sh"
    assert any("LambdaAdapterLayerX86" in str(layer) for layer in fn["Layers"])
    assert fn["Timeout"] * 1000 >= 900_000
    run_sh = ROOT / "functions" / "inference" / "run.sh"
    assert os.access(run_sh, os.X_OK)
    assert "uvicorn app:app" in run_sh.read_text() and "AWS_LWA_PORT" in run_sh.read_text()


def test_each_function_has_its_entrypoint_and_the_layer() -> None:
    src = source()["Resources"]
    for name in FUNCTIONS:
        props = transformed()["Resources"][name]["Properties"]
        assert props["Runtime"] == "python3.12"
        code_dir = ROOT / src[name]["Properties"]["CodeUri"]
        module = props["Handler"].split(".")[0]
        assert (code_dir / (module if module == "run" else f"{module}.py")).exists() or (
            code_dir / props["Handler"]
        ).exists(), name
        assert any("CoreLayer" in str(layer) for layer in props["Layers"]), name
        env = props["Environment"]["Variables"]
        assert env["MEMVAULT_BACKEND"] == "aws"
        assert "DomainEndpoint" in str(env["MEMVAULT_OPENSEARCH_URL"])


def test_schedules_target_retention_nightly_and_ops_every_few_minutes() -> None:
    rules = resources("AWS::Events::Rule")
    by_target = {
        rule["Properties"]["Targets"][0]["Arn"]["Fn::GetAtt"][0]: rule["Properties"]
        for rule in rules.values()
        if "ScheduleExpression" in rule["Properties"]
    }
    assert set(by_target) == {"RetentionFunction", "OpsFunction"}
    assert by_target["RetentionFunction"]["ScheduleExpression"] == {"Ref": "RetentionSchedule"}
    assert by_target["OpsFunction"]["ScheduleExpression"] == {"Ref": "UpkeepSchedule"}
    for props in by_target.values():
        assert props["State"] == "ENABLED"
    default = source()["Parameters"]["RetentionSchedule"]["Default"]
    assert re.fullmatch(r"(cron|rate)\(.+\)", default)
    # Holds of crashed requests are settled within 15 minutes (the upkeep run).
    assert source()["Parameters"]["UpkeepSchedule"]["Default"] == "rate(5 minutes)"


def test_staged_archives_under_jobs_run_start_the_job_function() -> None:
    """S3's Object Created events reach EventBridge; the one rule that is no schedule
    sends those under jobs/run/ of the notes bucket to the job function (ADR 0042)."""
    bucket = source()["Resources"]["NotesBucket"]["Properties"]
    assert bucket["NotificationConfiguration"] == {
        "EventBridgeConfiguration": {"EventBridgeEnabled": True}
    }
    (rule,) = [
        r["Properties"]
        for r in resources("AWS::Events::Rule").values()
        if "EventPattern" in r["Properties"]
    ]
    assert rule["Targets"][0]["Arn"] == {"Fn::GetAtt": ["JobsFunction", "Arn"]}
    pattern = rule["EventPattern"]
    assert pattern["source"] == ["aws.s3"] and pattern["detail-type"] == ["Object Created"]
    assert pattern["detail"]["bucket"]["name"] == [{"Ref": "NotesBucket"}]
    assert pattern["detail"]["object"]["key"] == [{"prefix": "jobs/run/"}]
    jobs = transformed()["Resources"]["JobsFunction"]["Properties"]
    assert jobs["Timeout"] == 900
    assert jobs["ReservedConcurrentExecutions"]["Fn::If"][1] == {"Ref": "JobsReservedConcurrency"}
    assert jobs["LoggingConfig"] == {"LogGroup": {"Ref": "JobsLogs"}}


def test_the_dashboard_may_put_an_archive_to_its_presigned_url_from_the_browser() -> None:
    """The bucket answers the upload's CORS preflight: PUT with a content-type, from the
    origin the DashboardOrigin parameter names (ADR 0019)."""
    bucket = source()["Resources"]["NotesBucket"]["Properties"]
    (rule,) = bucket["CorsConfiguration"]["CorsRules"]
    assert rule["AllowedMethods"] == ["PUT"] and rule["AllowedHeaders"] == ["content-type"]
    assert rule["AllowedOrigins"] == [{"Ref": "DashboardOrigin"}]
    pattern = re.compile(source()["Parameters"]["DashboardOrigin"]["AllowedPattern"])
    assert pattern.fullmatch("*") and pattern.fullmatch("https://abc.execute-api.eu-west-1.x")
    assert not pattern.fullmatch("http://evil.test") and not pattern.fullmatch("https://a b")


def test_the_search_index_is_made_at_deploy_time_by_the_ops_function_only() -> None:
    index = source()["Resources"]["SearchIndex"]
    assert index["Type"] == "Custom::SearchIndex"
    assert index["Properties"]["ServiceToken"] == {"Fn::GetAtt": ["OpsFunction", "Arn"]}
    env = transformed()["Resources"]
    for name in FUNCTIONS:
        creates = env[name]["Properties"]["Environment"]["Variables"].get(
            "MEMVAULT_OPENSEARCH_CREATE_INDEX"
        )
        assert creates == ("true" if name == "OpsFunction" else "false"), name


def test_table_has_ttl_pitr_and_encryption() -> None:
    tables = resources("AWS::DynamoDB::Table")
    assert tables
    for table in tables.values():
        props = table["Properties"]
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
        assert props["SSESpecification"]["SSEEnabled"] is True


def test_bucket_blocks_public_access_and_plain_http() -> None:
    (bucket,) = resources("AWS::S3::Bucket").values()
    block = bucket["Properties"]["PublicAccessBlockConfiguration"]
    assert block == dict.fromkeys(
        ("BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"),
        True,
    )
    assert bucket["Properties"]["BucketEncryption"]
    (policy,) = resources("AWS::S3::BucketPolicy").values()
    (deny,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert deny["Effect"] == "Deny"
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_no_iam_statement_grants_star_actions_or_star_resources() -> None:
    found = allow_statements()
    assert len(found) >= 5
    for owner, statement in found:
        actions = statement["Action"]
        for action in [actions] if isinstance(actions, str) else actions:
            assert action != "*" and not action.endswith(":*") and "*" not in action, (
                owner,
                action,
            )
        resource = statement["Resource"]
        assert resource != "*" and "*" not in (resource if isinstance(resource, list) else []), (
            owner
        )


def test_search_domain_is_encrypted_and_only_the_functions_get_in() -> None:
    (domain,) = resources("AWS::OpenSearchService::Domain").values()
    props = domain["Properties"]
    assert props["EncryptionAtRestOptions"] == {"Enabled": True}
    assert props["NodeToNodeEncryptionOptions"] == {"Enabled": True}
    assert props["DomainEndpointOptions"]["EnforceHTTPS"] is True
    by_sid = {s["Sid"]: s for s in props["AccessPolicies"]["Statement"]}
    searchers = [
        f"{name}Role" for name in FUNCTIONS if name not in ("RetentionFunction", "OpsFunction")
    ]
    for sid in ("IndexDocuments", "IndexExists"):
        principals = by_sid[sid]["Principal"]["AWS"]
        assert principals == [{"Fn::GetAtt": [role, "Arn"]} for role in searchers], sid


def test_provider_keys_are_secrets_only_the_gateway_reads() -> None:
    secrets = resources("AWS::SecretsManager::Secret")
    assert set(secrets) == {"OpenAIKeySecret", "AnthropicKeySecret"}
    readers = [
        owner
        for owner, s in allow_statements()
        if any(str(a).startswith("secretsmanager:") for a in s["Action"])
    ]
    assert readers == ["InferenceFunctionRole"]
    env = transformed()["Resources"]["InferenceFunction"]["Properties"]["Environment"]
    assert env["Variables"]["MEMVAULT_OPENAI_API_KEY_SECRET"] == {"Ref": "OpenAIKeySecret"}


def test_api_is_regional_and_outputs_name_the_urls() -> None:
    api = transformed()["Resources"]["Api"]["Properties"]
    assert api["EndpointConfiguration"] == {"Types": ["REGIONAL"]}
    outputs = source()["Outputs"]
    assert outputs["ApiUrl"]["Value"]["Fn::Sub"].startswith("https://${Api}.execute-api.")
    assert outputs["McpUrl"]["Value"]["Fn::Sub"].endswith("/mcp")


def _described(ddb: Any, table: str) -> dict[str, Any]:
    return ddb.describe_table(TableName=table)["Table"]  # type: ignore[no-any-return]


def test_moto_tables_are_built_from_the_template() -> None:
    """tests/aws_env.create_resources reads the key schema from template.yaml."""
    template_props = source()["Resources"]["NotesTable"]["Properties"]
    assert table_definition()["KeySchema"] == template_props["KeySchema"]
    with serial_moto():
        table, _bucket = create_resources()
        ddb = boto3.client("dynamodb", region_name=REGION)
        described = _described(ddb, table)
        assert described["KeySchema"] == template_props["KeySchema"]
        indexes = {i["IndexName"]: i["KeySchema"] for i in described["GlobalSecondaryIndexes"]}
        assert indexes == {
            i["IndexName"]: i["KeySchema"] for i in template_props["GlobalSecondaryIndexes"]
        }
        ttl = ddb.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
        assert ttl["AttributeName"] == "expires_at"
