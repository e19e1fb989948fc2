"""The gateway's response cache on DynamoDB (ResponseCache), in the single table:

    A#<account> / RC#<digest>   one cached answer: its figures, ``expires_at`` (the
                                table's TTL attribute), and the body inline when it is
                                small, else in S3 under ``<account>/cache/<digest>``

DynamoDB's TTL deletes expired items lazily, so ``get`` also checks ``expires_at``. Each
``put`` (a miss, which just paid for an upstream call) reads the organisation's entries'
sizes (one Query of small projections) and evicts the oldest past the byte bound.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import keys
from memvault.adapters.aws.bodies import BodyStore
from memvault.adapters.aws.clients import aws_errors
from memvault.adapters.aws.dynamo import Table
from memvault.domain.response_cache import CachedAnswer

PREFIX = "RC#"
# DynamoDB items hold at most 400 KB: bodies past this go to S3.
INLINE_MAX_BYTES = 300 * 1024


def _sk(digest: str) -> str:
    return PREFIX + digest


def _object_key(account_id: str, digest: str) -> str:
    return f"{account_id}/cache/{digest}"


def _bytes(value: Any) -> bytes:
    return bytes(getattr(value, "value", value))


class DynamoResponseCache:
    def __init__(self, table: Table, bodies: BodyStore, *, max_bytes: int) -> None:
        self.table = table
        self.bodies = bodies
        self.max_bytes = max_bytes

    def get(self, account_id: str, digest: str, *, now: float) -> CachedAnswer | None:
        item = self.table.get(keys.account_pk(account_id), _sk(digest))
        if item is None or float(item[keys.TTL_ATTRIBUTE]) <= now:
            return None
        if "body" in item:
            body = _bytes(item["body"])
        else:
            try:
                with aws_errors("the notes bucket"):
                    self.bodies.count_request()
                    got = self.bodies.client.get_object(
                        Bucket=self.bodies.bucket, Key=_object_key(account_id, digest)
                    )
                    body = got["Body"].read()
            except ClientError:
                return None  # evicted under us: a miss
        return CachedAnswer(
            status=int(item["status"]),
            content_type=str(item["content_type"]),
            body=body,
            model=str(item["model"]),
            input_tokens=int(item["input_tokens"]),
            output_tokens=int(item["output_tokens"]),
            cost_micros=int(item["cost_micros"]),
            created_at=float(item["created_at"]),
        )

    def put(self, account_id: str, digest: str, answer: CachedAnswer, *, expires_at: float) -> None:
        if answer.size > self.max_bytes:
            return
        pk = keys.account_pk(account_id)
        item: dict[str, Any] = {
            keys.TABLE_PK: pk,
            keys.TABLE_SK: _sk(digest),
            keys.TTL_ATTRIBUTE: expires_at,
            "status": answer.status,
            "content_type": answer.content_type,
            "model": answer.model,
            "input_tokens": answer.input_tokens,
            "output_tokens": answer.output_tokens,
            "cost_micros": answer.cost_micros,
            "created_at": answer.created_at,
            "size": answer.size,
        }
        item["inline"] = answer.size <= INLINE_MAX_BYTES
        if item["inline"]:
            item["body"] = answer.body
        else:
            with aws_errors("the notes bucket"):
                self.bodies.count_request()
                self.bodies.client.put_object(
                    Bucket=self.bodies.bucket,
                    Key=_object_key(account_id, digest),
                    Body=answer.body,
                    ContentType=answer.content_type,
                )
        self.table.put(item)
        self._evict(account_id, keep=digest, now=answer.created_at)

    def _entries(self, account_id: str) -> list[dict[str, Any]]:
        return list(
            self.table.query(
                keys.account_pk(account_id),
                PREFIX,
                projection=[keys.TABLE_SK, "size", "created_at", keys.TTL_ATTRIBUTE, "inline"],
            )
        )

    def _evict(self, account_id: str, *, keep: str, now: float) -> None:
        entries = self._entries(account_id)
        expired = [e for e in entries if float(e[keys.TTL_ATTRIBUTE]) <= now]
        live = sorted(
            (e for e in entries if float(e[keys.TTL_ATTRIBUTE]) > now),
            key=lambda e: (float(e["created_at"]), e[keys.TABLE_SK]),
        )
        total = sum(int(e["size"]) for e in live)
        doomed = list(expired)
        for entry in live:
            if total <= self.max_bytes:
                break
            if entry[keys.TABLE_SK] == _sk(keep):
                continue
            doomed.append(entry)
            total -= int(entry["size"])
        self._delete(account_id, doomed)

    def _delete(self, account_id: str, entries: list[dict[str, Any]]) -> None:
        if not entries:
            return
        pk = keys.account_pk(account_id)
        self.table.batch_write([], [(pk, e[keys.TABLE_SK]) for e in entries])
        in_s3 = [
            _object_key(account_id, e[keys.TABLE_SK][len(PREFIX) :])
            for e in entries
            if not e.get("inline", True)
        ]
        self.bodies.delete_quietly(in_s3)

    def clear(self, account_id: str) -> int:
        entries = self._entries(account_id)
        self._delete(account_id, entries)
        return len(entries)
