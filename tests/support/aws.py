"""The AWS test environment: moto for DynamoDB and S3, resources built from template.yaml.

The table's schema has one source (the template). Everything that costs real time per
test is done once per process: the template is parsed once, and the boto3 clients that
create each test's table and bucket are built once (moto intercepts every client made
after it is imported, whenever that was).
"""

from __future__ import annotations

import copy
import functools
import json
import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import boto3
import yaml
from botocore.config import Config
from moto import mock_aws
from moto.core import models as moto_models
from moto.core.models import MockAWS
from moto.core.responses_custom_registry import CustomRegistry

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"
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


@functools.lru_cache(maxsize=1)
def _parsed_template() -> dict[str, Any]:
    # The pure-Python YAML parser takes ~50 ms over template.yaml: once per process.
    with TEMPLATE.open(encoding="utf-8") as fh:
        data: dict[str, Any] = yaml.load(fh, Loader=_CfnLoader)
    return data


def load_template() -> dict[str, Any]:
    """template.yaml as plain data (a copy: callers may change it)."""
    return copy.deepcopy(_parsed_template())


def table_definition() -> dict[str, Any]:
    """The NotesTable's CreateTable arguments, taken from template.yaml."""
    props = copy.deepcopy(_parsed_template()["Resources"]["NotesTable"]["Properties"])
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


class TransactionConflicts:
    """DynamoDB's transaction conflicts, which moto does not model (ADR 0033).

    On DynamoDB a TransactWriteItems holds its items while it runs (its prepare phase),
    and any request that writes one of them meanwhile is refused: another transaction
    with ``TransactionCanceledException`` (reason ``TransactionConflict`` on the item),
    a single-item write with ``TransactionConflictException``. Nothing of the refused
    request is applied. Here each transaction marks its items, lets other requests run
    for ``window`` seconds, then applies through moto; a write that touches a marked item
    meanwhile is refused exactly so. Writes of other items go on side by side, as on
    DynamoDB. ``refused`` counts the refusals, per kind; ``overlapped`` is the most
    transactions that held items at once.
    """

    TARGET = "DynamoDB_20120810."
    SINGLE = ("PutItem", "UpdateItem", "DeleteItem")

    def __init__(self, window: float = 0.004) -> None:
        self.window = window
        self.held: set[tuple[str, str, str]] = set()
        self.refused = {"transaction": 0, "single": 0}
        self._running = 0
        self.overlapped = 0  # the most transactions that ever held items at once

    @staticmethod
    def _key(table: str, op: dict[str, Any]) -> tuple[str, str, str]:
        attrs = op.get("Key") or op.get("Item") or {}
        return (table, json.dumps(attrs.get("pk")), json.dumps(attrs.get("sk")))

    @staticmethod
    def _refusal(kind: str, message: str, **extra: Any) -> tuple[int, dict[str, str], str]:
        body = {"__type": f"com.amazonaws.dynamodb.v20120810#{kind}", "message": message}
        return 400, {"Content-Type": "application/x-amz-json-1.0"}, json.dumps(body | extra)

    def dispatch(self, lock: threading.RLock, request: Any, send: Any) -> Any:
        raw = request.headers.get("X-Amz-Target") or ""
        target = raw.decode() if isinstance(raw, bytes) else str(raw)
        operation = target.removeprefix(self.TARGET) if target.startswith(self.TARGET) else ""
        if operation == "TransactWriteItems":
            return self._transaction(lock, request, send)
        if operation in self.SINGLE:
            op = json.loads(request.body or b"{}")
            with lock:
                if self._key(op.get("TableName", ""), op) in self.held:
                    self.refused["single"] += 1
                    return self._refusal(
                        "TransactionConflictException",
                        "Transaction is ongoing for the item",
                    )
                return send(request)
        with lock:
            return send(request)

    def _transaction(self, lock: threading.RLock, request: Any, send: Any) -> Any:
        items = json.loads(request.body or b"{}").get("TransactItems", [])
        marked = [
            self._key(op.get("TableName", ""), op) for entry in items for op in entry.values()
        ]
        with lock:
            clashes = [k in self.held for k in marked]
            if any(clashes):
                self.refused["transaction"] += 1
                reasons = [
                    {"Code": "TransactionConflict", "Message": "Transaction is ongoing"}
                    if clash
                    else {"Code": "None"}
                    for clash in clashes
                ]
                codes = ", ".join(r["Code"] for r in reasons)
                return self._refusal(
                    "TransactionCanceledException",
                    f"Transaction cancelled, please refer cancellation reasons [{codes}]",
                    CancellationReasons=reasons,
                )
            self.held.update(marked)
            self._running += 1
            self.overlapped = max(self.overlapped, self._running)
        try:
            time.sleep(self.window)  # other requests run while this one holds its items
            with lock:
                return send(request)
        finally:
            with lock:
                self.held.difference_update(marked)
                self._running -= 1


