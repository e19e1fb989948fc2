"""The version precondition every backend applies to a write (If-Match semantics)."""

from __future__ import annotations

from memvault.errors import Conflict


def check_expected(path: str, expected: int | None, actual: int | None) -> None:
    """Refuse a write whose expected version is not the live one.

    ``expected``: None, no precondition; 0, the note must not exist; n, it must be at n.
    ``actual``: the live note's version, None when there is no live note.
    """
    if expected is None:
        return
    if expected == 0 and actual is not None:
        raise Conflict(
            f"a note already exists at {path!r} (version {actual}); the write expected none",
            code="version_conflict",
            current_version=actual,
        )
    if expected != 0 and expected != actual:
        found = f"version {actual}" if actual is not None else "no note"
        raise Conflict(
            f"{path!r} is at {found}, not version {expected}; re-read it and retry",
            code="version_conflict",
            current_version=actual,
        )
