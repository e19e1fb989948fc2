"""An in-memory zip archive for tests that read one (the held-out sets' wheel readers)."""

from __future__ import annotations

import io
import zipfile


def zip_of(files: dict[str, str]) -> zipfile.ZipFile:
    """A readable zip holding ``files`` (name -> text)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return zipfile.ZipFile(buf)
