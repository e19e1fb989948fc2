"""Members of organisations on DynamoDB (MemberStore).

A member is ``A#<account>/MB#<id>``; its address, folded, is the global item
``E#<email key>`` written with attribute_not_exists, so no two members share one. The
active owners are counted on ``A#<account>/MEMBERS``: a write that takes an owner away
conditions that counter on there being another (``owners > 1``), in the same
transaction, so two owners demoting each other at once cannot leave none. Member writes
are conditioned on the item's ``rev``, and re-planned from a fresh read when it moved.

Disabling or enabling a member sets ``owner_disabled`` on both records of each of their
keys (after the member item), so key authentication stays one GetItem.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import dynamo, keys
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.clients import error_code
from memvault.adapters.aws.dynamo import Item, serialize, values
from memvault.domain.identity import Member, Role, email_key
from memvault.errors import Conflict, NotFound

MAX_RACES = 10
KEYS_PER_TRANSACTION = 50  # two records each: within DynamoDB's 100 items


def member_not_found(member_id: str) -> NotFound:
    return NotFound(f"no member {member_id!r} in this organisation", code="member_not_found")


def email_taken() -> Conflict:
    return Conflict("a member already signs in with that address", code="email_taken")


def last_owner() -> Conflict:
    return Conflict(
        "the organisation must keep an active owner; make another member owner first",
        code="last_owner",
    )


def cancellation_reasons(exc: ClientError) -> list[str] | None:
    """Per action, why a cancelled transaction was cancelled; None for another error."""
    if error_code(exc) != "TransactionCanceledException":
        return None
    raw: list[dict[str, Any]] = exc.response.get("CancellationReasons", [])
    return [str(r.get("Code", "None")) for r in raw]


def failed(reasons: Sequence[str], index: int | None) -> bool:
    return index is not None and index < len(reasons) and reasons[index] != "None"


def member_item(member: Member, *, password_hash: str | None, rev: int) -> Item:
    return {
        keys.TABLE_PK: keys.account_pk(member.account_id),
        keys.TABLE_SK: keys.member_sk(member.id),
        "member_id": member.id,
        "account_id": member.account_id,
        "email": member.email,
        "email_key": email_key(member.email) if member.email else None,
        "name": member.name,
        "role": member.role.value,
        "created_at": member.created_at,
        "disabled_at": member.disabled_at,
        "password_hash": password_hash,
        "rev": rev,
    }


def member_from(item: Item) -> Member:
    return Member(
        id=item["member_id"],
        account_id=item["account_id"],
        email=item.get("email"),
        name=item["name"],
        role=Role(item["role"]),
        created_at=item["created_at"],
        disabled_at=item.get("disabled_at"),
        has_password=item.get("password_hash") is not None,
    )


def _active_owner(member: Member) -> bool:
    return member.role is Role.OWNER and member.active


class CreateMember:
    """The transaction actions that create a member, and which of them is which (so a
    caller adding its own actions can tell an address taken from a member existing)."""

    def __init__(
        self, table_name: str, member: Member, password_hash: str | None, *, first: int = 0
    ) -> None:
        pk = keys.account_pk(member.account_id)
        self.actions: list[dict[str, Any]] = [
            {
                "ConditionCheck": {
                    "TableName": table_name,
                    "Key": dynamo.key(pk, keys.ACCOUNT_SK),
                    "ConditionExpression": "attribute_exists(pk)",
                }
            },
            {
                "Put": {
                    "TableName": table_name,
                    "Item": serialize(member_item(member, password_hash=password_hash, rev=1)),
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
        ]
        self.account_at, self.member_at = first, first + 1
        self.email_at: int | None = None
        if member.email:
            self.email_at = first + len(self.actions)
            self.actions.append(
                {
                    "Put": {
                        "TableName": table_name,
                        "Item": serialize(
                            {
                                keys.TABLE_PK: keys.email_pk(email_key(member.email)),
                                keys.TABLE_SK: keys.EMAIL_SK,
                                "account_id": member.account_id,
                                "member_id": member.id,
                            }
                        ),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
            )
        if _active_owner(member):
            self.actions.append(owners_change(table_name, member.account_id, +1))

    def raise_for(self, reasons: Sequence[str], member: Member) -> None:
        if failed(reasons, self.email_at):
            raise email_taken()
        if failed(reasons, self.account_at):
            raise NotFound(f"no organisation {member.account_id!r}", code="account_not_found")
        if failed(reasons, self.member_at):
            raise Conflict(f"member {member.id!r} exists", code="member_exists")


def owners_change(table_name: str, account_id: str, delta: int) -> dict[str, Any]:
    key = dynamo.key(keys.account_pk(account_id), keys.MEMBERS_SK)
    if delta > 0:
        return {
            "Update": {
                "TableName": table_name,
                "Key": key,
                "UpdateExpression": "ADD owners :one",
                "ExpressionAttributeValues": values({":one": 1}),
            }
        }
    return {
        "Update": {
            "TableName": table_name,
            "Key": key,
            "UpdateExpression": "SET owners = owners - :one",
            "ConditionExpression": "owners > :one",
            "ExpressionAttributeValues": values({":one": 1}),
        }
    }


class DynamoMemberStore(DynamoParts):
    def _member_item(self, account_id: str, member_id: str) -> Item | None:
        return self.table.get(keys.account_pk(account_id), keys.member_sk(member_id))

    def create_member(self, member: Member, *, password_hash: str | None = None) -> None:
        plan = CreateMember(self.table.name, member, password_hash)
        try:
            self.table.transact(plan.actions)
        except ClientError as exc:
            reasons = cancellation_reasons(exc)
            if reasons is None:
                raise
            plan.raise_for(reasons, member)
            raise

    def get_member(self, account_id: str, member_id: str) -> Member | None:
        item = self._member_item(account_id, member_id)
        return member_from(item) if item else None

    def member_by_email(self, email: str) -> Member | None:
        entry = self.table.get(keys.email_pk(email_key(email)), keys.EMAIL_SK)
        if entry is None:
            return None
        return self.get_member(entry["account_id"], entry["member_id"])

    def list_members(self, account_id: str) -> list[Member]:
        items = self.table.query(keys.account_pk(account_id), keys.MEMBER_PREFIX)
        return sorted((member_from(i) for i in items), key=lambda m: (m.created_at, m.id))

    def update_member(
        self,
        account_id: str,
        member_id: str,
        *,
        role: Role | None = None,
        disabled_at: float | None = None,
        enable: bool = False,
        name: str | None = None,
        email: str | None = None,
    ) -> Member:
        for _ in range(MAX_RACES):
            item = self._member_item(account_id, member_id)
            if item is None:
                raise member_not_found(member_id)
            before = member_from(item)
            after = Member(
                id=before.id,
                account_id=account_id,
                email=email if email is not None else before.email,
                name=name if name is not None else before.name,
                role=role if role is not None else before.role,
                created_at=before.created_at,
                disabled_at=None if enable else (disabled_at or before.disabled_at),
                has_password=before.has_password,
            )
            actions: list[dict[str, Any]] = [
                {
                    "Put": {
                        "TableName": self.table.name,
                        "Item": serialize(
                            member_item(
                                after, password_hash=item.get("password_hash"), rev=item["rev"] + 1
                            )
                        ),
                        "ConditionExpression": "rev = :rev",
                        "ExpressionAttributeValues": values({":rev": item["rev"]}),
                    }
                }
            ]
            email_at = owners_at = None
            if email is not None and email_key(email) != item.get("email_key"):
                if item.get("email_key"):
                    actions.append(self._email_delete(item["email_key"], member_id))
                email_at = len(actions)
                actions.append(self._email_put(email, account_id, member_id))
            delta = int(_active_owner(after)) - int(_active_owner(before))
            if delta:
                owners_at = len(actions)
                actions.append(owners_change(self.table.name, account_id, delta))
            try:
                self.table.transact(actions)
            except ClientError as exc:
                reasons = cancellation_reasons(exc)
                if reasons is None:
                    raise
                if failed(reasons, email_at):
                    raise email_taken() from exc
                if failed(reasons, owners_at):
                    raise last_owner() from exc
                continue  # the member changed in between: read again
            if before.active != after.active:
                self._set_keys_owner_state(account_id, member_id, disabled=not after.active)
            return after
        raise Conflict("the member is changing too often to change now; retry")

    def _email_put(self, email: str, account_id: str, member_id: str) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self.table.name,
                "Item": serialize(
                    {
                        keys.TABLE_PK: keys.email_pk(email_key(email)),
                        keys.TABLE_SK: keys.EMAIL_SK,
                        "account_id": account_id,
                        "member_id": member_id,
                    }
                ),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }

    def _email_delete(self, folded: str, member_id: str) -> dict[str, Any]:
        return {
            "Delete": {
                "TableName": self.table.name,
                "Key": dynamo.key(keys.email_pk(folded), keys.EMAIL_SK),
                "ConditionExpression": "member_id = :m",
                "ExpressionAttributeValues": values({":m": member_id}),
            }
        }

    def remove_member(self, account_id: str, member_id: str) -> Member:
        for _ in range(MAX_RACES):
            item = self._member_item(account_id, member_id)
            if item is None:
                raise member_not_found(member_id)
            member = member_from(item)
            actions: list[dict[str, Any]] = [
                {
                    "Delete": {
                        "TableName": self.table.name,
                        "Key": dynamo.key(keys.account_pk(account_id), keys.member_sk(member_id)),
                        "ConditionExpression": "rev = :rev",
                        "ExpressionAttributeValues": values({":rev": item["rev"]}),
                    }
                }
            ]
            if item.get("email_key"):
                actions.append(self._email_delete(item["email_key"], member_id))
            owners_at = None
            if _active_owner(member):
                owners_at = len(actions)
                actions.append(owners_change(self.table.name, account_id, -1))
            try:
                self.table.transact(actions)
            except ClientError as exc:
                reasons = cancellation_reasons(exc)
                if reasons is None:
                    raise
                if failed(reasons, owners_at):
                    raise last_owner() from exc
                continue
            return member
        raise Conflict("the member is changing too often to remove now; retry")

    def password_hash(self, account_id: str, member_id: str) -> str | None:
        item = self._member_item(account_id, member_id)
        return item.get("password_hash") if item else None

    def set_password_hash(self, account_id: str, member_id: str, password_hash: str) -> None:
        try:
            self.table.update(
                Key=dynamo.key(keys.account_pk(account_id), keys.member_sk(member_id)),
                UpdateExpression="SET password_hash = :h ADD rev :one",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeValues=values({":h": password_hash, ":one": 1}),
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                raise member_not_found(member_id) from exc
            raise

    def _member_keys(self, account_id: str, member_id: str) -> list[Item]:
        items = self.table.query(
            keys.account_pk(account_id), "K#", projection=["key_id", "member_id", "key_hash"]
        )
        return [i for i in items if i.get("member_id") == member_id]

    def _update_key_records(
        self, account_id: str, items: Sequence[Item], update: str, attrs: dict[str, Any]
    ) -> None:
        for start in range(0, len(items), KEYS_PER_TRANSACTION):
            actions: list[dict[str, Any]] = []
            for item in items[start : start + KEYS_PER_TRANSACTION]:
                for pk, sk in (
                    (keys.account_pk(account_id), keys.key_sk(item["key_id"])),
                    (keys.key_hash_pk(item["key_hash"]), keys.KEY_HASH_SK),
                ):
                    actions.append(
                        {
                            "Update": {
                                "TableName": self.table.name,
                                "Key": dynamo.key(pk, sk),
                                "UpdateExpression": update,
                                "ExpressionAttributeValues": values(attrs),
                            }
                        }
                    )
            self.table.transact(actions)

    def _set_keys_owner_state(self, account_id: str, member_id: str, *, disabled: bool) -> None:
        self._update_key_records(
            account_id,
            self._member_keys(account_id, member_id),
            "SET owner_disabled = :d",
            {":d": disabled},
        )

    def give_keys(self, account_id: str, member_id: str, key_ids: Collection[str]) -> None:
        wanted = set(key_ids)
        items = self.table.query(
            keys.account_pk(account_id), "K#", projection=["key_id", "key_hash"]
        )
        chosen = [i for i in items if i["key_id"] in wanted]
        self._update_key_records(account_id, chosen, "SET member_id = :m", {":m": member_id})
