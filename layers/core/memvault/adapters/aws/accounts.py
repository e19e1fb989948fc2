"""Accounts and their API keys on DynamoDB (AccountStore, KeyStore)."""

from __future__ import annotations

from dataclasses import replace

from botocore.exceptions import ClientError

from memvault.adapters.aws import keys, quota
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.clients import error_code
from memvault.adapters.aws.dynamo import Item, serialize, values
from memvault.domain.models import Account, ApiKey, KeySettings, Limits, SearchDefaults, Toggles
from memvault.errors import Conflict, NotFound

_DEFAULT_LIMITS = Limits()


def limits_of(item: Item) -> Limits:
    """An account item's limits; the file limits are absent until set (the defaults)."""
    return Limits(
        max_notes=item["max_notes"],
        max_bytes=item["max_bytes"],
        max_files=item.get("max_files", _DEFAULT_LIMITS.max_files),
        max_file_bytes=item.get("max_file_bytes", _DEFAULT_LIMITS.max_file_bytes),
    )


def account_from(state: quota.State) -> Account:
    """The account from its item and quota shards (usage and revision are their sums)."""
    item = state.account
    assert item is not None
    usage = state.usage
    return Account(
        id=item["id"],
        name=item["name"],
        created_at=item["created_at"],
        limits=limits_of(item),
        note_count=usage.note_count,
        total_bytes=usage.total_bytes,
        revision=state.revision,
        # Absent until an owner or admin sets them (ADR 0050): the deployment's.
        search=SearchDefaults(mode=item.get("search_mode"), min_score=item.get("min_score")),
    )


_KEY_DEFAULTS = KeySettings()


def _key_record(item: Item) -> ApiKey:
    return ApiKey(
        id=item["key_id"],
        account_id=item["account_id"],
        name=item["name"],
        prefix=item["prefix"],
        toggles=Toggles(recall=item["recall"], tools=item["tools"], mcp=item["mcp"]),
        admin=item["admin"],
        created_at=item["created_at"],
        revoked_at=item.get("revoked_at"),
        # Keys written before the gateway settings existed lack them: the defaults apply.
        recall_notes=item.get("recall_notes", _KEY_DEFAULTS.recall_notes),
        recall_tokens=item.get("recall_tokens", _KEY_DEFAULTS.recall_tokens),
        memory_tokens=item.get("memory_tokens", _KEY_DEFAULTS.memory_tokens),
        recall_mode=item.get("recall_mode"),
        cache_ttl_seconds=item.get("cache_ttl_seconds"),
        spend_cap_micros=item.get("spend_cap_micros"),
        # Keys written before members existed have no owner until the upgrade, and are
        # bound to their account's vault.
        member_id=item.get("member_id"),
        vault=item.get("vault", True),
        owner_active=not item.get("owner_disabled", False),
    )


def org_directory_item(account: Account) -> Item:
    return {
        keys.TABLE_PK: keys.ORGS_PK,
        keys.TABLE_SK: account.id,
        "id": account.id,
        "name": account.name,
        "created_at": account.created_at,
    }


