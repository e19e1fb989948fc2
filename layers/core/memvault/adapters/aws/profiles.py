"""Memory profiles on DynamoDB (MemoryProfileStore), in the single table:

    A#<account> / MS#<owner>␟<slug>     the memory: every field, ``revision``, ``item_count``
                                        (written with attribute_not_exists: a slug is
                                        unique per owner)
    A#<account> / MP#<memory id>        its id -> owner and slug (management by id)
    A#<account> / MI#<memory id>␟<item> an item; a fact's vector in it (float32 bytes), so
                                        erasing the memory leaves nothing elsewhere
    MEMRET / <account>␟<memory id>      memories with a retention, for the nightly sweep
                                        (bounded Queries, no Scan)

The gateway resolves a request's slugs with one BatchGetItem of ``MS#`` items; an item
write is one transaction with the memory's counter (the 1,000-item limit is its
condition) and revision.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import keys
from memvault.adapters.aws.clients import error_code
from memvault.adapters.aws.dynamo import Item, Table, key, serialize, values
from memvault.domain.profiles import (
    ItemType,
    MemoryProfile,
    ProfileItem,
    ProfilePatch,
    count_current,
)
from memvault.errors import Conflict, NotFound, QuotaExceeded

SEP = keys.SEP
PROFILE_PREFIX = "MS#"
POINTER_PREFIX = "MP#"
ITEM_PREFIX = "MI#"
RETENTION_PK = "MEMRET"


def profile_sk(owner_member_id: str, slug: str) -> str:
    return f"{PROFILE_PREFIX}{owner_member_id}{SEP}{slug}"


def pointer_sk(memory_id: str) -> str:
    return f"{POINTER_PREFIX}{memory_id}"


def item_prefix(memory_id: str) -> str:
    return f"{ITEM_PREFIX}{memory_id}{SEP}"


def item_sk(memory_id: str, item_id: str) -> str:
    return f"{item_prefix(memory_id)}{item_id}"


def _profile_item(p: MemoryProfile) -> Item:
    return {
        keys.TABLE_PK: keys.account_pk(p.account_id),
        keys.TABLE_SK: profile_sk(p.owner_member_id, p.slug),
        "memory_id": p.id,
        "account_id": p.account_id,
        "owner_member_id": p.owner_member_id,
        "slug": p.slug,
        "name": p.name,
        "description": p.description,
        "retention_days": p.retention_days,
        "active": p.active,
        "created_at": p.created_at,
        "updated_at": p.updated_at,
        "revision": p.revision,
        "item_count": p.item_count,
    }


def _profile(item: Item) -> MemoryProfile:
    return MemoryProfile(
        id=item["memory_id"],
        account_id=item["account_id"],
        owner_member_id=item["owner_member_id"],
        slug=item["slug"],
        name=item["name"],
        description=item.get("description", ""),
        retention_days=item.get("retention_days"),
        active=bool(item.get("active", True)),
        created_at=item["created_at"],
        updated_at=item["updated_at"],
        revision=item.get("revision", 1),
        item_count=item.get("item_count", 0),
    )


def _binary(value: Any) -> bytes | None:
    if value is None:
        return None
    return bytes(getattr(value, "value", value))


def _item_record(account_id: str, item: ProfileItem) -> Item:
    return {
        keys.TABLE_PK: keys.account_pk(account_id),
        keys.TABLE_SK: item_sk(item.memory_id, item.id),
        "item_id": item.id,
        "memory_id": item.memory_id,
        "item_type": item.item_type.value,
        "key": item.key,
        "text": item.text,
        "vector": item.vector,
        "model": item.model,
        "created_at": item.created_at,
        "updated_at": item.updated_at,
    }


def _item(record: Item) -> ProfileItem:
    return ProfileItem(
        id=record["item_id"],
        memory_id=record["memory_id"],
        item_type=ItemType(record["item_type"]),
        text=record["text"],
        key=record.get("key"),
        created_at=record["created_at"],
        updated_at=record["updated_at"],
        vector=_binary(record.get("vector")),
        model=record.get("model"),
    )


def _not_found() -> NotFound:
    return NotFound("no such memory", code="memory_not_found")


def _retained(p: MemoryProfile) -> Item:
    """The sweep's pointer to a memory with a retention."""
    return {
        keys.TABLE_PK: RETENTION_PK,
        keys.TABLE_SK: f"{p.account_id}{SEP}{p.id}",
        "account_id": p.account_id,
        "owner_member_id": p.owner_member_id,
        "slug": p.slug,
    }


