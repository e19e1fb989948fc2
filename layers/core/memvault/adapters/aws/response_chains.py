"""Responses chain links on DynamoDB (ResponseChainStore), in the single table:

    A#<account> / CHAIN#<response id>   a link: ``upstream_id``, ``owed`` (JSON text),
                                        ``created_at``, ``seq``, ``expires_at`` (TTL)
    A#<account> / CHAINSEQ              ``seq``: how many links the organisation stored
    A#<account> / CHAINRING#<slot>      the link stored in ring slot ``seq % max_links``
                                        (``response_id``, ``seq``); TTL

The bound is a ring, so a put costs the same at any size: the counter is incremented,
the slot takes the new link's id and gives back the one it held, and that older link is
deleted (unless it was stored again since: its ``seq`` moved on). Four requests, all on
the gateway's round path only. DynamoDB's TTL deletes lazily, so ``get`` also checks
``expires_at``.
"""

from __future__ import annotations

import json

from botocore.exceptions import ClientError

from memvault.adapters.aws import keys
from memvault.adapters.aws.clients import error_code
from memvault.adapters.aws.dynamo import Table, key, values
from memvault.domain.response_chains import ChainLink, decode_owed, encode_owed

PREFIX = "CHAIN#"
RING_PREFIX = "CHAINRING#"
SEQ_SK = "CHAINSEQ"


def _sk(response_id: str) -> str:
    return PREFIX + response_id


class DynamoResponseChains:
    def __init__(self, table: Table, *, max_links: int) -> None:
        self.table = table
        self.max_links = max_links

    def get(self, account_id: str, response_id: str, *, now: float) -> ChainLink | None:
        item = self.table.get(keys.account_pk(account_id), _sk(response_id))
        if item is None or float(item[keys.TTL_ATTRIBUTE]) <= now:
            return None
        return ChainLink(
            str(item["upstream_id"]),
            decode_owed(json.loads(str(item["owed"]))),
            float(item["created_at"]),
        )

    def put(self, account_id: str, response_id: str, link: ChainLink, *, expires_at: float) -> None:
        if self.max_links <= 0:
            return
        pk = keys.account_pk(account_id)
        counted = self.table.update(
            Key=key(pk, SEQ_SK),
            UpdateExpression="ADD seq :one",
            ExpressionAttributeValues=values({":one": 1}),
            ReturnValues="UPDATED_NEW",
        )
        seq = int(counted["seq"])
        self.table.put(
            {
                keys.TABLE_PK: pk,
                keys.TABLE_SK: _sk(response_id),
                keys.TTL_ATTRIBUTE: expires_at,
                "upstream_id": link.upstream_id,
                "owed": json.dumps(encode_owed(link.owed)),
                "created_at": link.created_at,
                "seq": seq,
            }
        )
        old = self.table.update(
            Key=key(pk, f"{RING_PREFIX}{seq % self.max_links:08d}"),
            UpdateExpression="SET response_id = :id, seq = :seq, #ttl = :ttl",
            ExpressionAttributeNames={"#ttl": keys.TTL_ATTRIBUTE},
            ExpressionAttributeValues=values({":id": response_id, ":seq": seq, ":ttl": expires_at}),
            ReturnValues="UPDATED_OLD",
        )
        evicted = old.get("response_id")
        if evicted is None or evicted == response_id:
            return
        try:
            # Only the link the slot held: one stored again since has a later seq.
            self.table.delete(
                pk,
                _sk(str(evicted)),
                ConditionExpression="seq = :seq",
                ExpressionAttributeValues=values({":seq": int(old["seq"])}),
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise

    def clear(self, account_id: str) -> int:
        pk = keys.account_pk(account_id)
        links = [i[keys.TABLE_SK] for i in self.table.query(pk, PREFIX, projection=[keys.TABLE_SK])]
        ring = [
            i[keys.TABLE_SK] for i in self.table.query(pk, RING_PREFIX, projection=[keys.TABLE_SK])
        ]
        doomed: list[tuple[str, str]] = [(pk, sk) for sk in [*links, *ring, SEQ_SK]]
        self.table.batch_write([], doomed)
        return len(links)
