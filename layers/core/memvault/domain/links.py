"""How a wikilink target resolves to a note, the way Obsidian does it.

A target with a folder (``[[projects/Plan]]``) resolves by exact path only. A bare
target (``[[Plan]]``) resolves to the note at that exact path from the vault root
(``Plan.md``) if there is one, else to the one note anywhere whose file name is
``Plan.md``; when several notes share that name and none is at the root, the link is
ambiguous and stays unresolved (dangling), as it is when nothing matches.
All comparisons are case-insensitive, on NFC text.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from memvault.domain import paths


def resolve(
    target_key: str,
    has_folder: bool,
    live_by_link_key: Mapping[str, str],
    paths_by_name_key: Mapping[str, Collection[str]],
) -> str | None:
    """The path a link resolves to, or None when dangling.

    ``live_by_link_key``: link_key -> path for the live notes the caller knows about.
    ``paths_by_name_key``: name_key -> paths of every live note with that file name.
    """
    exact = live_by_link_key.get(target_key)
    if exact is not None or has_folder:
        return exact
    candidates = list(paths_by_name_key.get(target_key, ()))
    return candidates[0] if len(candidates) == 1 else None


def keys_pointing_at(path: str) -> tuple[str, str]:
    """The two target keys that can resolve to ``path``: its link key and its name key."""
    return paths.link_key(path), paths.name_key(path)
