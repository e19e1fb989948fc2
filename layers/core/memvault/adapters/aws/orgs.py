"""Organisations as a directory on DynamoDB (OrganisationStore): the ``ORGS`` partition.

An account made since the directory existed is listed by ``create_account``, in the
same transaction; one made before is listed by the upgrade (``list_organisation``, run
by ``memvault reindex``) or by ``memvault orgs list --upgrade``.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from memvault.adapters.aws import dynamo, keys
from memvault.adapters.aws.accounts import org_directory_item
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.clients import error_code
from memvault.adapters.aws.dynamo import values
from memvault.domain.models import Account, Limits
from memvault.errors import NotFound


def _account(item: dynamo.Item) -> Account:
    return Account(
        id=item["id"],
        name=item["name"],
        created_at=item["created_at"],
        limits=Limits(max_notes=item["max_notes"], max_bytes=item["max_bytes"]),
        note_count=item["note_count"],
        total_bytes=item["total_bytes"],
        revision=int(item.get("revision", 0)),
    )


def _not_found(account_id: str) -> NotFound:
    return NotFound(f"no organisation {account_id!r}", code="account_not_found")


class DynamoOrganisationStore(DynamoParts):
    def list_organisations(self) -> list[Account]:
        ids = [i["id"] for i in self.table.query(keys.ORGS_PK, "")]
        found = self.table.batch_get([(keys.account_pk(i), keys.ACCOUNT_SK) for i in ids])
        accounts = [_account(item) for item in found.values()]
        return sorted(accounts, key=lambda a: (a.created_at, a.id))

    def rename_organisation(self, account_id: str, name: str) -> Account:
        try:
            self.table.update(
                Key=dynamo.key(keys.account_pk(account_id), keys.ACCOUNT_SK),
                UpdateExpression="SET #n = :n",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames={"#n": "name"},
                ExpressionAttributeValues=values({":n": name}),
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                raise _not_found(account_id) from exc
            raise
        item = self._account_item(account_id)
        if item is None:
            raise _not_found(account_id)
        account = _account(item)
        self.table.put(org_directory_item(account))
        return account

    def list_organisation(self, account_id: str) -> None:
        item = self._account_item(account_id)
        if item is None:
            raise _not_found(account_id)
        self.table.put(org_directory_item(_account(item)))
