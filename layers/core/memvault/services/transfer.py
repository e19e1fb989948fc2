"""Obsidian vault import and export as zip archives.

Import is all or nothing: the whole archive is read and validated first (paths,
sizes, encoding, duplicates, capacity), then every change is handed to storage in one
atomic commit. An import adds and updates, never deletes; a note whose markdown is
unchanged is not touched, so exporting and re-importing creates no versions.
"""

from __future__ import annotations

import calendar
import logging
import lzma
import stat
import struct
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Literal

from memvault.domain import attachments as file_rules
from memvault.domain import paths
from memvault.domain.attachments import FileChange, PutFile
from memvault.domain.budgets import Bucket
from memvault.domain.models import MAX_NOTE_BYTES, Account, Limits, NoteChange
from memvault.errors import InvalidInput, InvalidPath, QuotaExceeded, TooLarge, Unprocessable
from memvault.ports import CommitResult, NoteKey
from memvault.services.attachments import AttachmentService
from memvault.services.context import Caller
from memvault.services.parsing import BulkParser
from memvault.services.vault import VaultService, sha256_text

log = logging.getLogger("memvault.transfer")

# Called with (done, total) as an export makes progress.
Progress = Callable[[int, int], None]

ImportPhase = Literal["parsing", "committing", "indexing"]
# What an import does with the archive's .obsidian/ folder: keep it as the vault's
# configuration (opaque, exported back), or skip it as before.
ObsidianConfig = Literal["keep", "skip"]
EntryKind = Literal["note", "attachment", "config"]
# Called with (phase, done, total) as an import makes progress, on the importing thread:
# it must be cheap and do no I/O (hand the figures on; do not send them from here).
# "parsing" counts the archive's notes, read and parsed (0 of n first; n of n once every
# note is parsed); "committing" and "indexing" count the changes, 0 of n before the step
# and n of n after it (each is one step: the commit is all or nothing). A callback that
# raises before the commit refuses the import (nothing changes); after the commit, the
# import stands and the exception is logged.
ImportProgress = Callable[[ImportPhase, int, int], None]

# At most this many parsing reports per import (and its first and last), whatever its size.
PARSING_REPORTS = 100

MAX_SKIPPED_LISTED = 1000
# An entry name is echoed in refusals and listed back when skipped: twice the longest
# note path (512 bytes) leaves room for a vault's own folder around it.
MAX_ENTRY_NAME_BYTES = 1024

# macOS Finder's "Compress" adds resource forks under this folder (``._Note.md``, binary):
# they are metadata, never notes, and must not make the archive look like two folders.
_MACOS_METADATA = "__MACOSX/"

# The latest timestamp a zip entry can carry (DOS dates end in 2107).
_ZIP_MAX_EPOCH = 4354819198.0
_ZIP_MIN_EPOCH = 315532800.0  # 1980-01-01, the earliest
# Info-ZIP's "extended timestamp" extra field: the modification time in UTC seconds
# (DOS times are local and to 2 s). Export writes it; import prefers it when present.
_EXTENDED_TIMESTAMP = 0x5455
_UINT32_MAX = 2**32 - 1

# Below this many unpacked bytes an archive is never refused for how well it compressed:
# every entry is capped at the note limit and the total at the vault's quota while it is
# read, so a repetitive note (1 MB of one character packs 1000-fold) is just a note.
RATIO_CHECK_FLOOR_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class ImportLimits:
    max_archive_bytes: int = 1024 * 1024 * 1024
    max_uncompressed_bytes: int = 2 * 1024 * 1024 * 1024
    max_ratio: float = 200.0
    max_entries: int = 200_000


@dataclass
class ImportReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    skipped_files: list[str] = field(default_factory=list)
    # Attachments and .obsidian/ configuration files (ADR 0043), counted apart.
    files_created: int = 0
    files_updated: int = 0
    files_unchanged: int = 0
    config_files: int = 0  # of those, how many are .obsidian/ configuration

    def skip(self, name: str) -> None:
        self.skipped += 1
        if len(self.skipped_files) < MAX_SKIPPED_LISTED:
            self.skipped_files.append(name)


