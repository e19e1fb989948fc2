"""Large single-file uploads on the embedded backend (``ports.FileUploads``): each one a
folder ``<data dir>/uploads/<account>/<upload id>/`` holding ``meta.json`` (what
``POST /v1/files/uploads`` declared) and ``data`` (the bytes memvault's own token URL
received). Completing one moves its bytes into the content-addressed store; the folder is
removed then, on a refusal, or by the sweep once the upload has run out.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

from memvault.errors import TooLarge
from memvault.ports import BlobLink

_SAFE = re.compile(r"[A-Za-z0-9_-]{1,128}")


class FileUploadFolders:
    direct = False

    def __init__(self, root: Path) -> None:
        self.root = root

    def _dir(self, account_id: str, upload_id: str) -> Path:
        # Upload ids are ours (checked by the service); refuse anything else as a path.
        if not _SAFE.fullmatch(upload_id) or "/" in account_id or account_id in ("", ".", ".."):
            raise ValueError("not an upload id")
        return self.root / account_id / upload_id

    def begin(self, account_id: str, upload_id: str, meta: Mapping[str, object]) -> None:
        folder = self._dir(account_id, upload_id)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "meta.json").write_text(json.dumps(dict(meta)), encoding="utf-8")

    def meta(self, account_id: str, upload_id: str) -> dict[str, object] | None:
        try:
            text = (self._dir(account_id, upload_id) / "meta.json").read_text(encoding="utf-8")
        except (FileNotFoundError, ValueError):
            return None
        found: dict[str, object] = json.loads(text)
        return found

    def upload_link(
        self,
        account_id: str,
        upload_id: str,
        *,
        size: int,
        content_type: str,
        expires_at: float,
        now: float,
    ) -> BlobLink | None:
        return None

    def write(
        self, account_id: str, upload_id: str, chunks: Iterator[bytes], *, max_bytes: int
    ) -> int:
        folder = self._dir(account_id, upload_id)
        partial = folder / "data.part"
        size = 0
        try:
            with partial.open("wb") as fh:
                for chunk in chunks:
                    size += len(chunk)
                    if size > max_bytes:
                        raise TooLarge(
                            f"the upload is longer than the {max_bytes} bytes declared;"
                            " nothing was stored",
                            code="upload_too_large",
                            limit=max_bytes,
                        )
                    fh.write(chunk)
            os.replace(partial, folder / "data")
        finally:
            partial.unlink(missing_ok=True)
        return size

    def size(self, account_id: str, upload_id: str) -> int | None:
        try:
            return (self._dir(account_id, upload_id) / "data").stat().st_size
        except FileNotFoundError:
            return None

    def open(self, account_id: str, upload_id: str) -> IO[bytes] | None:
        try:
            return (self._dir(account_id, upload_id) / "data").open("rb")
        except FileNotFoundError:
            return None

    def discard(self, account_id: str, upload_id: str) -> None:
        shutil.rmtree(self._dir(account_id, upload_id), ignore_errors=True)

    def sweep(self, account_id: str, *, older_than: float) -> int:
        folder = self.root / account_id
        if "/" in account_id or not folder.is_dir():
            return 0
        dropped = 0
        for upload in folder.iterdir():
            meta = self.meta(account_id, upload.name) if _SAFE.fullmatch(upload.name) else None
            began = meta.get("created_at") if meta else None
            when = float(began) if isinstance(began, int | float) else _mtime(upload)
            if when < older_than:
                shutil.rmtree(upload, ignore_errors=True)
                dropped += 1
        return dropped

    def download_link(
        self,
        account_id: str,
        sha256: str,
        *,
        disposition: str,
        content_type: str,
        seconds: int,
        now: float,
    ) -> BlobLink | None:
        return None


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except FileNotFoundError:
        return time.time()
