"""One large file at a time, past what a buffered Lambda request carries (about 4.7 MB
in, 6 MB out), on both backends the same way for the client (README "/v1/files").

Upload: ``begin`` checks what ``PUT /v1/files/{path}`` checks (``AttachmentService.admit``:
a person, the path's rules, the size cap; and the file limit and byte quota as they
stand) and answers where to send exactly the declared bytes: a presigned S3 PUT whose
signature covers the Content-Length (AWS), or memvault's own ``PUT
/v1/file-uploads/{id}?token=...`` (embedded; the token is the job API's, ``domain.jobs``,
signed with the same key). ``complete`` checks the bytes that arrived (their size, and
their SHA-256 when one was declared) and hands them to ``AttachmentService.put_staged``,
the same write as a PUT: the same checks again, the same all-or-nothing commit. A
refusal stores nothing and drops the staged bytes; an abandoned upload is swept (the
embedded folder at the next upload of the organisation, S3's lifecycle rule on AWS).

Download: on AWS a file larger than ``redirect_bytes`` (or any, when the client asks for
a link) is fetched by a short-lived presigned S3 GET answering with its type and
disposition; embedded, memvault streams the bytes, and a link is its own
``GET /v1/file-downloads/{path}?token=...``.
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import tempfile
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

from memvault.domain import attachments as files
from memvault.domain import jobs as J
from memvault.domain.attachments import StoredFile
from memvault.domain.policy import Action, Target, allowed
from memvault.errors import (
    Conflict,
    InvalidInput,
    MemvaultError,
    NotFound,
    TooLarge,
    Unauthenticated,
)
from memvault.ports import BlobLink, FileUploads
from memvault.services.attachments import AttachmentService, FileOutcome
from memvault.services.context import Caller

log = logging.getLogger("memvault.uploads")

UPLOAD_SECONDS = 3600.0  # how long an upload URL stays good
LINK_SECONDS = 300  # how long a download link stays good
# A Lambda answer is at most 6 MB, base64 for bytes: a larger file is redirected.
REDIRECT_BYTES = 4 * 1024 * 1024
UPLOAD, DOWNLOAD = "file-upload", "file-download"
_ID = re.compile(r"upl_[0-9a-f]{24}")
_SHA = re.compile(r"[0-9a-f]{64}")
CHUNK = 1024 * 1024
SPOOL_IN_MEMORY = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Upload:
    id: str
    account_id: str
    path: str
    bytes: int
    content_type: str
    sha256: str | None
    member_id: str | None
    key_id: str | None
    created_at: float
    expires_at: float

    def meta(self) -> dict[str, object]:
        return {
            "id": self.id,
            "path": self.path,
            "bytes": self.bytes,
            "content_type": self.content_type,
            "sha256": self.sha256,
            "member_id": self.member_id,
            "key_id": self.key_id,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
        }

    @classmethod
    def of(cls, account_id: str, meta: dict[str, object]) -> Upload:
        def text(name: str) -> str | None:
            value = meta.get(name)
            return value if isinstance(value, str) else None

        def number(name: str) -> float:
            value = meta.get(name)
            return float(value) if isinstance(value, int | float) else 0.0

        return cls(
            id=text("id") or "",
            account_id=account_id,
            path=text("path") or "",
            bytes=int(number("bytes")),
            content_type=text("content_type") or files.OCTET_STREAM,
            sha256=text("sha256"),
            member_id=text("member_id"),
            key_id=text("key_id"),
            created_at=number("created_at"),
            expires_at=number("expires_at"),
        )


@dataclass(frozen=True, slots=True)
class Began:
    upload: Upload
    link: BlobLink | None  # a presigned PUT; None: memvault's own URL behind ``token``
    token: str | None


@dataclass(frozen=True, slots=True)
class Fetch:
    file: StoredFile
    link: BlobLink | None = None  # fetch it there (a presigned GET)
    token: str | None = None  # embedded link: GET /v1/file-downloads/{path}?token=


class FileUploadService:
    def __init__(
        self,
        attachments: AttachmentService,
        uploads: FileUploads,
        signing_key: Callable[[], bytes],
        clock: Callable[[], float],
        *,
        upload_seconds: float = UPLOAD_SECONDS,
        redirect_bytes: int = REDIRECT_BYTES,
    ) -> None:
        self.attachments = attachments
        self.uploads = uploads
        self.signing_key = signing_key
        self.clock = clock
        self.upload_seconds = upload_seconds
        self.redirect_bytes = redirect_bytes

    # ------------------------------------------------------------------ upload
    def begin(
        self,
        caller: Caller,
        path: str,
        size: int,
        *,
        content_type: str | None = None,
        sha256: str | None = None,
    ) -> Began:
        if size <= 0:
            raise InvalidInput("bytes must be the file's size, above 0", code="invalid_size")
        if sha256 is not None and not _SHA.fullmatch(sha256):
            raise InvalidInput(
                "sha256 must be the file's SHA-256 as 64 lowercase hex digits",
                code="invalid_sha256",
            )
        norm, _kind = self.attachments.admit(caller, path, size)
        self.attachments.check_room(caller, norm, size)
        now = self.clock()
        self.uploads.sweep(caller.account_id, older_than=now - 2 * self.upload_seconds)
        upload = Upload(
            id="upl_" + secrets.token_hex(12),
            account_id=caller.account_id,
            path=norm,
            bytes=size,
            content_type=content_type or files.content_type(norm),
            sha256=sha256,
            member_id=caller.member_id,
            key_id=caller.key_id,
            created_at=now,
            expires_at=now + self.upload_seconds,
        )
        self.uploads.begin(caller.account_id, upload.id, upload.meta())
        link = self.uploads.upload_link(
            caller.account_id,
            upload.id,
            size=size,
            content_type=upload.content_type,
            expires_at=upload.expires_at,
            now=now,
        )
        token = None
        if link is None:
            token = J.sign_token(
                self.signing_key(), UPLOAD, caller.account_id, upload.id, upload.expires_at
            )
        log.info("file upload begun", extra={"account_id": caller.account_id, "size": size})
        return Began(upload, link, token)

    def get(self, caller: Caller, upload_id: str) -> Upload:
        """The caller's upload; 404 for another organisation's (or, for a member or a
        vault key, one someone else began), never saying it exists."""
        meta = self.uploads.meta(caller.account_id, upload_id) if _ID.fullmatch(upload_id) else None
        upload = None if meta is None else Upload.of(caller.account_id, meta)
        if upload is None or not allowed(
            caller, Action.FINISH_UPLOAD, Target(member_id=upload.member_id, key_id=upload.key_id)
        ):
            raise NotFound(f"no upload {upload_id!r}", code="upload_not_found")
        return upload

    def receive(
        self, upload_id: str, token: str, chunks: Iterator[bytes], *, length: int | None = None
    ) -> Upload:
        """Embedded: the bytes sent to memvault's own upload URL (no Authorization: the
        token authorises this one upload until it expires); refused as soon as they are
        longer than declared (``length``, the Content-Length, before a byte is read)."""
        check = (
            J.check_token(self.signing_key(), UPLOAD, upload_id, token, now=self.clock())
            if _ID.fullmatch(upload_id)
            else None
        )
        meta = None if check is None else self.uploads.meta(check.account_id, upload_id)
        if check is None or meta is None:
            raise Unauthenticated("this link is not valid", code="invalid_token")
        if check.expired:
            raise Unauthenticated("this link has expired; begin a new upload", code="token_expired")
        upload = Upload.of(check.account_id, meta)
        if length is not None and length > upload.bytes:
            raise _too_long(upload)
        self.uploads.write(upload.account_id, upload.id, chunks, max_bytes=upload.bytes)
        return upload

    def complete(self, caller: Caller, upload_id: str) -> FileOutcome:
        upload = self.get(caller, upload_id)
        now = self.clock()
        if now >= upload.expires_at + LINK_SECONDS:
            self.uploads.discard(caller.account_id, upload.id)
            raise Conflict(
                "this upload has expired and was discarded; begin a new one",
                code="upload_expired",
            )
        size = self.uploads.size(caller.account_id, upload.id)
        if size is None:
            raise Conflict(
                "no bytes have arrived for this upload yet: send them to its URL first",
                code="upload_incomplete",
            )
        try:
            if size != upload.bytes:
                raise InvalidInput(
                    f"upload refused, nothing was stored: {size} bytes arrived,"
                    f" {upload.bytes} were declared",
                    code="upload_size_mismatch",
                )
            with self._spooled(upload) as (spool, sha):
                outcome = self.attachments.put_staged(
                    caller, upload.path, spool, size=size, sha256=sha
                )
        except MemvaultError:
            self.uploads.discard(caller.account_id, upload.id)
            raise
        self.uploads.discard(caller.account_id, upload.id)
        log.info("file upload completed", extra={"account_id": caller.account_id, "size": size})
        return outcome

    def _spooled(self, upload: Upload) -> _Spool:
        source = self.uploads.open(upload.account_id, upload.id)
        if source is None:
            raise Conflict("the upload's bytes are gone; begin a new one", code="upload_expired")
        spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115
        digest = hashlib.sha256()
        try:
            with source:
                while chunk := source.read(CHUNK):
                    digest.update(chunk)
                    spool.write(chunk)
        except BaseException:
            spool.close()
            raise
        sha = digest.hexdigest()
        if upload.sha256 is not None and sha != upload.sha256:
            spool.close()
            raise InvalidInput(
                "upload refused, nothing was stored: the bytes' SHA-256 is not the one declared",
                code="upload_digest_mismatch",
            )
        spool.seek(0)
        return _Spool(spool, sha)

    # ------------------------------------------------------------------ download
    def fetch(self, caller: Caller, path: str, *, link: bool = False) -> Fetch:
        """How ``caller`` gets a file's bytes: a presigned GET (AWS: when asked for a
        link, or when the file is larger than a Lambda answer carries), an embedded
        link's token (when asked), or neither (memvault sends the bytes)."""
        found = self.attachments.get_for_download(caller, path)
        now = self.clock()
        if self.uploads.direct and (link or found.size > self.redirect_bytes):
            inline = files.inline_safe(found.content_type)
            presigned = self.uploads.download_link(
                caller.account_id,
                found.sha256,
                disposition=disposition(found.path, inline),
                content_type=found.content_type,
                seconds=LINK_SECONDS,
                now=now,
            )
            return Fetch(found, link=presigned)
        if link:
            token = J.sign_token(
                self.signing_key(), DOWNLOAD, caller.account_id, found.path, now + LINK_SECONDS
            )
            return Fetch(found, token=token)
        return Fetch(found)

    def open_by_token(self, path: str, token: str) -> tuple[StoredFile, IO[bytes]]:
        """Embedded: a download link's file and its bytes (no Authorization)."""
        norm, _kind = files.normalize_any(path)
        check = J.check_token(self.signing_key(), DOWNLOAD, norm, token, now=self.clock())
        if check is None:
            raise Unauthenticated("this link is not valid", code="invalid_token")
        if check.expired:
            raise Unauthenticated("this link has expired; ask for a new one", code="token_expired")
        found = self.attachments.store.get_file(check.account_id, norm)
        if found is None:
            raise NotFound(f"no file at {norm!r}", code="file_not_found")
        return found, self.attachments.open_bytes(check.account_id, found)

    def open(self, caller: Caller, found: StoredFile) -> IO[bytes]:
        return self.attachments.open_bytes(caller.account_id, found)


class _Spool:
    def __init__(self, fh: IO[bytes], sha: str) -> None:
        self.fh = fh
        self.sha = sha

    def __enter__(self) -> tuple[IO[bytes], str]:
        return self.fh, self.sha

    def __exit__(self, *exc: object) -> None:
        self.fh.close()


def _too_long(upload: Upload) -> TooLarge:
    return TooLarge(
        f"upload refused, nothing was stored: the body is longer than the {upload.bytes}"
        " bytes declared",
        code="upload_too_large",
        limit=upload.bytes,
    )


def disposition(path: str, inline: bool) -> str:
    """A Content-Disposition naming the file (ASCII fallback and RFC 5987 UTF-8)."""
    name = path.rsplit("/", 1)[-1]
    ascii_name = name.encode("ascii", "replace").decode().replace('"', "_").replace("?", "_")
    quoted = urllib.parse.quote(name, safe="")
    kind = "inline" if inline else "attachment"
    return f"{kind}; filename=\"{ascii_name}\"; filename*=UTF-8''{quoted}"
