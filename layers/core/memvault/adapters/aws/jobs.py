"""Import and export jobs on AWS (JobStore, TransferBlobs).

A job is one item of the single table, ``A#<account>`` / ``JOB#<job id>`` (its stored
form, ``domain.jobs.to_record``, as JSON in ``data``, its ``revision`` beside it for the
conditional save, a TTL a week past its keeping); an organisation's import lease is
``A#<account>`` / ``JOBLEASE`` (``job_id``, ``until``), taken with a condition; a job
queued or running also has ``JOBS`` / ``<account>␟<job id>``, removed when it ends, so the
ops schedule finds every unfinished job without a scan (``unfinished``) and settles the
ones whose worker died. Staged
archives live in the notes bucket under ``jobs/``: an upload (or an export's trigger, an
empty object) at ``jobs/run/<account>/<job id>``, whose ObjectCreated event starts the
job function, and an export's zip at ``jobs/out/<account>/<job id>.zip``. Clients send
and fetch them with presigned requests (``direct``): a PUT whose signature covers the
declared Content-Length, and a GET.
"""

from __future__ import annotations

import json
import logging
import tempfile
import uuid
from collections.abc import Iterator
from typing import IO, Any

from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from memvault.adapters.aws import bulk, keys, quota
from memvault.adapters.aws.bodies import BodyStore
from memvault.adapters.aws.clients import aws_errors, error_code
from memvault.adapters.aws.dynamo import Table
from memvault.domain.jobs import Job, JobStatus, from_record, new_signing_key, to_record
from memvault.errors import TooLarge
from memvault.ports import BlobLink

log = logging.getLogger("memvault.aws.jobs")

JOB_PREFIX = "JOB#"
LEASE_SK = "JOBLEASE"
UNFINISHED_PK = "JOBS"  # outside every account partition, like REINDEX
SIGNING_PK = SIGNING_SK = "JOBKEY"
RUN_PREFIX = "jobs/run/"
OUT_PREFIX = "jobs/out/"
# Kept items outlive their job's own expiry by this much before DynamoDB's TTL takes them.
TTL_MARGIN_SECONDS = 7 * 24 * 3600
MAX_PRESIGN_SECONDS = 7 * 24 * 3600  # SigV4's limit
# Archives go up and down in parallel parts (a 1 GiB export in 16 MiB parts).
TRANSFER = TransferConfig(multipart_chunksize=16 * 1024 * 1024, max_concurrency=8)


def job_sk(job_id: str) -> str:
    return JOB_PREFIX + job_id


def run_key(account_id: str, job_id: str) -> str:
    return f"{RUN_PREFIX}{account_id}/{job_id}"


def out_key(account_id: str, job_id: str) -> str:
    return f"{OUT_PREFIX}{account_id}/{job_id}.zip"


def parse_run_key(key: str) -> tuple[str, str] | None:
    """(account id, job id) from a ``jobs/run/`` object key, None for any other key."""
    if not key.startswith(RUN_PREFIX):
        return None
    account_id, slash, job_id = key[len(RUN_PREFIX) :].partition("/")
    if not slash or not account_id or not job_id or "/" in job_id:
        return None
    return account_id, job_id


def _conditional_failed(exc: ClientError) -> bool:
    return error_code(exc) == "ConditionalCheckFailedException"


