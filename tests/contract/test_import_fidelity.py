"""Imports keep what an Obsidian user would miss otherwise, on every backend: each file's
own time, and refusals of archives that cannot fit made before anything is unpacked."""

from __future__ import annotations

import calendar
import io
import struct
import zipfile
from typing import Any

import pytest

from memvault.container import Services
from memvault.domain.models import MAX_NOTE_BYTES, Limits
from memvault.errors import QuotaExceeded
from memvault.services.context import Caller

from .test_import_export import export_bytes, run_import

OLD = calendar.timegm((2020, 5, 17, 8, 30, 12, 0, 0, 0))
OLDER = calendar.timegm((2019, 1, 2, 3, 4, 6, 0, 0, 0))


def archive(*entries: tuple[str, str, float], extended: bool = True) -> bytes:
    """Notes with modification times: as a DOS date (UTC, 2 s steps), and with Info-ZIP's
    extended timestamp (exact UTC seconds) unless ``extended`` is off."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text, mtime in entries:
            t = zipfile.ZipInfo(name, date_time=_dos(mtime))
            t.compress_type = zipfile.ZIP_DEFLATED
            if extended:
                t.extra = struct.pack("<HHBI", 0x5455, 5, 1, int(mtime))
            zf.writestr(t, text.encode())
    return buf.getvalue()


def _dos(epoch: float) -> tuple[int, int, int, int, int, int]:
    import time

    g = time.gmtime(epoch)
    return (g.tm_year, g.tm_mon, g.tm_mday, g.tm_hour, g.tm_min, g.tm_sec)


def times_in(data: bytes) -> dict[str, float]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        out = {}
        for info in zf.infolist():
            tag, size, flags, seconds = struct.unpack_from("<HHBI", info.extra, 0)
            assert (tag, size, flags) == (0x5455, 5, 1)
            assert calendar.timegm((*info.date_time, 0, 0, 0)) // 2 == seconds // 2
            out[info.filename] = float(seconds)
        return out


def test_an_imported_note_keeps_its_file_time_and_exports_it_back(
    services: Services, user: Caller, clock: Any
) -> None:
    run_import(services, user, archive(("old.md", "from 2020", OLD), ("a/b.md", "2019", OLDER)))
    note = services.vault.read(user, "old.md")
    assert note.updated_at == OLD and note.created_at == OLD
    assert services.vault.read(user, "a/b.md").updated_at == OLDER
    # The version is dated when it was written: the import's own time.
    [version] = services.vault.versions(user, "old.md")
    assert version.created_at == clock.now
    # Sorted by modification, the vault is in the files' order, not the import's.
    assert [n.path for n in services.vault.recent(user, limit=2)] == ["old.md", "a/b.md"]
    assert times_in(export_bytes(services, user)) == {"old.md": OLD, "a/b.md": OLDER}


def test_reimporting_changes_nothing_and_a_changed_file_takes_its_new_time(
    services: Services, user: Caller, clock: Any
) -> None:
    run_import(services, user, archive(("n.md", "one", OLDER)))
    clock.advance(3600)
    report = run_import(services, user, archive(("n.md", "one", OLD)))  # same text, new time
    assert report.unchanged == 1 and services.vault.read(user, "n.md").updated_at == OLDER
    run_import(services, user, archive(("n.md", "two", OLD)))
    note = services.vault.read(user, "n.md")
    assert (note.version, note.updated_at, note.created_at) == (2, OLD, OLDER)


def test_a_dos_date_alone_is_read_as_utc_and_a_future_time_is_the_import_time(
    services: Services, user: Caller, clock: Any
) -> None:
    future = clock.now + 86_400 * 365
    data = archive(("dos.md", "x", OLD), ("future.md", "y", future), extended=False)
    run_import(services, user, data)
    assert services.vault.read(user, "dos.md").updated_at == OLD
    assert services.vault.read(user, "future.md").updated_at == clock.now


def test_a_repetitive_note_within_the_note_limit_is_not_a_zip_bomb(
    services: Services, user: Caller
) -> None:
    data = archive(("same.md", "a" * MAX_NOTE_BYTES, OLD))
    assert len(data) * 500 < MAX_NOTE_BYTES  # packs far past the 200-fold ratio
    assert run_import(services, user, data).created == 1


def _progress() -> tuple[list[tuple[str, int, int]], Any]:
    seen: list[tuple[str, int, int]] = []
    return seen, lambda phase, done, total: seen.append((phase, done, total))


def test_an_archive_past_the_byte_quota_is_refused_before_anything_is_unpacked(
    services: Services, user: Caller
) -> None:
    services.accounts.set_limits(user.account_id, Limits(max_bytes=2 * MAX_NOTE_BYTES))
    padded = archive(*((f"pad/{i}.md", "x" * MAX_NOTE_BYTES, OLD) for i in range(3)))
    seen, progress = _progress()
    with pytest.raises(QuotaExceeded) as refused:
        services.transfer.import_zip(user, io.BytesIO(padded), progress=progress)
    assert refused.value.code == "vault_byte_limit"
    assert seen == []  # no note was read, let alone parsed
    assert services.vault.list_notes(user).items == []


def test_a_flood_of_tiny_notes_is_refused_before_anything_is_unpacked(
    services: Services, user: Caller
) -> None:
    services.accounts.set_limits(user.account_id, Limits(max_notes=50))
    flood = archive(*((f"t/{i}.md", "x", OLD) for i in range(51)))
    seen, progress = _progress()
    with pytest.raises(QuotaExceeded) as refused:
        services.transfer.import_zip(user, io.BytesIO(flood), progress=progress)
    assert refused.value.code == "vault_note_limit"
    assert seen == []
    assert services.vault.list_notes(user).items == []
