"""Thin, typed helpers over the DynamoDB client: (de)serialisation, paging, batching.

Every call goes through ``aws_errors`` so throttling past botocore's retries becomes a
503, and every helper counts its requests (bench/ reports requests per operation). A
write refused only because another transaction held one of its items is sent again
after a jittered pause (``backoff``), never surfaced as a conflict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from memvault.adapters.aws.backoff import CONFLICT_ATTEMPTS, Backoff, is_conflict
from memvault.adapters.aws.clients import aws_errors
from memvault.adapters.aws.keys import TABLE_PK, TABLE_SK

Item = dict[str, Any]

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()

# DynamoDB's own ceilings.
TRANSACT_MAX_ITEMS = 100
BATCH_GET_MAX = 100
BATCH_WRITE_MAX = 25


def _to_dynamo(value: Any) -> Any:
    if isinstance(value, float):
        return Decimal(repr(value))
    if isinstance(value, dict):
        return {k: _to_dynamo(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_dynamo(v) for v in value]
    return value


def _from_dynamo(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _from_dynamo(v) for k, v in value.items()}
    if isinstance(value, (list, set)):
        return [_from_dynamo(v) for v in value]
    return value


def serialize(item: Mapping[str, Any]) -> dict[str, Any]:
    return {k: _serializer.serialize(_to_dynamo(v)) for k, v in item.items() if v is not None}


def deserialize(raw: Mapping[str, Any]) -> Item:
    return {k: _from_dynamo(_deserializer.deserialize(v)) for k, v in raw.items()}


def values(mapping: Mapping[str, Any]) -> dict[str, Any]:
    """ExpressionAttributeValues from plain Python values."""
    return {k: _serializer.serialize(_to_dynamo(v)) for k, v in mapping.items()}


def key(pk: str, sk: str) -> dict[str, Any]:
    return {TABLE_PK: {"S": pk}, TABLE_SK: {"S": sk}}


class Table:
    """One DynamoDB table, through a low-level client, with request counting."""

    def __init__(self, client: Any, name: str) -> None:
        self.client = client
        self.name = name
        self.requests = 0
        self.conflicts = 0  # writes sent again after a transaction conflict

    def get(self, pk: str, sk: str) -> Item | None:
        kwargs: dict[str, Any] = {
            "TableName": self.name,
            "Key": key(pk, sk),
            "ConsistentRead": True,
        }
        with aws_errors("the notes table"):
            self.requests += 1
            raw = self.client.get_item(**kwargs).get("Item")
        return deserialize(raw) if raw else None

    def batch_get(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Item]:
        found: dict[tuple[str, str], Item] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), BATCH_GET_MAX):
            pending: list[dict[str, Any]] = [
                key(pk, sk) for pk, sk in unique[start : start + BATCH_GET_MAX]
            ]
            while pending:
                with aws_errors("the notes table"):
                    self.requests += 1
                    out = self.client.batch_get_item(
                        RequestItems={self.name: {"Keys": pending, "ConsistentRead": True}}
                    )
                for raw in out.get("Responses", {}).get(self.name, []):
                    item = deserialize(raw)
                    found[(item[TABLE_PK], item[TABLE_SK])] = item
                pending = out.get("UnprocessedKeys", {}).get(self.name, {}).get("Keys", [])
        return found

    def query(
        self,
        pk: str,
        prefix: str,
        *,
        projection: Sequence[str] | None = None,
        forward: bool = True,
        start_after: str | None = None,
        limit: int | None = None,
        index: str | None = None,
        pk_name: str = TABLE_PK,
        sk_name: str = TABLE_SK,
    ) -> Iterator[Item]:
        """Items of one partition whose sort key starts with ``prefix``, page by page."""
        kwargs: dict[str, Any] = {
            "TableName": self.name,
            "KeyConditionExpression": "#pk = :pk AND begins_with(#sk, :prefix)",
            "ExpressionAttributeNames": {"#pk": pk_name, "#sk": sk_name},
            "ExpressionAttributeValues": values({":pk": pk, ":prefix": prefix}),
            "ScanIndexForward": forward,
        }
        if not prefix:  # the whole partition (DynamoDB refuses an empty prefix)
            kwargs["KeyConditionExpression"] = "#pk = :pk"
            kwargs["ExpressionAttributeNames"] = {"#pk": pk_name}
            kwargs["ExpressionAttributeValues"] = values({":pk": pk})
        if index:
            kwargs["IndexName"] = index
        else:
            kwargs["ConsistentRead"] = True
        if projection:
            # Placeholders for every attribute: several (size, path) are reserved words.
            placeholders = {f"#p{i}": name for i, name in enumerate(projection)}
            kwargs["ProjectionExpression"] = ", ".join(placeholders)
            kwargs["ExpressionAttributeNames"].update(placeholders)
        if limit:
            kwargs["Limit"] = limit
        if start_after is not None:
            kwargs["ExclusiveStartKey"] = key(pk, start_after)
        while True:
            with aws_errors("the notes table"):
                self.requests += 1
                out = self.client.query(**kwargs)
            for raw in out.get("Items", []):
                yield deserialize(raw)
            last = out.get("LastEvaluatedKey")
            if not last:
                return
            kwargs["ExclusiveStartKey"] = last

    def _write(self, call: Callable[..., Any], **kwargs: Any) -> Any:
        """One write, sent again (after a jittered pause) while another transaction holds
        one of its items: such a refusal wrote nothing and checked no condition."""
        for attempt in Backoff(CONFLICT_ATTEMPTS):
            try:
                with aws_errors("the notes table"):
                    self.requests += 1
                    return call(**kwargs)
            except ClientError as exc:
                if not is_conflict(exc) or attempt == CONFLICT_ATTEMPTS - 1:
                    raise
                self.conflicts += 1
        raise AssertionError("unreachable")  # pragma: no cover

    def transact(self, actions: Sequence[dict[str, Any]]) -> None:
        self._write(self.client.transact_write_items, TransactItems=list(actions))

    def transact_once(self, actions: Sequence[dict[str, Any]]) -> None:
        """One TransactWriteItems, a conflict raised: for a caller that changes the
        request before it tries again (a commit picks another quota shard)."""
        with aws_errors("the notes table"):
            self.requests += 1
            self.client.transact_write_items(TransactItems=list(actions))

    def batch_write(self, puts: Sequence[Item], deletes: Sequence[tuple[str, str]]) -> None:
        """Unconditional puts and deletes, 25 a request, retrying unprocessed items."""
        requests: list[dict[str, Any]] = [{"PutRequest": {"Item": serialize(i)}} for i in puts]
        requests += [{"DeleteRequest": {"Key": key(pk, sk)}} for pk, sk in deletes]
        for start in range(0, len(requests), BATCH_WRITE_MAX):
            pending = requests[start : start + BATCH_WRITE_MAX]
            while pending:
                with aws_errors("the notes table"):
                    self.requests += 1
                    out = self.client.batch_write_item(RequestItems={self.name: pending})
                pending = out.get("UnprocessedItems", {}).get(self.name, [])

    def update(self, **kwargs: Any) -> Item:
        out = self._write(self.client.update_item, TableName=self.name, **kwargs)
        return deserialize(out.get("Attributes", {}))

    def put(self, item: Item, **kwargs: Any) -> None:
        self._write(self.client.put_item, TableName=self.name, Item=serialize(item), **kwargs)

    def delete(self, pk: str, sk: str, **kwargs: Any) -> None:
        self._write(self.client.delete_item, TableName=self.name, Key=key(pk, sk), **kwargs)
