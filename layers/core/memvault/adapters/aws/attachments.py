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
chunks before it, so the commit is all or nothing (a crash between chunks is not, so
an import's files, with or without notes, ride in the notes' journaled commit instead:
``commit_import``; ADR 0043).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from memvault.adapters.aws import dynamo, keys, quota
from memvault.adapters.aws.accounts import limits_of
from memvault.adapters.aws.backoff import Backoff
from memvault.adapters.aws.base import DynamoParts
from memvault.adapters.aws.bodies import BodyStore
from memvault.adapters.aws.clients import aws_errors, error_code
from memvault.adapters.aws.commit import DynamoNoteCommit, PlanExtension
from memvault.adapters.aws.dynamo import Item, Table, serialize, values
from memvault.adapters.aws.plan import Plan
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
from memvault.domain.models import NoteChange
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


# A large file goes up in parallel parts.
BLOB_TRANSFER = TransferConfig(multipart_chunksize=16 * 1024 * 1024, max_concurrency=4)


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
    def __init__(
        self, table: Table, bodies: BodyStore, *, notes: DynamoNoteCommit | None = None
    ) -> None:
        super().__init__(table, bodies)
        self.notes = notes  # whose commit an import's files ride in

    # ------------------------------------------------------------------ blobs
    def stage_blob(self, account_id: str, sha256: str, data: bytes | IO[bytes]) -> bool:
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
            if isinstance(data, bytes):
                client.put_object(Bucket=bucket, Key=key, Body=data)
            else:  # a large file: in parts, never whole in memory
                client.upload_fileobj(data, bucket, key, Config=BLOB_TRANSFER)
        return not existed

    def open_blob(self, account_id: str, sha256: str) -> IO[bytes]:
        try:
            with aws_errors("the files bucket"):
                self.bodies.count_request()
                out = self.bodies.client.get_object(
                    Bucket=self.bodies.bucket, Key=blob_key(account_id, sha256)
                )
        except ClientError as exc:
            if error_code(exc) in ("NoSuchKey", "404"):
                raise NotFound("the file's bytes are missing", code="file_not_found") from exc
            raise
        body: IO[bytes] = out["Body"]
        return body

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

    def orphan_blobs(self, account_id: str, *, older_than: float, limit: int = 1000) -> int:
        prefix = blob_key(account_id, "")
        used = {f.sha256 for f in self.file_keys(account_id).values()}
        client, bucket = self.bodies.client, self.bodies.bucket
        dropped: list[str] = []
        token: str | None = None
        while len(dropped) < limit:
            kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix}
            if token:
                kwargs["ContinuationToken"] = token
            with aws_errors("the files bucket"):
                self.bodies.count_request()
                page = client.list_objects_v2(**kwargs)
            for obj in page.get("Contents", []):
                sha = obj["Key"][len(prefix) :]
                if sha not in used and obj["LastModified"].timestamp() < older_than:
                    dropped.append(obj["Key"])
            token = page.get("NextContinuationToken")
            if not token:
                break
        # A commit may reference one since the listing: check again right before.
        used = {f.sha256 for f in self.file_keys(account_id).values()}
        dropped = [k for k in dropped[:limit] if k[len(prefix) :] not in used]
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
    def commit_import(
        self,
        account_id: str,
        files: Sequence[FileChange],
        notes: Sequence[NoteChange],
        *,
        now: float,
    ) -> tuple[FileCommit, CommitResult | None]:
        """The files ride in the notes' commit: their items join the note plan (read,
        conditioned, journaled with it when the commit is large, their bytes in its
        quota cost), so the import is all or nothing even through a crash. Files alone
        take that path too once they need more than one transaction: chunks undone from
        memory would not survive the process dying between them."""
        if not notes and len(files) <= CHUNK:
            return self.commit_files(account_id, files, now=now), None
        if self.notes is None:
            raise RuntimeError("an import commit needs the note store")
        done: list[FileCommit] = []
        result = self.notes.commit_extended(
            account_id, notes, now=now, extend=self._extension(account_id, files, now, done)
        )
        return done[-1], result

    def _extension(
        self, account_id: str, changes: Sequence[FileChange], now: float, out: list[FileCommit]
    ) -> PlanExtension:
        def extend(plan: Plan) -> None:
            pk = plan.pk
            wanted = [file_sk(paths.path_key(c.path)) for c in changes]
            got = self.table.batch_get(
                [(pk, sk) for sk in wanted] + [(pk, keys.ACCOUNT_SK), (pk, COUNTER_SK)]
            )
            account = got.get((pk, keys.ACCOUNT_SK))
            if account is None:
                raise NotFound(f"no account {account_id!r}", code="account_not_found")
            limits = limits_of(account)
            counter = got.get((pk, COUNTER_SK))
            planned = _plan_files(pk, changes, {sk: got.get((pk, sk)) for sk in wanted}, now)
            for change in changes:
                if isinstance(change, PutFile):
                    files.check_file_size(change.path, change.size, limits)
            count = int(counter["file_count"]) if counter else self.file_usage(account_id).files
            files.check_file_quota(
                files_before=count,
                files_after=count + planned.file_delta,
                bytes_before=0,
                bytes_after=0,  # the byte quota is the note commit's (plan.cost)
                limits=limits,
            )
            names = self.table.batch_get([(pk, sk) for sk in planned.names]) if planned else {}
            for sk, (original, final) in planned.items.items():
                plan.originals[sk] = original
                plan.set(sk, final)
            for sk, final_name in planned.names.items():
                plan.originals[sk] = names.get((pk, sk))
                plan.set(sk, final_name)
            plan.originals[COUNTER_SK] = counter
            plan.set(COUNTER_SK, _counter_item(pk, counter, count + planned.file_delta))
            plan.cost += write_plan.Cost(0, planned.byte_delta)
            out.append(FileCommit(before=planned.before, after=planned.after))

        return extend

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
        wanted = [file_sk(paths.path_key(c.path)) for c in changes]
        got = table.batch_get(
            [(pk, sk) for sk in wanted] + [(pk, keys.ACCOUNT_SK), (pk, COUNTER_SK)]
        )
        account = got.get((pk, keys.ACCOUNT_SK))
        if account is None:
            raise NotFound(f"no account {account_id!r}", code="account_not_found")
        limits = limits_of(account)
        counter = got.get((pk, COUNTER_SK))
        count = int(counter["file_count"]) if counter else self.file_usage(account_id).files
        planned = _plan_files(pk, changes, {sk: got.get((pk, sk)) for sk in wanted}, now)
        if check:
            for change in changes:
                if isinstance(change, PutFile):
                    files.check_file_size(change.path, change.size, limits)
            usage = quota.read_state(table, pk).usage
            files.check_file_quota(
                files_before=count,
                files_after=count + planned.file_delta,
                bytes_before=usage.total_bytes,
                bytes_after=usage.total_bytes + planned.byte_delta,
                limits=limits,
            )
        actions: list[dict[str, Any]] = []
        for sk, (original, final) in planned.items.items():
            condition = _unchanged(original)
            if final is None:
                actions.append(
                    {"Delete": {"TableName": table.name, "Key": dynamo.key(pk, sk)} | condition}
                )
            else:
                actions.append(
                    {"Put": {"TableName": table.name, "Item": serialize(final)} | condition}
                )
        for sk, final_name in planned.names.items():
            if final_name is None:
                actions.append({"Delete": {"TableName": table.name, "Key": dynamo.key(pk, sk)}})
            else:
                actions.append({"Put": {"TableName": table.name, "Item": serialize(final_name)}})
        cost = write_plan.Cost(0, planned.byte_delta)
        try:
            state = quota.prepare(table, account_id, cost)
        except Exception:
            if check:
                raise
            state = quota.read_state(table, pk)
        actions += quota.gathered(table, state, cost)
        counter_item = _counter_item(pk, counter, count + planned.file_delta)
        counter_condition: dict[str, Any] = (
            {
                "ConditionExpression": "file_count = :old",
                "ExpressionAttributeValues": values({":old": count}),
            }
            if counter
            else {"ConditionExpression": "attribute_not_exists(pk)"}
        )
        actions.append(
            {"Put": {"TableName": table.name, "Item": serialize(counter_item)} | counter_condition}
        )
        try:
            table.transact_once(actions)
        except ClientError as exc:
            if error_code(exc) in ("TransactionCanceledException", "TransactionConflict"):
                raise _Retry() from exc
            raise
        return FileCommit(before=planned.before, after=planned.after)


