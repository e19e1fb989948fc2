"""VaultStore on DynamoDB (metadata) and S3 (markdown): the AWS backend's storage.

Writes are planned in memory first (``_Plan``): the batch of changes is simulated
against the items it touches, exactly as SQLite applies them one after another, and
the result is written as final item states with conditions on the original ones. A
plan that fits one DynamoDB transaction is written in one; a larger one (an import of
thousands of notes) goes through ``bulk.apply_journaled``, which keeps it all or nothing.

Requests are the AWS bill, so a commit reads as little as it can (issue 3): a note item
the same thread has just read (an append, a move) is reused, a move's destination is
assumed free, a create reads the tombstone marker instead of querying tombstones, and
link items travel inside the transaction. Whatever a commit did not read itself, its
conditions verify; when one fails, the commit plans again from fresh reads.
"""

from __future__ import annotations

import logging
import uuid
import zlib
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters import cursors
from memvault.adapters.aws import keys
from memvault.adapters.aws.bodies import BodyStore
from memvault.adapters.aws.clients import aws_errors, error_code
from memvault.adapters.aws.dynamo import (
    TRANSACT_MAX_ITEMS,
    Item,
    Table,
    deserialize,
    serialize,
    values,
)
from memvault.adapters.aws.read_cache import BodyCache, RecentItems
from memvault.domain import paths, write_plan
from memvault.domain.models import (
    VERSIONS_KEPT,
    Account,
    ApiKey,
    BacklinkSource,
    DeleteNote,
    KeySettings,
    Limits,
    LinkRef,
    MoveNote,
    Note,
    NoteChange,
    NoteSummary,
    NoteVersion,
    PutNote,
    Toggles,
    VersionInfo,
)
from memvault.domain.tags import ancestor_keys, tag_key
from memvault.errors import Conflict, NotFound
from memvault.ports import CommitResult, NoteKey, Page, PriorState

log = logging.getLogger("memvault.aws.store")

# Past this many notes a plan preloads every note item with one paged query instead of
# fetching each by key.
PRELOAD_THRESHOLD = 50
# Notes whose bodies iter_notes fetches together: enough to keep bodies.GET_MANY_WORKERS
# busy, few enough that a page of 1 MB notes stays small in memory.
ITER_NOTES_PAGE = 32


# ---------------------------------------------------------------------- item shapes
def _encode_links(links: Sequence[LinkRef]) -> list[str]:
    return [("1" if link.has_folder else "0") + link.target_key for link in links]


def _decode_links(raw: Sequence[str] | None) -> tuple[LinkRef, ...]:
    return tuple(LinkRef(target_key=r[1:], has_folder=r[0] == "1") for r in raw or ())


def _summary(item: Item) -> NoteSummary:
    return NoteSummary(
        id=item["note_id"],
        path=item["path"],
        title=item["title"],
        tags=tuple(item.get("tags") or ()),
        version=item["version"],
        size=item["size"],
        created_at=item["created_at"],
        updated_at=item["updated_at"],
    )


def _account(item: Item) -> Account:
    return Account(
        id=item["id"],
        name=item["name"],
        created_at=item["created_at"],
        limits=Limits(max_notes=item["max_notes"], max_bytes=item["max_bytes"]),
        note_count=item["note_count"],
        total_bytes=item["total_bytes"],
        revision=int(item.get("revision", 0)),
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
        spend_cap_micros=item.get("spend_cap_micros"),
    )


def _live_note(item: Item | None) -> write_plan.LiveNote | None:
    if item is None:
        return None
    return write_plan.LiveNote(
        id=item["note_id"],
        path=item["path"],
        version=item["version"],
        size=item["size"],
        sha256=item["sha256"],
        created_at=item["created_at"],
    )


def _deleted_note(tomb: Item | None) -> write_plan.DeletedNote | None:
    if tomb is None:
        return None
    return write_plan.DeletedNote(tomb["note_id"], tomb["version"], tomb["created_at"])


def _prior(item: Item | None) -> PriorState | None:
    if item is None:
        return None
    return PriorState(
        path=item["path"], version=item["version"], links=_decode_links(item.get("links"))
    )


@dataclass
class _Plan:
    """A batch of changes simulated in memory, ready to be written as final states."""

    account_id: str
    pk: str
    originals: dict[str, Item | None] = field(default_factory=dict)  # sort key -> item
    finals: dict[str, Item | None] = field(default_factory=dict)
    new_versions: list[tuple[Item, str]] = field(default_factory=list)  # (version item, md)
    # (note id, version, its body's object key when known) of versions past the kept 50
    trimmed_versions: list[tuple[str, int, str | None]] = field(default_factory=list)
    cost: write_plan.Cost = write_plan.FREE  # what the changes add to the account's counters
    results: list[Note | None] = field(default_factory=list)
    previous: list[PriorState | None] = field(default_factory=list)
    tombs_loaded: bool = False  # every tombstone of the account is already in originals
    # Items whose original state was not read (the file-name index): written without a
    # condition, since their state follows from the note items' conditions.
    blind: set[str] = field(default_factory=set)
    # Whether originals may come from the thread's recent reads or be assumed (a first
    # attempt); the items taken that way, whose conditions a stale read would fail.
    optimistic: bool = False
    unverified: set[str] = field(default_factory=set)
    # Items read as absent that must still be absent when the transaction runs.
    absent_checks: set[str] = field(default_factory=set)
    tombs_queried: set[str] = field(default_factory=set)  # tombstone prefixes read

    def set(self, sk: str, item: Item | None) -> None:
        self.finals[sk] = item

    def set_blind(self, sk: str, item: Item | None) -> None:
        self.finals[sk] = item
        self.blind.add(sk)

    def current(self, sk: str) -> Item | None:
        return self.finals[sk] if sk in self.finals else self.originals.get(sk)

    def changed_keys(self) -> list[str]:
        return [
            sk
            for sk, item in self.finals.items()
            if sk in self.blind or item != self.originals.get(sk)
        ]


