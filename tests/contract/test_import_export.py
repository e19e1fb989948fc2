"""Obsidian zip import and export through the service layer, on every backend.

Every archive is built here, hostile ones included: where ``zipfile`` will not write
what an attacker would (encrypted flags, lying sizes, broken names, broken data), the
bytes are patched by hand. A refused import must leave the vault exactly as it was,
so each refusal compares a full snapshot of the vault before and after.
"""

from __future__ import annotations

import functools
import io
import random
import stat
import struct
import unicodedata
import warnings
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from memvault.container import Services
from memvault.domain.models import MAX_NOTE_BYTES, Limits, NoteChange
from memvault.errors import (
    Conflict,
    InvalidPath,
    MemvaultError,
    QuotaExceeded,
    RateLimited,
    TooLarge,
    Unprocessable,
)
from memvault.ports import CommitResult
from memvault.services.context import Caller
from memvault.services.transfer import ImportLimits, ImportReport, TransferService
from memvault.services.vault import build_put

# A word only the archives' notes carry: if search finds it, something was imported.
MARKER = "zanzibarquokka"

# ---------------------------------------------------------------------- building archives

Data = bytes | str
EntrySpec = tuple[str | zipfile.ZipInfo, Data]


def make_zip(*entries: EntrySpec, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name" is the point of some archives
        with zipfile.ZipFile(buf, "w") as zf:
            for name, data in entries:
                if isinstance(name, zipfile.ZipInfo):
                    info = name
                else:
                    info = zipfile.ZipInfo(name, date_time=(2024, 1, 2, 3, 4, 5))
                    info.compress_type = compression if not name.endswith("/") else 0
                    info.external_attr = (0o40755 << 16) | 0x10 if name.endswith("/") else 0
                    if not name.endswith("/"):
                        info.external_attr = 0o644 << 16
                payload = data.encode("utf-8") if isinstance(data, str) else data
                zf.writestr(info, payload)
    return buf.getvalue()


def symlink_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(2024, 1, 2, 3, 4, 5))
    info.create_system = 3  # Unix, so the mode bits mean what they say
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


@dataclass(frozen=True)
class _Record:
    name: bytes
    central: int  # offset of the central directory header
    local: int  # offset of the local file header


def _records(data: bytes) -> list[_Record]:
    """Walk the central directory by hand (no trust in zipfile for patched archives)."""
    eocd = data.rfind(b"PK\x05\x06")
    assert eocd >= 0
    count = struct.unpack_from("<H", data, eocd + 10)[0]
    pos = struct.unpack_from("<I", data, eocd + 16)[0]
    out: list[_Record] = []
    for _ in range(count):
        assert data[pos : pos + 4] == b"PK\x01\x02"
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", data, pos + 28)
        local = struct.unpack_from("<I", data, pos + 42)[0]
        assert data[local : local + 4] == b"PK\x03\x04"
        out.append(_Record(data[pos + 46 : pos + 46 + name_len], pos, local))
        pos += 46 + name_len + extra_len + comment_len
    return out


def patch(
    data: bytes, name: str, *, central_off: int, local_off: int, fmt: str, value: int, mode: str
) -> bytes:
    out = bytearray(data)
    hits = 0
    for rec in _records(data):
        if rec.name != name.encode("utf-8"):
            continue
        hits += 1
        for at in (rec.central + central_off, rec.local + local_off):
            old = struct.unpack_from(fmt, out, at)[0]
            struct.pack_into(fmt, out, at, old | value if mode == "or" else value)
    assert hits, f"no entry {name!r} to patch"
    return bytes(out)


def set_flag_bits(data: bytes, name: str, bits: int) -> bytes:
    """General purpose flags, in the local and the central header alike."""
    return patch(data, name, central_off=8, local_off=6, fmt="<H", value=bits, mode="or")


def set_method(data: bytes, name: str, method: int) -> bytes:
    return patch(data, name, central_off=10, local_off=8, fmt="<H", value=method, mode="set")


def set_declared_size(data: bytes, name: str, size: int) -> bytes:
    """Lie about the uncompressed size, in both headers."""
    return patch(data, name, central_off=24, local_off=22, fmt="<I", value=size, mode="set")


def corrupt_data(data: bytes, name: str) -> bytes:
    """Make the first byte of a deflate stream an invalid block type (BTYPE=11)."""
    out = bytearray(data)
    for rec in _records(data):
        if rec.name == name.encode("utf-8"):
            name_len, extra_len = struct.unpack_from("<HH", out, rec.local + 26)
            out[rec.local + 30 + name_len + extra_len] = 0xFF
            return bytes(out)
    raise AssertionError(f"no entry {name!r}")