def _unchanged(old: Item | None) -> dict[str, Any]:
    """The condition that the file item is still what was read."""
    if old is None:
        return {"ConditionExpression": "attribute_not_exists(pk)"}
    if "version" in old:
        return {
            "ConditionExpression": "#version = :was_version",
            "ExpressionAttributeNames": {"#version": "version"},
            "ExpressionAttributeValues": values({":was_version": old["version"]}),
        }
    return {
        "ConditionExpression": "sha256 = :was_sha AND updated_at = :was_at AND #p = :was_path",
        "ExpressionAttributeNames": {"#p": "path"},
        "ExpressionAttributeValues": values(
            {":was_sha": old["sha256"], ":was_at": old["updated_at"], ":was_path": old["path"]}
        ),
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


@dataclass
class _PlannedFiles:
    """File changes as item originals and finals, for a note plan to carry."""

    items: dict[str, tuple[Item | None, Item | None]] = field(default_factory=dict)
    names: dict[str, Item | None] = field(default_factory=dict)  # FN# sort key -> final
    before: list[StoredFile | None] = field(default_factory=list)
    after: list[StoredFile | None] = field(default_factory=list)
    file_delta: int = 0
    byte_delta: int = 0

    def __bool__(self) -> bool:
        return bool(self.items)


def _plan_files(
    pk: str, changes: Sequence[FileChange], current: dict[str, Item | None], now: float
) -> _PlannedFiles:
    planned = _PlannedFiles()
    for change in changes:
        path_key = paths.path_key(change.path)
        sk = file_sk(path_key)
        old_item = current.get(sk)
        old = _file(old_item) if old_item else None
        planned.before.append(old)
        if isinstance(change, PutFile):
            stored = StoredFile(
                path=change.path,
                kind=change.kind,
                size=change.size,
                sha256=change.sha256,
                content_type=change.content_type,
                created_at=old.created_at if old else now,
                updated_at=now if change.updated_at is None else change.updated_at,
            )
            planned.items[sk] = (old_item, _file_item(pk, sk, stored, old_item))
            if stored.kind == "attachment":
                planned.names[name_sk(paths.name_key(stored.path), path_key)] = {
                    keys.TABLE_PK: pk,
                    keys.TABLE_SK: name_sk(paths.name_key(stored.path), path_key),
                    "path": stored.path,
                }
            planned.after.append(stored)
            planned.file_delta += 0 if old else 1
            planned.byte_delta += stored.size - (old.size if old else 0)
        else:
            if old is None:
                raise NotFound(f"no file at {change.path!r}", code="file_not_found")
            planned.items[sk] = (old_item, None)
            if old.kind == "attachment":
                planned.names[name_sk(paths.name_key(old.path), path_key)] = None
            planned.after.append(None)
            planned.file_delta -= 1
            planned.byte_delta -= old.size
        current[sk] = planned.items[sk][1]
    return planned


def _file_item(pk: str, sk: str, stored: StoredFile, old: Item | None) -> Item:
    return {
        keys.TABLE_PK: pk,
        keys.TABLE_SK: sk,
        "path": stored.path,
        "kind": stored.kind,
        "size": stored.size,
        "sha256": stored.sha256,
        "content_type": stored.content_type,
        "created_at": stored.created_at,
        "updated_at": stored.updated_at,
        # What a note plan's write condition pins (transaction.unchanged_condition).
        "version": int(old.get("version", 0)) + 1 if old else 1,
    }


def _counter_item(pk: str, old: Item | None, count: int) -> Item:
    return {
        keys.TABLE_PK: pk,
        keys.TABLE_SK: COUNTER_SK,
        "file_count": count,
        "version": int(old.get("version", 0)) + 1 if old else 1,
    }
