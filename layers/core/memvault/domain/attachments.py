"""Attachments and vault configuration: the vault's files that are not notes. Pure.

An Obsidian vault holds more than markdown: images, PDFs, audio, canvases, and its own
configuration under ``.obsidian/``. memvault keeps both (ADR 0043):

- an **attachment** is any file outside dot-folders whose name does not end in ``.md``
  (``img/diagram.png``, ``Board.canvas``). Its path follows the note path rules (NFC,
  no hidden segment, no ``..``, at most 512 bytes) except the ``.md`` ending;
- a **configuration file** (kind ``config``) is a file under ``.obsidian/``: kept
  opaque (never parsed, searched, linked or listed unless asked) so that a round trip
  gives the user their vault configuration back.

Both are stored by content (SHA-256) with their size, content type and modification
time, counted in the vault's byte quota (with the notes) and its file limit
(``Limits.max_files``); one file may be at most ``Limits.max_file_bytes``. Recall never
sends either to a model.
"""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass
from typing import Literal

from memvault.domain import paths
from memvault.domain.models import Limits
from memvault.errors import InvalidPath, QuotaExceeded, TooLarge

FileKind = Literal["attachment", "config"]

CONFIG_FOLDER = ".obsidian/"
ATTACHMENTS_ONLY: tuple[FileKind, ...] = ("attachment",)

# What a download is served as, by extension (lower case). Anything else is
# application/octet-stream. A table, not ``mimetypes``: that reads the host's files.
CONTENT_TYPES: dict[str, str] = {
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
    "avif": "image/avif",
    "bmp": "image/bmp",
    "svg": "image/svg+xml",
    "ico": "image/x-icon",
    "tif": "image/tiff",
    "tiff": "image/tiff",
    "heic": "image/heic",
    "pdf": "application/pdf",
    "mp3": "audio/mpeg",
    "wav": "audio/wav",
    "m4a": "audio/mp4",
    "ogg": "audio/ogg",
    "oga": "audio/ogg",
    "flac": "audio/flac",
    "3gp": "audio/3gpp",
    "webm": "video/webm",
    "mp4": "video/mp4",
    "m4v": "video/mp4",
    "mov": "video/quicktime",
    "mkv": "video/x-matroska",
    "ogv": "video/ogg",
    "canvas": "application/json",
    "json": "application/json",
    "css": "text/css",
    "js": "text/javascript",
    "txt": "text/plain",
    "csv": "text/csv",
    "html": "text/html",
    "htm": "text/html",
    "xml": "application/xml",
    "zip": "application/zip",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}
OCTET_STREAM = "application/octet-stream"

# Types a browser may show inline from the API's origin without running anything the
# file carries. Every other type (SVG and HTML run scripts) is sent as a download.
_INLINE_SAFE = frozenset(
    t
    for t in CONTENT_TYPES.values()
    if t.startswith(("image/", "audio/", "video/")) and t != "image/svg+xml"
) | {"application/pdf", "text/plain", "text/csv", "application/json"}


@dataclass(frozen=True, slots=True)
class StoredFile:
    """An attachment or configuration file as stored (its bytes live apart, by sha256)."""

    path: str
    kind: FileKind
    size: int
    sha256: str
    content_type: str
    created_at: float
    updated_at: float  # the file's own modification time when imported, else its write


@dataclass(frozen=True, slots=True)
class PutFile:
    """Store ``sha256``'s bytes (staged before the commit) at ``path``."""

    path: str
    kind: FileKind
    size: int
    sha256: str
    content_type: str
    updated_at: float | None = None  # None: the commit's time


@dataclass(frozen=True, slots=True)
class DeleteFile:
    path: str


FileChange = PutFile | DeleteFile


@dataclass(frozen=True, slots=True)
class FileUsage:
    """The files an organisation holds: their count and bytes (bytes are also in the
    vault's ``total_bytes``, which the byte quota bounds)."""

    files: int = 0
    bytes: int = 0


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_note_path(raw: str) -> bool:
    """Whether ``raw`` names a note (ends in ``.md``) rather than a file."""
    return raw.endswith(paths.NOTE_SUFFIX)


def is_config_path(raw: str) -> bool:
    return unicodedata.normalize("NFC", raw).startswith(CONFIG_FOLDER)


def _refuse(raw: str, rule: str) -> InvalidPath:
    shown = raw if len(raw) <= 80 else raw[:77] + "..."
    return InvalidPath(f"invalid file path {shown!r}: {rule}", path=raw, rule=rule)


