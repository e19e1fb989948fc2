"""Invitations on DynamoDB (InvitationStore).

Each invitation is two items: ``A#<account>/IV#<id>`` (listing) and ``IH#<token
hash>/IH`` (accepting, by the token). Accepting is one transaction that deletes both on
the condition that they exist and creates the member with its address item, so a token
is used once even when two people race with it. Both carry a TTL a day past the expiry.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import dynamo, keys
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.dynamo import Item, serialize
from memvault.adapters.aws.members import CreateMember, cancellation_reasons, failed
from memvault.domain.identity import Invitation, Member, Role
from memvault.errors import Conflict

TTL_GRACE_SECONDS = 86_400


def _record(invitation: Invitation, token_hash: str) -> Item:
    return {
        "invitation_id": invitation.id,
        "account_id": invitation.account_id,
        "email": invitation.email,
        "role": invitation.role.value,
        "invited_by": invitation.invited_by,
        "created_at": invitation.created_at,
        "ends_at": invitation.expires_at,
        "token_hash": token_hash,
        keys.TTL_ATTRIBUTE: int(invitation.expires_at) + TTL_GRACE_SECONDS,
    }


def _invitation(item: Item) -> Invitation:
    return Invitation(
        id=item["invitation_id"],
        account_id=item["account_id"],
        email=item["email"],
        role=Role(item["role"]),
        invited_by=item["invited_by"],
        created_at=item["created_at"],
        expires_at=item["ends_at"],
    )


class DynamoInvitationStore(DynamoParts):
    def _item_keys(
        self, account_id: str, invitation_id: str, token_hash: str
    ) -> list[tuple[str, str]]:
        return [
            (keys.account_pk(account_id), keys.invitation_sk(invitation_id)),
            (keys.invitation_hash_pk(token_hash), keys.INVITATION_HASH_SK),
        ]

    def put_invitation(self, invitation: Invitation, token_hash: str) -> None:
        record = _record(invitation, token_hash)
        self.table.transact(
            [
                {
                    "Put": {
                        "TableName": self.table.name,
                        "Item": serialize({keys.TABLE_PK: pk, keys.TABLE_SK: sk, **record}),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
                for pk, sk in self._item_keys(invitation.account_id, invitation.id, token_hash)
            ]
        )

    def invitation_by_token(self, token_hash: str) -> Invitation | None:
        item = self.table.get(keys.invitation_hash_pk(token_hash), keys.INVITATION_HASH_SK)
        return _invitation(item) if item else None

    def _item(self, account_id: str, invitation_id: str) -> Item | None:
        return self.table.get(keys.account_pk(account_id), keys.invitation_sk(invitation_id))

    def get_invitation(self, account_id: str, invitation_id: str) -> Invitation | None:
        item = self._item(account_id, invitation_id)
        return _invitation(item) if item else None

    def list_invitations(self, account_id: str) -> list[Invitation]:
        items = self.table.query(keys.account_pk(account_id), keys.INVITATION_PREFIX)
        return sorted((_invitation(i) for i in items), key=lambda v: (v.created_at, v.id))

    def _deletes(self, item: Item) -> list[dict[str, Any]]:
        return [
            {
                "Delete": {
                    "TableName": self.table.name,
                    "Key": dynamo.key(pk, sk),
                    "ConditionExpression": "attribute_exists(pk)",
                }
            }
            for pk, sk in self._item_keys(
                item["account_id"], item["invitation_id"], item["token_hash"]
            )
        ]

    def delete_invitation(self, account_id: str, invitation_id: str) -> bool:
        item = self._item(account_id, invitation_id)
        if item is None:
            return False
        try:
            self.table.transact(self._deletes(item))
        except ClientError as exc:
            if cancellation_reasons(exc) is None:
                raise
            return False  # accepted or revoked in between
        return True

    def accept_invitation(
        self, invitation: Invitation, member: Member, *, password_hash: str
    ) -> None:
        item = self._item(invitation.account_id, invitation.id)
        if item is None:
            raise Conflict("the invitation was already used", code="invitation_used")
        deletes = self._deletes(item)
        plan = CreateMember(self.table.name, member, password_hash, first=len(deletes))
        try:
            self.table.transact([*deletes, *plan.actions])
        except ClientError as exc:
            reasons = cancellation_reasons(exc)
            if reasons is None:
                raise
            if failed(reasons, 0) or failed(reasons, 1):
                raise Conflict("the invitation was already used", code="invitation_used") from exc
            plan.raise_for(reasons, member)
            raise

    def expire_invitations(self, now: float, limit: int = 1000) -> int:
        return 0  # DynamoDB's TTL removes them; reads check the expiry themselves
