"""Notes' outgoing links on SQLite (LinkStore): raw material for domain.links."""

from __future__ import annotations

from collections.abc import Collection

from memvault.adapters.sqlite.base import SqliteParts
from memvault.adapters.sqlite.rows import chunks
from memvault.domain.models import BacklinkSource


class SqliteLinkStore(SqliteParts):
    def links_to(self, account_id: str, target_keys: Collection[str]) -> list[BacklinkSource]:
        keys = list(dict.fromkeys(target_keys))
        if not keys:
            return []
        out: list[BacklinkSource] = []
        conn = self.db.connection()
        for chunk in chunks(keys):
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT n.path, l.target_key, l.has_folder FROM links l JOIN notes n"
                f" ON n.id = l.note_id WHERE l.account_id = ? AND l.target_key IN ({marks})"
                " AND n.deleted_at IS NULL ORDER BY n.path",
                [account_id, *chunk],
            ).fetchall()
            out += [BacklinkSource(r["path"], r["target_key"], bool(r["has_folder"])) for r in rows]
        return out

    def paths_by_name(self, account_id: str, name_keys: Collection[str]) -> dict[str, list[str]]:
        keys = list(dict.fromkeys(name_keys))
        found: dict[str, list[str]] = {}
        conn = self.db.connection()
        for chunk in chunks(keys):
            marks = ",".join("?" * len(chunk))
            rows = conn.execute(
                "SELECT name_key, path FROM notes WHERE account_id = ? AND deleted_at IS NULL"
                # "+path": sort the few rows found; a plain ORDER BY path makes SQLite walk
                # the whole account by the path index instead of using notes_by_name.
                f" AND name_key IN ({marks}) ORDER BY +path",
                [account_id, *chunk],
            ).fetchall()
            for r in rows:
                found.setdefault(r["name_key"], []).append(r["path"])
        return found

    def all_links(self, account_id: str) -> list[BacklinkSource]:
        rows = (
            self.db.connection()
            .execute(
                "SELECT n.path, l.target_key, l.has_folder FROM links l JOIN notes n"
                " ON n.id = l.note_id WHERE l.account_id = ? AND n.deleted_at IS NULL",
                (account_id,),
            )
            .fetchall()
        )
        return [BacklinkSource(r["path"], r["target_key"], bool(r["has_folder"])) for r in rows]