def replace_name_bytes(data: bytes, old: bytes, new: bytes) -> bytes:
    assert len(old) == len(new) and data.count(old) == 2  # local and central header
    return data.replace(old, new)


@functools.cache
def noise(size: int, seed: int = 7) -> str:
    """Text that barely compresses (so it never looks like a zip bomb). Made once per size
    and seed (a megabyte of it costs 0.25 s), for every backend's tests."""
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \n"
    return "".join(rng.choices(alphabet, k=size))


# ---------------------------------------------------------------------- observing the vault


def snapshot(services: Services, user: Caller) -> dict[str, Any]:
    """Everything a user can observe: every note, its markdown and history, usage, search."""
    notes: dict[str, Any] = {}
    cursor: str | None = None
    while True:
        page = services.vault.list_notes(user, limit=500, cursor=cursor)
        for summary in page.items:
            note = services.vault.read(user, summary.path)
            history = [(v.version, v.sha256) for v in services.vault.versions(user, summary.path)]
            notes[summary.path] = (note.markdown, note.version, history)
        cursor = page.next_cursor
        if cursor is None:
            break
    account = services.accounts.get_account(user.account_id)
    hits = services.vault.search(user, MARKER, charge=False)
    return {
        "notes": notes,
        "note_count": account.note_count,
        "total_bytes": account.total_bytes,
        "search": sorted(h.path for h in hits),
    }


def run_import(services: Services, user: Caller, data: bytes) -> ImportReport:
    return services.transfer.import_zip(user, io.BytesIO(data))


def export_bytes(services: Services, user: Caller) -> bytes:
    out = io.BytesIO()
    services.transfer.export_zip(user, out)
    return out.getvalue()


def entries_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def note_paths(services: Services, user: Caller) -> list[str]:
    return sorted(n.path for n in services.vault.list_notes(user, limit=500).items)


def versions(services: Services, user: Caller, path: str) -> list[int]:
    return [v.version for v in services.vault.versions(user, path)]


def seed(services: Services, user: Caller) -> None:
    """Three notes, seed.md at version 2: in two commits, which leave what the four writes
    one by one leave (tests/contract/test_bulk_commit.py) at half their requests."""
    services.vault.commit(user, [build_put("seed.md", "seed v1\n")])
    services.vault.commit(
        user,
        [
            build_put("seed.md", "seed v2 links [[keep]]\n"),
            build_put("keep.md", "---\ntags: [k]\n---\nkept\n"),
            build_put("folder/Deep.md", "deep note\r\n"),
        ],
    )


# Good entries go first in every hostile archive: an import that wrote as it went would
# leave a created note and an updated one behind before reaching the bad entry.
GOOD: tuple[EntrySpec, ...] = (
    ("fresh.md", f"a new note {MARKER}\n"),
    ("seed.md", f"seed rewritten {MARKER}\n"),
    ("folder/deep.md", f"case-only update {MARKER}\n"),
)


def hostile(*bad: EntrySpec) -> bytes:
    return make_zip(*GOOD, *bad)


# ---------------------------------------------------------------------- refusals

# name -> (build the archive, error class, error code)
Refusal = tuple[Callable[[], bytes], type[MemvaultError], str]


def _encrypted() -> bytes:
    return set_flag_bits(hostile(("secret.md", "hidden text")), "secret.md", 0x1)


def _encrypted_attachment() -> bytes:
    return set_flag_bits(hostile(("photo.png", b"\x89PNG")), "photo.png", 0x1)


def _lying_size() -> bytes:
    # Declares 100 bytes, holds 1 MB + 1: the read must not trust the header.
    body = noise(MAX_NOTE_BYTES + 1)
    return set_declared_size(hostile(("liar.md", body)), "liar.md", 100)


def _lying_size_stored() -> bytes:
    data = make_zip(*GOOD, ("liar.md", "x" * 5000), compression=zipfile.ZIP_STORED)
    return set_declared_size(data, "liar.md", 10)


def _zip_bomb() -> bytes:
    # 80 MiB of notes in a few dozen KiB: each note is within the 1 MB limit and the
    # total within the unpacked cap and the quota, only the ratio gives it away (past
    # the 64 MiB below which no archive is refused for its ratio alone).
    return hostile(*((f"bomb/{i}.md", "a" * MAX_NOTE_BYTES) for i in range(80)))


