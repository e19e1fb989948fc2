"""The search outbox on DynamoDB: notes whose indexing failed, to retry (SearchOutbox)."""

from __future__ import annotations

import time
from collections.abc import Collection

from memvault.adapters.aws import keys
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.dynamo import key, values


class DynamoSearchOutbox(DynamoParts):
    def queue_reindex(self, account_id: str, note_paths: Collection[str]) -> None:
        pk = keys.account_pk(account_id)
        items = [
            {keys.TABLE_PK: pk, keys.TABLE_SK: keys.queue_sk(p), "path": p} for p in note_paths
        ]
        self.table.batch_write(items, [])
        # A marker per account lets the scheduled drain find the outboxes with no scan;
        # it keeps when the outbox got its first note (the queue-age metric).
        self.table.update(
            Key=key(keys.REINDEX_ACCOUNTS_PK, account_id),
            UpdateExpression="SET account_id = :a, queued_at = if_not_exists(queued_at, :t)",
            ExpressionAttributeValues=values({":a": account_id, ":t": time.time()}),
        )

    def queued_reindex(self, account_id: str, limit: int = 1000) -> list[str]:
        out: list[str] = []
        for item in self.table.query(keys.account_pk(account_id), keys.QUEUE_PREFIX):
            out.append(item["path"])
            if len(out) == limit:
                break
        return out

    def is_queued_reindex(self, account_id: str, path: str) -> bool:
        return self.table.get(keys.account_pk(account_id), keys.queue_sk(path)) is not None

    def unqueue_reindex(self, account_id: str, note_paths: Collection[str]) -> None:
        pk = keys.account_pk(account_id)
        self.table.batch_write([], [(pk, keys.queue_sk(p)) for p in note_paths])
        if not self.queued_reindex(account_id, limit=1):
            self.table.batch_write([], [(keys.REINDEX_ACCOUNTS_PK, account_id)])

    def accounts_with_queued_reindex(self) -> list[str]:
        return [i["account_id"] for i in self.table.query(keys.REINDEX_ACCOUNTS_PK, "")]

    def oldest_queued_at(self) -> float | None:
        times = [
            float(i["queued_at"])
            for i in self.table.query(keys.REINDEX_ACCOUNTS_PK, "")
            if i.get("queued_at") is not None
        ]
        return min(times) if times else None
