"""template.yaml as CloudFormation sees it after the SAM transform (aws-sam-translator)."""

from __future__ import annotations

import copy
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from cfnlint.decode import decode_str
from samtranslator.translator.transform import transform

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "template.yaml"
FUNCTIONS = (
    "InferenceFunction",
    "ManagementFunction",
    "McpFunction",
    "RetentionFunction",
    "OpsFunction",
    "JobsFunction",
)


class _Policies:
    """The managed policies SAM attaches by name (no IAM call)."""

    def load(self) -> dict[str, str]:
        return {
            "AWSLambdaBasicExecutionRole": (
                "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
            ),
            "AWSXrayWriteOnlyAccess": "arn:aws:iam::aws:policy/AWSXrayWriteOnlyAccess",
        }


@cache
def source() -> dict[str, Any]:
    """The template as written (short-form tags decoded as cfn-lint decodes them)."""
    decoded, matches = decode_str(TEMPLATE.read_text(encoding="utf-8"))
    assert not matches, matches
    return json.loads(json.dumps(decoded))


@cache
def transformed() -> dict[str, Any]:
    """The SAM transform's output, with code locations set as `sam package` sets them."""
    tpl = copy.deepcopy(source())
    for name, resource in tpl["Resources"].items():
        props = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri"):
            if key in props:
                props[key] = f"s3://memvault-artifacts/{name}.zip"
    os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
    out: dict[str, Any] = transform(tpl, {}, _Policies())  # type: ignore[arg-type]
    return out


def resources(kind: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in transformed()["Resources"].items() if v["Type"] == kind}


def api_paths() -> dict[str, Any]:
    paths: dict[str, Any] = transformed()["Resources"]["Api"]["Properties"]["Body"]["paths"]
    return paths


def integration_function(integration: dict[str, Any]) -> str:
    """The logical id of the function an aws_proxy integration invokes."""
    uri = integration["uri"]["Fn::Sub"]
    return str(uri.split("${", 2)[2].split(".Arn}")[0]) if uri.count("${") > 1 else ""


def route(method: str, path: str) -> tuple[str, dict[str, Any]] | None:
    """The integration API Gateway picks for a request, as it resolves resources: an
    exact resource first, else the longest greedy ``{proxy+}`` prefix; ANY matches all.
    None when no resource has the method (API Gateway answers 403 itself)."""
    paths = api_paths()
    exact = paths.get(path)
    if exact is None:
        greedy = [
            p for p in paths if p.endswith("/{proxy+}") and path.startswith(p[: -len("{proxy+}")])
        ]
        exact = paths[max(greedy, key=len)] if greedy else None
    if exact is None:
        return None
    op = exact.get(method.lower()) or exact.get("x-amazon-apigateway-any-method")
    if op is None:
        return None
    integration = op["x-amazon-apigateway-integration"]
    return integration_function(integration), integration


def statements(document: dict[str, Any]) -> list[dict[str, Any]]:
    found = document.get("Statement", [])
    return found if isinstance(found, list) else [found]


def allow_statements() -> list[tuple[str, dict[str, Any]]]:
    """Every Allow statement of every IAM policy and resource policy in the stack."""
    out: list[tuple[str, dict[str, Any]]] = []
    for name, res in transformed()["Resources"].items():
        props = res.get("Properties", {})
        docs = [p["PolicyDocument"] for p in props.get("Policies", [])]
        if res["Type"] in ("AWS::IAM::ManagedPolicy", "AWS::IAM::Policy"):
            docs.append(props["PolicyDocument"])
        if res["Type"] == "AWS::OpenSearchService::Domain":
            docs.append(props["AccessPolicies"])
        for doc in docs:
            out += [(name, s) for s in statements(doc) if s["Effect"] == "Allow"]
    return out