def _corrupt_deflate() -> bytes:
    return corrupt_data(hostile(("broken.md", "text " * 200)), "broken.md")


def _unsupported_method() -> bytes:
    return set_method(hostile(("odd.md", "text")), "odd.md", 99)  # 99: AES, unsupported


def _bad_name_bytes() -> bytes:
    # Flagged UTF-8 (zipfile sets the flag for a non-ASCII name) but not UTF-8.
    data = hostile(("é.md", "text"))
    return replace_name_bytes(data, "é.md".encode(), b"\xff\xfe.md")


def _truncated() -> bytes:
    data = hostile(("more.md", noise(4000)))
    return data[: len(data) // 2]


def _truncated_tail() -> bytes:
    return hostile(("more.md", "text"))[:-10]


REFUSALS: dict[str, Refusal] = {
    "not a zip": (lambda: b"this is plain text, not an archive\n" * 10, Unprocessable, "not_a_zip"),
    "empty file": (lambda: b"", Unprocessable, "not_a_zip"),
    "a markdown file": (lambda: b"# Note\n\nnot zipped\n", Unprocessable, "not_a_zip"),
    "truncated in the middle": (_truncated, Unprocessable, "not_a_zip"),
    "truncated tail": (_truncated_tail, Unprocessable, "not_a_zip"),
    "absolute path": (lambda: hostile(("/etc/evil.md", "x")), Unprocessable, "unsafe_path"),
    "absolute backslash path": (lambda: hostile(("\\evil.md", "x")), Unprocessable, "unsafe_path"),
    "dot-dot at the start": (lambda: hostile(("../evil.md", "x")), Unprocessable, "unsafe_path"),
    "dot-dot inside": (lambda: hostile(("a/../../evil.md", "x")), Unprocessable, "unsafe_path"),
    "dot-dot in an attachment": (
        lambda: hostile(("../../evil.png", b"\x89PNG")),
        Unprocessable,
        "unsafe_path",
    ),
    "dot-dot directory entry": (lambda: hostile(("../", b"")), Unprocessable, "unsafe_path"),
    "drive letter": (lambda: hostile(("C:/Windows/evil.md", "x")), Unprocessable, "unsafe_path"),
    "drive-relative": (lambda: hostile(("c:evil.md", "x")), Unprocessable, "unsafe_path"),
    "backslash separators": (
        lambda: hostile(("notes\\..\\..\\evil.md", "x")),
        Unprocessable,
        "unsafe_path",
    ),
    "symlink note": (
        lambda: hostile((symlink_info("link.md"), "../../etc/passwd")),
        Unprocessable,
        "symlink_entry",
    ),
    "symlink attachment": (
        lambda: hostile((symlink_info("assets/img.png"), "/etc/shadow")),
        Unprocessable,
        "symlink_entry",
    ),
    "encrypted note": (_encrypted, Unprocessable, "encrypted_entry"),
    "encrypted attachment": (_encrypted_attachment, Unprocessable, "encrypted_entry"),
    "same name twice": (
        lambda: hostile(("twice.md", "one"), ("twice.md", "two")),
        Unprocessable,
        "duplicate_path",
    ),
    "case-only twins": (
        lambda: hostile(("Notes/Plan.md", "one"), ("notes/plan.md", "two")),
        Unprocessable,
        "duplicate_path",
    ),
    "NFC and NFD twins": (
        lambda: hostile(
            (unicodedata.normalize("NFC", "café.md"), "one"),
            (unicodedata.normalize("NFD", "café.md"), "two"),
        ),
        Unprocessable,
        "duplicate_path",
    ),
    "invalid path (control character)": (
        lambda: hostile(("bad\x01name.md", "x")),
        Unprocessable,
        "invalid_path",
    ),
    "invalid path (empty segment)": (
        lambda: hostile(("a//b.md", "x")),
        Unprocessable,
        "invalid_path",
    ),
    "note over 1 MB": (
        lambda: hostile(("big.md", noise(MAX_NOTE_BYTES + 1))),
        TooLarge,
        "note_too_large",
    ),
    "multi-byte note over 1 MB": (
        # 349,526 three-byte characters: 1,048,578 bytes, though far fewer characters
        lambda: hostile(("wide.md", "語" * (MAX_NOTE_BYTES // 3 + 1))),
        TooLarge,
        "note_too_large",
    ),
    "declared size lies (deflate)": (_lying_size, Unprocessable, "corrupt_entry"),
    "declared size lies (stored)": (_lying_size_stored, Unprocessable, "corrupt_entry"),
    "zip bomb": (_zip_bomb, Unprocessable, "zip_bomb"),
    "invalid UTF-8 note": (
        lambda: hostile(("latin1.md", "caf\xe9 au lait".encode("latin-1"))),
        Unprocessable,
        "invalid_utf8",
    ),
    "UTF-16 note": (
        lambda: hostile(("utf16.md", "hello".encode("utf-16"))),
        Unprocessable,
        "invalid_utf8",
    ),
    "corrupt deflate stream": (_corrupt_deflate, Unprocessable, "corrupt_entry"),
    "unsupported compression": (_unsupported_method, Unprocessable, "corrupt_entry"),
    "entry name not UTF-8": (_bad_name_bytes, Unprocessable, "invalid_entry_name"),
}


@functools.cache
def refused_archive(case: str) -> bytes:
    """Each case's archive, built once for every backend (bytes: nothing can change it)."""
    return REFUSALS[case][0]()


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_refused_import_leaves_the_vault_exactly_as_it_was(
    services: Services, user: Caller, case: str
) -> None:
    _, error, code = REFUSALS[case]
    seed(services, user)
    data = refused_archive(case)
    before = snapshot(services, user)
    with pytest.raises(MemvaultError) as err:
        run_import(services, user, data)
    assert type(err.value) is error, err.value
    assert err.value.code == code, err.value.message
    assert snapshot(services, user) == before
    # The archive's good entries alone import fine: only the bad entry was refused.
    if case not in {"not a zip", "empty file", "a markdown file"} and "truncated" not in case:
        report = run_import(services, user, hostile())
        assert (report.created, report.updated) == (1, 2)


def test_the_refusal_message_says_nothing_was_changed(services: Services, user: Caller) -> None:
    with pytest.raises(Unprocessable) as err:
        run_import(services, user, hostile(("../evil.md", "x")))
    assert "nothing was changed" in err.value.message
    assert "../evil.md" in err.value.message


def test_a_note_of_exactly_one_megabyte_is_accepted(services: Services, user: Caller) -> None:
    body = noise(MAX_NOTE_BYTES)
    report = run_import(services, user, make_zip(("big.md", body)))
    assert report.created == 1
    assert services.vault.read(user, "big.md").markdown == body


def _transfer(services: Services, **limits: Any) -> TransferService:
    return TransferService(services.vault, ImportLimits(**limits))


def test_an_archive_over_the_archive_limit_is_refused(services: Services, user: Caller) -> None:
    seed(services, user)
    data = hostile()
    before = snapshot(services, user)
    with pytest.raises(TooLarge) as err:
        _transfer(services, max_archive_bytes=len(data) - 1).import_zip(user, io.BytesIO(data))
    assert err.value.code == "archive_too_large"
    assert "nothing was changed" in err.value.message
    assert snapshot(services, user) == before
    report = _transfer(services, max_archive_bytes=len(data)).import_zip(user, io.BytesIO(data))
    assert report.created == 1


def test_notes_unpacking_past_the_total_cap_are_refused(services: Services, user: Caller) -> None:
    seed(services, user)
    data = hostile(("a.md", noise(3000, 1)), ("b.md", noise(3000, 2)))
    before = snapshot(services, user)
    with pytest.raises(Unprocessable) as err:
        _transfer(services, max_uncompressed_bytes=6000).import_zip(user, io.BytesIO(data))
    assert err.value.code == "archive_too_large_unpacked"
    assert snapshot(services, user) == before


def test_too_many_entries_are_refused(services: Services, user: Caller) -> None:
    seed(services, user)
    data = hostile(("x.png", b"1"))  # attachments count too: each is an entry to read
    before = snapshot(services, user)
    with pytest.raises(Unprocessable) as err:
        _transfer(services, max_entries=3).import_zip(user, io.BytesIO(data))
    assert err.value.code == "too_many_entries"
    assert snapshot(services, user) == before


def test_compressible_but_honest_notes_are_not_a_zip_bomb(services: Services, user: Caller) -> None:
    # A real vault of repetitive notes compresses well, but nowhere near 200-fold.
    table = "| a | b | c |\n|---|---|---|\n" + "| 1 | 2 | 3 |\n" * 2000
    report = run_import(services, user, make_zip(*((f"t{i}.md", table) for i in range(3))))
    assert report.created == 3


def test_over_the_note_quota_refuses_the_whole_import(services: Services, user: Caller) -> None:
    seed(services, user)  # 3 notes
    services.accounts.set_limits(user.account_id, Limits(max_notes=4, max_bytes=10_000_000))
    data = make_zip(("seed.md", "changed"), ("n1.md", MARKER), ("n2.md", MARKER))
    before = snapshot(services, user)
    with pytest.raises(QuotaExceeded) as err:
        run_import(services, user, data)
    assert err.value.code == "vault_note_limit"
    assert snapshot(services, user) == before
    # Exactly at the limit is fine.
    report = run_import(services, user, make_zip(("seed.md", "changed"), ("n1.md", MARKER)))
    assert (report.created, report.updated) == (1, 1)
    assert services.accounts.get_account(user.account_id).note_count == 4


def test_updates_fit_in_a_full_vault(services: Services, user: Caller) -> None:
    seed(services, user)
    services.accounts.set_limits(user.account_id, Limits(max_notes=3, max_bytes=10_000_000))
    report = run_import(services, user, make_zip(("seed.md", "new"), ("keep.md", "new too")))
    assert (report.created, report.updated) == (0, 2)


def test_over_the_byte_quota_refuses_the_whole_import(services: Services, user: Caller) -> None:
    seed(services, user)
    used = services.accounts.get_account(user.account_id).total_bytes
    services.accounts.set_limits(user.account_id, Limits(max_notes=100, max_bytes=used + 100))
    before = snapshot(services, user)
    data = make_zip(("a.md", "x" * 60), ("b.md", "y" * 41))  # 101 bytes more
    with pytest.raises(QuotaExceeded) as err:
        run_import(services, user, data)
    assert err.value.code == "vault_byte_limit"
    assert snapshot(services, user) == before
    # Growth is measured after updates: shrinking a note makes room for a new one.
    report = run_import(
        services, user, make_zip(("seed.md", "s"), ("a.md", "x" * 60), ("b.md", "y" * 41))
    )
    assert (report.created, report.updated) == (2, 1)


def test_an_exhausted_write_budget_refuses_the_import(services: Services, user: Caller) -> None:
    seed(services, user)
    before = snapshot(services, user)
    with pytest.raises(RateLimited) as exhausted:
        for _ in range(1000):
            run_import(services, user, make_zip(("seed.md", "seed v2 links [[keep]]\n")))
    assert exhausted.value.code == "writes_budget_exhausted"
    assert exhausted.value.retry_after >= 1
    with pytest.raises(RateLimited):
        run_import(services, user, hostile())
    assert snapshot(services, user) == before


# ---------------------------------------------------------------------- what an import does


def test_import_creates_updates_and_leaves_unchanged_notes_alone(
    services: Services, user: Caller
) -> None:
    services.vault.write(user, "same.md", "same text\n")
    services.vault.write(user, "edit.md", "old text\n")
    services.vault.write(user, "absent.md", "not in the archive\n")
    data = make_zip(
        ("same.md", "same text\n"),
        ("edit.md", "new text\n"),
        ("new/one.md", "brand new\n"),
        ("new/", b""),
        ("images/pic.png", b"\x89PNG\r\n"),
        ("doc.pdf", b"%PDF-1.4"),
        ("Upper.MD", "not lowercase .md"),
        (".obsidian/app.json", "{}"),
        (".obsidian/plugins/p/README.md", "plugin readme"),
        (".trash/old.md", "trashed"),
    )
    report = run_import(services, user, data)
    assert (report.created, report.updated, report.unchanged) == (1, 1, 1)
    # Attachments and .obsidian/ are kept as files (ADR 0043); other dot-folders and
    # names that are neither a note nor a file by the vault's rules are skipped.
    assert (report.files_created, report.config_files) == (4, 2)
    assert report.skipped == 2
    assert sorted(report.skipped_files) == [".trash/old.md", "Upper.MD"]
    assert versions(services, user, "same.md") == [1]
    assert versions(services, user, "edit.md") == [2, 1]
    assert services.vault.read(user, "edit.md").markdown == "new text\n"
    assert versions(services, user, "new/one.md") == [1]
    # Never deletes, never touches what the archive does not carry.
    assert services.vault.read(user, "absent.md").markdown == "not in the archive\n"
    assert versions(services, user, "absent.md") == [1]
    paths = note_paths(services, user)
    assert paths == ["absent.md", "edit.md", "new/one.md", "same.md"]


def test_importing_the_same_archive_twice_makes_no_versions(
    services: Services, user: Caller
) -> None:
    data = make_zip(("a.md", "alpha"), ("b/c.md", "gamma"))
    first = run_import(services, user, data)
    assert (first.created, first.updated, first.unchanged) == (2, 0, 0)
    before = snapshot(services, user)
    again = run_import(services, user, data)
    assert (again.created, again.updated, again.unchanged, again.skipped) == (0, 0, 2, 0)
    assert snapshot(services, user) == before


def test_a_changed_note_takes_exactly_one_version(services: Services, user: Caller) -> None:
    services.vault.write(user, "n.md", "v1")
    run_import(services, user, make_zip(("n.md", "v2")))
    assert versions(services, user, "n.md") == [2, 1]
    assert services.vault.version(user, "n.md", 1).markdown == "v1"
    run_import(services, user, make_zip(("n.md", "v2")))
    assert versions(services, user, "n.md") == [2, 1]


def test_import_updates_a_note_at_its_own_spelling(services: Services, user: Caller) -> None:
    services.vault.write(user, "Notes/Plan.md", "old")
    services.vault.write(user, "café.md", "same")
    data = make_zip(("notes/PLAN.md", "new"), (unicodedata.normalize("NFD", "café.md"), "same"))
    report = run_import(services, user, data)
    assert (report.created, report.updated, report.unchanged) == (0, 1, 1)
    assert note_paths(services, user) == ["Notes/Plan.md", "café.md"]
    assert services.vault.read(user, "Notes/Plan.md").markdown == "new"


def test_an_nfd_path_is_stored_nfc(services: Services, user: Caller) -> None:
    run_import(services, user, make_zip((unicodedata.normalize("NFD", "Résumé/é.md"), "x")))
    assert note_paths(services, user) == ["Résumé/é.md"]


def test_a_deleted_note_comes_back_with_its_history(services: Services, user: Caller) -> None:
    services.vault.write(user, "gone.md", "before")
    services.vault.delete(user, "gone.md")
    report = run_import(services, user, make_zip(("gone.md", "back")))
    assert report.created == 1
    assert versions(services, user, "gone.md") == [2, 1]
    assert services.vault.read(user, "gone.md").markdown == "back"


def test_a_zipped_vault_folder_is_imported_from_inside(services: Services, user: Caller) -> None:
    data = make_zip(
        ("MyVault/", b""),
        ("MyVault/.obsidian/", b""),
        ("MyVault/.obsidian/app.json", "{}"),
        ("MyVault/.obsidian/workspace.json", "{}"),
        ("MyVault/notes/", b""),
        ("MyVault/notes/a.md", "note a"),
        ("MyVault/Home.md", "home"),
        ("MyVault/attachments/pic.jpg", b"\xff\xd8"),
    )
    report = run_import(services, user, data)
    assert report.created == 2
    assert note_paths(services, user) == ["Home.md", "notes/a.md"]
    assert report.skipped_files == []
    kept = services.attachments.list_files(user, config=True).files
    assert [f.path for f in kept] == [
        ".obsidian/app.json",
        ".obsidian/workspace.json",
        "attachments/pic.jpg",
    ]


def test_a_vault_zipped_by_macos_finder_imports(services: Services, user: Caller) -> None:
    # Finder's "Compress" adds __MACOSX/ with binary AppleDouble "._" files.
    apple_double = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        \xff\xfe"
    data = make_zip(
        ("MyVault/", b""),
        ("MyVault/.obsidian/app.json", "{}"),
        ("MyVault/notes/a.md", "note a"),
        ("__MACOSX/", b""),
        ("__MACOSX/MyVault/", b""),
        ("__MACOSX/MyVault/notes/._a.md", apple_double),
        ("__MACOSX/MyVault/.obsidian/._app.json", apple_double),
    )
    report = run_import(services, user, data)
    assert report.created == 1
    assert note_paths(services, user) == ["notes/a.md"]
    assert "__MACOSX/MyVault/notes/._a.md" in report.skipped_files


def test_notes_all_in_one_folder_keep_the_folder(services: Services, user: Caller) -> None:
    data = make_zip(("Journal/", b""), ("Journal/a.md", "a"), ("Journal/2024/b.md", "b"))
    run_import(services, user, data)
    paths = note_paths(services, user)
    assert paths == ["Journal/2024/b.md", "Journal/a.md"]


def test_hidden_paths_are_not_vault_notes_so_every_note_round_trips(
    services: Services, user: Caller
) -> None:
    # Obsidian ignores hidden files and folders and the import skips them; the vault
    # refuses them too, so nothing it holds can vanish on export and re-import.
    with pytest.raises(InvalidPath):
        services.vault.write(user, "Vault/.obsidian/x.md", "x")
    services.vault.write(user, "Vault/a.md", "a")
    report = run_import(services, user, export_bytes(services, user))
    assert (report.created, report.updated, report.unchanged) == (0, 0, 1)
    assert note_paths(services, user) == ["Vault/a.md"]


# ---------------------------------------------------------------------- export and round trip

ROUND_TRIP_NOTES = {
    "plain.md": "just text",
    "frontmatter.md": "---\ntitle: Front\ntags: [x, y]\naliases:\n  - F\n---\n\n# Body\n",
    "crlf.md": "line one\r\nline two\r\n\r\n- item\r\n",
    "bom.md": "\ufeff# Starts with a BOM\n",
    "empty.md": "",
    "no-newline.md": "trailing spaces   ",
    "日本語/メモ.md": "# メモ\n\n[[plain]] と #タグ\n",
    "Café Notes/Résumé ✓.md": "accents é à ü and emoji 🧠\n",
    "deep/a/b/c/d.md": "nested\n\ttabbed\n",
    "links.md": "[[frontmatter|alias]] ![[crlf]] [[missing]]\n",
}


def _write_all(services: Services, user: Caller) -> None:
    for path, markdown in ROUND_TRIP_NOTES.items():
        services.vault.write(user, path, markdown)


def test_export_holds_every_note_at_its_path_byte_identical(
    services: Services, user: Caller
) -> None:
    _write_all(services, user)
    services.vault.write(user, "deleted.md", "gone")
    services.vault.delete(user, "deleted.md")
    data = export_bytes(services, user)
    entries = entries_of(data)
    assert entries == {path: md.encode("utf-8") for path, md in ROUND_TRIP_NOTES.items()}
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert zf.testzip() is None
        for info in zf.infolist():
            assert not info.is_dir()
            assert not (info.flag_bits & 0x1)
            assert not stat.S_ISLNK(info.external_attr >> 16)


def test_export_then_import_is_all_unchanged(services: Services, user: Caller) -> None:
    _write_all(services, user)
    data = export_bytes(services, user)
    before = snapshot(services, user)
    report = run_import(services, user, data)
    assert (report.created, report.updated, report.skipped) == (0, 0, 0)
    assert report.unchanged == len(ROUND_TRIP_NOTES)
    assert snapshot(services, user) == before


def test_export_imports_into_another_account_identically(services: Services, user: Caller) -> None:
    _write_all(services, user)
    data = export_bytes(services, user)
    other_account = services.accounts.create_account("other")
    other = Caller(account_id=other_account.id, surface=user.surface)
    report = run_import(services, other, data)
    assert report.created == len(ROUND_TRIP_NOTES)
    for path, markdown in ROUND_TRIP_NOTES.items():
        assert services.vault.read(other, path).markdown == markdown
    assert entries_of(export_bytes(services, other)) == entries_of(data)
    # ...and the first account was not touched by the other's import.
    assert len(services.vault.list_notes(user).items) == len(ROUND_TRIP_NOTES)
    assert services.vault.backlinks(other, "plain.md")[0].path == "日本語/メモ.md"


def test_export_of_an_empty_vault_is_an_empty_zip(services: Services, user: Caller) -> None:
    data = export_bytes(services, user)
    assert entries_of(data) == {}
    report = run_import(services, user, data)
    assert (report.created, report.updated, report.unchanged, report.skipped) == (0, 0, 0, 0)


def test_export_works_whatever_the_clock_says(services: Services, user: Caller, clock: Any) -> None:
    clock.now = 100.0  # before 1980: zip dates cannot say so
    services.vault.write(user, "old.md", "old")
    clock.now = 4_500_000_000.0  # after 2107: nor this
    services.vault.write(user, "future.md", "future")
    assert set(entries_of(export_bytes(services, user))) == {"old.md", "future.md"}


# ---------------------------------------------------------------------- failure mid-commit


class _FailingChanges(Sequence[NoteChange]):
    """The import's changes, failing after ``after`` of them have been applied."""

    def __init__(self, changes: Sequence[NoteChange], after: int) -> None:
        self._changes = list(changes)
        self._after = after

    def __len__(self) -> int:
        return len(self._changes)

    def __getitem__(self, index: Any) -> Any:
        return self._changes[index]

    def __iter__(self) -> Iterator[NoteChange]:
        for done, change in enumerate(self._changes):
            if done == self._after:
                raise RuntimeError("storage failed mid-commit")
            yield change


def test_a_failure_mid_commit_leaves_the_vault_as_it_was(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(services, user)
    before = snapshot(services, user)
    original = services.store.commit
    seen: list[int] = []

    def failing_commit(
        account_id: str, changes: Sequence[NoteChange], **kwargs: Any
    ) -> CommitResult:
        seen.append(len(changes))
        return original(account_id, _FailingChanges(changes, after=2), **kwargs)

    monkeypatch.setattr(services.store, "commit", failing_commit)
    data = make_zip(*GOOD, ("more/1.md", MARKER), ("more/2.md", MARKER))
    with pytest.raises(RuntimeError):
        run_import(services, user, data)
    assert seen == [5]  # one commit for the whole import
    monkeypatch.undo()
    assert snapshot(services, user) == before


def test_a_concurrent_edit_between_plan_and_commit_refuses_the_import(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(services, user)
    original = services.store.commit
    raced = False

    def racing_commit(
        account_id: str, changes: Sequence[NoteChange], **kwargs: Any
    ) -> CommitResult:
        nonlocal raced
        if not raced:  # someone else saves seed.md after the import read it
            raced = True
            services.vault.write(user, "seed.md", "edited elsewhere\n")
        return original(account_id, changes, **kwargs)

    monkeypatch.setattr(services.store, "commit", racing_commit)
    with pytest.raises(Conflict):
        run_import(services, user, hostile())
    monkeypatch.undo()
    assert services.vault.read(user, "seed.md").markdown == "edited elsewhere\n"
    assert versions(services, user, "seed.md") == [3, 2, 1]
    with pytest.raises(MemvaultError):
        services.vault.read(user, "fresh.md")
    assert services.vault.read(user, "folder/Deep.md").markdown == "deep note\r\n"


def test_a_failing_search_index_does_not_leave_half_an_import(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Storage is the source of truth: once it has committed, the import stands whole.
    def broken(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("search engine down")

    monkeypatch.setattr(services.index, "upsert", broken)
    report = run_import(services, user, make_zip(("a.md", "a"), ("b.md", "b"), ("c.md", "c")))
    assert report.created == 3
    assert note_paths(services, user) == ["a.md", "b.md", "c.md"]


# ---------------------------------------------------------------------- links and search


def test_imported_links_update_backlinks_and_search(services: Services, user: Caller) -> None:
    services.vault.write(user, "Target.md", "# Target")
    services.vault.write(user, "waiting.md", "see [[Later]]")  # dangling until imported
    data = make_zip(
        ("src.md", f"points at [[Target]] {MARKER}"),
        ("notes/Later.md", "arrives with the import"),
    )
    run_import(services, user, data)
    assert [n.path for n in services.vault.backlinks(user, "Target.md")] == ["src.md"]
    assert [n.path for n in services.vault.backlinks(user, "notes/Later.md")] == ["waiting.md"]
    assert [h.path for h in services.vault.search(user, MARKER)] == ["src.md"]
    # An updating import that drops the link drops the backlink and the old text.
    run_import(services, user, make_zip(("src.md", "no links now, nothing to find")))
    assert services.vault.backlinks(user, "Target.md") == []
    assert services.vault.search(user, MARKER) == []
    assert [h.path for h in services.vault.search(user, "nothing to find")] == ["src.md"]


def test_a_large_import_links_and_indexes_every_note(services: Services, user: Caller) -> None:
    # Past 200 changes the commit relinks the whole vault in one pass.
    services.vault.write(user, "Hub.md", "# Hub")
    count = 250
    data = make_zip(
        *((f"spokes/s{i:03}.md", f"[[Hub]] spoke{i:03} {MARKER}") for i in range(count))
    )
    report = run_import(services, user, data)
    assert report.created == count
    assert len(services.vault.backlinks(user, "Hub.md")) == count
    assert [h.path for h in services.vault.search(user, "spoke123")] == ["spokes/s123.md"]
    hits = services.vault.search(user, MARKER, limit=100)
    assert len(hits) == 100