def normalize_file_path(raw: str) -> str:
    """The canonical (NFC) path of an attachment, or ``InvalidPath``: a note's rules
    (``paths.normalize_path``) but for the ``.md`` ending, which would make it a note."""
    text = unicodedata.normalize("NFC", raw)
    if text.lower().endswith(paths.NOTE_SUFFIX):
        raise _refuse(raw, "ends in '.md': that is a note (use /v1/notes)")
    # The note rules on the same path with a note ending: one rule set, one message each.
    try:
        paths.normalize_path(text + paths.NOTE_SUFFIX)
    except InvalidPath as exc:
        raise _refuse(raw, str(exc.details.get("rule", exc.message))) from exc
    if len(text.encode("utf-8")) > paths.MAX_PATH_BYTES:
        raise _refuse(raw, f"longer than {paths.MAX_PATH_BYTES} bytes (UTF-8)")
    return text


def normalize_config_path(raw: str) -> str:
    """A file under ``.obsidian/``: its rest follows the attachment rules, except that
    any name (``.md`` too, and hidden names such as ``.hotkeys``) is a file there."""
    text = unicodedata.normalize("NFC", raw)
    if not text.startswith(CONFIG_FOLDER):
        raise _refuse(raw, f"a configuration file lives under {CONFIG_FOLDER!r}")
    rest = text[len(CONFIG_FOLDER) :]
    segments = rest.split("/")
    for segment in segments:
        if segment in ("", ".", ".."):
            raise _refuse(raw, "contains an empty, '.' or '..' segment")
    if len(text.encode("utf-8")) > paths.MAX_PATH_BYTES:
        raise _refuse(raw, f"longer than {paths.MAX_PATH_BYTES} bytes (UTF-8)")
    # The rest of the rules (no control or invisible characters, no backslash) on the
    # path with its dots taken off each segment, so hidden names are let through.
    probe = "/".join(s.lstrip(".") or "x" for s in segments)
    try:
        paths.normalize_path("c/" + probe + paths.NOTE_SUFFIX)
    except InvalidPath as exc:
        raise _refuse(raw, str(exc.details.get("rule", exc.message))) from exc
    return text


def normalize_any(raw: str) -> tuple[str, FileKind]:
    """An attachment or configuration path with its kind."""
    if is_config_path(raw):
        return normalize_config_path(raw), "config"
    return normalize_file_path(raw), "attachment"


def content_type(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    _, dot, extension = name.rpartition(".")
    return CONTENT_TYPES.get(extension.lower(), OCTET_STREAM) if dot else OCTET_STREAM


def inline_safe(media_type: str) -> bool:
    """Whether a download of this type may be shown inline (never SVG or HTML)."""
    return media_type in _INLINE_SAFE


def kind_label(media_type: str) -> str:
    """A word for what a file is, for the memory tools: image, audio, video, PDF, ..."""
    if media_type == "application/pdf":
        return "PDF document"
    if media_type == "application/json":
        return "JSON (an Obsidian canvas when it ends in .canvas)"
    head = media_type.split("/", 1)[0]
    return {"image": "image", "audio": "audio", "video": "video", "text": "text"}.get(
        head, "binary file"
    )


# ---------------------------------------------------------------------- limits
def check_file_size(path: str, size: int, limits: Limits) -> None:
    if size > limits.max_file_bytes:
        raise TooLarge(
            f"{path!r} is {size} bytes; a file may hold at most {limits.max_file_bytes} bytes",
            code="file_too_large",
            limit=limits.max_file_bytes,
        )


def check_file_quota(
    *,
    files_before: int,
    files_after: int,
    bytes_before: int,
    bytes_after: int,
    limits: Limits,
) -> None:
    """Refuse a change that grows the vault past its file limit or its byte quota
    (``bytes_*``: the vault's total, notes and files). A vault already past a lowered
    limit may still shrink."""
    if files_after > limits.max_files and files_after > files_before:
        raise QuotaExceeded(
            f"the vault would hold {files_after} files; its limit is {limits.max_files}",
            code="vault_file_limit",
        )
    if bytes_after > limits.max_bytes and bytes_after > bytes_before:
        raise QuotaExceeded(
            f"the vault would hold {bytes_after} bytes of notes and files; its limit is"
            f" {limits.max_bytes} bytes",
            code="vault_byte_limit",
        )
