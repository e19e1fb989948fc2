"""Planning a commit on DynamoDB: the batch of changes simulated against the items it
touches, each change decided by ``domain.write_plan`` exactly as SQLite applies them one
after another, the result kept as final item states (``plan.Plan``).

Requests are the AWS bill, so a plan reads as little as it can: a note item the same
thread has just read (an append, a move) is reused, a move's destination is assumed
free, a create reads the tombstone marker instead of querying tombstones. Whatever a
plan did not read itself, the commit's conditions verify; when one fails, the commit
plans again from fresh reads.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence

from memvault.adapters.aws import keys
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.dynamo import Item
from memvault.adapters.aws.items import (
    deleted_index,
    deleted_note,
    encode_links,
    live_note,
    marker_item,
    name_item,
    note_from,
    prior,
    without_recent,
)
from memvault.adapters.aws.plan import Plan
from memvault.domain import paths, write_plan
from memvault.domain.models import VERSIONS_KEPT, DeleteNote, MoveNote, NoteChange, PutNote
from memvault.domain.tags import ancestor_keys

# Past this many notes a plan preloads every note item with one paged query instead of
# fetching each by key.
PRELOAD_THRESHOLD = 50


class DynamoPlanner(DynamoParts):
    def _plan(
        self, account_id: str, changes: Sequence[NoteChange], now: float, *, optimistic: bool
    ) -> Plan:
        """Each change decided by domain.write_plan against the simulated items."""
        plan = Plan(account_id=account_id, pk=keys.account_pk(account_id), optimistic=optimistic)
        self._preload(plan, changes)
        for change in changes:
            if isinstance(change, PutNote):
                self._plan_put(plan, change, now)
            elif isinstance(change, MoveNote):
                self._plan_move(plan, change, now)
            else:
                self._plan_delete(plan, change, now)
        return plan

    def _planned_note(self, plan: Plan, path: str) -> Item | None:
        """The live note item at ``path``'s key, as the plan stands."""
        sk = keys.note_sk(paths.path_key(path))
        self._load(plan, [sk])
        return plan.current(sk)

    def _plan_put(self, plan: Plan, change: PutNote, now: float) -> None:
        path_key = paths.path_key(change.path)
        sk = keys.note_sk(path_key)
        live = self._planned_note(plan, change.path)
        tombs = self._tombs_for(plan, change.path) if live is None else []
        tomb = max(tombs, key=lambda t: t["deleted_at"]) if tombs else None
        decision = write_plan.plan_put(change, live_note(live), deleted_note(tomb), now=now)
        plan.previous.append(prior(live))
        plan.cost += decision.cost
        if not decision.writes:
            assert live is not None
            plan.results.append(note_from(live, change.markdown))
            return
        base = live if decision.kind is write_plan.PutKind.REPLACE else tomb
        if tomb is not None and decision.kind is write_plan.PutKind.REVIVE:
            plan.set(tomb[keys.TABLE_SK], None)
        if live is None:  # the file-name index gains the note
            name_key = paths.name_key(change.path)
            plan.set_blind(
                keys.name_sk(name_key, path_key),
                name_item(plan.pk, name_key, path_key, change.path),
            )
        note_id, version = decision.note_id, decision.version
        updated_at = write_plan.content_time(change, now)
        token = uuid.uuid4().hex[:16]
        body = keys.body_key(plan.account_id, note_id, version, token)
        # The tokens of the kept versions' bodies, oldest first, ending at this version.
        kept: list[str] = list(base.get("tokens") or ()) if base is not None else []
        item = {
            keys.TABLE_PK: plan.pk,
            keys.TABLE_SK: sk,
            keys.RECENT_PK: keys.recent_pk(plan.account_id, path_key),
            keys.RECENT_SK: keys.recent_sk(updated_at, path_key),
            "note_id": note_id,
            "path": change.path,
            "path_key": path_key,
            "name_key": paths.name_key(change.path),
            "title": change.title,
            "tags": list(change.tags),
            "tag_keys": ancestor_keys(change.tags),
            "links": encode_links(change.links),
            "version": version,
            "size": change.size,
            "sha256": change.sha256,
            "created_at": decision.created_at,
            "updated_at": updated_at,
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

    def _plan_move(self, plan: Plan, change: MoveNote, now: float) -> None:
        live = self._planned_note(plan, change.path)
        occupant = self._planned_note(plan, change.new_path)
        move = write_plan.plan_move(change, live_note(live), live_note(occupant))
        assert live is not None
        old_key, new_key = live["path_key"], move.new_key
        plan.previous.append(prior(live))
        plan.set(keys.note_sk(old_key), None)
        plan.set_blind(keys.name_sk(live["name_key"], old_key), None)
        name_key = paths.name_key(change.new_path)
        moved = {
            **live,
            keys.TABLE_SK: keys.note_sk(new_key),
            keys.RECENT_PK: keys.recent_pk(plan.account_id, new_key),
            keys.RECENT_SK: keys.recent_sk(now, new_key),
            "path": change.new_path,
            "path_key": new_key,
            "name_key": name_key,
            "updated_at": now,
        }
        if change.links is not None:  # re-keyed from the new folder (link items follow)
            moved["links"] = encode_links(change.links)
        plan.set(keys.note_sk(new_key), moved)
        plan.set_blind(
            keys.name_sk(name_key, new_key), name_item(plan.pk, name_key, new_key, change.new_path)
        )
        plan.results.append(note_from(moved, self._body(live["body"])))

    def _plan_delete(self, plan: Plan, change: DeleteNote, now: float) -> None:
        live = self._planned_note(plan, change.path)
        delete = write_plan.plan_delete(change.path, change.expected_version, live_note(live))
        assert live is not None
        path_key = live["path_key"]
        plan.previous.append(prior(live))
        plan.set(keys.note_sk(path_key), None)
        tomb = {
            **without_recent(live),
            keys.TABLE_SK: keys.tomb_sk(path_key, live["note_id"]),
            "deleted_at": now,
            **deleted_index(plan.account_id, path_key, now),
        }
        plan.set(tomb[keys.TABLE_SK], tomb)
        marker = keys.tomb_marker_sk(path_key)
        self._load(plan, [marker])
        if plan.current(marker) is None:
            plan.set(marker, marker_item(plan.pk, path_key))
        plan.set_blind(keys.name_sk(live["name_key"], path_key), None)
        plan.cost += delete.cost
        plan.results.append(None)

    def _load(self, plan: Plan, sort_keys: Collection[str]) -> None:
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

    def _preload(self, plan: Plan, changes: Sequence[NoteChange]) -> None:
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

    def _tombs_for(self, plan: Plan, path: str) -> list[Item]:
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
        # Every tombstone under the key, whatever its spelling: a put revives the note
        # deleted last under it, as paths differing only in case name one note.
        return [
            item
            for sk in list(plan.originals) + list(plan.finals)
            if sk.startswith(prefix) and (item := plan.current(sk)) is not None
        ]