class DynamoAccountStore(DynamoParts):
    def create_account(self, account: Account) -> None:
        item = {
            keys.TABLE_PK: keys.account_pk(account.id),
            keys.TABLE_SK: keys.ACCOUNT_SK,
            "id": account.id,
            "name": account.name,
            "created_at": account.created_at,
            "max_notes": account.limits.max_notes,
            "max_bytes": account.limits.max_bytes,
            "max_files": account.limits.max_files,
            "max_file_bytes": account.limits.max_file_bytes,
        }
        # Headroom lives in quota shards, so a write checks the quota in its own
        # condition, with no read first, on an item few other writers touch (quota).
        limits = account.limits
        shards = quota.shard_items(keys.account_pk(account.id), limits.max_notes, limits.max_bytes)
        # With its entry in the organisation directory (memvault orgs list), together.
        try:
            self.table.transact(
                [
                    {
                        "Put": {
                            "TableName": self.table.name,
                            "Item": serialize(i),
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    }
                    for i in [item, *shards]
                ]
                + [
                    {
                        "Put": {
                            "TableName": self.table.name,
                            "Item": serialize(org_directory_item(account)),
                        }
                    },
                ]
            )
        except ClientError as exc:
            if error_code(exc) == "TransactionCanceledException":
                raise Conflict(f"account {account.id!r} exists", code="account_exists") from exc
            raise

    def get_account(self, account_id: str) -> Account | None:
        state = quota.read_state(self.table, keys.account_pk(account_id))
        return account_from(state) if state.account else None

    def set_limits(self, account_id: str, limits: Limits) -> Account:
        quota.set_limits(self.table, account_id, limits)
        account = self.get_account(account_id)
        assert account is not None
        return account


class DynamoKeyStore(DynamoParts):
    def _key_items(self, key: ApiKey, key_hash: str) -> list[Item]:
        record = {
            "key_id": key.id,
            "account_id": key.account_id,
            "name": key.name,
            "prefix": key.prefix,
            "recall": key.toggles.recall,
            "tools": key.toggles.tools,
            "mcp": key.toggles.mcp,
            "admin": key.admin,
            "created_at": key.created_at,
            "revoked_at": key.revoked_at,
            "key_hash": key_hash,
            "recall_notes": key.recall_notes,
            "recall_tokens": key.recall_tokens,
            "memory_tokens": key.memory_tokens,
            "recall_mode": key.recall_mode,  # None is left out (the vault's default)
            "cache_ttl_seconds": key.cache_ttl_seconds,  # None is left out (off)
            "spend_cap_micros": key.spend_cap_micros,  # None is left out (no cap)
            "member_id": key.member_id,
            "vault": key.vault,
            "owner_disabled": not key.owner_active,
        }
        return [
            {
                keys.TABLE_PK: keys.account_pk(key.account_id),
                keys.TABLE_SK: keys.key_sk(key.id),
                **record,
            },
            {keys.TABLE_PK: keys.key_hash_pk(key_hash), keys.TABLE_SK: keys.KEY_HASH_SK, **record},
        ]

    def put_key(self, key: ApiKey, key_hash: str) -> None:
        self.table.transact(
            [
                {
                    "Put": {
                        "TableName": self.table.name,
                        "Item": serialize(item),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
                for item in self._key_items(key, key_hash)
            ]
        )

    def key_by_hash(self, key_hash: str) -> ApiKey | None:
        item = self.table.get(keys.key_hash_pk(key_hash), keys.KEY_HASH_SK)
        return _key_record(item) if item else None

    def _key_item(self, account_id: str, key_id: str) -> Item | None:
        return self.table.get(keys.account_pk(account_id), keys.key_sk(key_id))

    def get_key(self, account_id: str, key_id: str) -> ApiKey | None:
        item = self._key_item(account_id, key_id)
        return _key_record(item) if item else None

    def list_keys(self, account_id: str) -> list[ApiKey]:
        items = self.table.query(keys.account_pk(account_id), "K#")
        return sorted((_key_record(i) for i in items), key=lambda k: (k.created_at, k.id))

    def update_key(
        self,
        account_id: str,
        key_id: str,
        *,
        toggles: Toggles | None,
        revoked_at: float | None,
        settings: KeySettings | None = None,
    ) -> ApiKey:
        for _ in range(10):
            item = self._key_item(account_id, key_id)
            if item is None:
                raise NotFound(f"no key {key_id!r} in this account", code="key_not_found")
            updated = self._updated_key(item, toggles, revoked_at, settings)
            # Both records change together: authentication reads the hash record. On the
            # condition that the owner's state is still what was read: a member disabled
            # meanwhile must not come back to life through this write.
            condition = "attribute_exists(pk) AND owner_disabled = :od"
            if "owner_disabled" not in item:
                condition = "attribute_exists(pk) AND attribute_not_exists(owner_disabled)"
            names = values({":od": bool(item.get("owner_disabled", False))})
            try:
                self.table.transact(
                    [
                        {
                            "Put": {
                                "TableName": self.table.name,
                                "Item": serialize(i),
                                "ConditionExpression": condition,
                                **(
                                    {"ExpressionAttributeValues": names}
                                    if "owner_disabled" in item
                                    else {}
                                ),
                            }
                        }
                        for i in self._key_items(updated, item["key_hash"])
                    ]
                )
            except ClientError as exc:
                if error_code(exc) == "TransactionCanceledException":
                    continue  # the owner changed in between: read again
                raise
            return updated
        raise Conflict("the key is too busy to change now; retry")

    def _updated_key(
        self,
        item: Item,
        toggles: Toggles | None,
        revoked_at: float | None,
        settings: KeySettings | None,
    ) -> ApiKey:
        current = _key_record(item)
        updated = replace(
            current,
            toggles=toggles or current.toggles,
            revoked_at=current.revoked_at if current.revoked_at is not None else revoked_at,
        )
        if settings is not None:
            updated = replace(
                updated,
                recall_notes=settings.recall_notes,
                recall_tokens=settings.recall_tokens,
                spend_cap_micros=settings.spend_cap_micros,
                memory_tokens=settings.memory_tokens,
                recall_mode=settings.recall_mode,
                cache_ttl_seconds=settings.cache_ttl_seconds,
            )
        return updated
