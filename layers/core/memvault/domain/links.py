"""How a link target resolves to a note, the way Obsidian resolves it.

A link is stored as a *key*: the target as written, case-folded (NFC), with a trailing
``.md`` removed, after ``stored_key`` has made folder-relative forms absolute. Keys come
in two modes:

- **exact** (the key starts with ``/``): ``[[/Folder/Note]]``, and ``[[./b]]`` /
  ``[[../Home]]`` made absolute against the linking note's folder. Such a link resolves
  to the note at exactly that vault path, or nowhere. A ``..`` that climbs above the vault
  root makes the link dangling (Obsidian shows it unresolved too).
- **suffix** (every other key): ``[[Note]]``, ``[[Folder/Note]]``, ``[[b/Note]]``.

The rules, in order (``resolve``):

1. an exact key resolves to the note at that path, else to nothing;
2. a suffix key equal to a note's whole vault path resolves to that note
   (``[[Note]]`` -> ``Note.md`` at the root; ``[[a/b]]`` -> ``a/b.md``);
3. otherwise every note whose path *ends with* the key at a folder boundary is a
   candidate (``[[b/Note]]`` matches ``x/b/Note.md`` and ``y/z/b/Note.md``, not
   ``xb/Note.md``); ties are broken by
   a. a candidate in the linking note's own folder,
   b. then the shortest path (fewest characters),
   c. then alphabetical order (case-folded, then as written);
4. no candidate: the link is dangling.

Attachments (``domain.attachments``: images, PDFs, canvases, any file that is not a
note) resolve by the same rules, among the vault's attachments: a key is looked up among
attachments first (``![[diagram.png]]``, ``[[doc.pdf]]``, ``![x](img/a.png)`` name the
file with its extension), and only when no attachment is a candidate among notes (so
``[[diagram.png]]`` reaches a note ``diagram.png.md`` only when there is no such file).
A key with no extension never names an attachment (``[[diagram]]`` is a note).

This is the behaviour of Obsidian's ``getFirstLinkpathDest`` for notes and files. The same key and
rules serve wikilinks, embeds (``![[...]]``), markdown links to notes (``[x](Note.md)``)
and wikilinks in frontmatter property values; headings, block references (``#^id``) and
aliases are not part of the key.

All comparisons are case-insensitive on NFC text (``domain.paths.fold``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from memvault.domain import paths

EXACT = "/"


def stored_key(target: str, source_path: str) -> str:
    """The key a link with this written ``target`` is stored under, for a link written in
    the note at ``source_path``; "" when the target names no note (empty)."""
    text = paths.fold(target.strip())
    if text.endswith(paths.NOTE_SUFFIX):
        text = text[: -len(paths.NOTE_SUFFIX)]
    text = text.strip()
    if not text:
        return ""
    if text.startswith(("./", "../")) or text in (".", ".."):
        return EXACT + _absolute(paths.fold(paths.folder(source_path)), text)
    if text.startswith("/"):
        return EXACT + text.lstrip("/")
    return text


def _absolute(base_folder: str, relative: str) -> str:
    """``relative`` (./x, ../x) against ``base_folder`` ("" or "a/b/"); "..", ".." above
    the root yields a key no note can have (it starts with "../")."""
    parts = [p for p in base_folder.split("/") if p]
    climbed_out = False
    for segment in relative.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts:
                parts.pop()
            else:
                climbed_out = True
            continue
        parts.append(segment)
    joined = "/".join(parts)
    return "../" + joined if climbed_out else joined


def is_exact(key: str) -> bool:
    return key.startswith(EXACT)


def name_of(key: str) -> str:
    """The file-name part of a key (what the name index is looked up by)."""
    return key.rsplit("/", 1)[-1]


def candidates(
    key: str,
    live_by_link_key: Mapping[str, str],
    paths_by_name_key: Mapping[str, Collection[str]],
) -> list[str]:
    """Every live note a link with this key could resolve to, from some linking note.

    ``live_by_link_key``: ``paths.link_key(path)`` -> path, for the live notes the caller
    looked up (at least the key itself, without a leading ``/``).
    ``paths_by_name_key``: ``paths.name_key(path)`` -> paths of every live note with that
    file name (at least ``name_of(key)``).
    """
    if is_exact(key):
        exact = live_by_link_key.get(key[len(EXACT) :])
        return [exact] if exact is not None else []
    exact = live_by_link_key.get(key)
    if exact is not None:
        return [exact]
    suffix = "/" + key
    return [
        path
        for path in paths_by_name_key.get(name_of(key), ())
        if paths.link_key(path).endswith(suffix)
    ]


def may_name_file(key: str) -> bool:
    """Whether a link key can name an attachment: its file name has an extension."""
    name = name_of(key)
    return "." in name.strip(".")


_NO_FILES: Mapping[str, str] = {}
_NO_FILE_NAMES: Mapping[str, Collection[str]] = {}


def resolve(
    key: str,
    source_path: str,
    live_by_link_key: Mapping[str, str],
    paths_by_name_key: Mapping[str, Collection[str]],
    files_by_link_key: Mapping[str, str] = _NO_FILES,
    files_by_name_key: Mapping[str, Collection[str]] = _NO_FILE_NAMES,
) -> str | None:
    """The path a link stored under ``key`` in the note at ``source_path`` resolves to,
    or None when it is dangling (the module doc lists the rules). The ``files_*`` maps
    describe the vault's attachments as the first two describe its notes."""
    found: list[str] = []
    if (files_by_link_key or files_by_name_key) and may_name_file(key):
        found = candidates(key, files_by_link_key, files_by_name_key)
    if not found:
        found = candidates(key, live_by_link_key, paths_by_name_key)
    if len(found) <= 1:
        return found[0] if found else None
    own_folder = paths.fold(paths.folder(source_path))
    return min(
        found,
        key=lambda p: (paths.fold(paths.folder(p)) != own_folder, len(p), paths.fold(p), p),
    )


def keys_pointing_at(path: str) -> tuple[str, ...]:
    """Every key that can resolve to ``path``: its exact key and each suffix of its link
    key at a folder boundary (``a/b/c.md`` -> ``/a/b/c``, ``a/b/c``, ``b/c``, ``c``)."""
    key = paths.link_key(path)
    segments = key.split("/")
    suffixes = ["/".join(segments[i:]) for i in range(len(segments))]
    return (EXACT + key, *suffixes)


def link_text(
    target_path: str,
    live_by_link_key: Mapping[str, str],
    paths_by_name_key: Mapping[str, Collection[str]],
) -> str:
    """The shortest wikilink target that names ``target_path`` unambiguously, in the vault
    described by the two maps (which must already hold ``target_path``): the file name
    if no other note shares it, else the shortest folder-qualified suffix that only it
    has, else its whole path (which the exact-path rule always gives it).

    Unambiguous, not merely "resolves today": a text that wins only by a tie-break would
    change target when a note appears in the linking note's folder, so the answer does
    not depend on which note links."""
    key = paths.link_key(target_path)
    written = target_path.removesuffix(paths.NOTE_SUFFIX)  # an attachment keeps its own
    segments = written.split("/")
    for start in range(len(segments) - 1, 0, -1):
        text = "/".join(segments[start:])
        found = candidates(stored_key(text, ""), live_by_link_key, paths_by_name_key)
        if [paths.link_key(p) for p in found] == [key]:
            return text
    return written
