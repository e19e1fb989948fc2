"""The DynamoDB store's item shapes: note, tombstone, version, link and index items,
and the domain values read from them (the key schema itself is ``keys``)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

from memvault.adapters.aws import keys
from memvault.adapters.aws.dynamo import Item
from memvault.domain import write_plan
from memvault.domain.models import LinkRef, Note, NoteSummary, VersionInfo
from memvault.ports import PriorState


def encode_links(links: Sequence[LinkRef]) -> list[str]:
    return [("1" if link.has_folder else "0") + link.target_key for link in links]


def decode_links(raw: Sequence[str] | None) -> tuple[LinkRef, ...]:
    return tuple(LinkRef(target_key=r[1:], has_folder=r[0] == "1") for r in raw or ())


def summary(item: Item) -> NoteSummary:
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


def live_note(item: Item | None) -> write_plan.LiveNote | None:
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


def deleted_note(tomb: Item | None) -> write_plan.DeletedNote | None:
    if tomb is None:
        return None
    return write_plan.DeletedNote(tomb["note_id"], tomb["version"], tomb["created_at"])


def prior(item: Item | None) -> PriorState | None:
    if item is None:
        return None
    return PriorState(
        path=item["path"], version=item["version"], links=decode_links(item.get("links"))
    )


def marker_item(pk: str, path_key: str) -> Item:
    return {keys.TABLE_PK: pk, keys.TABLE_SK: keys.tomb_marker_sk(path_key), "path_key": path_key}


def without_recent(item: Item) -> Item:
    return {k: v for k, v in item.items() if k not in (keys.RECENT_PK, keys.RECENT_SK)}


def name_item(pk: str, name_key: str, path_key: str, path: str) -> Item:
    return {
        keys.TABLE_PK: pk,
        keys.TABLE_SK: keys.name_sk(name_key, path_key),
        "name_key": name_key,
        "path": path,
    }


def link_items(pk: str, note: Item | None) -> list[Item]:
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
        for link in decode_links(note.get("links"))
    ]


def note_from(item: Item, markdown: str) -> Note:
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


def version_info(item: Item) -> VersionInfo:
    return VersionInfo(
        version=item["version"],
        path=item["path"],
        size=item["size"],
        sha256=item["sha256"],
        created_at=item["created_at"],
    )


DELETED_PREFIX = "DELETED#"
# Deletes spread over this many GSI partitions, so a burst of deletes across accounts is
# never one hot key; the sweep reads each with one query.
DELETED_SHARDS = 8


def deleted_index(account_id: str, path_key: str, deleted_at: float) -> Item:
    """The "recent" GSI attributes a tombstone carries: where the retention sweep finds it."""
    shard = zlib.crc32(f"{account_id}{keys.SEP}{path_key}".encode()) % DELETED_SHARDS
    return {
        keys.RECENT_PK: f"{DELETED_PREFIX}{shard}",
        keys.RECENT_SK: keys.recent_sk(deleted_at, path_key),
    }