# moto swaps boto3's default session for a new one while each mock runs (its
# ``reset_boto3_session``), and a new session loads every service model again: the
# memvault services of each AWS test built their four clients for ~0.5 s. Kept, the
# session is built once per process. Nothing real can leak through it: moto hooks every
# botocore session made after it is imported (this module imports it first), and its
# stubber answers only while a mock runs.
_KEEP_SESSION = {"core": {"reset_boto3_session": False}}

# Each AWS test's services build four boto3 clients (DynamoDB and S3 for the store, an
# S3 presigner each for job archives and uploads), ~12 ms of CPU each: botocore copies
# the session's event hooks and builds every operation's method and the endpoint rules
# anew for every client. A client is reused by every later call with the same arguments
# (service, region, endpoint and config) and the same AWS_* and BOTO* environment (what
# botocore reads as it builds a client: AWS_ENDPOINT_URL, set by the tests that run a
# moto server, above all): the one built by memvault's own make_client, with the same
# retry policy and timeouts, answered by moto's stubber exactly as a new one would be
# (moto hooks every client made after it is imported, and answers only while a mock
# runs). Tests that patch a client do so through monkeypatch, undone after the test; a
# test that needs a client of its own builds it from a boto3.Session().
_real_client = boto3.client
_clients_made: dict[str, Any] = {}
_clients_lock = threading.Lock()


def _shared_client(*args: Any, **kwargs: Any) -> Any:
    config = kwargs.get("config")
    options = sorted((getattr(config, "_user_provided_options", None) or {}).items())
    named = sorted((k, v) for k, v in kwargs.items() if k != "config")
    environment = sorted((k, v) for k, v in os.environ.items() if k.startswith(("AWS_", "BOTO")))
    key = repr((args, named, options, environment))
    with _clients_lock:
        client = _clients_made.get(key)
        if client is None:
            client = _clients_made[key] = _real_client(*args, **kwargs)
        return client


boto3.client = _shared_client


# Every start of a moto mock registers a ``responses`` route (for clients that speak
# through ``requests``) for each of its ~160 services' URL patterns and each HTTP method:
# 1,288 CallbackResponses built again, 9.6 ms of the 10 ms a mock's start and stop cost,
# for every AWS test. The routes are the same every time (each pattern, answered by
# moto's one botocore stubber), so after the first start the same objects are put back in
# the same order, each with its record of calls emptied, as a new one's would be.
_moto_enable_patching = MockAWS._enable_patching
_moto_routes: dict[str, list[Any]] = {}


def _enable_patching(self: Any, reset: bool = True) -> None:
    registry = moto_models.responses_mock.get_registry()
    if not _moto_routes or not isinstance(registry, CustomRegistry):
        _moto_enable_patching(self, reset)
        registry = moto_models.responses_mock.get_registry()
        if isinstance(registry, CustomRegistry):
            _moto_routes.update({m: list(r) for m, r in registry._registered.items()})
        return
    moto_models.botocore_stubber.enabled = True
    if reset:
        self.reset()
    moto_models.responses_mock.start()
    registry = moto_models.responses_mock.get_registry()
    for method, routes in _moto_routes.items():
        for route in routes:
            if route.call_count:
                route.calls.reset()
        registry._registered[method].extend(routes)


MockAWS._enable_patching = _enable_patching  # type: ignore[method-assign]


@contextmanager
def serial_moto(
    *, lean: bool = True, conflicts: TransactionConflicts | None = None
) -> Iterator[str | None]:
    """moto's DynamoDB and S3, in process, answering one request at a time.

    One request at a time is how DynamoDB looks to its clients (each call atomic);
    moto's own request handling is not thread-safe, and the concurrency tests race
    real threads, so its dispatcher is wrapped in a lock. DynamoDB runs with
    ``lean_moto`` (below: the same answers without moto's whole-table copies, which made
    an import of a few hundred notes take 10-25 s); ``lean=False`` runs plain moto
    (bench/aws.py --plain-moto). With ``conflicts``, transactions hold their items for a
    moment and refuse what DynamoDB would refuse meanwhile (``TransactionConflicts``).
    Yields the endpoint URL to configure (None: boto3's default endpoints, intercepted by
    moto).
    """
    from moto.core.botocore_stubber import BotocoreStubber

    fake_credentials()
    lock = threading.RLock()
    original = BotocoreStubber.process_request

    def serialised(self: Any, request: Any) -> Any:
        if conflicts is not None:
            return conflicts.dispatch(lock, request, lambda r: original(self, r))
        with lock:
            return original(self, request)

    BotocoreStubber.process_request = serialised  # type: ignore[method-assign]
    try:
        with mock_aws(config=_KEEP_SESSION), lean_moto() if lean else nullcontext():
            yield None
    finally:
        BotocoreStubber.process_request = original  # type: ignore[method-assign]


