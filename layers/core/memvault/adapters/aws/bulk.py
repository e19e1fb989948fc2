"""All-or-nothing commits larger than one DynamoDB transaction (imports).

DynamoDB transactions hold at most 100 items; an Obsidian import can change thousands
of notes. A large commit therefore runs as a journaled sequence:

1. lock the vault: one transaction sets ``import_lock`` (with a lease) on every quota
   shard (``quota``), on the condition that none moved since the quota was checked.
   Every other commit carries the condition ``attribute_not_exists(import_lock)`` on
   the shard it updates, so nothing else can write the vault's notes while the lock is
   held, and the headroom checked stays what it was;
2. write a journal to S3 holding the original state of every item the plan touches;
3. upload every new version's markdown to S3 (invisible until referenced);
4. apply the item changes in transactions of up to 99 items;
5. update the counters and release the lock in one transaction over the shards.

If any step fails, every touched item is put back to its journaled original (an
idempotent restore: items not reached yet already equal their originals), the lock is
released and the uploaded bodies deleted, then the error is raised: the vault is as it
was. If the process dies instead (a Lambda timeout, a killed job), the lock's lease runs
out and the next commit on the vault (or the job's own upkeep: ``JobStore.recover_vault``)
restores from the journal before it proceeds.

The lease is short (``LOCK_LEASE_SECONDS``) and renewed as the commit goes (between
batches of body uploads and between transactions, once ``RENEW_AFTER_SECONDS`` have
passed), so a dead commit holds the vault for about a minute, not for the longest
Lambda invocation (ADR 0041). Every step between two renewals is bounded by boto3's
timeouts (adapters/aws/clients.py), well inside the lease. Bodies are uploaded in
parallel (``UPLOAD_WORKERS``).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import keys, quota
from memvault.adapters.aws.backoff import Backoff
from memvault.adapters.aws.bodies import BodyStore
from memvault.adapters.aws.clients import aws_errors, error_code
from memvault.adapters.aws.dynamo import TRANSACT_MAX_ITEMS, Item, Table
from memvault.adapters.aws.plan import Plan
from memvault.adapters.aws.quota import QuotaRetry
from memvault.adapters.aws.transaction import transact
from memvault.errors import Conflict, ServiceUnavailable

log = logging.getLogger("memvault.aws.bulk")

# A dead commit holds the vault this long at most; a live one renews its lease.
LOCK_LEASE_SECONDS = 60.0
RENEW_AFTER_SECONDS = 15.0
CHUNK = TRANSACT_MAX_ITEMS - 1
# Body uploads in flight at once (botocore's default connection pool holds 10).
UPLOAD_WORKERS = 8
UPLOAD_BATCH = 256


class _Lease:
    """The bulk lock's lease, renewed as the commit works (``keep``): its expiry moves
    with the time the commit has taken, on the clock the commit started on."""

    def __init__(self, table: Table, state: quota.State, lock_id: str, now: float) -> None:
        self.table, self.state, self.lock_id, self.now = table, state, lock_id, now
        self.started = self.renewed = time.monotonic()

    def keep(self) -> None:
        moment = time.monotonic()
        if moment - self.renewed < RENEW_AFTER_SECONDS:
            return
        expires = self.now + (moment - self.started) + LOCK_LEASE_SECONDS
        if not quota.renew_all(self.table, self.state, self.lock_id, expires):
            raise Conflict(
                "the import's lock ran out before it finished; retry the import",
                code="import_in_progress",
            )
        self.renewed = moment


def apply_journaled(
    table: Table, bodies: BodyStore, plan: Plan, actions: list[dict[str, Any]], *, now: float
) -> None:
    lock_id = uuid.uuid4().hex
    state = _lock(table, plan, lock_id, now)
    lease = _Lease(table, state, lock_id, now)
    touched = plan.changed_keys() + [v[keys.TABLE_SK] for v, _md in plan.new_versions]
    originals = {sk: plan.originals.get(sk) for sk in touched}
    uploaded: list[str] = []
    try:
        _write_journal(bodies, plan.account_id, lock_id, originals)
        lease.keep()
        _upload_bodies(bodies, plan.new_versions, uploaded, lease)
        for start in range(0, len(actions), CHUNK):
            transact(table, plan, actions[start : start + CHUNK])
            lease.keep()
        try:
            transact(table, plan, quota.gathered(table, state, plan.cost, lock_id=lock_id))
        except QuotaRetry as lost:
            raise Conflict(
                "the import's lock ran out before it finished; retry the import",
                code="import_in_progress",
            ) from lost
    except BaseException as failure:
        try:
            _restore(table, plan.pk, originals)
            _unlock(table, plan.pk, lock_id)
        except Exception as rollback_error:
            log.exception("bulk commit rollback failed; the vault stays locked until recovery")
            raise ServiceUnavailable(
                "the write failed and could not be rolled back yet; the vault is locked and"
                " will be restored automatically when the lock's lease runs out",
                code="rollback_pending",
            ) from rollback_error
        bodies.delete_quietly(uploaded)
        _delete_journal(bodies, plan.account_id, lock_id)
        raise failure
    _delete_journal(bodies, plan.account_id, lock_id)


def _upload_bodies(
    bodies: BodyStore,
    versions: list[tuple[Item, str]],
    uploaded: list[str],
    lease: _Lease,
) -> None:
    """Every new version's markdown, ``UPLOAD_WORKERS`` at a time, the lease kept between
    batches; ``uploaded`` names every object sent (for the cleanup should one fail)."""
    if len(versions) <= 1:
        for version_item, markdown in versions:
            uploaded.append(version_item["body"])
            bodies.put(version_item["body"], markdown)
        return
    with ThreadPoolExecutor(UPLOAD_WORKERS, thread_name_prefix="bulk-bodies") as pool:
        for start in range(0, len(versions), UPLOAD_BATCH):
            batch = versions[start : start + UPLOAD_BATCH]
            uploaded.extend(item["body"] for item, _md in batch)
            for _ in pool.map(lambda v: bodies.put(v[0]["body"], v[1]), batch):
                pass
            lease.keep()


def recover_expired(table: Table, bodies: BodyStore, account_id: str, *, now: float) -> bool:
    """Roll back a bulk commit whose lease ran out. True when one was rolled back."""
    pk = keys.account_pk(account_id)
    state = quota.read_state(table, pk)
    lock = state.lock
    if state.account is None or lock is None or lock[1] > now:
        return False
    lock_id = lock[0]
    originals = _read_journal(bodies, account_id, lock_id)
    if originals is not None:
        _restore(table, pk, originals)
    quota.unlock_all(table, state, lock_id)
    _delete_journal(bodies, account_id, lock_id)
    log.warning("rolled back an interrupted bulk commit", extra={"account_id": account_id})
    return True


def _lock(table: Table, plan: Plan, lock_id: str, now: float) -> quota.State:
    """Lock every shard, the quota checked; the shards as locked (their headroom fixed)."""
    for _attempt in Backoff(quota.ATTEMPTS):
        state = quota.prepare(table, plan.account_id, plan.cost)
        if quota.lock_all(table, state, lock_id, now + LOCK_LEASE_SECONDS):
            return state
    raise quota.contended()


def _unlock(table: Table, pk: str, lock_id: str) -> None:
    # Already released (the final update succeeded): nothing to do.
    quota.unlock_all(table, quota.read_state(table, pk), lock_id)


def _restore(table: Table, pk: str, originals: dict[str, Item | None]) -> None:
    puts = [item for item in originals.values() if item is not None]
    deletes = [(pk, sk) for sk, item in originals.items() if item is None]
    table.batch_write(puts, deletes)


def _write_journal(
    bodies: BodyStore, account_id: str, lock_id: str, originals: dict[str, Item | None]
) -> None:
    with aws_errors("the notes bucket"):
        bodies.count_request()
        bodies.client.put_object(
            Bucket=bodies.bucket,
            Key=keys.journal_key(account_id, lock_id),
            Body=json.dumps({"lock_id": lock_id, "originals": originals}).encode("utf-8"),
            ContentType="application/json",
        )


def _read_journal(
    bodies: BodyStore, account_id: str, lock_id: str
) -> dict[str, Item | None] | None:
    try:
        with aws_errors("the notes bucket"):
            bodies.count_request()
            raw = bodies.client.get_object(
                Bucket=bodies.bucket, Key=keys.journal_key(account_id, lock_id)
            )["Body"].read()
    except ClientError as exc:
        if error_code(exc) in ("NoSuchKey", "404"):
            return None  # died before the journal: no item was changed yet
        raise
    originals: dict[str, Item | None] = json.loads(raw)["originals"]
    return originals


def _delete_journal(bodies: BodyStore, account_id: str, lock_id: str) -> None:
    bodies.delete_quietly([keys.journal_key(account_id, lock_id)])