class DynamoJobStore:
    def __init__(self, table: Table, bodies: BodyStore) -> None:
        self.table = table
        self.bodies = bodies
        self._key: bytes | None = None

    def _item(self, job: Job) -> dict[str, Any]:
        return {
            keys.TABLE_PK: keys.account_pk(job.account_id),
            keys.TABLE_SK: job_sk(job.id),
            "data": json.dumps(to_record(job)),
            "revision": job.revision,
            "created_at": job.created_at,
            keys.TTL_ATTRIBUTE: int(max(job.expires_at, job.updated_at) + TTL_MARGIN_SECONDS),
        }

    def create(self, job: Job) -> None:
        self.table.put(self._item(job), ConditionExpression="attribute_not_exists(pk)")
        self._mark(job)

    def _mark(self, job: Job) -> None:
        """The unfinished-job marker follows the job's state (best effort: a stale marker
        costs the schedule one read, a missing one only the start-up sweep)."""
        sk = f"{job.account_id}{keys.SEP}{job.id}"
        try:
            if job.status in (JobStatus.QUEUED, JobStatus.RUNNING):
                self.table.put({keys.TABLE_PK: UNFINISHED_PK, keys.TABLE_SK: sk})
            else:
                self.table.delete(UNFINISHED_PK, sk)
        except Exception:
            log.warning("unfinished-job marker not updated", exc_info=True)

    def get(self, account_id: str, job_id: str) -> Job | None:
        item = self.table.get(keys.account_pk(account_id), job_sk(job_id))
        return None if item is None else from_record(json.loads(item["data"]))

    def save(self, job: Job) -> bool:
        try:
            self.table.put(
                self._item(job),
                ConditionExpression="revision = :prev",
                ExpressionAttributeValues={":prev": {"N": str(job.revision - 1)}},
            )
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise
        if job.status is JobStatus.QUEUED or job.terminal:  # not every progress write
            self._mark(job)
        return True

    def recent(self, account_id: str, limit: int) -> list[Job]:
        found = [
            from_record(json.loads(item["data"]))
            for item in self.table.query(keys.account_pk(account_id), JOB_PREFIX)
        ]
        found.sort(key=lambda j: (-j.created_at, j.id))
        return found[:limit]

    def delete(self, account_id: str, job_id: str) -> None:
        self.table.delete(keys.account_pk(account_id), job_sk(job_id))

    def acquire_lease(self, account_id: str, job_id: str, *, until: float, now: float) -> bool:
        try:
            self.table.put(
                {
                    keys.TABLE_PK: keys.account_pk(account_id),
                    keys.TABLE_SK: LEASE_SK,
                    "job_id": job_id,
                    "until": until,
                },
                ConditionExpression="attribute_not_exists(pk) OR #u <= :now OR job_id = :job",
                ExpressionAttributeNames={"#u": "until"},
                ExpressionAttributeValues={":now": {"N": repr(now)}, ":job": {"S": job_id}},
            )
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise
        return True

    def renew_lease(self, account_id: str, job_id: str, *, until: float) -> bool:
        try:
            self.table.update(
                Key={
                    keys.TABLE_PK: {"S": keys.account_pk(account_id)},
                    keys.TABLE_SK: {"S": LEASE_SK},
                },
                UpdateExpression="SET #u = :u",
                ConditionExpression="job_id = :job",
                ExpressionAttributeNames={"#u": "until"},
                ExpressionAttributeValues={":u": {"N": repr(until)}, ":job": {"S": job_id}},
            )
        except ClientError as exc:
            if _conditional_failed(exc):
                return False
            raise
        return True

    def release_lease(self, account_id: str, job_id: str) -> None:
        try:
            self.table.delete(
                keys.account_pk(account_id),
                LEASE_SK,
                ConditionExpression="job_id = :job",
                ExpressionAttributeValues={":job": {"S": job_id}},
            )
        except ClientError as exc:
            if not _conditional_failed(exc):
                raise

    def lease_holder(self, account_id: str, *, now: float) -> str | None:
        item = self.table.get(keys.account_pk(account_id), LEASE_SK)
        if item is None or float(item["until"]) <= now:
            return None
        return str(item["job_id"])

    def signing_key(self) -> bytes:
        if self._key is None:
            try:
                self.table.put(
                    {
                        keys.TABLE_PK: SIGNING_PK,
                        keys.TABLE_SK: SIGNING_SK,
                        "key": new_signing_key().hex(),
                    },
                    ConditionExpression="attribute_not_exists(pk)",
                )
            except ClientError as exc:
                if not _conditional_failed(exc):
                    raise
            item = self.table.get(SIGNING_PK, SIGNING_SK)
            assert item is not None
            self._key = bytes.fromhex(str(item["key"]))
        return self._key

    def unfinished(self) -> list[Job]:
        found: list[Job] = []
        for marker in self.table.query(UNFINISHED_PK, ""):
            account_id, _sep, job_id = str(marker[keys.TABLE_SK]).partition(keys.SEP)
            job = self.get(account_id, job_id)
            if job is not None and job.status in (JobStatus.QUEUED, JobStatus.RUNNING):
                found.append(job)
            else:
                self.table.delete(UNFINISHED_PK, str(marker[keys.TABLE_SK]))
        return found

    def recover_vault(self, account_id: str, *, now: float) -> bool | None:
        lock = quota.read_state(self.table, keys.account_pk(account_id)).lock
        if lock is not None and lock[1] > now:
            return None  # a commit still holds the vault: its lease has not run out
        return bulk.recover_expired(self.table, self.bodies, account_id, now=now)


