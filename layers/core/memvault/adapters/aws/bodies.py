"""Note markdown in S3: one immutable object per kept version.

Bodies never live in DynamoDB, so a note's size can never approach the 400 KB item limit.
An object is written before the DynamoDB transaction that makes it visible; a failed
transaction leaves at most an unreferenced object, which is deleted best-effort.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError

from memvault.adapters.aws import keys
from memvault.adapters.aws.clients import aws_errors, error_code
from memvault.errors import ServiceUnavailable

log = logging.getLogger("memvault.aws.bodies")

# Recall reads five notes by default and a search page at most 50; botocore's default
# connection pool holds 10, so more workers would only queue for a connection.
GET_MANY_WORKERS = 8


class BodyStore:
    def __init__(self, client: Any, bucket: str) -> None:
        self.client = client
        self.bucket = bucket
        self._requests = 0
        self._count_lock = threading.Lock()  # get_many counts from several threads
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    @property
    def requests(self) -> int:
        """S3 requests sent so far (what AWS bills; tests count them)."""
        return self._requests

    def count_request(self) -> None:
        with self._count_lock:
            self._requests += 1

    def put(self, object_key: str, markdown: str) -> None:
        with aws_errors("the notes bucket"):
            self.count_request()
            self.client.put_object(
                Bucket=self.bucket,
                Key=object_key,
                Body=markdown.encode("utf-8"),
                ContentType="text/markdown; charset=utf-8",
            )

    def get(self, object_key: str) -> str:
        try:
            with aws_errors("the notes bucket"):
                self.count_request()
                data = self.client.get_object(Bucket=self.bucket, Key=object_key)["Body"].read()
        except ClientError as exc:
            if error_code(exc) in ("NoSuchKey", "404"):
                raise ServiceUnavailable(
                    "a note's stored markdown is missing from the bucket",
                    code="body_missing",
                ) from exc
            raise
        text: str = data.decode("utf-8")
        return text

    def get_many(self, object_keys: Collection[str]) -> dict[str, str]:
        """Several bodies at once: each is its own S3 request, so they are sent together
        (bounded by GET_MANY_WORKERS) and the wait is the slowest one's, not their sum.
        Raises as ``get`` does when any of them fails."""
        unique = list(dict.fromkeys(object_keys))
        if len(unique) <= 1:
            return {k: self.get(k) for k in unique}
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=GET_MANY_WORKERS, thread_name_prefix="memvault-s3-get"
                )
            pool = self._pool
        return dict(zip(unique, pool.map(self.get, unique), strict=True))

    def delete_versions_quietly(self, account_id: str, versions: Iterable[tuple[str, int]]) -> None:
        """Delete every object of these (note id, version) pairs, whatever their tokens."""
        found: list[str] = []
        for note_id, version in versions:
            try:
                self.count_request()
                listing = self.client.list_objects_v2(
                    Bucket=self.bucket, Prefix=keys.body_prefix(account_id, note_id, version)
                )
                found += [obj["Key"] for obj in listing.get("Contents", [])]
            except Exception:  # cleanup must never mask the real outcome
                log.warning("could not list trimmed note bodies")
        self.delete_quietly(found)

    def delete_quietly(self, object_keys: Iterable[str]) -> None:
        """Best-effort cleanup of bodies no item points at (failed writes, trimmed versions)."""
        batch = [{"Key": k} for k in object_keys]
        for start in range(0, len(batch), 1000):
            try:
                self.count_request()
                self.client.delete_objects(
                    Bucket=self.bucket,
                    Delete={"Objects": batch[start : start + 1000], "Quiet": True},
                )
            except Exception:
                log.warning(
                    "could not delete unreferenced note bodies", extra={"count": len(batch)}
                )