@dataclass(frozen=True, slots=True)
class WindowsUnsafe:
    """An exported note Windows cannot extract under its name, and why
    (``paths.windows_problem``)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class ExportReport:
    notes: int
    windows_unsafe: list[WindowsUnsafe]
    files: int = 0  # attachments and .obsidian/ configuration files


@dataclass(frozen=True, slots=True)
class _Entry:
    info: zipfile.ZipInfo
    path: str
    mtime: float | None  # the file's own modification time (UTC), when readable
    kind: EntryKind = "note"


def _entry_mtime(info: zipfile.ZipInfo) -> float | None:
    """The entry's modification time: the extended-timestamp field's UTC seconds when the
    archive has one, else its DOS date read as UTC (as memvault's export writes it)."""
    extra, pos = info.extra, 0
    while pos + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, pos)
        body = extra[pos + 4 : pos + 4 + size]
        if tag == _EXTENDED_TIMESTAMP and len(body) >= 5 and body[0] & 1:
            return float(struct.unpack_from("<I", body, 1)[0])
        pos += 4 + size
    try:
        return float(calendar.timegm((*info.date_time, 0, 0, 0)))
    except (OverflowError, ValueError):
        return None


def _extended_timestamp(epoch: float) -> bytes:
    seconds = min(max(int(epoch), 0), _UINT32_MAX)
    return struct.pack("<HHBI", _EXTENDED_TIMESTAMP, 5, 1, seconds)


def _refuse(message: str, code: str, **details: object) -> Unprocessable:
    return Unprocessable(f"import refused, nothing was changed: {message}", code=code, **details)


def _is_macos_metadata(name: str) -> bool:
    return name.startswith(_MACOS_METADATA)


def _vault_root(names: list[str]) -> str:
    """A zipped vault folder ("MyVault/.obsidian/...") is imported from inside it.

    Only a top folder that holds Obsidian's `.obsidian/` config (a folder entry or a
    file that is not a note) is taken as the vault root: stripping any common folder
    would move notes of a vault that happens to keep them all in one folder, and then
    export → import would no longer round-trip. An export holds only notes, so a note
    that lives under a `.obsidian/` folder does not make its top folder a vault root.
    """
    names = [n for n in names if n and not _is_macos_metadata(n)]
    tops = {n.split("/", 1)[0] for n in names}
    if len(tops) == 1:
        top = next(iter(tops))
        config = f"{top}/.obsidian/"
        if any(n.startswith(config) and not n.endswith(".md") for n in names):
            return top + "/"
    return ""


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    mode = info.external_attr >> 16
    return info.create_system == 3 and stat.S_ISLNK(mode)


def _unsafe_name(name: str) -> str | None:
    """Why an entry name points outside the vault, or None when it is inside."""
    if name.startswith(("/", "\\")):
        return "an absolute path"
    if "\\" in name:
        return "a backslash path"
    if len(name) >= 2 and name[1] == ":" and name[0].isalpha():
        return "a drive-letter path"
    if any(seg in ("..", ".") for seg in name.split("/")):
        return "a path with '..' or '.'"
    if "\x00" in name:
        return "a NUL byte"
    return None


def _hidden(path: str) -> bool:
    # Obsidian ignores hidden files and folders (.obsidian config, .trash, .git), and
    # vault paths refuse them: the import skips them rather than refusing the archive.
    return any(seg.startswith(".") for seg in path.split("/"))


