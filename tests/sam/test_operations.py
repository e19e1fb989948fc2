"""template.yaml for running the stack: bounded concurrency and a guarded edge, failures
visible and bounded, data kept and least privilege (ADR 0034), and the production
profile in samconfig.toml. Asserted on the SAM transform's output, as CloudFormation
gets it."""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from memvault.adapters.aws.clients import worst_case_seconds
from memvault.settings import Settings
from tests.sam.template_helpers import ROOT, resources, source, transformed

API_GATEWAY_LIMIT_S = 29
BUFFERED = ("ManagementFunction", "McpFunction")
STREAMING = ("InferenceFunction",)
SCHEDULED = ("RetentionFunction", "OpsFunction")
ALL = (*STREAMING, *BUFFERED, *SCHEDULED)


def _res() -> dict[str, Any]:
    resources_: dict[str, Any] = transformed()["Resources"]
    return resources_


def _params() -> dict[str, Any]:
    params: dict[str, Any] = source()["Parameters"]
    return params


def _timeout(function: str) -> int:
    props = _res()[function]["Properties"]
    return int(props.get("Timeout", source()["Globals"]["Function"]["Timeout"]))


def _alarms() -> list[dict[str, Any]]:
    return [a["Properties"] for a in resources("AWS::CloudWatch::Alarm").values()]


def _dims(alarm: dict[str, Any]) -> dict[str, Any]:
    return {d["Name"]: d["Value"] for d in alarm["Dimensions"]}


# ------------------------------------------------------------------ concurrency and edge
def test_each_api_function_has_reserved_concurrency_from_a_parameter() -> None:
    defaults = 0
    for function, param in (
        ("InferenceFunction", "InferenceReservedConcurrency"),
        ("ManagementFunction", "ManagementReservedConcurrency"),
        ("McpFunction", "McpReservedConcurrency"),
    ):
        reserved = _res()[function]["Properties"]["ReservedConcurrentExecutions"]
        # 0 leaves the function unreserved (a new account's quota may be too small).
        assert reserved == {
            "Fn::If": [
                re.sub("Function$", "", f"Limit{function}"),
                {"Ref": param},
                {"Ref": "AWS::NoValue"},
            ]
        }
        condition = source()["Conditions"][f"Limit{function.removesuffix('Function')}"]
        assert condition == {"Fn::Not": [{"Fn::Equals": [{"Ref": param}, 0]}]}
        assert _params()[param]["Default"] > 0
        defaults += _params()[param]["Default"]
    for function in SCHEDULED:
        assert _res()[function]["Properties"]["ReservedConcurrentExecutions"] == 1
    # The default regional quota is 1,000 and Lambda keeps 100 unreserved.
    assert defaults + len(SCHEDULED) <= 900
    # The streams cannot take the whole reservation of the others.
    assert _params()["InferenceReservedConcurrency"]["Default"] < 1000 - 100 - defaults + 200


def test_buffered_functions_stop_before_api_gateway_and_boto3_fits_inside() -> None:
    for function in BUFFERED:
        timeout = _timeout(function)
        assert timeout < API_GATEWAY_LIMIT_S, function
        assert worst_case_seconds() < timeout, function
        assert Settings().opensearch_timeout < timeout
    for function in STREAMING:
        assert _timeout(function) == 900


def _stage() -> dict[str, Any]:
    (stage,) = resources("AWS::ApiGateway::Stage").values()
    props: dict[str, Any] = stage["Properties"]
    return props


def test_the_stage_throttles_and_writes_json_access_logs() -> None:
    stage = _stage()
    (settings,) = stage["MethodSettings"]
    assert settings["ResourcePath"] == "/*" and settings["HttpMethod"] == "*"
    assert settings["ThrottlingRateLimit"] == {"Ref": "ApiThrottlingRateLimit"}
    assert settings["ThrottlingBurstLimit"] == {"Ref": "ApiThrottlingBurstLimit"}
    access = stage["AccessLogSetting"]
    assert access["DestinationArn"] == {"Fn::GetAtt": ["ApiAccessLogs", "Arn"]}
    line = json.loads(re.sub(r"\$context\.[a-zA-Z.]+", "x", access["Format"]))
    assert {"requestId", "ip", "status", "latencyMs", "path"} <= set(line)
    # API Gateway refuses access logs until the account names a CloudWatch role.
    account = _res()["ApiGatewayAccountSettings"]
    assert account["Condition"] == "ApiGatewayAccount"
    assert account["Properties"]["CloudWatchRoleArn"] == {
        "Fn::GetAtt": ["ApiGatewayLogsRole", "Arn"]
    }


def test_the_waf_rate_rule_is_optional_and_guards_the_stage() -> None:
    acl = _res()["WebAcl"]
    assert acl["Condition"] == "WafOn"
    assert source()["Conditions"]["WafOn"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "WafRateLimit"}, 0]}]
    }
    assert _params()["WafRateLimit"]["Default"] == 0
    (rule,) = acl["Properties"]["Rules"]
    assert rule["Action"] == {"Block": {}}
    assert rule["Statement"]["RateBasedStatement"] == {
        "Limit": {"Ref": "WafRateLimit"},
        "AggregateKeyType": "IP",
    }
    association = _res()["WebAclAssociation"]
    assert association["Condition"] == "WafOn"
    arn = association["Properties"]["ResourceArn"]["Fn::Sub"]
    assert "/restapis/${Api}/stages/" in arn


