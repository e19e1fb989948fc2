"""Large single-file uploads and downloads on AWS (``ports.FileUploads``).

An upload's bytes go straight to the notes bucket at ``uploads/<account>/<upload id>``
by a presigned PUT whose signature covers the declared Content-Length (S3 refuses a body
of another size), signed by the same presigning client as the job archives
(``adapters.aws.jobs``); its record is ``uploads/<account>/<upload id>.meta`` (JSON).
Nothing happens on arrival: ``POST /v1/files/uploads/{id}/complete`` copies the bytes
into ``<account>/files/<sha256>`` and commits the file; the bucket's lifecycle rule
deletes whatever is left under ``uploads/`` after two days. A large file is fetched by
a presigned GET of its content-addressed object, answering with the file's
Content-Type and Content-Disposition.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import IO, Any

from botocore.exceptions import ClientError

from memvault.adapters.aws.attachments import blob_key
from memvault.adapters.aws.clients import aws_errors, error_code
from memvault.adapters.aws.jobs import MAX_PRESIGN_SECONDS, presigned_put, spool_to_s3
from memvault.errors import TooLarge
from memvault.ports import BlobLink

UPLOAD_PREFIX = "uploads/"
_MISSING = ("404", "NoSuchKey", "NotFound")


def upload_key(account_id: str, upload_id: str) -> str:
    return f"{UPLOAD_PREFIX}{account_id}/{upload_id}"


class S3FileUploads:
    direct = True

    def __init__(self, client: Any, presigner: Any, bucket: str) -> None:
        self.client = client
        self.presigner = presigner
        self.bucket = bucket

    def begin(self, account_id: str, upload_id: str, meta: Mapping[str, object]) -> None:
        with aws_errors("the notes bucket"):
            self.client.put_object(
                Bucket=self.bucket,
                Key=upload_key(account_id, upload_id) + ".meta",
                Body=json.dumps(dict(meta)).encode("utf-8"),
                ContentType="application/json",
            )

    def meta(self, account_id: str, upload_id: str) -> dict[str, object] | None:
        try:
            with aws_errors("the notes bucket"):
                out = self.client.get_object(
                    Bucket=self.bucket, Key=upload_key(account_id, upload_id) + ".meta"
                )
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return None
            raise
        found: dict[str, object] = json.loads(out["Body"].read())
        return found

    def upload_link(
        self,
        account_id: str,
        upload_id: str,
        *,
        size: int,
        content_type: str,
        expires_at: float,
        now: float,
    ) -> BlobLink | None:
        key = upload_key(account_id, upload_id)
        return presigned_put(self.presigner, self.bucket, key, size, content_type, expires_at, now)

    def write(
        self, account_id: str, upload_id: str, chunks: Iterator[bytes], *, max_bytes: int
    ) -> int:
        too_large = TooLarge(
            f"the upload is longer than the {max_bytes} bytes declared; nothing was stored",
            code="upload_too_large",
            limit=max_bytes,
        )
        key = upload_key(account_id, upload_id)
        return spool_to_s3(self.client, self.bucket, key, chunks, max_bytes, too_large)

    def size(self, account_id: str, upload_id: str) -> int | None:
        try:
            with aws_errors("the notes bucket"):
                head = self.client.head_object(
                    Bucket=self.bucket, Key=upload_key(account_id, upload_id)
                )
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return None
            raise
        return int(head["ContentLength"])

    def open(self, account_id: str, upload_id: str) -> IO[bytes] | None:
        try:
            with aws_errors("the notes bucket"):
                out = self.client.get_object(
                    Bucket=self.bucket, Key=upload_key(account_id, upload_id)
                )
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return None
            raise
        body: IO[bytes] = out["Body"]
        return body

    def discard(self, account_id: str, upload_id: str) -> None:
        key = upload_key(account_id, upload_id)
        objects = [{"Key": key}, {"Key": key + ".meta"}]
        with aws_errors("the notes bucket"):
            self.client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": objects, "Quiet": True}
            )

    def sweep(self, account_id: str, *, older_than: float) -> int:
        # The bucket's lifecycle rule expires uploads/ after two days; nothing to list.
        return 0

    def download_link(
        self,
        account_id: str,
        sha256: str,
        *,
        disposition: str,
        content_type: str,
        seconds: int,
        now: float,
    ) -> BlobLink | None:
        seconds = int(min(max(seconds, 1), MAX_PRESIGN_SECONDS))
        url = self.presigner.generate_presigned_url(
            "get_object",
            Params={
                "Bucket": self.bucket,
                "Key": blob_key(account_id, sha256),
                "ResponseContentDisposition": disposition,
                "ResponseContentType": content_type,
            },
            ExpiresIn=seconds,
        )
        return BlobLink(url, {}, now + seconds)