class TransferService:
    def __init__(
        self,
        vault: VaultService,
        limits: ImportLimits | None = None,
        *,
        attachments: AttachmentService | None = None,
    ) -> None:
        self.vault = vault
        self.limits = limits or ImportLimits()
        # Without it (a service built for notes only) attachments are skipped, as before.
        self.attachments = attachments

    # ------------------------------------------------------------------ import
    def import_zip(
        self,
        caller: Caller,
        archive: IO[bytes],
        *,
        progress: ImportProgress | None = None,
        obsidian_config: ObsidianConfig = "keep",
    ) -> ImportReport:
        size = archive.seek(0, 2)
        archive.seek(0)
        if size > self.limits.max_archive_bytes:
            raise TooLarge(
                f"import refused, nothing was changed: the archive is {size} bytes; an import"
                f" may be at most {self.limits.max_archive_bytes} bytes",
                code="archive_too_large",
                limit=self.limits.max_archive_bytes,
            )
        try:
            zf = zipfile.ZipFile(archive)
        except UnicodeDecodeError as exc:
            # An entry flagged as UTF-8 whose name is not.
            raise _refuse("an entry name is not valid UTF-8", "invalid_entry_name") from exc
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise _refuse("the file is not a zip archive", "not_a_zip") from exc
        with zf:
            report = ImportReport()
            entries = self._validate(zf, size, report, obsidian_config)
            self.vault.budgets.charge(caller.account_id, Bucket.WRITES)
            notes = [e for e in entries if e.kind == "note"]
            others = [e for e in entries if e.kind != "note"]
            changes = self._plan(caller, zf, notes, report, progress, others)
            # Attachments' bytes go to storage under their digest before any commit.
            file_changes, staged = self._stage_files(caller, zf, others, report)
        try:
            if changes or file_changes:
                self._commit(caller, changes, progress, file_changes)
            elif progress:
                progress("committing", 0, 0)
                progress("indexing", 0, 0)
        except BaseException:
            self._drop_staged(caller, staged)  # nothing references them
            raise
        return report

    def _drop_staged(self, caller: Caller, staged: list[str]) -> None:
        """A failed import's blobs, the ones it stored first: no file references them."""
        if staged and self.attachments is not None:
            try:
                self.attachments.store.drop_blobs(
                    caller.account_id, staged, older_than=float("inf")
                )
            except Exception:
                log.warning("could not drop a failed import's staged files", exc_info=True)

    def _stage_files(
        self, caller: Caller, zf: zipfile.ZipFile, entries: list[_Entry], report: ImportReport
    ) -> tuple[list[FileChange], list[str]]:
        """Each new or changed file's bytes stored by digest; the changes to commit and
        the digests this import stored first (what a failure drops again)."""
        if not entries or self.attachments is None:
            return [], []
        store = self.attachments.store
        existing = store.file_keys(caller.account_id)
        limits = self.attachments.limits(caller.account_id)
        now = self.vault.clock()
        changes: list[FileChange] = []
        staged: list[str] = []
        try:
            for entry in entries:
                data = self._read_bytes(zf, entry, limits.max_file_bytes)
                sha = file_rules.sha256_bytes(data)
                current = existing.get(paths.path_key(entry.path))
                if entry.kind == "config":
                    report.config_files += 1
                if current is not None and current.sha256 == sha:
                    report.files_unchanged += 1
                    continue
                if current is None:
                    report.files_created += 1
                else:
                    report.files_updated += 1
                target = current.path if current is not None else entry.path
                if store.stage_blob(caller.account_id, sha, data):
                    staged.append(sha)
                changes.append(
                    PutFile(
                        target,
                        "config" if entry.kind == "config" else "attachment",
                        len(data),
                        sha,
                        file_rules.content_type(target),
                        _content_time(entry, now),
                    )
                )
        except BaseException:
            self._drop_staged(caller, staged)
            raise
        return changes, staged

    def _read_bytes(self, zf: zipfile.ZipFile, entry: _Entry, cap: int) -> bytes:
        return _read_capped(zf, entry, cap, "a file may hold at most that", "file_too_large")

    def _commit(
        self,
        caller: Caller,
        changes: Sequence[NoteChange],
        progress: ImportProgress | None,
        file_changes: Sequence[FileChange] = (),
    ) -> None:
        """``VaultService.commit``'s two steps (storage, then search and links), with
        progress reported between them. The files (attachments, .obsidian/) commit with
        the notes, all or nothing (``AttachmentStore.commit_files_with``, ADR 0043)."""
        vault, total, account = self.vault, len(changes), caller.account_id
        if progress:
            progress("committing", 0, total)
        # Crash safety: the notes are queued for indexing before they are committed, so a
        # process that dies between the commit and the index leaves them in the outbox,
        # which the next start drains (``memvault serve``; the ops schedule on AWS).
        # Queued notes that were never committed are harmless: a drain indexes the vault
        # as it is. The queue entries go once the import is indexed.
        queued = [change.path for change in changes]
        if queued:
            vault.store.queue_reindex(account, queued)

        try:
            result: CommitResult | None
            if file_changes and self.attachments is not None:
                _files, result = self.attachments.store.commit_import(
                    account, file_changes, changes, now=vault.clock()
                )
            else:
                result = vault.store.commit(account, changes, now=vault.clock())
        except BaseException:
            if queued:
                vault.store.unqueue_reindex(account, queued)
            raise
        if total:  # (with files only, each phase is its one 0 of 0 report)
            _after_commit(progress, "committing", total, total)
        _after_commit(progress, "indexing", 0, total)
        if result is not None and vault.indexing.after_commit(account, changes, result):
            vault.store.unqueue_reindex(account, queued)
        if total:
            _after_commit(progress, "indexing", total, total)

    def _validate(
        self,
        zf: zipfile.ZipFile,
        archive_size: int,
        report: ImportReport,
        obsidian_config: ObsidianConfig = "keep",
    ) -> list[_Entry]:
        infos = zf.infolist()
        if len(infos) > self.limits.max_entries:
            raise _refuse(
                f"the archive has {len(infos)} entries; at most {self.limits.max_entries}",
                "too_many_entries",
            )
        root = _vault_root([i.filename for i in infos])
        entries: list[_Entry] = []
        seen: dict[str, str] = {}
        declared_total = 0
        for info in infos:
            name = info.filename
            if len(name.encode("utf-8")) > MAX_ENTRY_NAME_BYTES:
                raise InvalidInput(
                    f"import refused, nothing was changed: an entry name ({name[:60]!r}...) is"
                    f" {len(name.encode('utf-8'))} bytes; at most {MAX_ENTRY_NAME_BYTES} bytes",
                    code="invalid_input",
                )
            why = _unsafe_name(name)
            if why:
                raise _refuse(f"{name!r} is {why}, outside the vault", "unsafe_path", entry=name)
            if _is_symlink(info):
                raise _refuse(f"{name!r} is a symbolic link", "symlink_entry", entry=name)
            if info.flag_bits & 0x1:
                raise _refuse(f"{name!r} is encrypted", "encrypted_entry", entry=name)
            if info.is_dir():
                continue
            if _is_macos_metadata(name):
                report.skip(name)
                continue
            rel = name[len(root) :] if root and name.startswith(root) else name
            kind = self._entry_kind(rel, obsidian_config)
            if kind is None:
                report.skip(name)
                continue
            try:
                if kind == "note":
                    path = paths.normalize_path(rel)
                elif kind == "config":
                    path = file_rules.normalize_config_path(rel)
                else:
                    path = file_rules.normalize_file_path(rel)
            except InvalidPath as exc:
                raise _refuse(f"{name!r}: {exc.message}", "invalid_path", entry=name) from exc
            if kind == "note" and info.file_size > MAX_NOTE_BYTES:
                raise TooLarge(
                    f"import refused, nothing was changed: {name!r} is {info.file_size} bytes;"
                    f" a note may hold at most {MAX_NOTE_BYTES} bytes (1 MB)",
                    code="note_too_large",
                    entry=name,
                )
            key = paths.path_key(path)
            if key in seen:
                raise _refuse(
                    f"{seen[key]!r} and {name!r} are the same note path (paths are compared"
                    " after normalisation, ignoring case)",
                    "duplicate_path",
                    entry=name,
                )
            seen[key] = name
            declared_total += info.file_size
            entries.append(_Entry(info=info, path=path, mtime=_entry_mtime(info), kind=kind))
        if declared_total > self.limits.max_uncompressed_bytes:
            raise _refuse(
                f"the notes unpack to {declared_total} bytes; at most"
                f" {self.limits.max_uncompressed_bytes}",
                "archive_too_large_unpacked",
            )
        if (
            archive_size
            and declared_total > RATIO_CHECK_FLOOR_BYTES
            and declared_total / archive_size > self.limits.max_ratio
        ):
            raise _refuse(
                f"the archive expands {declared_total / archive_size:.0f}-fold; at most"
                f" {self.limits.max_ratio:.0f}-fold (a zip bomb?)",
                "zip_bomb",
            )
        return entries

    def _entry_kind(self, rel: str, obsidian_config: ObsidianConfig) -> EntryKind | None:
        """What an archive entry (its path in the vault) is, or None to skip it: Obsidian
        ignores dot-folders, and so does the import, but for .obsidian/ (kept unless
        skipped). Without an attachment service, only notes are imported."""
        if rel.startswith(file_rules.CONFIG_FOLDER):
            keep = obsidian_config == "keep" and self.attachments is not None
            return "config" if keep else None
        if _hidden(rel):
            return None
        if rel.endswith(paths.NOTE_SUFFIX):
            return "note"
        if rel.lower().endswith(paths.NOTE_SUFFIX) or self.attachments is None:
            return None  # "Note.MD": not a note by the vault's rules, nor a file
        return "attachment"

    def _read(self, zf: zipfile.ZipFile, entry: _Entry) -> str:
        data = _read_capped(
            zf, entry, MAX_NOTE_BYTES, "a note may hold at most that (1 MB)", "note_too_large"
        )
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _refuse(
                f"{entry.info.filename!r} is not valid UTF-8 (byte {exc.start})",
                "invalid_utf8",
                entry=entry.info.filename,
            ) from exc

    def _plan(
        self,
        caller: Caller,
        zf: zipfile.ZipFile,
        entries: list[_Entry],
        report: ImportReport,
        progress: ImportProgress | None,
        files: Sequence[_Entry] = (),
    ) -> list[NoteChange]:
        existing = self.vault.store.note_keys(caller.account_id)
        account = self.vault.store.get_account(caller.account_id)
        limits = account.limits if account else Limits()
        count = account.note_count if account else 0
        file_growth = self._check_files(caller, files, account, limits)
        total_bytes = (account.total_bytes if account else 0) + file_growth
        total = len(entries)
        every = max(1, -(-total // PARSING_REPORTS))  # rounded up
        self._check_capacity(entries, existing, account, limits, file_growth)
        now = self.vault.clock()
        if progress:
            progress("parsing", 0, total)
        # Each note to write is parsed (in worker processes for a big archive) while the
        # rest of the archive is still being read.
        with BulkParser(total) as parser:
            for done, entry in enumerate(entries, start=1):
                markdown = self._read(zf, entry)
                size = len(markdown.encode("utf-8"))
                current = existing.get(paths.path_key(entry.path))
                if current is None:
                    report.created += 1
                    count += 1
                    total_bytes += size
                    parser.add(entry.path, markdown, 0, _content_time(entry, now))
                elif current.sha256 == sha256_text(markdown):
                    report.unchanged += 1  # not even parsed: nothing about it changes
                else:
                    # Update the vault's note at its own spelling of the path, and only if
                    # it is still the version we compared against.
                    report.updated += 1
                    total_bytes += size - current.size
                    parser.add(current.path, markdown, current.version, _content_time(entry, now))
                # Reading is done at n of n, parsing not yet: the last report waits for it.
                if progress and done % every == 0 and done < total:
                    progress("parsing", done, total)
            _check_fits(account, limits, notes=count, total_bytes=total_bytes)
            changes: list[NoteChange] = list(parser.results())
        if progress:
            progress("parsing", total, total)
        return changes

    def _check_capacity(
        self,
        entries: Sequence[_Entry],
        existing: Mapping[str, NoteKey],
        account: Account | None,
        limits: Limits,
        file_growth: int = 0,
    ) -> None:
        """Refuse, before a byte is unpacked, an archive that cannot fit the vault.

        An entry never unpacks to more than its declared size (zipfile stops there, and a
        shorter or longer stream fails its CRC), so declared sizes bound what reading
        would hold: a padded archive or a flood of tiny notes is refused from its
        directory alone (the same checks run again on the bytes actually read)."""
        count = account.note_count if account else 0
        total_bytes = account.total_bytes if account else 0
        new_notes = 0
        growth = file_growth
        for entry in entries:
            current = existing.get(paths.path_key(entry.path))
            if current is None:
                new_notes += 1
                growth += entry.info.file_size
            else:
                growth += entry.info.file_size - current.size
        _check_fits(account, limits, notes=count + new_notes, total_bytes=total_bytes + growth)

    def _check_files(
        self, caller: Caller, entries: Sequence[_Entry], account: Account | None, limits: Limits
    ) -> int:
        """Refuse, from the archive's directory, files past the size cap or the file
        limit (their bytes count in the byte quota, checked with the notes'); returns how
        many bytes they add (at most their declared sizes: what reading can hold)."""
        if not entries or self.attachments is None:
            return 0
        existing = self.attachments.store.file_keys(caller.account_id)
        usage = self.attachments.store.file_usage(caller.account_id)
        new_files = growth = 0
        for entry in entries:
            if entry.info.file_size > limits.max_file_bytes:
                raise TooLarge(
                    f"import refused, nothing was changed: {entry.info.filename!r} is"
                    f" {entry.info.file_size} bytes; a file may hold at most"
                    f" {limits.max_file_bytes} bytes",
                    code="file_too_large",
                    entry=entry.info.filename,
                    limit=limits.max_file_bytes,
                )
            current = existing.get(paths.path_key(entry.path))
            new_files += current is None
            growth += entry.info.file_size - (current.size if current else 0)
        if usage.files + new_files > limits.max_files and new_files > 0:
            raise QuotaExceeded(
                f"import refused, nothing was changed: the vault would hold"
                f" {usage.files + new_files} files; its limit is {limits.max_files}",
                code="vault_file_limit",
            )
        return growth

    # ------------------------------------------------------------------ export
    def export_zip(
        self, caller: Caller, out: IO[bytes], *, progress: Progress | None = None
    ) -> int:
        """Write every live note at its path, byte-identical, to ``out``. Returns the count."""
        return self.export(caller, out, progress=progress).notes

    def export(
        self, caller: Caller, out: IO[bytes], *, progress: Progress | None = None
    ) -> ExportReport:
        """``export_zip``, also naming the entries that will not extract on Windows.

        Entries keep the notes' own paths, Windows or not (ADR 0022): renaming them would
        break the links that name them and the round trip back through import.
        """
        total = self.vault.store.get_account(caller.account_id)
        expected = total.note_count if total else 0
        written = 0
        unsafe: list[WindowsUnsafe] = []
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
            for note in self.vault.store.iter_notes(caller.account_id):
                info = zipfile.ZipInfo(note.path, date_time=_zip_time(note.updated_at))
                info.extra = _extended_timestamp(note.updated_at)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                zf.writestr(info, note.markdown.encode("utf-8"))
                written += 1
                if (why := paths.windows_problem(note.path)) is not None:
                    unsafe.append(WindowsUnsafe(note.path, why))
                if progress:
                    progress(written, max(expected, written))
            files = self._export_files(caller, zf, unsafe)
        return ExportReport(notes=written, windows_unsafe=unsafe, files=files)

    def _export_files(
        self, caller: Caller, zf: zipfile.ZipFile, unsafe: list[WindowsUnsafe]
    ) -> int:
        """Every attachment and configuration file at its path, byte for byte, with its
        time (stored already compressed formats are not deflated again)."""
        if self.attachments is None:
            return 0
        store, account = self.attachments.store, caller.account_id
        written = 0
        after: str | None = None
        while True:
            page = store.list_files(account, kinds=("attachment", "config"), after=after, limit=500)
            for found in page:
                info = zipfile.ZipInfo(found.path, date_time=_zip_time(found.updated_at))
                info.extra = _extended_timestamp(found.updated_at)
                info.compress_type = (
                    zipfile.ZIP_STORED if _packed(found.content_type) else zipfile.ZIP_DEFLATED
                )
                info.external_attr = 0o644 << 16
                zf.writestr(info, store.read_blob(account, found.sha256))
                written += 1
                if (why := paths.windows_problem(found.path)) is not None:
                    unsafe.append(WindowsUnsafe(found.path, why))
            if len(page) < 500:
                return written
            after = page[-1].path

    def windows_unsafe(self, caller: Caller) -> list[WindowsUnsafe]:
        """The live notes an export would hold that will not extract on Windows, in the
        export's order; read from the notes' keys, no markdown."""
        keys = self.vault.store.note_keys(caller.account_id)  # path key -> note
        found = [
            WindowsUnsafe(key.path, why)
            for _, key in sorted(keys.items())
            if (why := paths.windows_problem(key.path)) is not None
        ]
        if self.attachments is not None:  # then the files, as the export writes them
            stored = self.attachments.store.file_keys(caller.account_id).values()
            found += [
                WindowsUnsafe(f.path, why)
                for f in sorted(stored, key=lambda f: f.path)
                if (why := paths.windows_problem(f.path)) is not None
            ]
        return found


def _read_capped(zf: zipfile.ZipFile, entry: _Entry, cap: int, rule: str, code: str) -> bytes:
    """An entry's bytes, read at most one byte past ``cap`` (declared sizes can lie):
    a damaged entry is a ``corrupt_entry`` refusal, a larger one ``code``'s."""
    try:
        with zf.open(entry.info) as fh:
            data = fh.read(cap + 1)
    except (
        zipfile.BadZipFile,
        OSError,
        EOFError,
        RuntimeError,
        NotImplementedError,
        zlib.error,
        lzma.LZMAError,
    ) as exc:
        raise _refuse(
            f"{entry.info.filename!r} cannot be read ({exc})",
            "corrupt_entry",
            entry=entry.info.filename,
        ) from exc
    if len(data) > cap:
        raise TooLarge(
            f"import refused, nothing was changed: {entry.info.filename!r} unpacks to more"
            f" than {cap} bytes; {rule}",
            code=code,
            entry=entry.info.filename,
        )
    return data


def _after_commit(
    progress: ImportProgress | None, phase: ImportPhase, done: int, total: int
) -> None:
    """Report once the import is committed: it stands whatever the callback does."""
    if progress is None:
        return
    try:
        progress(phase, done, total)
    except Exception:
        log.warning("import progress callback failed after the commit", exc_info=True)


def _check_fits(account: Account | None, limits: Limits, *, notes: int, total_bytes: int) -> None:
    """Refuse an import that would leave the vault past a limit it grows toward (a vault
    already past a lowered limit may still take updates that do not grow it)."""
    before_notes = account.note_count if account else 0
    before_bytes = account.total_bytes if account else 0
    if notes > limits.max_notes and notes > before_notes:
        raise QuotaExceeded(
            f"import refused, nothing was changed: the vault would hold {notes} notes;"
            f" its limit is {limits.max_notes}",
            code="vault_note_limit",
        )
    if total_bytes > limits.max_bytes and total_bytes > before_bytes:
        raise QuotaExceeded(
            f"import refused, nothing was changed: the vault would hold {total_bytes}"
            f" bytes of notes; its limit is {limits.max_bytes} bytes",
            code="vault_byte_limit",
        )


def _content_time(entry: _Entry, now: float) -> float | None:
    """The imported note's ``updated_at``: its file's time, never later than the import."""
    return None if entry.mtime is None else min(entry.mtime, now)


_UNPACKED_MEDIA = frozenset(["image/svg+xml", "image/bmp", "image/tiff", "audio/wav"])


def _packed(content_type: str) -> bool:
    """Formats that are compressed already: deflating them again costs time for nothing."""
    if content_type in ("application/zip", "application/pdf"):
        return True
    media = content_type.startswith(("image/", "audio/", "video/"))
    return media and content_type not in _UNPACKED_MEDIA


def _zip_time(epoch: float) -> tuple[int, int, int, int, int, int]:
    t = time.gmtime(min(max(epoch, _ZIP_MIN_EPOCH), _ZIP_MAX_EPOCH))  # 1980 to 2107 only
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


def iter_file(fh: IO[bytes], chunk: int = 1024 * 1024) -> Iterator[bytes]:
    while data := fh.read(chunk):
        yield data