# ------------------------------------------------------------------ failures visible
def test_every_function_and_the_api_log_to_groups_with_retention() -> None:
    groups = resources("AWS::Logs::LogGroup")
    for function in ALL:
        ref = _res()[function]["Properties"]["LoggingConfig"]["LogGroup"]
        group = groups[ref["Ref"]]
        assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}, function
    assert groups["ApiAccessLogs"]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    assert all("RetentionInDays" in g["Properties"] for g in groups.values())
    assert 30 in _params()["LogRetentionDays"]["AllowedValues"]


def test_alarms_on_errors_throttles_and_duration_near_the_timeout() -> None:
    by_metric: dict[tuple[str, str], dict[str, Any]] = {}
    for alarm in _alarms():
        assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}]
        fn = _dims(alarm).get("FunctionName")
        if fn:
            by_metric[(fn["Ref"], alarm["MetricName"])] = alarm
    for function in ALL:
        assert (function, "Errors") in by_metric, function
        assert (function, "Throttles") in by_metric, function
        duration = by_metric[(function, "Duration")]
        assert duration["Statistic"] == "Maximum"
        timeout_ms = _timeout(function) * 1000
        assert 0.8 * timeout_ms <= duration["Threshold"] < timeout_ms, function


def test_alarms_on_the_search_queue_dead_letters_and_the_cluster() -> None:
    alarms = {a["MetricName"]: a for a in _alarms()}
    # The ops function publishes SearchQueueAgeSeconds (memvault.lambda_ops), service "ops".
    age = alarms["SearchQueueAgeSeconds"]
    assert age["Namespace"] == "memvault" and _dims(age) == {"service": "ops"}
    ops_source = (ROOT / "layers" / "core" / "memvault" / "lambda_ops.py").read_text()
    assert (
        '"SearchQueueAgeSeconds"' in ops_source
        and 'Powertools("ops")' in (ROOT / "functions" / "ops" / "app.py").read_text() + ops_source
    )
    dlq = alarms["ApproximateNumberOfMessagesVisible"]
    assert _dims(dlq) == {"QueueName": {"Fn::GetAtt": ["ScheduleDeadLetterQueue", "QueueName"]}}
    assert dlq["Threshold"] == 1
    red = alarms["ClusterStatus.red"]
    assert red["Namespace"] == "AWS/ES"
    assert _dims(red)["DomainName"] == {"Ref": "SearchDomain"}
    assert "ClusterIndexWritesBlocked" in alarms and "5XXError" in alarms


