"""Vault paths: one canonical spelling per note, checked before anything is stored.

A vault path is relative, ``/``-separated and ends in ``.md`` (``projects/alpha/Plan.md``).
Every rule here exists so a path means the same thing on every platform and in every
archive, and so two paths that look alike are one path: no traversal, no backslashes or
drive letters, no control, invisible or bidirectional-control characters, NFC Unicode.
Identity is case-insensitive (``path_key``) because vaults travel to case-insensitive
file systems, where ``Plan.md`` and ``plan.md`` would collide.

Names Windows reserves (``CON.md``, ``notes/a:b.md``) are legal: vaults live on Linux
and macOS too, where they are ordinary names. ``windows_problem`` says which paths would
not extract on Windows, and export reports them (ADR 0022). Only a leading drive letter
(``c:x.md``) is refused: on Windows it names another drive, so it is a way out of the
folder an archive is unpacked in (and import refuses it for that reason).

A path that names a note to be made (a write, a move's destination, an import) must
pass every rule (``normalize_path``). A path that only looks a note up (a read, a
delete, a move's source, a folder filter) may also hold invisible characters
(``lookup_path``, ``lookup_folder``): a note stored before that rule stays reachable, so
it can be moved to a clean name; no new one can be made.
"""

from __future__ import annotations

import re
import unicodedata

from memvault.errors import InvalidPath

__all__ = [
    "MAX_PATH_BYTES",
    "fold",
    "folder",
    "invisible_character",
    "link_key",
    "lookup_folder",
    "lookup_path",
    "name_key",
    "normalize_folder",
    "normalize_path",
    "path_key",
    "stem",
    "windows_problem",
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

# Characters that show as nothing or reorder what is shown, so "plan\u200b.md" and
# "plan.md" would look alike and name two notes: every format character (Unicode
# category Cf: zero-width spaces and joiners, BOM, soft hyphen, bidirectional controls,
# tags), the line and paragraph separators (Zl, Zp), and the other default-ignorable
# code points (combining grapheme joiner, Hangul fillers, Khmer inherent vowels,
# Mongolian and other variation selectors). Written out as ranges (Unicode 15) because
# a regex scans in C; tests/unit/test_paths.py checks it against unicodedata. Emoji
# written with a joiner or a presentation selector (U+200D, U+FE0F) are refused too:
# telling a real emoji sequence from a disguise needs Unicode's emoji tables.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164"
    "\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_SEPARATORS = frozenset("\u2028\u2029")


def invisible_character(text: str) -> str | None:
    """The first invisible, bidirectional-control or line-separator character in
    ``text``, or None when it has none."""
    match = _INVISIBLE.search(text)
    return match.group() if match else None


def _invisible_rule(char: str) -> str:
    shown = f"U+{ord(char):04X} {unicodedata.name(char, '')}".rstrip()
    if char in _BIDI_CONTROLS:
        return f"contains a bidirectional control character ({shown}), which reorders the text"
    if char in _SEPARATORS:
        return f"contains a line or paragraph separator ({shown})"
    return f"contains an invisible character ({shown})"


def _check_common(raw: str, text: str, what: str, *, lookup: bool = False) -> None:
    """Rules shared by note paths and folder filters (``text`` is already NFC)."""
    if _SURROGATE.search(text):
        raise _refuse(raw, "contains an unpaired surrogate (not valid Unicode text)")
    if _CONTROL.search(text):
        raise _refuse(raw, "contains a control character")
    if not lookup and (char := invisible_character(text)) is not None:
        raise _refuse(raw, _invisible_rule(char))
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
    return _normalize_path(raw, lookup=False)


def lookup_path(raw: str) -> str:
    """``normalize_path`` for a path that looks a stored note up: invisible characters
    are let through (see the module doc), every other rule holds."""
    return _normalize_path(raw, lookup=True)


def _normalize_path(raw: str, *, lookup: bool) -> str:
    text = unicodedata.normalize("NFC", raw)
    if text == "":
        raise _refuse(raw, "is empty")
    _check_common(raw, text, "path", lookup=lookup)
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
    return _normalize_folder(raw, lookup=False)


def lookup_folder(raw: str) -> str:
    """``normalize_folder`` for a filter over stored notes (invisible characters let
    through, as ``lookup_path``)."""
    return _normalize_folder(raw, lookup=True)


def _normalize_folder(raw: str, *, lookup: bool) -> str:
    text = unicodedata.normalize("NFC", raw)
    if text in ("", "/"):
        return ""
    _check_common(raw, text, "folder", lookup=lookup)
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


# ---------------------------------------------------------------------- Windows
# What Windows cannot create (learn.microsoft.com, "Naming Files, Paths, and Namespaces"):
# device names, with any extension and trailing spaces ignored; seven characters (the
# control characters and "\\" are never in a vault path); names ending in a dot or a
# space, which it silently drops; and a name longer than 255 UTF-16 units.
_WINDOWS_DEVICES = frozenset(
    ["CON", "PRN", "AUX", "NUL"]
    + [f"{port}{n}" for port in ("COM", "LPT") for n in "0123456789\u00b9\u00b2\u00b3"]
)
_WINDOWS_CHARACTERS = re.compile(r'[<>:"|?*]')
WINDOWS_MAX_NAME_UNITS = 255


def windows_problem(path: str) -> str | None:
    """Why ``path`` (a normalised vault path) would not extract on Windows, or None."""
    for segment in path.split("/"):
        if found := _WINDOWS_CHARACTERS.search(segment):
            return f"{segment!r} holds {found.group()!r}, which Windows does not allow in a name"
        device = segment.split(".", 1)[0].rstrip(" ").upper()
        if device in _WINDOWS_DEVICES:
            return f"{segment!r} is {device}, a device name reserved by Windows"
        if segment.endswith((".", " ")):
            return f"{segment!r} ends in a dot or a space, which Windows drops"
        if len(segment.encode("utf-16-le")) // 2 > WINDOWS_MAX_NAME_UNITS:
            return f"{segment[:40]!r}... is longer than {WINDOWS_MAX_NAME_UNITS} characters"
    return None
