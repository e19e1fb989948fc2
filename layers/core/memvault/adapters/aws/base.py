"""What every part of the DynamoDB store shares: the table, the bucket, the caches, and
the reads more than one part makes."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

from memvault.adapters.aws import keys
from memvault.adapters.aws.bodies import BodyStore
from memvault.adapters.aws.dynamo import Item, Table
from memvault.adapters.aws.items import note_from
from memvault.adapters.aws.read_cache import BodyCache, RecentItems
from memvault.domain import paths
from memvault.domain.models import Note


class DynamoParts:
    def __init__(self, table: Table, bodies: BodyStore) -> None:
        self.table = table
        self.bodies = bodies
        self.recent = RecentItems()
        self.body_cache = BodyCache()

    def _account_item(self, account_id: str) -> Item | None:
        return self.table.get(keys.account_pk(account_id), keys.ACCOUNT_SK)

    def _note_item(self, account_id: str, path: str) -> Item | None:
        """The live note item at ``path``'s key: the note under any case of the path."""
        return self.table.get(keys.account_pk(account_id), keys.note_sk(paths.path_key(path)))

    def _latest_tomb(self, account_id: str, path: str) -> Item | None:
        """The latest tombstone under ``path``'s key, whatever its spelling."""
        tombs = list(
            self.table.query(keys.account_pk(account_id), keys.tomb_prefix(paths.path_key(path)))
        )
        return max(tombs, key=lambda t: t["deleted_at"]) if tombs else None

    def _live_items(
        self, account_id: str, projection: Sequence[str] | None = None
    ) -> Iterator[Item]:
        return self.table.query(
            keys.account_pk(account_id), keys.NOTE_PREFIX, projection=projection
        )

    def _body(self, object_key: str) -> str:
        return self._bodies([object_key])[object_key]

    def _bodies(self, object_keys: Collection[str]) -> dict[str, str]:
        """Markdown for several body objects: the cached ones, the rest fetched together."""
        found: dict[str, str] = {}
        for object_key in object_keys:
            if (cached := self.body_cache.get(object_key)) is not None:
                found[object_key] = cached
        fetched = self.bodies.get_many([k for k in object_keys if k not in found])
        for object_key, markdown in fetched.items():
            self.body_cache.put(object_key, markdown)
        return found | fetched

    def _with_bodies(self, items: Sequence[Item]) -> list[Note]:
        bodies = self._bodies([i["body"] for i in items])
        return [note_from(i, bodies[i["body"]]) for i in items]