def test_schedules_retry_and_dead_letter() -> None:
    rules = resources("AWS::Events::Rule")
    assert len(rules) >= 2
    for name, rule in rules.items():
        (target,) = rule["Properties"]["Targets"]
        assert target["RetryPolicy"]["MaximumRetryAttempts"] >= 1, name
        assert target["DeadLetterConfig"] == {
            "Arn": {"Fn::GetAtt": ["ScheduleDeadLetterQueue", "Arn"]}
        }, name
    policy = resources("AWS::SQS::QueuePolicy")["ScheduleDeadLetterQueuePolicy"]
    (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    sources = statement["Condition"]["ArnEquals"]["aws:SourceArn"]
    assert sorted(s["Fn::GetAtt"][0] for s in sources) == sorted(rules)
    # A run that failed is retried by Lambda, then dead-lettered to the same queue.
    retention = _res()["RetentionFunctionEventInvokeConfig"]["Properties"]
    assert retention["MaximumRetryAttempts"] == 1
    assert retention["DestinationConfig"]["OnFailure"]["Destination"] == {
        "Fn::GetAtt": ["ScheduleDeadLetterQueue", "Arn"]
    }


# ------------------------------------------------------------------ data
def test_bodies_outlive_the_point_in_time_recovery_window() -> None:
    bucket = resources("AWS::S3::Bucket")["NotesBucket"]["Properties"]
    assert bucket["VersioningConfiguration"] == {"Status": "Enabled"}
    rules = {r["Id"]: r for r in bucket["LifecycleConfiguration"]["Rules"]}
    keep = rules["noncurrent-versions"]["NoncurrentVersionExpiration"]["NoncurrentDays"]
    assert keep == {"Ref": "NoncurrentBodyKeepDays"}
    # DynamoDB's PITR window is 35 days: no parameter value may purge sooner.
    assert _params()["NoncurrentBodyKeepDays"]["MinValue"] >= 35
    assert _params()["NoncurrentBodyKeepDays"]["Default"] >= 35


def test_what_cannot_be_rebuilt_is_kept() -> None:
    table = _res()["NotesTable"]
    assert table["Properties"]["DeletionProtectionEnabled"] is True
    assert table["DeletionPolicy"] == table["UpdateReplacePolicy"] == "Retain"
    for name in ("SearchDomain", "OpenAIKeySecret", "AnthropicKeySecret", "NotesBucket"):
        assert _res()[name]["DeletionPolicy"] == "Retain", name
        assert _res()[name]["UpdateReplacePolicy"] == "Retain", name


# ------------------------------------------------------------------ least privilege
def _role_statements(role: str) -> list[dict[str, Any]]:
    """Every statement a function's role gets: inline and managed policies of the stack."""
    props = _res()[role]["Properties"]
    found = [s for p in props.get("Policies", []) for s in p["PolicyDocument"]["Statement"]]
    for arn in props.get("ManagedPolicyArns", []):
        if isinstance(arn, dict) and "Ref" in arn:
            found += _res()[arn["Ref"]]["Properties"]["PolicyDocument"]["Statement"]
    return found


def _resources_of(statement: dict[str, Any]) -> list[str]:
    res = statement["Resource"]
    return [json.dumps(r) for r in (res if isinstance(res, list) else [res])]


def test_mcp_and_management_do_not_get_each_others_rights() -> None:
    mcp = _role_statements("McpFunctionRole")
    management = _role_statements("ManagementFunctionRole")
    # MCP touches note bodies only, never import journals or archives.
    mcp_objects = [r for s in mcp if "s3:PutObject" in s["Action"] for r in _resources_of(s)]
    assert mcp_objects and all("/*/notes/*" in r for r in mcp_objects)
    # Management never reads the provider keys; neither does MCP.
    for statements in (mcp, management):
        assert not any(
            str(a).startswith("secretsmanager:") for s in statements for a in s["Action"]
        )
    # Only the management role writes idempotency records.
    assert any("IdempotencyTable" in r for s in management for r in _resources_of(s))
    assert not any("IdempotencyTable" in r for s in mcp for r in _resources_of(s))


def test_only_the_ops_path_may_create_or_delete_the_index() -> None:
    (domain,) = resources("AWS::OpenSearchService::Domain").values()
    statements = {s["Sid"]: s for s in domain["Properties"]["AccessPolicies"]["Statement"]}
    admins = {p["Fn::GetAtt"][0] for p in statements["IndexAdmin"]["Principal"]["AWS"]}
    assert admins == {"SearchAdminRole", "OpsFunctionRole"}
    for sid, statement in statements.items():
        principals = {p["Fn::GetAtt"][0] for p in statement["Principal"]["AWS"]}
        assert "RetentionFunctionRole" not in principals, sid  # the sweep never searches
        if sid == "IndexAdmin":
            continue
        assert not principals & admins, sid
        resources_ = (
            [json.dumps(r) for r in statement["Resource"]]
            if isinstance(statement["Resource"], list)
            else [json.dumps(statement["Resource"])]
        )
        for r in resources_:
            # The bare index path (PUT creates, DELETE drops it) only with read verbs.
            if "*/*" not in r:
                assert set(statement["Action"]) <= {"es:ESHttpGet", "es:ESHttpHead"}, sid
            assert "${SearchIndexPrefix}" in r or r.endswith('"/"]]}'), r


# ------------------------------------------------------------------ production profile
def test_the_production_profile_is_highly_available_and_logged() -> None:
    config = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    overrides = config["production"]["deploy"]["parameters"]["parameter_overrides"]
    pairs = dict(item.split("=", 1) for item in overrides)
    params = _params()
    for key, value in pairs.items():
        assert key in params, key
        allowed = params[key].get("AllowedValues")
        if allowed is not None:
            assert value in [str(a) for a in allowed], (key, value)
        if "MinValue" in params[key]:
            assert int(value) >= params[key]["MinValue"], key
    assert pairs["SearchInstanceCount"] == "3" and pairs["SearchAvailabilityZones"] == "3"
    assert pairs["SearchDedicatedMasterCount"] == "3"
    assert pairs["SearchLogs"] == "true"
    assert int(pairs["SearchShards"]) >= 1
    # More than one data node: the index gets a replica.
    env = source()["Globals"]["Function"]["Environment"]["Variables"]
    assert env["MEMVAULT_OPENSEARCH_REPLICAS"] == {"Fn::If": ["SingleSearchNode", "0", "1"]}
    assert env["MEMVAULT_OPENSEARCH_SHARDS"] == {"Ref": "SearchShards"}
    domain = _res()["SearchDomain"]["Properties"]
    cluster = domain["ClusterConfig"]
    assert cluster["ZoneAwarenessEnabled"] == {"Fn::If": ["SearchZoneAware", True, False]}
    assert cluster["DedicatedMasterEnabled"] == {"Fn::If": ["SearchDedicatedMasters", True, False]}
    logs = domain["LogPublishingOptions"]["Fn::If"][1]
    assert {"ES_APPLICATION_LOGS", "INDEX_SLOW_LOGS", "SEARCH_SLOW_LOGS"} <= set(logs)
