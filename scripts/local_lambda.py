"""Run the Lambda functions on this machine without Docker: moto_server stands for
DynamoDB, S3 and Secrets Manager, the local OpenSearch node for the search domain, and
each handler is invoked in process on a file of events/ (README, "Local testing without
Docker"; `sam local` needs a container runtime and buffers streams even with one).

    .venv/bin/moto_server -H 127.0.0.1 -p 5005 &
    OPENSEARCH_PORT=9260 scripts/opensearch/start.sh
    export AWS_ENDPOINT_URL=http://127.0.0.1:5005 MEMVAULT_OPENSEARCH_URL=http://127.0.0.1:9260
    .venv/bin/python scripts/local_lambda.py create            # table, bucket, secrets
    .venv/bin/python scripts/local_lambda.py key                # an organisation and its key
    .venv/bin/python scripts/local_lambda.py invoke management \
        events/management_put_note.json --key mvk_...
    .venv/bin/python scripts/local_lambda.py invoke ops events/retention_schedule.json
    .venv/bin/python scripts/local_lambda.py invoke ops '{"action": "init-search"}'

``create`` makes the template's tables (NotesTable, IdempotencyTable) and bucket on the
endpoint with the names below and prints the environment it used; every command sets
that environment (the template's, with ``MEMVAULT_OPENSEARCH_AUTH=none``) before it
loads ``functions/<name>/app.py`` as a cold start, so a handler sees what it sees on
Lambda. ``invoke`` prints the handler's answer as JSON; the inference function, which
Lambda Web Adapter serves, is replayed as the adapter does (an HTTP request to its app
on a loopback port; a non-HTTP event goes to POST /events). tests/sam/test_moto_server.py
runs this path.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
REGION = "eu-west-1"
TABLE = "memvault-local"
IDEMPOTENCY_TABLE = "memvault-local-idempotency"
BUCKET = "memvault-local-notes"
INDEX = "memvault-local"
SECRETS = {
    "openai": "memvault-local/openai-api-key",
    "anthropic": "memvault-local/anthropic-api-key",
}


class _CfnLoader(yaml.SafeLoader):
    """Reads CloudFormation's short-form tags (!Ref, !Sub...) as plain data."""


_CfnLoader.add_multi_constructor("!", lambda loader, suffix, node: None)


def environment(endpoint: str, search_url: str) -> dict[str, str]:
    """What template.yaml gives the functions, pointed at the local services."""
    return {
        "MEMVAULT_BACKEND": "aws",
        "MEMVAULT_AWS_REGION": REGION,
        "MEMVAULT_TABLE": TABLE,
        "MEMVAULT_BUCKET": BUCKET,
        "MEMVAULT_DYNAMODB_ENDPOINT": endpoint,
        "MEMVAULT_S3_ENDPOINT": endpoint,
        "MEMVAULT_OPENSEARCH_URL": search_url,
        "MEMVAULT_OPENSEARCH_AUTH": "none",
        "MEMVAULT_OPENSEARCH_INDEX": os.environ.get("MEMVAULT_OPENSEARCH_INDEX", INDEX),
        "MEMVAULT_OPENSEARCH_REPLICAS": "0",
        "MEMVAULT_OPENAI_API_KEY_SECRET": SECRETS["openai"],
        "MEMVAULT_ANTHROPIC_API_KEY_SECRET": SECRETS["anthropic"],
        "MEMVAULT_IDEMPOTENCY_TABLE": IDEMPOTENCY_TABLE,
        # Every other client (Secrets Manager, Powertools) goes to the endpoint too.
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "testing"),
        "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "testing"),
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "memvault",
    }


def apply(env: dict[str, str]) -> None:
    """Set ``env`` (values already in the environment win: MEMVAULT_* overrides)."""
    for key, value in env.items():
        os.environ.setdefault(key, value)
    from memvault.settings import get_settings

    get_settings.cache_clear()


def _table_args(resource: dict[str, Any]) -> dict[str, Any]:
    props = resource["Properties"]
    args = {k: props[k] for k in ("AttributeDefinitions", "KeySchema", "BillingMode")}
    if props.get("GlobalSecondaryIndexes"):
        args["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    return args


def create(endpoint: str) -> None:
    """The template's tables, the bucket and the provider secrets, on ``endpoint``."""
    import boto3
    from botocore.exceptions import ClientError

    template = yaml.load((ROOT / "template.yaml").read_text(encoding="utf-8"), _CfnLoader)
    resources = template["Resources"]
    ddb = boto3.client("dynamodb", region_name=REGION, endpoint_url=endpoint)
    for name, logical in ((TABLE, "NotesTable"), (IDEMPOTENCY_TABLE, "IdempotencyTable")):
        try:
            ddb.create_table(TableName=name, **_table_args(resources[logical]))
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceInUseException":
                raise
    s3 = boto3.client("s3", region_name=REGION, endpoint_url=endpoint)
    try:
        s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})
    except ClientError as exc:
        if exc.response["Error"]["Code"] not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
            raise
    sm = boto3.client("secretsmanager", region_name=REGION, endpoint_url=endpoint)
    for provider, name in SECRETS.items():
        value = os.environ.get(f"{provider.upper()}_API_KEY", f"sk-local-{provider}")
        try:
            sm.create_secret(Name=name, SecretString=value)
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceExistsException":
                raise


