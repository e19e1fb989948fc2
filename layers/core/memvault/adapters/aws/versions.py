"""A note's kept versions on DynamoDB (items) and S3 (bodies): VersionStore."""

from __future__ import annotations

from collections.abc import Sequence

from memvault.adapters.aws import keys
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.bodies import BodyStore
from memvault.adapters.aws.dynamo import Item, Table
from memvault.adapters.aws.items import version_info
from memvault.domain import paths
from memvault.domain.models import NoteVersion, VersionInfo


def forget_versions(
    table: Table, bodies: BodyStore, pk: str, note_id: str, *, with_keys: Sequence[str] = ()
) -> None:
    """Delete a note's version items and their bodies (and the items ``with_keys``)."""
    versions: list[Item] = list(table.query(pk, keys.version_prefix(note_id)))
    table.batch_write([], [(pk, v[keys.TABLE_SK]) for v in versions] + [(pk, k) for k in with_keys])
    bodies.delete_quietly(v["body"] for v in versions)


class DynamoVersionStore(DynamoParts):
    def _history_owner(self, account_id: str, path: str) -> Item | None:
        return self._note_item(account_id, path) or self._latest_tomb(account_id, path)

    def list_versions(self, account_id: str, path: str) -> list[VersionInfo]:
        owner = self._history_owner(account_id, path)
        if owner is None:
            return []
        items = self.table.query(
            keys.account_pk(account_id), keys.version_prefix(owner["note_id"]), forward=False
        )
        return [version_info(i) for i in items]

    def get_version(self, account_id: str, path: str, version: int) -> NoteVersion | None:
        owner = self._history_owner(account_id, path)
        if owner is None:
            return None
        item = self.table.get(
            keys.account_pk(account_id), keys.version_sk(owner["note_id"], version)
        )
        if item is None:
            return None
        markdown = self.bodies.get(item["body"])
        return NoteVersion(info=version_info(item), markdown=markdown)

    def purge_note(self, account_id: str, path: str) -> bool:
        pk = keys.account_pk(account_id)
        tombs = list(self.table.query(pk, keys.tomb_prefix(paths.path_key(path))))
        for tomb in tombs:
            forget_versions(
                self.table, self.bodies, pk, tomb["note_id"], with_keys=[tomb[keys.TABLE_SK]]
            )
        return bool(tombs)