class S3TransferBlobs:
    """Staged archives in the notes bucket; ``presigner`` signs the links clients use
    (a client on the endpoint they reach, which may differ from the functions' own)."""

    direct = True

    def __init__(self, client: Any, presigner: Any, bucket: str) -> None:
        self.client = client
        self.presigner = presigner
        self.bucket = bucket

    def upload_link(
        self, account_id: str, job_id: str, *, size: int, expires_at: float, now: float
    ) -> BlobLink | None:
        key = run_key(account_id, job_id)
        return presigned_put(
            self.presigner, self.bucket, key, size, "application/zip", expires_at, now
        )

    def download_link(
        self, account_id: str, job_id: str, *, filename: str, expires_at: float, now: float
    ) -> BlobLink | None:
        seconds = int(min(max(expires_at - now, 1), MAX_PRESIGN_SECONDS))
        url = self.presigner.generate_presigned_url(
            "get_object",
            Params={
                "Bucket": self.bucket,
                "Key": out_key(account_id, job_id),
                "ResponseContentDisposition": f'attachment; filename="{filename}"',
                "ResponseContentType": "application/zip",
            },
            ExpiresIn=seconds,
        )
        return BlobLink(url, {}, now + seconds)

    def write_upload(
        self, account_id: str, job_id: str, chunks: Iterator[bytes], *, max_bytes: int
    ) -> int:
        too_large = TooLarge(
            f"the upload is larger than the {max_bytes} bytes declared",
            code="archive_too_large",
            limit=max_bytes,
        )
        key = run_key(account_id, job_id)
        return spool_to_s3(self.client, self.bucket, key, chunks, max_bytes, too_large)

    def upload_size(self, account_id: str, job_id: str) -> int | None:
        try:
            with aws_errors("the notes bucket"):
                head = self.client.head_object(Bucket=self.bucket, Key=run_key(account_id, job_id))
        except ClientError as exc:
            if error_code(exc) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise
        return int(head["ContentLength"])

    def open_upload(self, account_id: str, job_id: str) -> IO[bytes]:
        spool = tempfile.TemporaryFile()  # noqa: SIM115 - returned, the caller closes it
        try:
            with aws_errors("the notes bucket"):
                self.client.download_fileobj(
                    self.bucket, run_key(account_id, job_id), spool, Config=TRANSFER
                )
        except BaseException:
            spool.close()
            raise
        spool.seek(0)
        return spool

    def store_export(self, account_id: str, job_id: str, archive: IO[bytes]) -> int:
        size = archive.seek(0, 2)
        archive.seek(0)
        with aws_errors("the notes bucket"):
            self.client.upload_fileobj(
                archive,
                self.bucket,
                out_key(account_id, job_id),
                ExtraArgs={"ContentType": "application/zip"},
                Config=TRANSFER,
            )
        return size

    def open_export(self, account_id: str, job_id: str) -> IO[bytes] | None:
        try:
            with aws_errors("the notes bucket"):
                body: IO[bytes] = self.client.get_object(
                    Bucket=self.bucket, Key=out_key(account_id, job_id)
                )["Body"]
        except ClientError as exc:
            if error_code(exc) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise
        return body

    def request_run(self, account_id: str, job_id: str) -> bool:
        with aws_errors("the notes bucket"):
            self.client.put_object(Bucket=self.bucket, Key=run_key(account_id, job_id), Body=b"")
        return True

    def redeliver(self, account_id: str, job_id: str) -> bool:
        # S3 copies an object onto itself only when its metadata changes; the copy is a new
        # Object Created event (reason CopyObject, or CompleteMultipartUpload past 5 GB,
        # which boto3's managed copy copies in parts), which the rule under jobs/run/
        # matches, and an import's archive stays byte for byte what was uploaded.
        key = run_key(account_id, job_id)
        try:
            with aws_errors("the notes bucket"):
                self.client.copy(
                    {"Bucket": self.bucket, "Key": key},
                    self.bucket,
                    key,
                    ExtraArgs={
                        "MetadataDirective": "REPLACE",
                        "Metadata": {"memvault-redelivered": uuid.uuid4().hex},
                    },
                    Config=TRANSFER,
                )
        except ClientError as exc:
            if error_code(exc) in ("404", "NoSuchKey", "NotFound"):
                return False  # nothing staged to signal with
            raise
        return True

    def delete(self, account_id: str, job_id: str) -> None:
        objects = [{"Key": run_key(account_id, job_id)}, {"Key": out_key(account_id, job_id)}]
        with aws_errors("the notes bucket"):
            self.client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": objects, "Quiet": True}
            )


def spool_to_s3(
    client: Any,
    bucket: str,
    key: str,
    chunks: Iterator[bytes],
    max_bytes: int,
    too_large: TooLarge,
) -> int:
    """A body arriving through memvault, spooled to disk (refused with ``too_large`` as
    soon as it passes ``max_bytes``, nothing stored), then one multipart upload: its size."""
    with tempfile.TemporaryFile() as spool:
        size = 0
        for chunk in chunks:
            size += len(chunk)
            if size > max_bytes:
                raise too_large
            spool.write(chunk)
        spool.seek(0)
        with aws_errors("the notes bucket"):
            client.upload_fileobj(spool, bucket, key, Config=TRANSFER)
    return size


def presigned_put(
    presigner: Any,
    bucket: str,
    key: str,
    size: int,
    content_type: str,
    expires_at: float,
    now: float,
) -> BlobLink:
    """A link a client PUTs exactly ``size`` bytes to, with no credentials of its own.
    Content-Length is among the signed headers (the presigner signs with SigV4), so S3
    refuses a body of another size."""
    seconds = int(min(max(expires_at - now, 1), MAX_PRESIGN_SECONDS))
    url = presigner.generate_presigned_url(
        "put_object",
        Params={"Bucket": bucket, "Key": key, "ContentLength": size, "ContentType": content_type},
        ExpiresIn=seconds,
    )
    return BlobLink(url, {"content-type": content_type}, now + seconds)