def load_function(name: str) -> ModuleType:
    """functions/<name>/app.py as a fresh module: a cold start."""
    path = ROOT / "functions" / name / "app.py"
    spec = importlib.util.spec_from_file_location(f"memvault_fn_{name}_{uuid.uuid4().hex}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def context(name: str, timeout_ms: int = 25_000) -> SimpleNamespace:
    """A Lambda context: its request id, and the time left before ``timeout_ms``."""
    started = time.monotonic()
    return SimpleNamespace(
        function_name=f"memvault-{name}",
        function_version="$LATEST",
        memory_limit_in_mb=1024,
        invoked_function_arn=f"arn:aws:lambda:{REGION}:000000000000:function:memvault-{name}",
        aws_request_id=str(uuid.uuid4()),
        log_stream_name="local",
        get_remaining_time_in_millis=lambda: int(timeout_ms - (time.monotonic() - started) * 1000),
    )


def with_key(event: dict[str, Any], key: str | None) -> dict[str, Any]:
    if key and isinstance(event.get("headers"), dict):
        event["headers"]["Authorization"] = f"Bearer {key}"
        event.setdefault("multiValueHeaders", {})["Authorization"] = [f"Bearer {key}"]
    return event


def invoke(function: str, event: dict[str, Any], module: ModuleType | None = None) -> Any:
    """The function's answer to ``event`` (its module cold-started unless given)."""
    module = module or load_function(function)
    if function != "inference":
        return module.handler(event, context(function))
    return replay(module.app, event)


def replay(app: Any, event: dict[str, Any]) -> dict[str, Any]:
    """An event as Lambda Web Adapter hands it to the inference app: an HTTP request on
    a loopback port (a non-HTTP event as POST /events); the answer and its body."""
    import httpx
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        if "httpMethod" in event:
            method, path, body = event["httpMethod"], event["path"], event.get("body") or ""
            headers = {k: v for k, v in (event.get("headers") or {}).items() if k.lower() != "host"}
        else:
            method, path, body = "POST", "/events", json.dumps(event)
            headers = {"content-type": "application/json"}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60.0) as client:
            response = client.request(method, path, headers=headers, content=body)
        return {
            "statusCode": response.status_code,
            "headers": dict(response.headers),
            "body": response.text,
        }
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def issue_key(account: str = "local-org") -> str:
    """An organisation on the stack and an admin key with every toggle (printed once)."""
    from memvault.container import build_services
    from memvault.domain.models import Toggles
    from memvault.settings import get_settings

    services = build_services(get_settings())
    if services.store.get_account(account) is None:
        services.accounts.create_account(account, account_id=account)
    issued = services.accounts.issue_key(
        account, name="local", toggles=Toggles(recall=True, tools=True, mcp=True), admin=True
    )
    return str(issued.secret)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoint", default=os.environ.get("AWS_ENDPOINT_URL"))
    parser.add_argument(
        "--search", default=os.environ.get("MEMVAULT_OPENSEARCH_URL", "http://127.0.0.1:9260")
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("create", help="the template's tables, the bucket and the secrets")
    key = commands.add_parser("key", help="an organisation and an admin key with every toggle")
    key.add_argument("--account", default="local-org")
    run = commands.add_parser("invoke", help="a function's handler on an event file")
    run.add_argument(
        "function", choices=["management", "mcp", "inference", "retention", "ops", "jobs"]
    )
    run.add_argument("event", help="an event file (events/...), or the event itself as JSON")
    run.add_argument("--key", help="the API key to put in the event's Authorization header")
    args = parser.parse_args(argv)
    if not args.endpoint:
        parser.error("set AWS_ENDPOINT_URL (moto_server's URL) or pass --endpoint")
    apply(environment(args.endpoint, args.search))
    if args.command == "create":
        create(args.endpoint)
        print(json.dumps(environment(args.endpoint, args.search), indent=2))
    elif args.command == "key":
        print(issue_key(args.account))
    else:
        path = Path(args.event)
        text = path.read_text(encoding="utf-8") if path.is_file() else args.event
        event = with_key(json.loads(text), args.key)
        print(json.dumps(invoke(args.function, event), indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
