"""Vault paths: one canonical spelling per note, checked before anything is stored.

A vault path is relative, ``/``-separated and ends in ``.md`` (``projects/alpha/Plan.md``).
Every rule here exists so a path means the same thing on every platform and in every
archive: no traversal, no Windows-isms, no invisible characters, NFC Unicode.
Identity is case-insensitive (``path_key``) because vaults travel to case-insensitive
file systems, where ``Plan.md`` and ``plan.md`` would collide.
"""

from __future__ import annotations

import re
import unicodedata

from memvault.errors import InvalidPath

__all__ = [
    "MAX_PATH_BYTES",
    "fold",
    "folder",
    "link_key",
    "name_key",
    "normalize_folder",
    "normalize_path",
    "path_key",
    "stem",
]

MAX_PATH_BYTES = 512
NOTE_SUFFIX = ".md"

# "C:" or "c:foo" as the first segment would be a drive path once written to Windows.
_DRIVE_RE = re.compile(r"[A-Za-z]:")


def fold(text: str) -> str:
    """Case-insensitive comparison form; NFC again because casefold can denormalise."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def _refuse(raw: str, rule: str) -> InvalidPath:
    # Keep the echoed value short: paths can be arbitrary user input.
    shown = raw if len(raw) <= 80 else raw[:77] + "..."
    return InvalidPath(f"invalid path {shown!r}: {rule}", path=raw, rule=rule)


# One scan each in C: recall checks the path of every note it reads, and a character
# loop in Python made checking a path 14 µs instead of 3.4.
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _check_common(raw: str, text: str, what: str) -> None:
    """Rules shared by note paths and folder filters (``text`` is already NFC)."""
    if _SURROGATE.search(text):
        raise _refuse(raw, "contains an unpaired surrogate (not valid Unicode text)")
    if _CONTROL.search(text):
        raise _refuse(raw, "contains a control character")
    if "\\" in text:
        raise _refuse(raw, "contains a backslash; use '/' to separate folders")
    if text.startswith("/"):
        raise _refuse(raw, f"{what} must be relative to the vault root (no leading '/')")
    if len(text.encode("utf-8")) > MAX_PATH_BYTES:
        raise _refuse(raw, f"longer than {MAX_PATH_BYTES} bytes (UTF-8)")


def _check_segments(raw: str, segments: list[str]) -> None:
    for index, segment in enumerate(segments):
        if segment == "":
            raise _refuse(raw, "contains an empty segment ('//' or a trailing '/')")
        if segment in (".", ".."):
            raise _refuse(raw, f"contains a {segment!r} segment")
        if segment.startswith("."):
            # Obsidian ignores hidden files and folders (.obsidian, .trash); so does the
            # vault, so every note it holds survives export and re-import.
            raise _refuse(raw, f"segment {segment!r} is hidden (starts with '.')")
        if segment.isspace():
            raise _refuse(raw, "contains a segment made only of whitespace")
        if segment != segment.strip():
            raise _refuse(raw, f"segment {segment!r} begins or ends with whitespace")
        if index == 0 and _DRIVE_RE.match(segment):
            raise _refuse(raw, "starts with a Windows drive letter")


def normalize_path(raw: str) -> str:
    """The canonical (NFC) form of a note path, or ``InvalidPath`` naming the broken rule."""
    text = unicodedata.normalize("NFC", raw)
    if text == "":
        raise _refuse(raw, "is empty")
    _check_common(raw, text, "path")
    _check_segments(raw, text.split("/"))
    if not text.endswith(NOTE_SUFFIX):
        if text.lower().endswith(NOTE_SUFFIX):
            raise _refuse(raw, "the extension must be lowercase '.md'")
        raise _refuse(raw, "must end in '.md'")
    return text


def normalize_folder(raw: str) -> str:
    """A folder filter as a prefix ending in ``/`` ("" for the root).

    The trailing slash makes ``path.startswith(prefix)`` a correct folder test:
    ``projects/alpha/`` does not match ``projects/alphabet.md``.
    """
    text = unicodedata.normalize("NFC", raw)
    if text in ("", "/"):
        return ""
    _check_common(raw, text, "folder")
    body = text.removesuffix("/")
    _check_segments(raw, body.split("/"))
    return body + "/"


def path_key(path: str) -> str:
    """Identity of a path: two paths with one key cannot both exist (case-only clashes too)."""
    return fold(path)


def stem(path: str) -> str:
    """The file name without ``.md``."""
    return path.rsplit("/", 1)[-1].removesuffix(NOTE_SUFFIX)


def folder(path: str) -> str:
    """The containing folder with a trailing ``/``, or "" for the root."""
    head, sep, _ = path.rpartition("/")
    return head + sep


def link_key(path: str) -> str:
    """What a folder-qualified wikilink to this note folds to (``[[a/B]]`` -> ``a/b``)."""
    return fold(path).removesuffix(NOTE_SUFFIX)


def name_key(path: str) -> str:
    """What a bare wikilink to this note folds to (``[[B]]`` -> ``b``)."""
    return fold(stem(path))
