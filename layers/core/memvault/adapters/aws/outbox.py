"""The search outbox on DynamoDB: notes whose indexing failed, to retry (SearchOutbox)."""

from __future__ import annotations

from collections.abc import Collection

from memvault.adapters.aws import keys
from memvault.adapters.aws.base import DynamoParts


class DynamoSearchOutbox(DynamoParts):
    def queue_reindex(self, account_id: str, note_paths: Collection[str]) -> None:
        pk = keys.account_pk(account_id)
        items = [
            {keys.TABLE_PK: pk, keys.TABLE_SK: keys.queue_sk(p), "path": p} for p in note_paths
        ]
        # A marker per account lets the scheduled drain find the outboxes with no scan.
        marker = {
            keys.TABLE_PK: keys.REINDEX_ACCOUNTS_PK,
            keys.TABLE_SK: account_id,
            "account_id": account_id,
        }
        self.table.batch_write([*items, marker], [])

    def queued_reindex(self, account_id: str, limit: int = 1000) -> list[str]:
        out: list[str] = []
        for item in self.table.query(keys.account_pk(account_id), keys.QUEUE_PREFIX):
            out.append(item["path"])
            if len(out) == limit:
                break
        return out

    def unqueue_reindex(self, account_id: str, note_paths: Collection[str]) -> None:
        pk = keys.account_pk(account_id)
        self.table.batch_write([], [(pk, keys.queue_sk(p)) for p in note_paths])
        if not self.queued_reindex(account_id, limit=1):
            self.table.batch_write([], [(keys.REINDEX_ACCOUNTS_PK, account_id)])

    def accounts_with_queued_reindex(self) -> list[str]:
        return [i["account_id"] for i in self.table.query(keys.REINDEX_ACCOUNTS_PK, "")]
