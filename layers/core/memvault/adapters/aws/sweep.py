"""The retention sweep's storage side on DynamoDB (RetentionSweep).

Tombstones carry the "recent" GSI's key attributes under DELETED#<shard> partitions
(``deleted_index``), so the nightly sweep finds the notes deleted before a cutoff
across every account with bounded queries (one per shard, reading only what is due)
instead of a table scan, and with no new GSI: "DELETED#..." never equals an
account's "A#..." partition, so recent_notes never sees a tombstone. Tombstones
written before this carry no index entry; purging the note's history still removes them.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from memvault.adapters.aws import keys
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.clients import aws_errors, error_code
from memvault.adapters.aws.dynamo import Item, deserialize, values
from memvault.adapters.aws.items import DELETED_PREFIX, DELETED_SHARDS
from memvault.adapters.aws.versions import forget_versions


class DynamoRetentionSweep(DynamoParts):
    def purge_deleted_before(self, cutoff: float, limit: int = 500) -> int:
        due: list[Item] = []
        for shard in range(DELETED_SHARDS):
            due.extend(self._deleted_due(shard, cutoff, limit - len(due)))
            if len(due) >= limit:
                break
        purged = 0
        for entry in due:
            pk, sk = entry[keys.TABLE_PK], entry[keys.TABLE_SK]
            # The GSI lags the table: delete the tombstone first, on condition it is the
            # one seen, so a note revived meanwhile (its tombstone gone) keeps its history;
            # once the tombstone is gone no revive can reach these versions.
            try:
                self.table.delete(
                    pk,
                    sk,
                    ConditionExpression="deleted_at = :d",
                    ExpressionAttributeValues=values({":d": entry["deleted_at"]}),
                )
            except ClientError as exc:
                if error_code(exc) == "ConditionalCheckFailedException":
                    continue
                raise
            forget_versions(self.table, self.bodies, pk, entry["note_id"])
            purged += 1
        return purged

    def _deleted_due(self, shard: int, cutoff: float, limit: int) -> list[Item]:
        if limit <= 0:
            return []
        with aws_errors("the notes table"):
            self.table.requests += 1
            out = self.table.client.query(
                TableName=self.table.name,
                IndexName=keys.RECENT_INDEX,
                KeyConditionExpression="#pk = :pk AND #sk < :cut",
                ExpressionAttributeNames={"#pk": keys.RECENT_PK, "#sk": keys.RECENT_SK},
                ExpressionAttributeValues=values(
                    {":pk": f"{DELETED_PREFIX}{shard}", ":cut": keys.recent_sk(cutoff, "")}
                ),
                Limit=limit,
            )
        return [deserialize(raw) for raw in out.get("Items", [])]
