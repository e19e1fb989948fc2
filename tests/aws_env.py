"""moto-backed AWS resources built from template.yaml, so the schema has one source."""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
import yaml
from botocore.config import Config
from moto import mock_aws

TEMPLATE = Path(__file__).resolve().parent.parent / "template.yaml"
REGION = "eu-west-1"


class _CfnLoader(yaml.SafeLoader):
    """Reads CloudFormation's short-form tags (!Ref, !Sub, !GetAtt...) as plain data."""


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return {suffix: loader.construct_scalar(node)}
    if isinstance(node, yaml.SequenceNode):
        return {suffix: loader.construct_sequence(node, deep=True)}
    return {suffix: loader.construct_mapping(node, deep=True)}  # type: ignore[arg-type]


_CfnLoader.add_multi_constructor("!", _tag)


def load_template() -> dict[str, Any]:
    with TEMPLATE.open(encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.load(fh, Loader=_CfnLoader)
    return data


def table_definition() -> dict[str, Any]:
    """The NotesTable's CreateTable arguments, taken from template.yaml."""
    props = load_template()["Resources"]["NotesTable"]["Properties"]
    args: dict[str, Any] = {
        "AttributeDefinitions": props["AttributeDefinitions"],
        "KeySchema": props["KeySchema"],
        "BillingMode": props["BillingMode"],
    }
    if props.get("GlobalSecondaryIndexes"):
        args["GlobalSecondaryIndexes"] = props["GlobalSecondaryIndexes"]
    return args


def fake_credentials() -> None:
    """Point boto3 at nothing real: every AWS call in tests goes to the local moto server."""
    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_SESSION_TOKEN="testing",
        AWS_DEFAULT_REGION=REGION,
    )


@contextmanager
def serial_moto() -> Iterator[str | None]:
    """moto's DynamoDB and S3, in process, answering one request at a time.

    One request at a time is how DynamoDB looks to its clients (each call atomic);
    moto's own request handling is not thread-safe, and the concurrency tests race
    real threads, so its dispatcher is wrapped in a lock. Yields the endpoint URL to
    configure (None: boto3's default endpoints, intercepted by moto).
    """
    from moto.core.botocore_stubber import BotocoreStubber

    fake_credentials()
    lock = threading.RLock()
    original = BotocoreStubber.process_request

    def serialised(self: Any, request: Any) -> Any:
        with lock:
            return original(self, request)

    BotocoreStubber.process_request = serialised  # type: ignore[method-assign]
    try:
        with mock_aws():
            yield None
    finally:
        BotocoreStubber.process_request = original  # type: ignore[method-assign]


def create_resources(endpoint: str | None = None) -> tuple[str, str]:
    """A fresh table (from template.yaml) and bucket; unique names keep tests apart."""
    suffix = uuid.uuid4().hex[:10]
    table, bucket = f"memvault-{suffix}", f"memvault-notes-{suffix}"
    ddb = boto3.client("dynamodb", region_name=REGION, endpoint_url=endpoint)
    ddb.create_table(TableName=table, **table_definition())
    ttl = load_template()["Resources"]["NotesTable"]["Properties"].get("TimeToLiveSpecification")
    if ttl:
        ddb.update_time_to_live(TableName=table, TimeToLiveSpecification=ttl)
    s3 = boto3.client(
        "s3",
        region_name=REGION,
        endpoint_url=endpoint,
        config=Config(s3={"addressing_style": "path"}),
    )
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    return table, bucket