@functools.lru_cache(maxsize=4)
def _clients(endpoint: str | None) -> tuple[Any, Any]:
    """The DynamoDB and S3 clients that create resources (building one takes ~0.1 s)."""
    fake_credentials()
    ddb = boto3.client("dynamodb", region_name=REGION, endpoint_url=endpoint)
    s3 = boto3.client(
        "s3",
        region_name=REGION,
        endpoint_url=endpoint,
        config=Config(s3={"addressing_style": "path"}),
    )
    return ddb, s3


def create_resources(endpoint: str | None = None) -> tuple[str, str]:
    """A fresh table (from template.yaml) and bucket; unique names keep tests apart."""
    suffix = uuid.uuid4().hex[:10]
    table, bucket = f"memvault-{suffix}", f"memvault-notes-{suffix}"
    ddb, s3 = _clients(endpoint)
    ddb.create_table(TableName=table, **table_definition())
    ttl = _parsed_template()["Resources"]["NotesTable"]["Properties"].get("TimeToLiveSpecification")
    if ttl:
        ddb.update_time_to_live(TableName=table, TimeToLiveSpecification=ttl)
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
    return table, bucket


@contextmanager
def lean_moto() -> Iterator[None]:
    """moto's DynamoDB without two whole-table costs that would swamp every figure here.

    moto 5 (a) backs up a TransactWriteItems by deep-copying the *whole table* once per
    item of the transaction, and (b) answers a Query by sorting the *whole table* and
    scanning the partition: both O(table) with heavy constants, seconds per write at a
    few thousand notes. Here (a) snapshots only the items the transaction touches and
    restores those on failure (the same all-or-nothing outcome), and (b) hands moto's
    own Query code only the partition's items under the key prefix (same answer, same
    paging). Index (GSI) queries are left alone. Request counts do not depend on this
    (``--plain-moto`` runs without it, to check on a small vault).
    """
    from moto.core import serialize as moto_serialize
    from moto.dynamodb import models as ddb_models
    from moto.dynamodb.models import dynamo_type as ddb_type
    from moto.dynamodb.models import table as ddb_table

    backend_cls: Any = ddb_models.DynamoDBBackend
    table_cls: Any = ddb_table.Table
    original_transact = backend_cls.transact_write_items
    original_query = table_cls.query
    real_copy = ddb_models.copy

    class _NoTableCopy:
        @staticmethod
        def deepcopy(obj: Any, memo: Any = None) -> Any:
            return obj if isinstance(obj, ddb_table.Table) else real_copy.deepcopy(obj, memo)

    def transact_write_items(self: Any, transact_items: list[dict[str, Any]]) -> None:
        touched: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []
        for entry in transact_items:
            op = next(iter(entry.values()))
            name = op.get("TableName")
            try:
                table = self.get_table(name)
                if "Item" in op:
                    attrs = (table.hash_key_attr, table.range_key_attr)
                    key = {a: op["Item"][a] for a in attrs if a and a in op["Item"]}
                else:
                    key = op["Key"]
                current = self.get_item(name, key)
            except Exception:
                continue  # an invalid action: moto refuses it before changing anything
            before = real_copy.deepcopy(current.to_json()["Attributes"]) if current else None
            touched.append((name, key, before))
        ddb_models.copy = _NoTableCopy  # type: ignore[assignment]
        try:
            original_transact(self, transact_items)
        except Exception:
            for name, key, before in reversed(touched):
                if before is None:
                    self.delete_item(name, key)
                else:
                    self.put_item(name, before)
            raise
        finally:
            ddb_models.copy = real_copy

    def query(
        self: Any,
        hash_key: Any,
        range_comparison: str | None,
        range_objs: list[Any],
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        index_name = args[4] if len(args) > 4 else kwargs.get("index_name")
        partition = self.items.get(hash_key) if hash_key is not None else None
        if index_name or not self.range_key_attr or not isinstance(partition, dict):
            return original_query(self, hash_key, range_comparison, range_objs, *args, **kwargs)
        items = list(partition.values())
        if range_comparison == "BEGINS_WITH" and isinstance(range_objs[0].value, str):
            prefix = range_objs[0].value
            items = [i for i in items if str(i.range_key.value).startswith(prefix)]
        self.all_items = lambda: items  # what moto's own code filters and sorts
        try:
            return original_query(self, hash_key, range_comparison, range_objs, *args, **kwargs)
        finally:
            del self.all_items

    # moto checks an item's 400 KB limit on every attribute it sets, by re-measuring every
    # attribute already set: O(attributes²) per item written, a tenth of an import's
    # time. An item it builds is measured once here, after its last attribute: the same
    # total (sizes only add up), so the same items are refused (ItemSizeTooLarge).
    item_cls: Any = ddb_type.Item
    original_item_init = item_cls.__init__

    def item_init(self: Any, hash_key: Any, range_key: Any, attrs: dict[str, Any]) -> None:
        self.hash_key = hash_key
        self.range_key = range_key
        self.attrs = ddb_type.LimitedSizeDict()
        size = 0
        for key, value in attrs.items():
            typed = ddb_type.DynamoType(value)
            size += ddb_type.bytesize(key) + typed.size()
            dict.__setitem__(self.attrs, key, typed)
        if size > _ITEM_LIMIT:
            raise ddb_type.ItemSizeTooLarge

    backend_cls.transact_write_items = transact_write_items
    table_cls.query = query
    item_cls.__init__ = item_init
    json_cls: Any = moto_serialize.BaseJSONSerializer
    original_structure = json_cls._serialize_type_structure

    def structure(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        _structure_with_plain_attribute_values(
            original_structure, self, serialized, value, shape, key
        )

    json_cls._serialize_type_structure = structure
    try:
        yield
    finally:
        backend_cls.transact_write_items = original_transact
        table_cls.query = original_query
        item_cls.__init__ = original_item_init
        json_cls._serialize_type_structure = original_structure


# moto 5.2 serialises every answer by walking botocore's output shape, and for each
# member of a structure tries up to eight spellings of its name on the value (aliases,
# snake_case). A DynamoDB item's every attribute is an AttributeValue structure of ten
# members, so an item of 15 attributes cost ~600 look-ups: moto's serialiser was a third
# of an AWS test's time. An AttributeValue that moto hands over is a plain dict keyed by
# the member names (moto.dynamodb.models.utilities.dynamo_to_dict), and here it is
# serialised by reading those keys directly: the same JSON, member for member
# (``MEMVAULT_TEST_MOTO_CHECK=1`` serialises both ways and fails on any difference).
# What moto's LimitedSizeDict refuses past (its own figure, between DynamoDB's measured
# 409 and 410 KB).
_ITEM_LIMIT = 405_000
_CHECK_SERIALISER = os.environ.get("MEMVAULT_TEST_MOTO_CHECK") == "1"
_EMPTY: list[Any] = [None, {}, []]


def _plain_attribute_value(self: Any, value: dict[str, Any], shape: Any) -> dict[str, Any] | None:
    """``value`` (an AttributeValue as a plain dict) as moto's serialiser writes it; None
    when it holds anything the generic walk would treat differently."""
    out: dict[str, Any] = {}
    for key in value:
        if key not in shape.members:
            return None
    for key, member in shape.members.items():
        item = value.get(key)
        if item is None:
            continue
        if "name" in member.serialization:
            return None
        kind = member.type_name
        if kind == "string":
            out[key] = str(item) if item not in _EMPTY else item
        elif kind == "blob":
            out[key] = self._base64(item)
        elif kind == "boolean":
            out[key] = item
        elif kind == "list" and member.member.type_name == "string":
            out[key] = [str(x) if x not in _EMPTY else x for x in item]
        elif kind == "list" and member.member.type_name == "blob":
            out[key] = [self._base64(x) for x in item]
        elif kind == "list" and member.member.name == "AttributeValue":
            listed = []
            for x in item:
                if x is None:
                    listed.append(None)
                    continue
                if type(x) is not dict:
                    return None
                nested = _plain_attribute_value(self, x, member.member)
                if nested is None:
                    return None
                listed.append(nested)
            out[key] = listed
        elif kind == "map" and member.value.name == "AttributeValue":
            mapped = {}
            for name, x in item.items():
                if x is None:
                    continue
                if type(x) is not dict:
                    return None
                nested = _plain_attribute_value(self, x, member.value)
                if nested is None:
                    return None
                mapped[name] = nested
            out[key] = mapped
        else:
            return None
    return out


def _structure_with_plain_attribute_values(
    generic: Any, self: Any, serialized: Any, value: Any, shape: Any, key: str
) -> None:
    plain = None
    if (
        key
        and shape.name == "AttributeValue"
        and type(value) is dict
        and not getattr(self._value_picker, "response_transformers", None)
    ):
        plain = _plain_attribute_value(self, value, shape)
    if plain is None:
        generic(self, serialized, value, shape, key)
        return
    if _CHECK_SERIALISER:
        walked: dict[str, Any] = {}
        generic(self, walked, value, shape, key)
        assert walked == {shape.serialization.get("name", key): plain}, (walked, plain)
    serialized[shape.serialization.get("name", key)] = plain
