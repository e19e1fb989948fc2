"""Attachments and configuration files on AWS (AttachmentStore): S3 bytes, DynamoDB items.

Items, in the account's partition of the single table (ADR 0043):

    F#<path key>                    a file: path, kind, size, sha256, content type, times
    FN#<name key>␟<path key>        file-name index of attachments (link resolution)
    FILES                           ``file_count``: how many files the vault holds

Bytes live in S3 under ``<account>/files/<sha256>``: content-addressed, uploaded before
the transaction that references them (an object no item references is an orphan, never
a dangling reference). A commit writes its file items, the ``FILES`` counter (on the
condition it still holds what was read, so the file limit holds under races) and the
quota shards' bytes (``quota.gathered``: the byte quota notes share) in one
TransactWriteItems; a larger commit goes in chunks, and a chunk refused undoes the
chunks before it, so the commit is all or nothing (a crash between chunks is not: see
ADR 0043).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import dynamo, keys, quota
from memvault.adapters.aws.accounts import limits_of
from memvault.adapters.aws.backoff import Backoff
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.clients import aws_errors, error_code
from memvault.adapters.aws.dynamo import Item, serialize, values
from memvault.domain import attachments as files
from memvault.domain import paths, write_plan
from memvault.domain.attachments import (
    ATTACHMENTS_ONLY,
    DeleteFile,
    FileChange,
    FileKind,
    FileUsage,
    PutFile,
    StoredFile,
)
from memvault.errors import NotFound
from memvault.ports import CommitResult, FileCommit

log = logging.getLogger("memvault.aws.attachments")

FILE_PREFIX = "F#"
NAME_PREFIX = "FN#"
COUNTER_SK = "FILES"
# Changes per transaction: two items each (file, name index) plus the counter and up to
# every quota shard stay under DynamoDB's 100.
CHUNK = 40
ATTEMPTS = 12


def file_sk(path_key: str) -> str:
    return f"{FILE_PREFIX}{path_key}"


def name_sk(name_key: str, path_key: str) -> str:
    return f"{NAME_PREFIX}{name_key}{keys.SEP}{path_key}"


def blob_key(account_id: str, sha256: str) -> str:
    return f"{account_id}/files/{sha256}"


def _file(item: Item) -> StoredFile:
    return StoredFile(
        path=item["path"],
        kind=item["kind"],
        size=int(item["size"]),
        sha256=item["sha256"],
        content_type=item["content_type"],
        created_at=float(item["created_at"]),
        updated_at=float(item["updated_at"]),
    )


class _Retry(Exception):
    pass


class DynamoAttachmentStore(DynamoParts):
    # ------------------------------------------------------------------ blobs
    def stage_blob(self, account_id: str, sha256: str, data: bytes) -> bool:
        key = blob_key(account_id, sha256)
        client, bucket = self.bodies.client, self.bodies.bucket
        try:
            with aws_errors("the files bucket"):
                self.bodies.count_request()
                client.head_object(Bucket=bucket, Key=key)
            existed = True
        except ClientError as exc:
            if error_code(exc) not in ("404", "NoSuchKey", "NotFound"):
                raise
            existed = False
        # Written again when it exists too: its time restarts the orphan sweep's grace.
        with aws_errors("the files bucket"):
            self.bodies.count_request()
            client.put_object(Bucket=bucket, Key=key, Body=data)
        return not existed

    def read_blob(self, account_id: str, sha256: str) -> bytes:
        try:
            with aws_errors("the files bucket"):
                self.bodies.count_request()
                out = self.bodies.client.get_object(
                    Bucket=self.bodies.bucket, Key=blob_key(account_id, sha256)
                )
                data: bytes = out["Body"].read()
                return data
        except ClientError as exc:
            if error_code(exc) in ("NoSuchKey", "404"):
                raise NotFound("the file's bytes are missing", code="file_not_found") from exc
            raise

    def drop_blobs(self, account_id: str, sha256s: Collection[str], *, older_than: float) -> int:
        wanted = set(sha256s)
        if not wanted:
            return 0
        used = {f.sha256 for f in self.file_keys(account_id).values()}
        dropped: list[str] = []
        for sha in wanted - used:
            key = blob_key(account_id, sha)
            try:
                self.bodies.count_request()
                head = self.bodies.client.head_object(Bucket=self.bodies.bucket, Key=key)
            except ClientError:
                continue
            if head["LastModified"].timestamp() < older_than:
                dropped.append(key)
        self.bodies.delete_quietly(dropped)
        return len(dropped)

    # ------------------------------------------------------------------ reads
    def get_file(self, account_id: str, path: str) -> StoredFile | None:
        item = self.table.get(keys.account_pk(account_id), file_sk(paths.path_key(path)))
        return _file(item) if item else None

    def _all(self, account_id: str) -> list[Item]:
        return list(self.table.query(keys.account_pk(account_id), FILE_PREFIX))

    def list_files(
        self,
        account_id: str,
        *,
        prefix: str = "",
        kinds: Collection[FileKind] = ATTACHMENTS_ONLY,
        after: str | None = None,
        limit: int = 100,
    ) -> list[StoredFile]:
        # Listed by path (as SQLite does); the items sort by path key, so read them all:
        # a vault holds at most Limits.max_files of them.
        found = [
            _file(i)
            for i in self._all(account_id)
            if i["kind"] in kinds
            and i["path"].startswith(prefix)
            and (after is None or i["path"] > after)
        ]
        found.sort(key=lambda f: f.path)
        return found[:limit]

    def file_keys(self, account_id: str) -> dict[str, StoredFile]:
        return {i["sk"][len(FILE_PREFIX) :]: _file(i) for i in self._all(account_id)}

    def file_usage(self, account_id: str) -> FileUsage:
        items = self._all(account_id)
        return FileUsage(files=len(items), bytes=sum(int(i["size"]) for i in items))

    def files_by_link_key(self, account_id: str, link_keys: Collection[str]) -> dict[str, str]:
        pk = keys.account_pk(account_id)
        wanted = list(dict.fromkeys(link_keys))
        got = self.table.batch_get([(pk, file_sk(k)) for k in wanted]) if wanted else {}
        return {
            item["sk"][len(FILE_PREFIX) :]: item["path"]
            for item in got.values()
            if item["kind"] == "attachment"
        }

    def files_by_name(self, account_id: str, name_keys: Collection[str]) -> dict[str, list[str]]:
        pk = keys.account_pk(account_id)
        found: dict[str, list[str]] = {}
        for name in dict.fromkeys(name_keys):
            for item in self.table.query(pk, f"{NAME_PREFIX}{name}{keys.SEP}"):
                found.setdefault(name, []).append(item["path"])
        for listed in found.values():
            listed.sort()
        return found

    # ------------------------------------------------------------------ commit
    def commit_files_with(
        self,
        account_id: str,
        changes: Sequence[FileChange],
        then: Callable[[], CommitResult | None],
        *,
        now: float,
    ) -> tuple[FileCommit, CommitResult | None]:
        done = self.commit_files(account_id, changes, now=now)
        try:
            return done, then()
        except BaseException:
            try:
                self._undo(account_id, changes, done, now)
            except Exception:
                log.error("could not put back the files of a refused import", exc_info=True)
            raise

    def _undo(
        self, account_id: str, changes: Sequence[FileChange], done: FileCommit, now: float
    ) -> None:
        inverse = _inverse(changes, done)
        for start in range(0, len(inverse), CHUNK):
            self._commit_chunk(account_id, inverse[start : start + CHUNK], now, check=False)

    def commit_files(
        self, account_id: str, changes: Sequence[FileChange], *, now: float
    ) -> FileCommit:
        before: list[StoredFile | None] = []
        after: list[StoredFile | None] = []
        done: list[tuple[Sequence[FileChange], FileCommit]] = []
        try:
            for start in range(0, len(changes), CHUNK):
                chunk = changes[start : start + CHUNK]
                result = self._commit_chunk(account_id, chunk, now)
                done.append((chunk, result))
                before += result.before
                after += result.after
        except BaseException:
            for chunk, result in reversed(done):
                try:
                    self._commit_chunk(account_id, _inverse(chunk, result), now, check=False)
                except Exception:
                    log.error("could not undo a partly written file commit", exc_info=True)
            raise
        return FileCommit(before=before, after=after)

    def _commit_chunk(
        self, account_id: str, changes: Sequence[FileChange], now: float, *, check: bool = True
    ) -> FileCommit:
        for attempt in Backoff(ATTEMPTS):
            try:
                return self._try_chunk(account_id, changes, now, check)
            except _Retry:
                if attempt == ATTEMPTS - 1:
                    raise quota.contended() from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _try_chunk(
        self, account_id: str, changes: Sequence[FileChange], now: float, check: bool
    ) -> FileCommit:
        pk = keys.account_pk(account_id)
        table = self.table
        wanted = [(pk, file_sk(paths.path_key(c.path))) for c in changes]
        got = table.batch_get([*wanted, (pk, keys.ACCOUNT_SK), (pk, COUNTER_SK)])
        account = got.get((pk, keys.ACCOUNT_SK))
        if account is None:
            raise NotFound(f"no account {account_id!r}", code="account_not_found")
        limits = limits_of(account)
        counter = got.get((pk, COUNTER_SK))
        count = int(counter["file_count"]) if counter else None
        before: list[StoredFile | None] = []
        after: list[StoredFile | None] = []
        actions: list[dict[str, Any]] = []
        file_delta = byte_delta = 0
        current: dict[str, Item | None] = {sk: got.get((pk, sk)) for _pk, sk in wanted}
        for change in changes:
            path_key = paths.path_key(change.path)
            sk = file_sk(path_key)
            old_item = current[sk]
            old = _file(old_item) if old_item else None
            before.append(old)
            condition = _unchanged(old_item)
            if isinstance(change, PutFile):
                if check:
                    files.check_file_size(change.path, change.size, limits)
                stored = StoredFile(
                    path=change.path,
                    kind=change.kind,
                    size=change.size,
                    sha256=change.sha256,
                    content_type=change.content_type,
                    created_at=old.created_at if old else now,
                    updated_at=now if change.updated_at is None else change.updated_at,
                )
                item: Item = {
                    keys.TABLE_PK: pk,
                    keys.TABLE_SK: sk,
                    "path": stored.path,
                    "kind": stored.kind,
                    "size": stored.size,
                    "sha256": stored.sha256,
                    "content_type": stored.content_type,
                    "created_at": stored.created_at,
                    "updated_at": stored.updated_at,
                }
                actions.append(
                    {"Put": {"TableName": table.name, "Item": serialize(item)} | condition}
                )
                if stored.kind == "attachment":  # (a new spelling of the path: same key)
                    name_item = {
                        keys.TABLE_PK: pk,
                        keys.TABLE_SK: name_sk(paths.name_key(stored.path), path_key),
                        "path": stored.path,
                    }
                    actions.append({"Put": {"TableName": table.name, "Item": serialize(name_item)}})
                current[sk] = item
                after.append(stored)
                file_delta += 0 if old else 1
                byte_delta += stored.size - (old.size if old else 0)
            else:
                if old is None:
                    raise NotFound(f"no file at {change.path!r}", code="file_not_found")
                actions.append(
                    {"Delete": {"TableName": table.name, "Key": dynamo.key(pk, sk)} | condition}
                )
                if old.kind == "attachment":
                    actions.append(_delete_name(table.name, pk, old.path, path_key))
                current[sk] = None
                after.append(None)
                file_delta -= 1
                byte_delta -= old.size
        state = quota.read_state(table, pk)
        if check:
            usage = state.usage
            files_before = count if count is not None else self.file_usage(account_id).files
            files.check_file_quota(
                files_before=files_before,
                files_after=files_before + file_delta,
                bytes_before=usage.total_bytes,
                bytes_after=usage.total_bytes + byte_delta,
                limits=limits,
            )
        cost = write_plan.Cost(0, byte_delta)
        try:
            state = quota.prepare(table, account_id, cost)
        except Exception:
            if check:
                raise
            state = quota.read_state(table, pk)
        actions += quota.gathered(table, state, cost)
        actions.append(_counter(table.name, pk, count, file_delta, account_id, self))
        try:
            table.transact_once(actions)
        except ClientError as exc:
            if error_code(exc) in ("TransactionCanceledException", "TransactionConflict"):
                raise _Retry() from exc
            raise
        return FileCommit(before=before, after=after)


def _unchanged(old: Item | None) -> dict[str, Any]:
    """The condition that the file item is still what was read."""
    if old is None:
        return {"ConditionExpression": "attribute_not_exists(pk)"}
    return {
        "ConditionExpression": "sha256 = :was_sha AND updated_at = :was_at AND #p = :was_path",
        "ExpressionAttributeNames": {"#p": "path"},
        "ExpressionAttributeValues": values(
            {":was_sha": old["sha256"], ":was_at": old["updated_at"], ":was_path": old["path"]}
        ),
    }


def _delete_name(table: str, pk: str, path: str, path_key: str) -> dict[str, Any]:
    return {
        "Delete": {
            "TableName": table,
            "Key": dynamo.key(pk, name_sk(paths.name_key(path), path_key)),
        }
    }


def _counter(
    table: str,
    pk: str,
    count: int | None,
    delta: int,
    account_id: str,
    store: DynamoAttachmentStore,
) -> dict[str, Any]:
    """The ``FILES`` counter moved by ``delta``, on the condition it holds what was read
    (or, when it did not exist, the count the items give)."""
    if count is None:
        start = store.file_usage(account_id).files
        return {
            "Put": {
                "TableName": table,
                "Item": serialize(
                    {keys.TABLE_PK: pk, keys.TABLE_SK: COUNTER_SK, "file_count": start + delta}
                ),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }
    return {
        "Update": {
            "TableName": table,
            "Key": dynamo.key(pk, COUNTER_SK),
            "UpdateExpression": "SET file_count = :new",
            "ConditionExpression": "file_count = :old",
            "ExpressionAttributeValues": values({":new": count + delta, ":old": count}),
        }
    }


def _inverse(changes: Sequence[FileChange], done: FileCommit) -> list[FileChange]:
    out: list[FileChange] = []
    for change, before in zip(changes, done.before, strict=True):
        if before is None:
            out.append(DeleteFile(change.path))
        else:
            out.append(
                PutFile(
                    before.path,
                    before.kind,
                    before.size,
                    before.sha256,
                    before.content_type,
                    before.updated_at,
                )
            )
    return out
