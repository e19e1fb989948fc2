"""Large single-file uploads on the embedded backend (``ports.FileUploads``): each one a
folder ``<data dir>/uploads/<account>/<upload id>/`` holding ``meta.json`` (what
``POST /v1/files/uploads`` declared) and ``data`` (the bytes memvault's own token URL
received). Completing one moves its bytes into the content-addressed store; the folder is
removed then, on a refusal, or by the sweep once the upload has run out.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

from memvault.adapters.sqlite.jobs import is_staged_id, staged_dir, write_capped
from memvault.errors import TooLarge
from memvault.ports import BlobLink


class FileUploadFolders:
    direct = False

    def __init__(self, root: Path) -> None:
        self.root = root

    def _dir(self, account_id: str, upload_id: str) -> Path:
        return staged_dir(self.root, account_id, upload_id)

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
        too_large = TooLarge(
            f"the upload is longer than the {max_bytes} bytes declared; nothing was stored",
            code="upload_too_large",
            limit=max_bytes,
        )
        return write_capped(self._dir(account_id, upload_id) / "data", chunks, max_bytes, too_large)

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
            meta = self.meta(account_id, upload.name) if is_staged_id(upload.name) else None
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