class _StaleRead(Exception):
    """A commit's condition failed on an item it had not read itself: plan it again."""


class DynamoVaultStore:
    def __init__(self, table: Table, bodies: BodyStore) -> None:
        self.table = table
        self.bodies = bodies
        self.recent = RecentItems()
        self.body_cache = BodyCache()

    # ------------------------------------------------------------------ accounts, keys
    def create_account(self, account: Account) -> None:
        item = {
            keys.TABLE_PK: keys.account_pk(account.id),
            keys.TABLE_SK: keys.ACCOUNT_SK,
            "id": account.id,
            "name": account.name,
            "created_at": account.created_at,
            "max_notes": account.limits.max_notes,
            "max_bytes": account.limits.max_bytes,
            "note_count": 0,
            "total_bytes": 0,
            # Headroom counters let a write check the quota in its own condition, with no
            # read first: a write that adds n notes needs notes_free >= n.
            "notes_free": account.limits.max_notes,
            "bytes_free": account.limits.max_bytes,
        }
        try:
            self.table.put(item, ConditionExpression="attribute_not_exists(pk)")
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                raise Conflict(f"account {account.id!r} exists", code="account_exists") from exc
            raise

    def _account_item(self, account_id: str) -> Item | None:
        return self.table.get(keys.account_pk(account_id), keys.ACCOUNT_SK)

    def get_account(self, account_id: str) -> Account | None:
        item = self._account_item(account_id)
        return _account(item) if item else None

    def set_limits(self, account_id: str, limits: Limits) -> Account:
        for _ in range(10):
            item = self._account_item(account_id)
            if item is None:
                raise NotFound(f"no account {account_id!r}", code="account_not_found")
            try:
                self.table.update(
                    Key=_key(keys.account_pk(account_id), keys.ACCOUNT_SK),
                    UpdateExpression="SET max_notes = :mn, max_bytes = :mb,"
                    " notes_free = :nf, bytes_free = :bf",
                    ConditionExpression="note_count = :nc AND total_bytes = :tb",
                    ExpressionAttributeValues=values(
                        {
                            ":mn": limits.max_notes,
                            ":mb": limits.max_bytes,
                            ":nf": limits.max_notes - item["note_count"],
                            ":bf": limits.max_bytes - item["total_bytes"],
                            ":nc": item["note_count"],
                            ":tb": item["total_bytes"],
                        }
                    ),
                )
            except ClientError as exc:
                if error_code(exc) == "ConditionalCheckFailedException":
                    continue  # a write changed the counters in between: read again
                raise
            account = self.get_account(account_id)
            assert account is not None
            return account
        raise Conflict("the account is too busy to change its limits now; retry")

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
            "spend_cap_micros": key.spend_cap_micros,  # None is left out (no cap)
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
        item = self._key_item(account_id, key_id)
        if item is None:
            raise NotFound(f"no key {key_id!r} in this account", code="key_not_found")
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
            )
        # Both records change together: authentication reads the hash record.
        self.table.transact(
            [
                {"Put": {"TableName": self.table.name, "Item": serialize(i)}}
                for i in self._key_items(updated, item["key_hash"])
            ]
        )
        return updated

    # ------------------------------------------------------------------ notes: reads
    def _note_item(self, account_id: str, path: str) -> Item | None:
        item = self.table.get(keys.account_pk(account_id), keys.note_sk(paths.path_key(path)))
        return item if item is not None and item["path"] == path else None

    def _latest_tomb(self, account_id: str, path: str) -> Item | None:
        tombs = [
            t
            for t in self.table.query(
                keys.account_pk(account_id), keys.tomb_prefix(paths.path_key(path))
            )
            if t["path"] == path
        ]
        return max(tombs, key=lambda t: t["deleted_at"]) if tombs else None

    def _body(self, object_key: str) -> str:
        return self._bodies([object_key])[object_key]

    def _note(self, account_id: str, item: Item) -> Note:
        return _note_from(item, self._body(item["body"]))

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
        wanted = set(note_paths)
        found = self.table.batch_get([(pk, keys.note_sk(paths.path_key(p))) for p in wanted])
        items = [i for i in found.values() if i["path"] in wanted]
        return {note.path: note for note in self._with_bodies(items)}

    def live_paths(self, account_id: str, path_keys: Collection[str]) -> dict[str, str]:
        pk = keys.account_pk(account_id)
        found = self.table.batch_get([(pk, keys.note_sk(k)) for k in path_keys])
        return {item["path_key"]: item["path"] for item in found.values()}

    def get_summaries(self, account_id: str, note_paths: Collection[str]) -> list[NoteSummary]:
        pk = keys.account_pk(account_id)
        wanted = set(note_paths)
        found = self.table.batch_get([(pk, keys.note_sk(paths.path_key(p))) for p in wanted])
        items = [i for i in found.values() if i["path"] in wanted]
        return [_summary(i) for i in sorted(items, key=lambda i: i["path_key"])]

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
        return Page(items=[_summary(i) for i in items], next_cursor=next_cursor)

    def recent_notes(self, account_id: str, *, limit: int) -> list[NoteSummary]:
        pk = keys.account_pk(account_id)
        out: list[NoteSummary] = []
        for item in self.table.query(
            pk,
            "",
            index=keys.RECENT_INDEX,
            pk_name=keys.RECENT_PK,
            sk_name=keys.RECENT_SK,
            forward=False,
            limit=limit,
        ):
            out.append(_summary(item))
            if len(out) == limit:
                break
        return out

    def _live_items(
        self, account_id: str, projection: Sequence[str] | None = None
    ) -> Iterator[Item]:
        return self.table.query(
            keys.account_pk(account_id), keys.NOTE_PREFIX, projection=projection
        )

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

    def _with_bodies(self, items: Sequence[Item]) -> list[Note]:
        bodies = self._bodies([i["body"] for i in items])
        return [_note_from(i, bodies[i["body"]]) for i in items]

    def note_keys(self, account_id: str) -> dict[str, NoteKey]:
        return {
            i["path_key"]: NoteKey(i["path"], i["version"], i["sha256"], i["size"])
            for i in self._live_items(account_id, ["path_key", "path", "version", "sha256", "size"])
        }

    # ------------------------------------------------------------------ versions
    def _history_owner(self, account_id: str, path: str) -> Item | None:
        return self._note_item(account_id, path) or self._latest_tomb(account_id, path)

    def list_versions(self, account_id: str, path: str) -> list[VersionInfo]:
        owner = self._history_owner(account_id, path)
        if owner is None:
            return []
        items = self.table.query(
            keys.account_pk(account_id), keys.version_prefix(owner["note_id"]), forward=False
        )
        return [_version_info(i) for i in items]

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
        return NoteVersion(info=_version_info(item), markdown=markdown)

    def purge_note(self, account_id: str, path: str) -> bool:
        pk = keys.account_pk(account_id)
        tombs = [
            t
            for t in self.table.query(pk, keys.tomb_prefix(paths.path_key(path)))
            if t["path"] == path
        ]
        for tomb in tombs:
            versions = list(self.table.query(pk, keys.version_prefix(tomb["note_id"])))
            self.table.batch_write(
                [], [(pk, v[keys.TABLE_SK]) for v in versions] + [(pk, tomb[keys.TABLE_SK])]
            )
            self.bodies.delete_quietly(v["body"] for v in versions)
        return bool(tombs)

    # ------------------------------------------------------------------ links (derived)
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
        fresh = [link for item in self._live_items(account_id) for link in _link_items(pk, item)]
        fresh_keys = {(pk, i[keys.TABLE_SK]) for i in fresh}
        # Tombstone markers too, for tombstones written before markers existed.
        markers = {
            keys.tomb_marker_sk(t["path_key"]): _marker_item(pk, t["path_key"])
            for t in self.table.query(pk, "D#", projection=["path_key"])
        }
        self.table.batch_write(
            [*fresh, *markers.values()], [k for k in stale if k not in fresh_keys]
        )
        return len(fresh)

    # ------------------------------------------------------------------ search outbox
    def queue_reindex(self, account_id: str, note_paths: Collection[str]) -> None:
        pk = keys.account_pk(account_id)
        items = [
            {keys.TABLE_PK: pk, keys.TABLE_SK: keys.queue_sk(p), "path": p} for p in note_paths
        ]
        # A marker per account lets the scheduled drain find the outboxes with no scan.
        marker = {
            keys.TABLE_PK: keys.REINDEX_ACCOUNTS_PK,
            keys.TABLE_SK: account_id,
            "account_id": account_id,
        }
        self.table.batch_write([*items, marker], [])

    def queued_reindex(self, account_id: str, limit: int = 1000) -> list[str]:
        out: list[str] = []
        for item in self.table.query(keys.account_pk(account_id), keys.QUEUE_PREFIX):
            out.append(item["path"])
            if len(out) == limit:
                break
        return out

    def unqueue_reindex(self, account_id: str, note_paths: Collection[str]) -> None:
        pk = keys.account_pk(account_id)
        self.table.batch_write([], [(pk, keys.queue_sk(p)) for p in note_paths])
        if not self.queued_reindex(account_id, limit=1):
            self.table.batch_write([], [(keys.REINDEX_ACCOUNTS_PK, account_id)])

    def accounts_with_queued_reindex(self) -> list[str]:
        return [i["account_id"] for i in self.table.query(keys.REINDEX_ACCOUNTS_PK, "")]

    # ------------------------------------------------------------------ notes: commit
    def commit(self, account_id: str, changes: Sequence[NoteChange], *, now: float) -> CommitResult:
        try:
            return self._commit(account_id, changes, now)
        except Conflict as exc:
            # A crashed bulk commit leaves its lock behind; once its lease has run out,
            # roll it back from its journal and try once more.
            from memvault.adapters.aws.bulk import recover_expired

            if exc.code == "import_in_progress" and recover_expired(self, account_id, now=now):
                return self._commit(account_id, changes, now)
            raise

    def _commit(self, account_id: str, changes: Sequence[NoteChange], now: float) -> CommitResult:
        try:
            return self._commit_once(account_id, changes, now, optimistic=True)
        except _StaleRead:
            # An item this thread had just read, or a state assumed without a read, was no
            # longer what is stored: plan again from fresh reads, as if nothing was cached.
            self.recent.forget()
            return self._commit_once(account_id, changes, now, optimistic=False)

    def _commit_once(
        self, account_id: str, changes: Sequence[NoteChange], now: float, *, optimistic: bool
    ) -> CommitResult:
        plan = self._plan(account_id, changes, now, optimistic=optimistic)
        actions = self._actions(plan)
        if not actions:
            return CommitResult(notes=plan.results, previous=plan.previous)
        link_puts, link_deletes = self._link_changes(plan)
        if len(actions) + 1 <= TRANSACT_MAX_ITEMS:
            # Link items ride in the note's own transaction when they fit: one request
            # fewer, and backlinks never lag the note they derive from.
            link_actions = self._link_actions(link_puts, link_deletes)
            inline = len(actions) + 1 + len(link_actions) <= TRANSACT_MAX_ITEMS
            written_bodies: list[str] = []
            try:
                for version_item, markdown in plan.new_versions:
                    self.bodies.put(version_item["body"], markdown)
                    written_bodies.append(version_item["body"])
                self._transact(
                    plan, [*actions, *(link_actions if inline else ()), self._account_action(plan)]
                )
            except BaseException:
                self.bodies.delete_quietly(written_bodies)
                raise
            if not inline:
                self._write_links(plan, link_puts, link_deletes)
        else:
            from memvault.adapters.aws.bulk import apply_journaled

            apply_journaled(self, plan, self._actions(plan, trims=False), now=now)
            # A journaled commit trims the kept versions only once it has succeeded.
            trimmed = [(plan.pk, keys.version_sk(n, v)) for n, v, _ in plan.trimmed_versions]
            self._write_links(plan, link_puts, link_deletes + trimmed)
        self._delete_trimmed_bodies(plan)
        return CommitResult(notes=plan.results, previous=plan.previous)

    def _load(self, plan: _Plan, sort_keys: Collection[str]) -> None:
        missing = [sk for sk in dict.fromkeys(sort_keys) if sk not in plan.originals]
        if plan.optimistic:
            for sk in list(missing):
                cached = self.recent.take(plan.pk, sk)
                if cached is not None:
                    plan.originals[sk] = cached
                    plan.unverified.add(sk)
                    missing.remove(sk)
        if not missing:
            return
        found = self.table.batch_get([(plan.pk, sk) for sk in missing])
        for sk in missing:
            plan.originals[sk] = found.get((plan.pk, sk))

    def _preload(self, plan: _Plan, changes: Sequence[NoteChange]) -> None:
        note_keys: list[str] = []
        destinations: list[str] = []
        markers: list[str] = []
        for change in changes:
            path_key = paths.path_key(change.path)
            note_keys.append(keys.note_sk(path_key))
            if isinstance(change, MoveNote):
                destinations.append(keys.note_sk(paths.path_key(change.new_path)))
            elif not isinstance(change, PutNote) or change.expected_version in (None, 0):
                # A delete writes the tombstone marker; a put that may create reads it.
                markers.append(keys.tomb_marker_sk(path_key))
        if len(note_keys) + len(destinations) > PRELOAD_THRESHOLD:
            everything = {i[keys.TABLE_SK]: i for i in self._live_items(plan.account_id)}
            tombs: dict[str, Item] = {}
            for tomb in self.table.query(plan.pk, "D#"):
                tombs[tomb[keys.TABLE_SK]] = tomb
            present = {m[keys.TABLE_SK]: m for m in self.table.query(plan.pk, "DM#")}
            for sk in note_keys + destinations:
                plan.originals.setdefault(sk, everything.get(sk))
            for sk in markers:
                plan.originals.setdefault(sk, present.get(sk))
            plan.originals.update(tombs)
            plan.tombs_loaded = True
            return
        if plan.optimistic:
            # Where a move lands is assumed free rather than read: the move's write is
            # conditional on it, and an occupied destination fails that condition and is
            # then read (and refused) on the retry.
            for sk in destinations:
                if sk not in note_keys and sk not in plan.originals:
                    plan.originals[sk] = None
                    plan.unverified.add(sk)
        self._load(plan, note_keys + destinations + markers)

    def _tombs_for(self, plan: _Plan, path: str) -> list[Item]:
        path_key = paths.path_key(path)
        prefix = keys.tomb_prefix(path_key)
        if not plan.tombs_loaded and prefix not in plan.tombs_queried:
            marker = keys.tomb_marker_sk(path_key)
            self._load(plan, [marker])
            if plan.current(marker) is None:
                # No delete ever left a tombstone here: nothing to query. The transaction
                # checks the marker is still absent, so a racing delete cannot slip by.
                plan.absent_checks.add(marker)
            else:
                plan.tombs_queried.add(prefix)
                for tomb in self.table.query(plan.pk, prefix):
                    plan.originals.setdefault(tomb[keys.TABLE_SK], tomb)
        return [
            item
            for sk in list(plan.originals) + list(plan.finals)
            if sk.startswith(prefix)
            and (item := plan.current(sk)) is not None
            and item["path"] == path
        ]

    def _plan(
        self, account_id: str, changes: Sequence[NoteChange], now: float, *, optimistic: bool
    ) -> _Plan:
        """Each change decided by domain.write_plan against the simulated items."""
        plan = _Plan(account_id=account_id, pk=keys.account_pk(account_id), optimistic=optimistic)
        self._preload(plan, changes)
        for change in changes:
            if isinstance(change, PutNote):
                self._plan_put(plan, change, now)
            elif isinstance(change, MoveNote):
                self._plan_move(plan, change, now)
            else:
                self._plan_delete(plan, change, now)
        return plan

    def _planned_note(self, plan: _Plan, path: str) -> Item | None:
        """The live note item at ``path``'s key, as the plan stands."""
        sk = keys.note_sk(paths.path_key(path))
        self._load(plan, [sk])
        return plan.current(sk)

    def _plan_put(self, plan: _Plan, change: PutNote, now: float) -> None:
        path_key = paths.path_key(change.path)
        sk = keys.note_sk(path_key)
        live = self._planned_note(plan, change.path)
        tombs = self._tombs_for(plan, change.path) if live is None else []
        tomb = max(tombs, key=lambda t: t["deleted_at"]) if tombs else None
        decision = write_plan.plan_put(change, _live_note(live), _deleted_note(tomb), now=now)
        plan.previous.append(_prior(live))
        plan.cost += decision.cost
        if not decision.writes:
            assert live is not None
            plan.results.append(_note_from(live, change.markdown))
            return
        base = live if decision.kind is write_plan.PutKind.REPLACE else tomb
        if tomb is not None and decision.kind is write_plan.PutKind.REVIVE:
            plan.set(tomb[keys.TABLE_SK], None)
        if live is None:  # the file-name index gains the note
            name_key = paths.name_key(change.path)
            plan.set_blind(
                keys.name_sk(name_key, path_key),
                _name_item(plan.pk, name_key, path_key, change.path),
            )
        note_id, version = decision.note_id, decision.version
        token = uuid.uuid4().hex[:16]
        body = keys.body_key(plan.account_id, note_id, version, token)
        # The tokens of the kept versions' bodies, oldest first, ending at this version.
        kept: list[str] = list(base.get("tokens") or ()) if base is not None else []
        item = {
            keys.TABLE_PK: plan.pk,
            keys.TABLE_SK: sk,
            keys.RECENT_PK: plan.pk,
            keys.RECENT_SK: keys.recent_sk(now, path_key),
            "note_id": note_id,
            "path": change.path,
            "path_key": path_key,
            "name_key": paths.name_key(change.path),
            "title": change.title,
            "tags": list(change.tags),
            "tag_keys": ancestor_keys(change.tags),
            "links": _encode_links(change.links),
            "version": version,
            "size": change.size,
            "sha256": change.sha256,
            "created_at": decision.created_at,
            "updated_at": now,
            "body": body,
            "tokens": [*kept, token][-VERSIONS_KEPT:],
        }
        plan.set(sk, item)
        version_item = {
            "body": body,
            keys.TABLE_PK: plan.pk,
            keys.TABLE_SK: keys.version_sk(note_id, version),
            "note_id": note_id,
            "version": version,
            "path": change.path,
            "size": change.size,
            "sha256": change.sha256,
            "created_at": now,
        }
        plan.new_versions.append((version_item, change.markdown))
        trimmed = decision.trim_version
        if trimmed is not None:
            # ``kept`` covers versions version-len(kept) .. version-1; items written before
            # tokens were kept have none, and their trimmed body is found by listing.
            at = trimmed - (version - len(kept))
            trimmed_body = (
                keys.body_key(plan.account_id, note_id, trimmed, kept[at])
                if 0 <= at < len(kept)
                else None
            )
            plan.trimmed_versions.append((note_id, trimmed, trimmed_body))
        plan.results.append(decision.note(change, now=now))

    def _plan_move(self, plan: _Plan, change: MoveNote, now: float) -> None:
        live = self._planned_note(plan, change.path)
        occupant = self._planned_note(plan, change.new_path)
        move = write_plan.plan_move(change, _live_note(live), _live_note(occupant))
        assert live is not None
        old_key, new_key = live["path_key"], move.new_key
        plan.previous.append(_prior(live))
        plan.set(keys.note_sk(old_key), None)
        plan.set_blind(keys.name_sk(live["name_key"], old_key), None)
        name_key = paths.name_key(change.new_path)
        moved = {
            **live,
            keys.TABLE_SK: keys.note_sk(new_key),
            keys.RECENT_SK: keys.recent_sk(now, new_key),
            "path": change.new_path,
            "path_key": new_key,
            "name_key": name_key,
            "updated_at": now,
        }
        plan.set(keys.note_sk(new_key), moved)
        plan.set_blind(
            keys.name_sk(name_key, new_key), _name_item(plan.pk, name_key, new_key, change.new_path)
        )
        plan.results.append(_note_from(moved, self._body(live["body"])))

    def _plan_delete(self, plan: _Plan, change: DeleteNote, now: float) -> None:
        live = self._planned_note(plan, change.path)
        delete = write_plan.plan_delete(change.path, change.expected_version, _live_note(live))
        assert live is not None
        path_key = live["path_key"]
        plan.previous.append(_prior(live))
        plan.set(keys.note_sk(path_key), None)
        tomb = {
            **_without_recent(live),
            keys.TABLE_SK: keys.tomb_sk(path_key, live["note_id"]),
            "deleted_at": now,
            **_deleted_index(plan.account_id, path_key, now),
        }
        plan.set(tomb[keys.TABLE_SK], tomb)
        marker = keys.tomb_marker_sk(path_key)
        self._load(plan, [marker])
        if plan.current(marker) is None:
            plan.set(marker, _marker_item(plan.pk, path_key))
        plan.set_blind(keys.name_sk(live["name_key"], path_key), None)
        plan.cost += delete.cost
        plan.results.append(None)

    def _actions(self, plan: _Plan, *, trims: bool = True) -> list[dict[str, Any]]:
        """Conditional writes taking every touched item from its original to its final state.

        ``trims=False`` leaves out the deletes of versions past the 50 kept: a journaled
        (bulk) commit trims only once it has succeeded, so a rollback never needs them.
        """
        actions: list[dict[str, Any]] = []
        changed = plan.changed_keys()
        for sk in changed:
            original, final = plan.originals.get(sk), plan.finals[sk]
            if final is None:
                action: dict[str, Any] = {
                    "Delete": {"TableName": self.table.name, "Key": _key(plan.pk, sk)}
                }
                body = action["Delete"]
            else:
                action = {"Put": {"TableName": self.table.name, "Item": serialize(final)}}
                body = action["Put"]
            if sk in plan.blind and sk not in plan.absent_checks:
                pass
            elif original is None:
                body["ConditionExpression"] = "attribute_not_exists(pk)"
            elif "version" in original:
                body.update(_unchanged_condition(original))
            actions.append(action)
        for sk in sorted(plan.absent_checks.difference(changed)):
            actions.append(
                {
                    "ConditionCheck": {
                        "TableName": self.table.name,
                        "Key": _key(plan.pk, sk),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
            )
        for version_item, _markdown in plan.new_versions:
            actions.append(
                {
                    "Put": {
                        "TableName": self.table.name,
                        "Item": serialize(version_item),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                }
            )
        for note_id, version, _body in plan.trimmed_versions if trims else ():
            actions.append(
                {
                    "Delete": {
                        "TableName": self.table.name,
                        "Key": _key(plan.pk, keys.version_sk(note_id, version)),
                    }
                }
            )
        return actions

    def _account_action(self, plan: _Plan, *, lock_id: str | None = None) -> dict[str, Any]:
        """The account update every commit makes: counters, quota, and the import lock."""
        conditions = ["attribute_exists(pk)"]
        if lock_id is None:
            conditions.append("attribute_not_exists(import_lock)")
        else:
            conditions.append("import_lock = :lock")
        attr_values: dict[str, Any] = {
            ":dn": plan.cost.notes,
            ":db": plan.cost.bytes,
            ":ndn": -plan.cost.notes,
            ":ndb": -plan.cost.bytes,
            ":one": 1,
        }
        if plan.cost.notes > 0:
            conditions.append("notes_free >= :dn")
        if plan.cost.bytes > 0:
            conditions.append("bytes_free >= :db")
        update = (
            "ADD note_count :dn, total_bytes :db, notes_free :ndn, bytes_free :ndb, revision :one"
        )
        if lock_id is not None:
            attr_values[":lock"] = lock_id
            update += " REMOVE import_lock, lock_expires"
        return {
            "Update": {
                "TableName": self.table.name,
                "Key": _key(plan.pk, keys.ACCOUNT_SK),
                "UpdateExpression": update,
                "ConditionExpression": " AND ".join(conditions),
                "ExpressionAttributeValues": values(attr_values),
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        }

    def _transact(self, plan: _Plan, actions: list[dict[str, Any]]) -> None:
        try:
            self.table.transact(actions)
        except ClientError as exc:
            raise self._explain_cancel(plan, exc, actions) from exc

    def _explain_cancel(
        self, plan: _Plan, exc: ClientError, actions: list[dict[str, Any]]
    ) -> BaseException:
        """Which condition failed, as the domain error a user can act on."""
        unexplained: BaseException = exc
        if error_code(exc) != "TransactionCanceledException":
            return unexplained
        reasons: list[dict[str, Any]] = exc.response.get("CancellationReasons", [])
        for action, reason in zip(actions, reasons, strict=False):
            if reason.get("Code") != "ConditionalCheckFailed":
                continue
            if "Update" in action:  # the account item
                return self._account_refusal(plan)
            if plan.optimistic and _action_sk(action) in plan.unverified | plan.absent_checks:
                return _StaleRead()
            return Conflict(
                "another writer changed these notes at the same time; re-read and retry",
                code="version_conflict",
            )
        if any(r.get("Code") == "TransactionConflict" for r in reasons):
            return Conflict(
                "another writer changed these notes at the same time; re-read and retry",
                code="version_conflict",
            )
        return unexplained

    def _account_refusal(self, plan: _Plan) -> Exception:
        account = self._account_item(plan.account_id)
        if account is None:
            return NotFound(f"no account {plan.account_id!r}", code="account_not_found")
        if "import_lock" in account:
            return Conflict(
                "an import is in progress on this vault; retry when it has finished",
                code="import_in_progress",
            )
        usage = write_plan.Usage(account["note_count"], account["total_bytes"])
        limits = Limits(max_notes=account["max_notes"], max_bytes=account["max_bytes"])
        # The byte limit is what is left when the counters read now pass the note limit.
        return write_plan.quota_refusal(usage, limits, plan.cost) or (
            write_plan.byte_limit_refusal(usage, limits, plan.cost)
        )

    def _link_changes(self, plan: _Plan) -> tuple[list[Item], list[tuple[str, str]]]:
        """The derived link items the plan's note changes put and delete."""
        puts: list[Item] = []
        deletes: list[tuple[str, str]] = []
        for sk in plan.changed_keys():
            if not sk.startswith(keys.NOTE_PREFIX):
                continue
            original, final = plan.originals.get(sk), plan.finals[sk]
            old_links = {i[keys.TABLE_SK]: i for i in _link_items(plan.pk, original)}
            new_links = {i[keys.TABLE_SK]: i for i in _link_items(plan.pk, final)}
            deletes += [(plan.pk, k) for k in old_links if k not in new_links]
            puts += [i for k, i in new_links.items() if old_links.get(k) != i]
        # A note moved within the batch: its old key deletes what its new key re-puts.
        put_keys = {(plan.pk, i[keys.TABLE_SK]) for i in puts}
        deletes = [d for d in dict.fromkeys(deletes) if d not in put_keys]
        return puts, deletes

    def _link_actions(
        self, puts: Sequence[Item], deletes: Sequence[tuple[str, str]]
    ) -> list[dict[str, Any]]:
        # Unconditional: link items follow from the note items, whose conditions hold.
        name = self.table.name
        return [{"Put": {"TableName": name, "Item": serialize(i)}} for i in puts] + [
            {"Delete": {"TableName": name, "Key": _key(pk, sk)}} for pk, sk in deletes
        ]

    def _write_links(
        self, plan: _Plan, puts: Sequence[Item], deletes: Sequence[tuple[str, str]]
    ) -> None:
        """Derived items after a commit too large to carry them (``memvault reindex``
        rebuilds them should this fail)."""
        if not puts and not deletes:
            return
        try:
            self.table.batch_write(puts, deletes)
        except Exception:
            log.exception("link index update failed", extra={"account_id": plan.account_id})

    def _delete_trimmed_bodies(self, plan: _Plan) -> None:
        """Bodies of versions trimmed past the 50 kept: by exact key (one request), or by
        listing for versions written before their tokens were kept."""
        exact = [body for _n, _v, body in plan.trimmed_versions if body is not None]
        if exact:
            self.bodies.delete_quietly(exact)
        unknown = [(n, v) for n, v, body in plan.trimmed_versions if body is None]
        if unknown:
            self.bodies.delete_versions_quietly(plan.account_id, unknown)

    # ------------------------------------------------------------------ retention sweep
    # Tombstones carry the "recent" GSI's key attributes under DELETED#<shard> partitions
    # (``_deleted_index``), so the nightly sweep finds the notes deleted before a cutoff
    # across every account with bounded queries (one per shard, reading only what is due)
    # instead of a table scan, and with no new GSI: "DELETED#..." never equals an
    # account's "A#..." partition, so recent_notes never sees a tombstone. Tombstones
    # written before this carry no index entry; purging the note's history still removes them.
    def purge_deleted_before(self, cutoff: float, limit: int = 500) -> int:
        due: list[Item] = []
        for shard in range(DELETED_SHARDS):
            due.extend(self._deleted_due(shard, cutoff, limit - len(due)))
            if len(due) >= limit:
                break
        purged = 0
        for entry in due:
            pk, sk = entry[keys.TABLE_PK], entry[keys.TABLE_SK]
            # The GSI lags the table: delete the tombstone first, on condition it is the
            # one seen, so a note revived meanwhile (its tombstone gone) keeps its history;
            # once the tombstone is gone no revive can reach these versions.
            try:
                with aws_errors("the notes table"):
                    self.table.requests += 1
                    self.table.client.delete_item(
                        TableName=self.table.name,
                        Key=_key(pk, sk),
                        ConditionExpression="deleted_at = :d",
                        ExpressionAttributeValues=values({":d": entry["deleted_at"]}),
                    )
            except ClientError as exc:
                if error_code(exc) == "ConditionalCheckFailedException":
                    continue
                raise
            versions = list(self.table.query(pk, keys.version_prefix(entry["note_id"])))
            self.table.batch_write([], [(pk, v[keys.TABLE_SK]) for v in versions])
            self.bodies.delete_quietly(v["body"] for v in versions)
            purged += 1
        return purged

    def _deleted_due(self, shard: int, cutoff: float, limit: int) -> list[Item]:
        if limit <= 0:
            return []
        with aws_errors("the notes table"):
            self.table.requests += 1
            out = self.table.client.query(
                TableName=self.table.name,
                IndexName=keys.RECENT_INDEX,
                KeyConditionExpression="#pk = :pk AND #sk < :cut",
                ExpressionAttributeNames={"#pk": keys.RECENT_PK, "#sk": keys.RECENT_SK},
                ExpressionAttributeValues=values(
                    {":pk": f"{DELETED_PREFIX}{shard}", ":cut": keys.recent_sk(cutoff, "")}
                ),
                Limit=limit,
            )
        return [deserialize(raw) for raw in out.get("Items", [])]


# ---------------------------------------------------------------------- helpers
def _key(pk: str, sk: str) -> dict[str, Any]:
    return {keys.TABLE_PK: {"S": pk}, keys.TABLE_SK: {"S": sk}}


def _action_sk(action: dict[str, Any]) -> str | None:
    body = next(iter(action.values()))
    item_key = body.get("Key") or body.get("Item") or {}
    sk: str | None = item_key.get(keys.TABLE_SK, {}).get("S")
    return sk


def _unchanged_condition(original: Item) -> dict[str, Any]:
    """The write condition that ``original`` is still what is stored. For a note item,
    version, path and note id together pin every attribute but the update time (which
    a move sets, and a move keeps the version), so an item taken from a recent read is
    as good as one read in this commit."""
    condition = "#version = :v"
    names = {"#version": "version"}
    attrs: dict[str, Any] = {":v": original["version"]}
    if "note_id" in original and "path" in original:
        condition += " AND #note_id = :id AND #path = :path"
        names |= {"#note_id": "note_id", "#path": "path"}
        attrs |= {":id": original["note_id"], ":path": original["path"]}
    return {
        "ConditionExpression": condition,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values(attrs),
    }


def _marker_item(pk: str, path_key: str) -> Item:
    return {keys.TABLE_PK: pk, keys.TABLE_SK: keys.tomb_marker_sk(path_key), "path_key": path_key}


def _without_recent(item: Item) -> Item:
    return {k: v for k, v in item.items() if k not in (keys.RECENT_PK, keys.RECENT_SK)}


def _name_item(pk: str, name_key: str, path_key: str, path: str) -> Item:
    return {
        keys.TABLE_PK: pk,
        keys.TABLE_SK: keys.name_sk(name_key, path_key),
        "name_key": name_key,
        "path": path,
    }


def _link_items(pk: str, note: Item | None) -> list[Item]:
    if note is None:
        return []
    return [
        {
            keys.TABLE_PK: pk,
            keys.TABLE_SK: keys.link_sk(link.target_key, note["note_id"]),
            "target_key": link.target_key,
            "has_folder": link.has_folder,
            "source_path": note["path"],
        }
        for link in _decode_links(note.get("links"))
    ]


def _note_from(item: Item, markdown: str) -> Note:
    return Note(
        id=item["note_id"],
        path=item["path"],
        title=item["title"],
        tags=tuple(item.get("tags") or ()),
        version=item["version"],
        size=item["size"],
        created_at=item["created_at"],
        updated_at=item["updated_at"],
        markdown=markdown,
        sha256=item["sha256"],
        deleted_at=item.get("deleted_at"),
    )


def _version_info(item: Item) -> VersionInfo:
    return VersionInfo(
        version=item["version"],
        path=item["path"],
        size=item["size"],
        sha256=item["sha256"],
        created_at=item["created_at"],
    )


# ---------------------------------------------------------------------- retention index
DELETED_PREFIX = "DELETED#"
# Deletes spread over this many GSI partitions, so a burst of deletes across accounts is
# never one hot key; the sweep reads each with one query.
DELETED_SHARDS = 8


def _deleted_index(account_id: str, path_key: str, deleted_at: float) -> Item:
    """The "recent" GSI attributes a tombstone carries: where the retention sweep finds it."""
    shard = zlib.crc32(f"{account_id}{keys.SEP}{path_key}".encode()) % DELETED_SHARDS
    return {
        keys.RECENT_PK: f"{DELETED_PREFIX}{shard}",
        keys.RECENT_SK: keys.recent_sk(deleted_at, path_key),
    }
