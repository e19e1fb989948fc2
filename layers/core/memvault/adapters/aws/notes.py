"""Live notes read from DynamoDB (items) and S3 (bodies): NoteStore's reads.

Note items are keyed by path key (``N#<path key>``), so a path finds its note under any
case and the note comes back under its stored spelling.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterator

from memvault.adapters import cursors
from memvault.adapters.aws import keys
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.dynamo import Item
from memvault.adapters.aws.items import note_from, summary
from memvault.domain import paths
from memvault.domain.models import Note, NoteSummary
from memvault.domain.tags import tag_key
from memvault.ports import NoteKey, Page

# Notes whose bodies iter_notes fetches together: enough to keep bodies.GET_MANY_WORKERS
# busy, few enough that a page of 1 MB notes stays small in memory.
ITER_NOTES_PAGE = 32


class DynamoNoteReads(DynamoParts):
    def _note(self, account_id: str, item: Item) -> Note:
        return note_from(item, self._body(item["body"]))

    def get_note(self, account_id: str, path: str, *, include_deleted: bool = False) -> Note | None:
        item = self._note_item(account_id, path)
        if item is not None:
            # An append or a move writes the note it has just read: its commit may take
            # this item instead of reading it again (read_cache.RecentItems).
            self.recent.remember(item[keys.TABLE_PK], item[keys.TABLE_SK], item)
        if item is None and include_deleted:
            item = self._latest_tomb(account_id, path)
        return self._note(account_id, item) if item else None

    def get_notes(self, account_id: str, note_paths: Collection[str]) -> dict[str, Note]:
        # One BatchGetItem for the items and the bodies side by side: recall's reads cost
        # about one round trip instead of two per note.
        pk = keys.account_pk(account_id)
        wanted = {paths.path_key(p) for p in note_paths}
        found = self.table.batch_get([(pk, keys.note_sk(k)) for k in wanted])
        return {note.path: note for note in self._with_bodies(list(found.values()))}

    def live_paths(self, account_id: str, path_keys: Collection[str]) -> dict[str, str]:
        pk = keys.account_pk(account_id)
        found = self.table.batch_get([(pk, keys.note_sk(k)) for k in path_keys])
        return {item["path_key"]: item["path"] for item in found.values()}

    def get_summaries(self, account_id: str, note_paths: Collection[str]) -> list[NoteSummary]:
        pk = keys.account_pk(account_id)
        wanted = {paths.path_key(p) for p in note_paths}
        found = self.table.batch_get([(pk, keys.note_sk(k)) for k in wanted])
        return [summary(i) for i in sorted(found.values(), key=lambda i: i["path_key"])]

    def list_notes(
        self, account_id: str, *, folder: str, tag: str | None, cursor: str | None, limit: int
    ) -> Page:
        start_after = keys.note_sk(cursors.decode(cursor)) if cursor else None
        wanted_tag = tag_key(tag) if tag else None
        items: list[Item] = []
        more = False
        prefix = keys.NOTE_PREFIX + paths.fold(folder)
        for item in self.table.query(
            keys.account_pk(account_id), prefix, start_after=start_after, limit=limit + 1
        ):
            if folder and not item["path"].startswith(folder):
                continue  # the key prefix is case-folded; the folder filter is exact
            if wanted_tag and wanted_tag not in (item.get("tag_keys") or ()):
                continue
            if len(items) == limit:
                more = True
                break
            items.append(item)
        next_cursor = cursors.encode(items[-1]["path_key"]) if more and items else None
        return Page(items=[summary(i) for i in items], next_cursor=next_cursor)

    def recent_notes(self, account_id: str, *, limit: int) -> list[NoteSummary]:
        # The newest ``limit`` of each bucket (keys.recent_pk), merged: the newest overall.
        found: list[Item] = []
        for bucket in range(keys.RECENT_BUCKETS):
            items = self.table.query(
                keys.recent_bucket_pk(account_id, bucket),
                "",
                index=keys.RECENT_INDEX,
                pk_name=keys.RECENT_PK,
                sk_name=keys.RECENT_SK,
                forward=False,
                limit=limit,
            )
            found.extend(itertools.islice(items, limit))
        found.sort(key=lambda i: i[keys.RECENT_SK], reverse=True)
        return [summary(i) for i in found[:limit]]

    def tag_counts(self, account_id: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        spelling: dict[str, str] = {}
        for item in self._live_items(account_id, ["tags"]):
            seen: set[str] = set()
            for tag in item.get("tags") or ():
                folded = tag_key(tag)
                if folded in seen:
                    continue
                seen.add(folded)
                spelling.setdefault(folded, tag)
                counts[folded] = counts.get(folded, 0) + 1
        return {spelling[k]: counts[k] for k in sorted(counts)}

    def iter_notes(self, account_id: str) -> Iterator[Note]:
        # A page of notes at a time, their bodies fetched side by side: an export or a
        # reindex of thousands of notes would otherwise wait out one S3 round trip each.
        page: list[Item] = []
        for item in self._live_items(account_id):
            page.append(item)
            if len(page) == ITER_NOTES_PAGE:
                yield from self._with_bodies(page)
                page = []
        yield from self._with_bodies(page)

    def note_keys(self, account_id: str) -> dict[str, NoteKey]:
        return {
            i["path_key"]: NoteKey(i["path"], i["version"], i["sha256"], i["size"])
            for i in self._live_items(account_id, ["path_key", "path", "version", "sha256", "size"])
        }
