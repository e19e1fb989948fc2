"""The derived link items on DynamoDB (LinkStore), and their rebuild."""

from __future__ import annotations

from collections.abc import Collection

from memvault.adapters.aws import keys
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.items import link_items, marker_item
from memvault.domain.models import BacklinkSource


class DynamoLinkStore(DynamoParts):
    def links_to(self, account_id: str, target_keys: Collection[str]) -> list[BacklinkSource]:
        pk = keys.account_pk(account_id)
        wanted = set(target_keys)
        out: list[BacklinkSource] = []
        # One query per file name: [[folder/Note]] and [[Note]] share one (keys.py).
        for group in dict.fromkeys(keys.link_group(t) for t in target_keys):
            for item in self.table.query(pk, keys.link_group_prefix(group)):
                if item["target_key"] in wanted:
                    out.append(
                        BacklinkSource(item["source_path"], item["target_key"], item["has_folder"])
                    )
        return out

    def paths_by_name(self, account_id: str, name_keys: Collection[str]) -> dict[str, list[str]]:
        pk = keys.account_pk(account_id)
        found: dict[str, list[str]] = {}
        # A file name never holds a "/": such a key (a folder link's) names no note.
        for name in dict.fromkeys(n for n in name_keys if "/" not in n):
            for item in self.table.query(pk, keys.name_prefix(name)):
                if item["name_key"] == name:
                    found.setdefault(name, []).append(item["path"])
        return {k: sorted(v) for k, v in found.items()}

    def all_links(self, account_id: str) -> list[BacklinkSource]:
        return [
            BacklinkSource(i["source_path"], i["target_key"], i["has_folder"])
            for i in self.table.query(keys.account_pk(account_id), keys.LINK_PREFIX)
        ]

    def rebuild_links(self, account_id: str) -> int:
        """Rewrite the derived link items from the note items (``memvault reindex``)."""
        pk = keys.account_pk(account_id)
        stale = [(pk, i[keys.TABLE_SK]) for i in self.table.query(pk, keys.LINK_PREFIX)]
        fresh = [link for item in self._live_items(account_id) for link in link_items(pk, item)]
        fresh_keys = {(pk, i[keys.TABLE_SK]) for i in fresh}
        # Tombstone markers too, for tombstones written before markers existed.
        markers = {
            keys.tomb_marker_sk(t["path_key"]): marker_item(pk, t["path_key"])
            for t in self.table.query(pk, "D#", projection=["path_key"])
        }
        self.table.batch_write(
            [*fresh, *markers.values()], [k for k in stale if k not in fresh_keys]
        )
        return len(fresh)
