"""The vault's files that are not notes: attachments and ``.obsidian/`` configuration.

Every surface goes through here (``/v1/files``, the import and export, the memory
tools): paths are checked (``domain.attachments``), writes charge the ``writes`` budget,
the size cap, file limit and byte quota are enforced by the store's commit (ADR 0043),
and the notes that link to an attachment are found by the link graph, with the rules of
``domain.links``. Nothing here ever hands a file's bytes to a model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from memvault.domain import attachments as files
from memvault.domain import paths
from memvault.domain.attachments import DeleteFile, FileKind, PutFile, StoredFile
from memvault.domain.budgets import Bucket
from memvault.domain.models import Limits, NoteSummary
from memvault.errors import InvalidInput, NotFound, PermissionDenied
from memvault.ports import (
    AccountStore,
    AttachmentStore,
    FileCommit,
    LinkedNotes,
    OrganisationStore,
)
from memvault.services.budgets import BudgetGuard
from memvault.services.context import Caller
from memvault.services.links import LinkGraph

MAX_LIST = 500
# An orphaned blob (its file overwritten or deleted) is dropped once no commit staged it
# for this long: a writer that staged the same bytes a moment ago may be about to commit.
ORPHAN_GRACE_SECONDS = 3600.0


@dataclass(frozen=True, slots=True)
class FilePage:
    files: list[StoredFile]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class FileOutcome:
    file: StoredFile
    created: bool
    changed: bool


class AttachmentService:
    def __init__(
        self,
        store: AttachmentStore,
        notes: LinkedNotes,
        accounts: AccountStore,
        links: LinkGraph,
        budgets: BudgetGuard,
        clock: Callable[[], float],
        orgs: OrganisationStore | None = None,
    ) -> None:
        self.orgs = orgs  # whose blobs the retention sweep looks through
        self.store = store
        self.notes = notes
        self.accounts = accounts
        self.links = links
        self.budgets = budgets
        self.clock = clock

    # ------------------------------------------------------------------ reads
    def limits(self, account_id: str) -> Limits:
        account = self.accounts.get_account(account_id)
        return account.limits if account else Limits()

    def get(self, caller: Caller, path: str) -> StoredFile:
        norm, _kind = files.normalize_any(path)
        found = self.store.get_file(caller.account_id, norm)
        if found is None:
            raise NotFound(f"no file at {norm!r}", code="file_not_found")
        return found

    def download(self, caller: Caller, path: str) -> tuple[StoredFile, bytes]:
        found = self.get_for_download(caller, path)
        return found, self.store.read_blob(caller.account_id, found.sha256)

    def get_for_download(self, caller: Caller, path: str) -> StoredFile:
        """The file whose bytes ``caller`` is about to fetch (never a model)."""
        if caller.is_model:
            raise PermissionDenied(
                "a model may not read a file's bytes; memory_read describes it",
                code="file_bytes_for_people",
            )
        return self.get(caller, path)

    def open_bytes(self, account_id: str, found: StoredFile) -> IO[bytes]:
        """The file's bytes as a stream (a large download, not read whole)."""
        return self.store.open_blob(account_id, found.sha256)

    def list_files(
        self,
        caller: Caller,
        *,
        prefix: str = "",
        config: bool = False,
        cursor: str | None = None,
        limit: int = 100,
    ) -> FilePage:
        if not 1 <= limit <= MAX_LIST:
            raise InvalidInput(f"limit must be between 1 and {MAX_LIST}", code="invalid_limit")
        if cursor is not None and len(cursor) > 2 * paths.MAX_PATH_BYTES:
            raise InvalidInput("the cursor is too long", code="invalid_cursor")
        kinds: tuple[FileKind, ...] = ("attachment", "config") if config else ("attachment",)
        found = self.store.list_files(
            caller.account_id, prefix=prefix, kinds=kinds, after=cursor, limit=limit + 1
        )
        more = len(found) > limit
        page = found[:limit]
        return FilePage(page, page[-1].path if more and page else None)

    def linked_from(self, caller: Caller, path: str) -> list[str]:
        """The live notes whose links or embeds resolve to the attachment at ``path``."""
        found = self.get(caller, path)
        if found.kind != "attachment":
            return []
        return sorted(self.links.sources(caller.account_id, [found.path])[found.path])

    def backlinks(self, caller: Caller, path: str) -> list[NoteSummary]:
        return self.notes.get_summaries(caller.account_id, self.linked_from(caller, path))

    # ------------------------------------------------------------------ writes
    def admit(self, caller: Caller, path: str, size: int) -> tuple[str, FileKind]:
        """What every write of a file checks before its bytes are kept: who writes, the
        path's rules, the size cap (the file limit and byte quota: at the commit)."""
        if caller.is_model:
            raise PermissionDenied("a model may not write files", code="file_writes_for_people")
        norm, kind = files.normalize_any(path)
        files.check_file_size(norm, size, self.limits(caller.account_id))
        return norm, kind

    def check_room(self, caller: Caller, path: str, size: int) -> None:
        """The file limit and byte quota as they stand, for a file about to be sent (a
        large upload's early refusal; the commit checks them again, authoritatively)."""
        account = self.accounts.get_account(caller.account_id)
        if account is None:
            return
        current = self.store.get_file(caller.account_id, path)
        usage = self.store.file_usage(caller.account_id)
        files.check_file_quota(
            files_before=usage.files,
            files_after=usage.files + (0 if current else 1),
            bytes_before=account.total_bytes,
            bytes_after=account.total_bytes + size - (current.size if current else 0),
            limits=account.limits,
        )

    def put(self, caller: Caller, path: str, data: bytes) -> FileOutcome:
        norm, kind = self.admit(caller, path, len(data))
        return self._put(caller, norm, kind, len(data), files.sha256_bytes(data), data)

    def put_staged(
        self, caller: Caller, path: str, source: IO[bytes], *, size: int, sha256: str
    ) -> FileOutcome:
        """``put`` of a large upload's bytes (``services.uploads``): ``source`` holds
        ``size`` bytes whose digest is ``sha256``, read once into the store."""
        norm, kind = self.admit(caller, path, size)
        return self._put(caller, norm, kind, size, sha256, source)

    def _put(
        self,
        caller: Caller,
        norm: str,
        kind: FileKind,
        size: int,
        sha: str,
        data: bytes | IO[bytes],
    ) -> FileOutcome:
        self.budgets.charge(caller.account_id, Bucket.WRITES)
        current = self.store.get_file(caller.account_id, norm)
        if current is not None and current.sha256 == sha and current.path == norm:
            return FileOutcome(current, created=False, changed=False)
        target = current.path if current is not None else norm
        staged = self.store.stage_blob(caller.account_id, sha, data)
        change = PutFile(target, kind, size, sha, files.content_type(target))
        try:
            done = self.store.commit_files(caller.account_id, [change], now=self.clock())
        except BaseException:
            if staged:
                self.store.drop_blobs(caller.account_id, [sha], older_than=float("inf"))
            raise
        stored = done.after[0]
        assert stored is not None
        self._forget_old(caller.account_id, done)
        return FileOutcome(stored, created=current is None, changed=True)

    def delete(self, caller: Caller, path: str) -> StoredFile:
        if caller.is_model:
            raise PermissionDenied("a model may not delete files", code="file_writes_for_people")
        found = self.get(caller, path)
        self.budgets.charge(caller.account_id, Bucket.WRITES)
        done = self.store.commit_files(
            caller.account_id, [DeleteFile(found.path)], now=self.clock()
        )
        self._forget_old(caller.account_id, done)
        return found

    def sweep_orphans(self, now: float) -> int:
        """The retention sweep's part: every organisation's blobs no file references,
        staged more than ``ORPHAN_GRACE_SECONDS`` before ``now`` (a crashed import's, a
        replaced or deleted file's)."""
        if self.orgs is None:
            return 0
        older_than = now - ORPHAN_GRACE_SECONDS
        return sum(
            self.store.orphan_blobs(account.id, older_than=older_than)
            for account in self.orgs.list_organisations()
        )

    def _forget_old(self, account_id: str, done: FileCommit) -> None:
        """Drop the blobs the commit left unreferenced, once past the grace period (a
        later sweep drops those still within it)."""
        old = [
            b.sha256
            for b, a in zip(done.before, done.after, strict=True)
            if b is not None and (a is None or a.sha256 != b.sha256)
        ]
        if old:
            self.store.drop_blobs(account_id, old, older_than=self.clock() - ORPHAN_GRACE_SECONDS)
