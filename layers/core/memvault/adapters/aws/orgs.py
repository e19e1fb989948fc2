"""Organisations as a directory on DynamoDB (OrganisationStore): the ``ORGS`` partition.

An account made since the directory existed is listed by ``create_account``, in the
same transaction; one made before is listed by the upgrade (``list_organisation``, run
by ``memvault reindex``) or by ``memvault orgs list --upgrade``.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from memvault.adapters.aws import dynamo, keys, quota
from memvault.adapters.aws.accounts import account_from, org_directory_item
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.clients import error_code
from memvault.adapters.aws.dynamo import values
from memvault.domain.models import Account, SearchDefaults
from memvault.errors import NotFound


def _not_found(account_id: str) -> NotFound:
    return NotFound(f"no organisation {account_id!r}", code="account_not_found")


class DynamoOrganisationStore(DynamoParts):
    def _account(self, account_id: str) -> Account | None:
        state = quota.read_state(self.table, keys.account_pk(account_id))
        return account_from(state) if state.account else None

    def list_organisations(self) -> list[Account]:
        ids = [i["id"] for i in self.table.query(keys.ORGS_PK, "")]
        # Each account item with its quota shards (usage is their sum): one BatchGetItem
        # per 100 keys.
        sort_keys = [keys.ACCOUNT_SK] + [keys.quota_sk(n) for n in range(keys.QUOTA_SHARDS)]
        found = self.table.batch_get([(keys.account_pk(i), sk) for i in ids for sk in sort_keys])
        accounts = []
        for account_id in ids:
            pk = keys.account_pk(account_id)
            item = found.get((pk, keys.ACCOUNT_SK))
            if item is None:
                continue
            shards = [found[(pk, sk)] for sk in sort_keys[1:] if (pk, sk) in found]
            accounts.append(account_from(quota.State(pk, item, shards)))
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
        account = self._account(account_id)
        if account is None:
            raise _not_found(account_id)
        self.table.put(org_directory_item(account))
        return account

    def list_organisation(self, account_id: str) -> None:
        account = self._account(account_id)
        if account is None:
            raise _not_found(account_id)
        self.table.put(org_directory_item(account))

    def set_search_defaults(self, account_id: str, defaults: SearchDefaults) -> Account:
        # A None field is removed from the item: it reads back as the deployment's.
        sets = {"search_mode": defaults.mode, "min_score": defaults.min_score}
        names = {f"#{n}": n for n in sets}
        kept = [f"#{n} = :{n}" for n, v in sets.items() if v is not None]
        gone = [f"#{n}" for n, v in sets.items() if v is None]
        expression = " ".join(
            part
            for part in (
                f"SET {', '.join(kept)}" if kept else "",
                f"REMOVE {', '.join(gone)}" if gone else "",
            )
            if part
        )
        extra = (
            {
                "ExpressionAttributeValues": values(
                    {f":{n}": v for n, v in sets.items() if v is not None}
                )
            }
            if kept
            else {}
        )
        try:
            self.table.update(
                Key=dynamo.key(keys.account_pk(account_id), keys.ACCOUNT_SK),
                UpdateExpression=expression,
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames=names,
                **extra,
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                raise _not_found(account_id) from exc
            raise
        account = self._account(account_id)
        if account is None:
            raise _not_found(account_id)
        return account
