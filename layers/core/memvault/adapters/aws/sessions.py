"""Signed-in sessions on DynamoDB (SessionStore).

``SH#<secret hash>/SH`` is the session (what a signed-in request reads, and where its
activity is noted); ``A#<account>/SE#<session id>`` points at it for listings and for
ending sessions. Both expire by TTL at the session's absolute expiry.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import dynamo, keys
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.clients import error_code
from memvault.adapters.aws.dynamo import Item, serialize, values
from memvault.domain.identity import Session


def _session(item: Item) -> Session:
    return Session(
        id=item["session_id"],
        account_id=item["account_id"],
        member_id=item["member_id"],
        created_at=item["created_at"],
        last_seen_at=item["last_seen_at"],
        expires_at=item["ends_at"],
        method=item["method"],
        client=item.get("client", ""),
        user_agent=item.get("user_agent", ""),
    )


class DynamoSessionStore(DynamoParts):
    def put_session(self, session: Session, secret_hash: str) -> None:
        ttl = int(session.expires_at) + 1
        full = {
            keys.TABLE_PK: keys.session_hash_pk(secret_hash),
            keys.TABLE_SK: keys.SESSION_HASH_SK,
            "session_id": session.id,
            "account_id": session.account_id,
            "member_id": session.member_id,
            "created_at": session.created_at,
            "last_seen_at": session.last_seen_at,
            "ends_at": session.expires_at,
            "method": session.method,
            "client": session.client or None,
            "user_agent": session.user_agent or None,
            keys.TTL_ATTRIBUTE: ttl,
        }
        pointer = {
            keys.TABLE_PK: keys.account_pk(session.account_id),
            keys.TABLE_SK: keys.session_sk(session.id),
            "session_id": session.id,
            "member_id": session.member_id,
            "secret_hash": secret_hash,
            keys.TTL_ATTRIBUTE: ttl,
        }
        self.table.transact(
            [
                {
                    "Put": {
                        "TableName": self.table.name,
                        "Item": serialize(item),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
                for item in (full, pointer)
            ]
        )

    def session_by_hash(self, secret_hash: str) -> Session | None:
        item = self.table.get(keys.session_hash_pk(secret_hash), keys.SESSION_HASH_SK)
        return _session(item) if item else None

    def _pointers(self, account_id: str, member_id: str | None = None) -> list[Item]:
        items = self.table.query(keys.account_pk(account_id), keys.SESSION_PREFIX)
        return [i for i in items if member_id is None or i["member_id"] == member_id]

    def list_sessions(self, account_id: str, member_id: str) -> list[Session]:
        pointers = self._pointers(account_id, member_id)
        found = self.table.batch_get(
            [(keys.session_hash_pk(p["secret_hash"]), keys.SESSION_HASH_SK) for p in pointers]
        )
        sessions = [_session(i) for i in found.values() if i["account_id"] == account_id]
        return sorted(sessions, key=lambda s: (s.created_at, s.id))

    def touch_session(self, secret_hash: str, now: float) -> None:
        try:
            self.table.update(
                Key=dynamo.key(keys.session_hash_pk(secret_hash), keys.SESSION_HASH_SK),
                UpdateExpression="SET last_seen_at = :now",
                ConditionExpression="attribute_exists(pk) AND last_seen_at < :now",
                ExpressionAttributeValues=values({":now": now}),
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise  # gone (signed out meanwhile) or already later: nothing to note

    def _delete(self, account_id: str, pointer: Item) -> None:
        actions: list[dict[str, Any]] = [
            {
                "Delete": {
                    "TableName": self.table.name,
                    "Key": dynamo.key(pk, sk),
                }
            }
            for pk, sk in (
                (keys.account_pk(account_id), keys.session_sk(pointer["session_id"])),
                (keys.session_hash_pk(pointer["secret_hash"]), keys.SESSION_HASH_SK),
            )
        ]
        self.table.transact(actions)

    def delete_session(self, account_id: str, session_id: str) -> bool:
        pointer = self.table.get(keys.account_pk(account_id), keys.session_sk(session_id))
        if pointer is None:
            return False
        self._delete(account_id, pointer)
        return True

    def delete_member_sessions(
        self, account_id: str, member_id: str, *, keep: str | None = None
    ) -> int:
        ended = 0
        for pointer in self._pointers(account_id, member_id):
            if pointer["session_id"] != keep:
                self._delete(account_id, pointer)
                ended += 1
        return ended

    def expire_sessions(self, now: float, limit: int = 1000) -> int:
        return 0  # DynamoDB's TTL removes them; authentication checks the expiry itself