class DynamoProfileStore:
    def __init__(self, table: Table) -> None:
        self.table = table

    # ------------------------------------------------------------------ memories
    def create_profile(self, profile: MemoryProfile) -> None:
        pk = keys.account_pk(profile.account_id)
        actions: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self.table.name,
                    "Item": serialize(_profile_item(profile)),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "Put": {
                    "TableName": self.table.name,
                    "Item": serialize(
                        {
                            keys.TABLE_PK: pk,
                            keys.TABLE_SK: pointer_sk(profile.id),
                            "owner_member_id": profile.owner_member_id,
                            "slug": profile.slug,
                        }
                    ),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
        ]
        if profile.retention_days is not None:
            actions.append(self._retention_put(profile))
        try:
            self.table.transact(actions)
        except ClientError as exc:
            if error_code(exc) == "TransactionCanceledException":
                raise Conflict(
                    f"you already have a memory with the slug '{profile.slug}'",
                    code="memory_exists",
                ) from exc
            raise

    def _retention_put(self, profile: MemoryProfile) -> dict[str, Any]:
        return {"Put": {"TableName": self.table.name, "Item": serialize(_retained(profile))}}

    def _profile_key(self, account_id: str, memory_id: str) -> tuple[str, str] | None:
        pk = keys.account_pk(account_id)
        pointer = self.table.get(pk, pointer_sk(memory_id))
        if pointer is None:
            return None
        return pk, profile_sk(pointer["owner_member_id"], pointer["slug"])

    def get_profile(self, account_id: str, memory_id: str) -> MemoryProfile | None:
        at = self._profile_key(account_id, memory_id)
        if at is None:
            return None
        item = self.table.get(*at)
        return _profile(item) if item else None

    def profiles_by_slug(self, account_id: str, slug: str) -> list[MemoryProfile]:
        found = [p for p in self.list_profiles(account_id) if p.slug == slug]
        return sorted(found, key=lambda p: (p.created_at, p.id))

    def owned_profiles(
        self, account_id: str, owner_member_id: str, slugs: Collection[str]
    ) -> dict[str, MemoryProfile]:
        pk = keys.account_pk(account_id)
        wanted = [(pk, profile_sk(owner_member_id, s)) for s in dict.fromkeys(slugs)]
        if not wanted:
            return {}
        found = self.table.batch_get(wanted)
        return {item["slug"]: _profile(item) for item in found.values()}

    def list_profiles(
        self, account_id: str, *, owner_member_id: str | None = None
    ) -> list[MemoryProfile]:
        prefix = PROFILE_PREFIX if owner_member_id is None else profile_sk(owner_member_id, "")
        items = self.table.query(keys.account_pk(account_id), prefix)
        return sorted((_profile(i) for i in items), key=lambda p: (p.slug, p.id))

    def update_profile(
        self, account_id: str, memory_id: str, patch: ProfilePatch, *, now: float
    ) -> MemoryProfile:
        at = self._profile_key(account_id, memory_id)
        if at is None:
            raise _not_found()
        sets = ["updated_at = :now"]
        removes: list[str] = []
        vals: dict[str, Any] = {":now": now, ":one": 1}
        names: dict[str, str] = {}
        if patch.name is not None:
            sets.append("#name = :name")
            names["#name"] = "name"
            vals[":name"] = patch.name
        if patch.description is not None:
            sets.append("description = :description")
            vals[":description"] = patch.description
        if patch.active is not None:
            sets.append("active = :active")
            vals[":active"] = patch.active
        if patch.set_retention:
            if patch.retention_days is None:
                removes.append("retention_days")
            else:
                sets.append("retention_days = :retention")
                vals[":retention"] = patch.retention_days
        expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
        kwargs: dict[str, Any] = {
            "Key": key(*at),
            "UpdateExpression": expression + " ADD revision :one",
            "ConditionExpression": "attribute_exists(pk)",
            "ExpressionAttributeValues": values(vals),
            "ReturnValues": "ALL_NEW",
        }
        if names:
            kwargs["ExpressionAttributeNames"] = names
        try:
            updated = _profile(self.table.update(**kwargs))
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                raise _not_found() from exc
            raise
        if patch.set_retention:
            if updated.retention_days is None:
                self.table.batch_write([], [(RETENTION_PK, f"{account_id}{SEP}{memory_id}")])
            else:
                self.table.batch_write([_retained(updated)], [])
        return updated

    def delete_profile(self, account_id: str, memory_id: str) -> bool:
        at = self._profile_key(account_id, memory_id)
        if at is None:
            return False
        pk = at[0]
        # Items first: a failure half-way leaves the memory there, so deleting it again
        # finishes the job; the memory and its pointers go last, together.
        item_keys = [
            (pk, i[keys.TABLE_SK])
            for i in self.table.query(pk, item_prefix(memory_id), projection=[keys.TABLE_SK])
        ]
        self.table.batch_write([], item_keys)
        self.table.batch_write(
            [],
            [at, (pk, pointer_sk(memory_id)), (RETENTION_PK, f"{account_id}{SEP}{memory_id}")],
        )
        return True

    # ------------------------------------------------------------------ items
    def list_items(self, account_id: str, memory_id: str) -> list[ProfileItem]:
        records = self.table.query(keys.account_pk(account_id), item_prefix(memory_id))
        return sorted((_item(r) for r in records), key=lambda i: (i.created_at, i.id))

    def count_items(
        self, account_id: str, profiles: Sequence[MemoryProfile], *, now: float
    ) -> dict[str, dict[str, int]]:
        if not profiles:
            return {}
        # One Query over the organisation's items (type and time only), not one a memory.
        found: dict[str, list[tuple[ItemType, float]]] = {p.id: [] for p in profiles}
        records = self.table.query(
            keys.account_pk(account_id),
            ITEM_PREFIX,
            projection=["memory_id", "item_type", "created_at"],
        )
        for r in records:
            if r["memory_id"] in found:
                found[r["memory_id"]].append((ItemType(r["item_type"]), float(r["created_at"])))
        return {p.id: count_current(found[p.id], p.retention_days, now) for p in profiles}

    def get_item(self, account_id: str, memory_id: str, item_id: str) -> ProfileItem | None:
        record = self.table.get(keys.account_pk(account_id), item_sk(memory_id, item_id))
        return _item(record) if record else None

    def _counted(
        self,
        account_id: str,
        memory_id: str,
        write: dict[str, Any],
        *,
        delta: int,
        now: float,
        max_items: int | None = None,
    ) -> MemoryProfile:
        at = self._profile_key(account_id, memory_id)
        if at is None:
            raise _not_found()
        condition = "attribute_exists(pk)"
        vals: dict[str, Any] = {":now": now, ":one": 1, ":delta": delta}
        if max_items is not None:
            condition += " AND item_count < :max"
            vals[":max"] = max_items
        actions = [
            write,
            {
                "Update": {
                    "TableName": self.table.name,
                    "Key": key(*at),
                    "UpdateExpression": (
                        "SET updated_at = :now ADD revision :one, item_count :delta"
                    ),
                    "ConditionExpression": condition,
                    "ExpressionAttributeValues": values(vals),
                }
            },
        ]
        try:
            self.table.transact(actions)
        except ClientError as exc:
            reasons = [
                str(r.get("Code", "None")) for r in exc.response.get("CancellationReasons", [])
            ]
            if error_code(exc) != "TransactionCanceledException":
                raise
            if len(reasons) > 1 and reasons[1] != "None":
                if max_items is not None and self.table.get(*at) is not None:
                    raise QuotaExceeded(
                        f"a memory holds at most {max_items:,} items; delete some first",
                        code="memory_item_limit",
                    ) from exc
                raise _not_found() from exc
            raise NotFound("no such item in this memory", code="memory_item_not_found") from exc
        found = self.table.get(*at)
        if found is None:
            raise _not_found()
        return _profile(found)

    def add_item(
        self, account_id: str, item: ProfileItem, *, max_items: int, now: float
    ) -> MemoryProfile:
        put = {
            "Put": {
                "TableName": self.table.name,
                "Item": serialize(_item_record(account_id, item)),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }
        return self._counted(account_id, item.memory_id, put, delta=1, now=now, max_items=max_items)

    def update_item(self, account_id: str, item: ProfileItem, *, now: float) -> MemoryProfile:
        put = {
            "Put": {
                "TableName": self.table.name,
                "Item": serialize(_item_record(account_id, item)),
                "ConditionExpression": "attribute_exists(pk)",
            }
        }
        return self._counted(account_id, item.memory_id, put, delta=0, now=now)

    def delete_item(self, account_id: str, memory_id: str, item_id: str, *, now: float) -> bool:
        delete = {
            "Delete": {
                "TableName": self.table.name,
                "Key": key(keys.account_pk(account_id), item_sk(memory_id, item_id)),
                "ConditionExpression": "attribute_exists(pk)",
            }
        }
        try:
            self._counted(account_id, memory_id, delete, delta=-1, now=now)
        except NotFound:
            return False
        return True

    # ------------------------------------------------------------------ retention
    def profiles_with_retention(self, limit: int = 10_000) -> list[MemoryProfile]:
        found: list[MemoryProfile] = []
        for pointer in self.table.query(RETENTION_PK, "", limit=limit):
            record = self.table.get(
                keys.account_pk(pointer["account_id"]),
                profile_sk(pointer["owner_member_id"], pointer["slug"]),
            )
            if record is not None and record.get("retention_days") is not None:
                found.append(_profile(record))
            if len(found) >= limit:
                break
        return found

    def delete_items_created_before(
        self, account_id: str, memory_id: str, cutoff: float, *, now: float
    ) -> int:
        expired = [
            i
            for i in self.list_items(account_id, memory_id)
            if i.item_type is not ItemType.GUARDRAIL and i.created_at < cutoff
        ]
        deleted = 0
        for item in expired:
            if self.delete_item(account_id, memory_id, item.id, now=now):
                deleted += 1
        return deleted
