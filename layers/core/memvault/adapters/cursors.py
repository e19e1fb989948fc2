"""Opaque page cursors: the last path key of a page, base64 so clients do not parse it."""

from __future__ import annotations

import base64

from memvault.errors import InvalidInput


def encode(path_key: str) -> str:
    return base64.urlsafe_b64encode(path_key.encode("utf-8")).decode("ascii")


def decode(cursor: str) -> str:
    try:
        return base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8")
    except (ValueError, UnicodeError) as exc:
        raise InvalidInput(
            "the cursor is not one this server issued", code="invalid_cursor"
        ) from exc
