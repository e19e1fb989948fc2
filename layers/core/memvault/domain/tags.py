"""Tags compare case-insensitively: one fold for what stores keep and what filters ask.

A tag filter ``a`` matches a note tagged ``a`` or ``a/b`` (nested tags): a store either
tests the prefix itself (``key == a or key.startswith(a + "/")``) or keeps every
ancestor of each tag (``ancestor_keys``) and tests membership.
"""

from __future__ import annotations

from collections.abc import Iterable

from memvault.domain import paths


def tag_key(tag: str) -> str:
    """A tag's comparison form: folded like paths (``paths.fold``), without a leading
    ``#`` (a filter may be written ``#tag``; stored tags never start with one)."""
    return paths.fold(tag.lstrip("#"))


def distinct_tags(tags: Iterable[str]) -> dict[str, str]:
    """tag key -> the first spelling of each tag, in order (one per case-insensitive tag)."""
    seen: dict[str, str] = {}
    for tag in tags:
        seen.setdefault(tag_key(tag), tag)
    return seen


def ancestor_keys(tags: Iterable[str]) -> list[str]:
    """Each tag's key and its ancestors' (``A/b/C`` -> ``a``, ``a/b``, ``a/b/c``), once each."""
    out: dict[str, None] = {}
    for key in distinct_tags(tags):
        parts = key.split("/")
        for depth in range(1, len(parts) + 1):
            out["/".join(parts[:depth])] = None
    return list(out)
