"""NoteStore.commit on DynamoDB: a plan (``planning``) written all or nothing.

A plan that fits one DynamoDB transaction is written in one, with its quota shard's
update (``quota``) and its link items riding along when they fit; a larger one (an
import of thousands of notes) goes through ``bulk.apply_journaled``, which keeps it all or
nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from memvault.adapters.aws import bulk, dynamo, keys, quota
from memvault.adapters.aws.backoff import Backoff
from memvault.adapters.aws.dynamo import TRANSACT_MAX_ITEMS, Item, serialize
from memvault.adapters.aws.items import link_items
from memvault.adapters.aws.plan import Plan, StaleRead
from memvault.adapters.aws.planning import DynamoPlanner
from memvault.adapters.aws.quota import QuotaRetry
from memvault.adapters.aws.transaction import action_sk, item_actions, transact
from memvault.domain.models import NoteChange
from memvault.errors import Conflict
from memvault.ports import CommitResult

log = logging.getLogger("memvault.aws.store")


# Adds items of another aggregate to a note commit's plan (originals read, finals set,
# cost added), so they are written all or nothing with the notes, journaled when large:
# an import's attachments (adapters/aws/attachments.py, ADR 0043).
PlanExtension = Callable[[Plan], None]


class DynamoNoteCommit(DynamoPlanner):
    def commit(self, account_id: str, changes: Sequence[NoteChange], *, now: float) -> CommitResult:
        return self.commit_extended(account_id, changes, now=now)

    def commit_extended(
        self,
        account_id: str,
        changes: Sequence[NoteChange],
        *,
        now: float,
        extend: PlanExtension | None = None,
    ) -> CommitResult:
        """``commit``, with ``extend`` adding its items to the plan (each attempt's)."""
        try:
            return self._commit(account_id, changes, now, extend)
        except Conflict as exc:
            # A crashed bulk commit leaves its lock behind; once its lease has run out,
            # roll it back from its journal and try once more.
            if exc.code == "import_in_progress" and bulk.recover_expired(
                self.table, self.bodies, account_id, now=now
            ):
                return self._commit(account_id, changes, now, extend)
            raise

    def _commit(
        self,
        account_id: str,
        changes: Sequence[NoteChange],
        now: float,
        extend: PlanExtension | None = None,
    ) -> CommitResult:
        try:
            return self._commit_once(account_id, changes, now, optimistic=True, extend=extend)
        except StaleRead:
            # An item this thread had just read, or a state assumed without a read, was no
            # longer what is stored: plan again from fresh reads, as if nothing was cached.
            self.recent.forget()
            return self._commit_once(account_id, changes, now, optimistic=False, extend=extend)

    def _commit_once(
        self,
        account_id: str,
        changes: Sequence[NoteChange],
        now: float,
        *,
        optimistic: bool,
        extend: PlanExtension | None = None,
    ) -> CommitResult:
        plan = self._plan(account_id, changes, now, optimistic=optimistic)
        if extend is not None:
            extend(plan)
        actions = item_actions(self.table, plan)
        if not actions:
            return CommitResult(notes=plan.results, previous=plan.previous)
        link_puts, link_deletes = self._link_changes(plan)
        # Room for the quota update: one shard, or as many as a take gathers from.
        if len(actions) + quota.SHARDS <= TRANSACT_MAX_ITEMS:
            # Link items ride in the note's own transaction when they fit: one request
            # fewer, and backlinks never lag the note they derive from.
            link_actions = self._link_actions(link_puts, link_deletes)
            inline = len(actions) + quota.SHARDS + len(link_actions) <= TRANSACT_MAX_ITEMS
            written_bodies: list[str] = []
            try:
                for version_item, markdown in plan.new_versions:
                    self.bodies.put(version_item["body"], markdown)
                    written_bodies.append(version_item["body"])
                inline_links = link_actions if inline else []
                self._transact_with_quota(plan, [*actions, *inline_links])
            except BaseException:
                self.bodies.delete_quietly(written_bodies)
                raise
            if not inline:
                self._write_links(plan, link_puts, link_deletes)
        else:
            bulk.apply_journaled(
                self.table, self.bodies, plan, item_actions(self.table, plan, trims=False), now=now
            )
            # A journaled commit trims the kept versions only once it has succeeded.
            trimmed = [(plan.pk, keys.version_sk(n, v)) for n, v, _ in plan.trimmed_versions]
            self._write_links(plan, link_puts, link_deletes + trimmed)
        self._delete_trimmed_bodies(plan)
        return CommitResult(notes=plan.results, previous=plan.previous)

    def _transact_with_quota(self, plan: Plan, actions: list[dict[str, Any]]) -> None:
        """The plan's writes with its quota shard's update, in one transaction.

        First on a shard picked at random, unread. When that shard lacks the headroom
        (its condition failed), every shard is read and the takes planned from what they
        hold, or the exact quota refusal raised; when another transaction held one of
        the items, on another shard. Each try after the first waits a jittered, growing
        pause.
        """
        shard_actions = quota.optimistic(self.table, plan.pk, plan.cost)
        for _attempt in Backoff(quota.ATTEMPTS):
            try:
                transact(self.table, plan, [*actions, *shard_actions], once=True)
                return
            except QuotaRetry as retry:
                if retry.read:
                    state = quota.prepare(self.table, plan.account_id, plan.cost)
                    shard_actions = quota.gathered(self.table, state, plan.cost)
                    continue
                self.table.conflicts += 1
                if len(shard_actions) == 1:  # an unread pick: pick another
                    tried = action_sk(shard_actions[0])
                    shard_actions = quota.optimistic(self.table, plan.pk, plan.cost, avoid=tried)
        raise quota.contended()

    def _link_changes(self, plan: Plan) -> tuple[list[Item], list[tuple[str, str]]]:
        """The derived link items the plan's note changes put and delete."""
        puts: list[Item] = []
        deletes: list[tuple[str, str]] = []
        for sk in plan.changed_keys():
            if not sk.startswith(keys.NOTE_PREFIX):
                continue
            original, final = plan.originals.get(sk), plan.finals[sk]
            old_links = {i[keys.TABLE_SK]: i for i in link_items(plan.pk, original)}
            new_links = {i[keys.TABLE_SK]: i for i in link_items(plan.pk, final)}
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
            {"Delete": {"TableName": name, "Key": dynamo.key(pk, sk)}} for pk, sk in deletes
        ]

    def _write_links(
        self, plan: Plan, puts: Sequence[Item], deletes: Sequence[tuple[str, str]]
    ) -> None:
        """Derived items after a commit too large to carry them (``memvault reindex``
        rebuilds them should this fail)."""
        if not puts and not deletes:
            return
        try:
            self.table.batch_write(puts, deletes)
        except Exception:
            log.exception("link index update failed", extra={"account_id": plan.account_id})

    def _delete_trimmed_bodies(self, plan: Plan) -> None:
        """Bodies of versions trimmed past the 50 kept: by exact key (one request), or by
        listing for versions written before their tokens were kept."""
        exact = [body for _n, _v, body in plan.trimmed_versions if body is not None]
        if exact:
            self.bodies.delete_quietly(exact)
        unknown = [(n, v) for n, v, body in plan.trimmed_versions if body is None]
        if unknown:
            self.bodies.delete_versions_quietly(plan.account_id, unknown)
