"""Attachments and .obsidian/ configuration travel with the vault, on every backend.

One Obsidian vault built here (folders sharing note names, attachments of several
types with non-ASCII and NFD names and old times, embeds with headings and block ids,
links of every form, a .obsidian folder) is imported, exported and imported again: every
file comes back byte for byte at its path with its time, a re-import changes nothing,
links and embeds of attachments resolve by Obsidian's rules, and the backlinks of an
attachment are the notes that embed or link it. Quota, file-limit and size-cap refusals
are typed and change nothing.
"""

from __future__ import annotations

import calendar
import io
import struct
import time
import unicodedata
import zipfile
from typing import Any

import pytest

from memvault.container import Services
from memvault.domain.attachments import sha256_bytes
from memvault.domain.models import Limits
from memvault.errors import NotFound, QuotaExceeded, TooLarge
from memvault.services.context import Caller, Surface
from tests.support.clock import FakeClock

OLD = calendar.timegm((2020, 5, 17, 8, 30, 12, 0, 0, 0))
OLDER = calendar.timegm((2018, 11, 3, 21, 4, 8, 0, 0, 0))

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>\n'
PDF = b"%PDF-1.4\n" + bytes(range(255, -1, -1)) * 8 + b"\n%%EOF\n"
MP3 = b"ID3\x03\x00" + b"\xff\xfb" * 600
CANVAS = b'{"nodes":[{"id":"1","type":"file","file":"img/diagram.png"}],"edges":[]}'
NFD_NAME = unicodedata.normalize("NFD", "média/café.png")  # as macOS writes it
CAFE = unicodedata.normalize("NFC", "média/café.png")

FILES: dict[str, tuple[bytes, float]] = {
    "img/diagram.png": (PNG, OLD),
    "Projects/diagram.png": (PNG[:-1] + b"!", OLDER),  # the same name, another folder
    "logo.svg": (SVG, OLD),
    "docs/report.pdf": (PDF, OLDER),
    "audio/memo.mp3": (MP3, OLD),
    "Board.canvas": (CANVAS, OLD),
    CAFE: (b"\x89PNG-cafe", OLDER),
}
CONFIG: dict[str, tuple[bytes, float]] = {
    ".obsidian/app.json": (b'{"attachmentFolderPath":"img"}', OLD),
    ".obsidian/plugins/dataview/data.json": (b'{"enable": true}', OLDER),
}
NOTES: dict[str, tuple[str, float]] = {
    "Home.md": (
        "# Home\n![[diagram.png]]\n![[diagram.png|300]]\n[[report.pdf]]\n"
        "![alt](img/diagram.png)\n![[Board.canvas]]\n[[Projects/Plan#Goals|plan]]\n",
        OLD,
    ),
    "Projects/Plan.md": (
        "# Plan\n## Goals\n![[diagram.png]]\n![[./diagram.png#^b1]]\n"
        "[memo](../audio/memo.mp3)\n![[logo.svg]]\n[[Home#^abc123]]\n",
        OLDER,
    ),
    "Archive/Plan.md": (
        "# Old plan\n![[/img/diagram.png]]\n[[docs/report.pdf#page=2]]\n"
        "![[café.png]]\n[x](<../docs/report.pdf>)\n",
        OLD,
    ),
    "Notes/Meeting.md": (
        '---\ncover: "[[logo.svg]]"\n---\n# Meeting\nA point ^abc123\n![[missing.png]]\n',
        OLDER,
    ),
}


def _dos(epoch: float) -> tuple[int, int, int, int, int, int]:
    g = time.gmtime(epoch)
    return (g.tm_year, g.tm_mon, g.tm_mday, g.tm_hour, g.tm_min, g.tm_sec)


def _add(zf: zipfile.ZipFile, name: str, data: bytes, mtime: float) -> None:
    info = zipfile.ZipInfo(name, date_time=_dos(mtime))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.extra = struct.pack("<HHBI", 0x5455, 5, 1, int(mtime))
    zf.writestr(info, data)


def vault_zip(*, root: str = "MyVault/", extra: dict[str, bytes] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path, (text, mtime) in NOTES.items():
            _add(zf, root + path, text.encode(), mtime)
        for path, (data, mtime) in FILES.items():
            name = NFD_NAME if path == CAFE else path
            _add(zf, root + name, data, mtime)
        for path, (data, mtime) in CONFIG.items():
            _add(zf, root + path, data, mtime)
        _add(zf, root + ".trash/old.png", b"trash", OLD)  # other dot-folders stay skipped
        _add(zf, root + ".git/HEAD", b"ref", OLD)
        for name, data in (extra or {}).items():
            _add(zf, root + name, data, OLD)
    return buf.getvalue()


def run_import(services: Services, user: Caller, data: bytes, **options: object):  # type: ignore[no-untyped-def]
    return services.transfer.import_zip(user, io.BytesIO(data), **options)  # type: ignore[arg-type]


def exported(services: Services, user: Caller) -> dict[str, tuple[bytes, float]]:
    out = io.BytesIO()
    services.transfer.export(user, out)
    with zipfile.ZipFile(out) as zf:
        found = {}
        for info in zf.infolist():
            _tag, _size, _flags, seconds = struct.unpack_from("<HHBI", info.extra, 0)
            found[info.filename] = (zf.read(info), float(seconds))
        return found


def test_a_vault_round_trips_every_file_byte_for_byte_with_its_time(
    services: Services, user: Caller
) -> None:
    report = run_import(services, user, vault_zip())
    assert (report.created, report.files_created, report.config_files) == (4, 9, 2)
    assert sorted(report.skipped_files) == ["MyVault/.git/HEAD", "MyVault/.trash/old.png"]
    out = exported(services, user)
    expected = {p: (t.encode(), m) for p, (t, m) in NOTES.items()} | FILES | CONFIG
    assert out == expected  # bytes and times; the NFD name comes back as NFC

    # Re-importing what was exported changes nothing: no new versions, no new times.
    revision = services.store.get_account(user.account_id).revision  # type: ignore[union-attr]
    buf = io.BytesIO()
    services.transfer.export(user, buf)
    again = run_import(services, user, buf.getvalue())
    assert (again.created, again.updated, again.unchanged) == (0, 0, 4)
    assert (again.files_created, again.files_updated, again.files_unchanged) == (0, 0, 9)
    assert services.store.get_account(user.account_id).revision == revision  # type: ignore[union-attr]
    assert exported(services, user) == expected
    for path in NOTES:
        assert [v.version for v in services.vault.versions(user, path)] == [1]


def test_links_and_embeds_of_attachments_resolve_and_show_as_backlinks(
    services: Services, user: Caller
) -> None:
    run_import(services, user, vault_zip())
    att = services.attachments

    def linked(path: str) -> list[str]:
        return att.linked_from(user, path)

    # ![[diagram.png]] picks the linking note's own folder, else the shortest path.
    assert linked("img/diagram.png") == ["Archive/Plan.md", "Home.md"]
    assert linked("Projects/diagram.png") == ["Projects/Plan.md"]  # its own folder
    assert linked("docs/report.pdf") == ["Archive/Plan.md", "Home.md"]
    assert linked("audio/memo.mp3") == ["Projects/Plan.md"]  # a relative markdown link
    assert linked("logo.svg") == ["Notes/Meeting.md", "Projects/Plan.md"]  # frontmatter too
    assert linked("Board.canvas") == ["Home.md"]
    assert linked(CAFE) == ["Archive/Plan.md"]  # NFC and NFD spell one name
    assert [n.path for n in att.backlinks(user, "img/diagram.png")] == [
        "Archive/Plan.md",
        "Home.md",
    ]
    # Notes still resolve among notes; an attachment never counts as a note's backlink.
    assert [n.path for n in services.vault.backlinks(user, "Projects/Plan.md")] == ["Home.md"]
    # A file put later becomes the target of the dangling embed.
    assert linked("img/diagram.png") == ["Archive/Plan.md", "Home.md"]
    att.put(user, "missing.png", b"now here")
    assert linked("missing.png") == ["Notes/Meeting.md"]
    # A deleted file leaves its embeds dangling.
    att.delete(user, "docs/report.pdf")
    assert att.list_files(user, prefix="docs/").files == []


def test_obsidian_config_is_kept_apart_and_can_be_skipped(services: Services, user: Caller) -> None:
    run_import(services, user, vault_zip())
    att = services.attachments
    listed = [f.path for f in att.list_files(user).files]
    assert ".obsidian/app.json" not in listed and "img/diagram.png" in listed
    with_config = [f.path for f in att.list_files(user, config=True).files]
    assert ".obsidian/app.json" in with_config
    assert att.get(user, ".obsidian/app.json").kind == "config"
    hits = services.vault.search(user, "attachmentFolderPath")  # never searchable
    assert hits == []
    assert services.vault.list_notes(user).items[0].path == "Archive/Plan.md"


def test_an_import_can_skip_the_obsidian_folder(services: Services, user: Caller) -> None:
    report = run_import(services, user, vault_zip(), obsidian_config="skip")
    assert report.config_files == 0 and report.files_created == 7
    assert "MyVault/.obsidian/app.json" in report.skipped_files
    assert not any(p.startswith(".obsidian/") for p in exported(services, user))


def _state(services: Services, user: Caller) -> tuple[object, ...]:
    account = services.store.get_account(user.account_id)
    assert account is not None
    files = services.attachments.store.file_keys(user.account_id)
    return (account.note_count, account.total_bytes, sorted(files))


@pytest.mark.parametrize(
    ("limits", "error", "code"),
    [
        (Limits(max_files=5), QuotaExceeded, "vault_file_limit"),
        (Limits(max_file_bytes=1000), TooLarge, "file_too_large"),
        (Limits(max_bytes=4000), QuotaExceeded, "vault_byte_limit"),
    ],
)
def test_limits_refuse_an_import_whole_and_change_nothing(
    services: Services, user: Caller, limits: Limits, error: type[Exception], code: str
) -> None:
    services.attachments.put(user, "keep.png", b"kept")
    services.vault.write(user, "kept.md", "kept")
    services.accounts.set_limits(user.account_id, limits)
    before = _state(services, user)
    with pytest.raises(error) as refused:
        run_import(services, user, vault_zip())
    assert refused.value.code == code  # type: ignore[attr-defined]
    assert _state(services, user) == before
    assert services.attachments.download(user, "keep.png")[1] == b"kept"


def test_files_count_in_the_byte_quota_and_the_file_limit(services: Services, user: Caller) -> None:
    services.accounts.set_limits(user.account_id, Limits(max_bytes=3000, max_files=2))
    services.attachments.put(user, "a.bin", b"x" * 2000)
    account = services.store.get_account(user.account_id)
    assert account is not None and account.total_bytes == 2000
    with pytest.raises(QuotaExceeded) as note_refused:
        services.vault.write(user, "big.md", "y" * 1500)  # notes and files share the quota
    assert note_refused.value.code == "vault_byte_limit"
    services.attachments.put(user, "b.bin", b"z")
    with pytest.raises(QuotaExceeded) as refused:
        services.attachments.put(user, "c.bin", b"z")
    assert refused.value.code == "vault_file_limit"
    services.attachments.put(user, "b.bin", b"zz")  # replacing is no new file
    services.attachments.delete(user, "a.bin")
    account = services.store.get_account(user.account_id)
    assert account is not None and account.total_bytes == 2
    services.vault.write(user, "big.md", "y" * 1500)


def test_a_failed_note_commit_leaves_the_files_as_they_were(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notes' commit fails after the files' (a storage fault): the files are as they
    were (SQLite: one transaction; AWS: put back) and the bytes the import stored first
    are gone again."""
    services.attachments.put(user, "img/diagram.png", b"old bytes")
    before = _state(services, user)

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the notes' commit failed")

    if services.settings.backend == "aws":  # the transaction carrying notes and files
        monkeypatch.setattr(services.store.table, "transact_once", broken)  # type: ignore[attr-defined]
    else:  # the notes' part of the one transaction
        monkeypatch.setattr(services.store, "commit", broken)
    with pytest.raises(RuntimeError):
        run_import(services, user, vault_zip())
    monkeypatch.undo()
    assert _state(services, user) == before
    assert services.attachments.download(user, "img/diagram.png")[1] == b"old bytes"
    store = services.attachments.store
    with pytest.raises(NotFound):
        store.read_blob(user.account_id, sha256_bytes(PDF))  # staged, then dropped
    # The vault still takes the same import whole.
    assert run_import(services, user, vault_zip()).files_created == 8


def test_models_see_what_a_file_is_never_its_bytes(services: Services, user: Caller) -> None:
    services.attachments.put(user, "img/a.png", PNG)
    model = Caller(user.account_id, surface=Surface.MCP)
    assert services.attachments.get(model, "img/a.png").size == len(PNG)
    with pytest.raises(Exception) as refused:
        services.attachments.download(model, "img/a.png")
    assert getattr(refused.value, "code", "") == "file_bytes_for_people"


def test_the_memory_tools_list_and_describe_attachments_without_their_bytes(
    services: Services, user: Caller
) -> None:
    from memvault.tools.memory import run_tool

    run_import(services, user, vault_zip())
    model = Caller(user.account_id, surface=Surface.MCP)
    listed = run_tool(services, model, "memory_list", {"attachments": True, "folder": "img"})
    assert not listed.is_error
    assert [f["path"] for f in listed.data["attachments"]] == ["img/diagram.png"]  # type: ignore[index]
    read = run_tool(services, model, "memory_read", {"path": "img/diagram.png"})
    assert not read.is_error
    assert "image (image/png)" in read.text and "Home.md" in read.text
    assert read.data["linked_from"] == ["Archive/Plan.md", "Home.md"]  # type: ignore[index]
    assert "\x89PNG" not in read.text and "markdown" not in (read.data or {})
    missing = run_tool(services, model, "memory_read", {"path": "img/none.png"})
    assert missing.is_error and "file_not_found" in missing.text
    notes = run_tool(services, model, "memory_list", {})
    assert "img/diagram.png" not in notes.text  # notes only, unless asked


def test_another_organisation_never_sees_the_files(services: Services, user: Caller) -> None:
    from tests.support.people import make_org

    services.attachments.put(user, "secret.pdf", b"%PDF mine")
    other = make_org(services, "other").owner.caller
    with pytest.raises(Exception) as hidden:
        services.attachments.get(other, "secret.pdf")
    assert getattr(hidden.value, "code", "") == "file_not_found"
    assert services.attachments.list_files(other).files == []
    services.attachments.put(other, "secret.pdf", b"theirs")
    assert services.attachments.download(user, "secret.pdf")[1] == b"%PDF mine"
    assert exported(services, other).keys() == {"secret.pdf"}


def test_a_crash_mid_import_on_aws_rolls_the_files_back_with_the_notes(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    """A large import is journaled (ADR 0002) with its files in it: a process dying
    mid-way (a chunk fails and so does the rollback) leaves the vault locked, and once
    the lease has run out the next write rolls notes and files back together."""
    if services.settings.backend != "aws":
        pytest.skip("the journaled bulk commit is DynamoDB's; SQLite's is one transaction")
    from memvault.adapters.aws import bulk
    from memvault.errors import ServiceUnavailable

    services.attachments.put(user, "img/diagram.png", b"old bytes")
    before = _state(services, user)
    many = {f"bulk/{i}.md": b"note %d ![[diagram.png]]" % i for i in range(60)}
    table = services.store.table  # type: ignore[attr-defined]
    calls = {"n": 0}
    transact = table.transact

    def third_fails(actions: object) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("the process died")
        transact(actions)

    def restore_fails(*_args: object, **_kwargs: object) -> None:
        raise ServiceUnavailable("gone", code="gone")

    monkeypatch.setattr(table, "transact", third_fails)
    monkeypatch.setattr(bulk, "_restore", restore_fails)
    with pytest.raises(ServiceUnavailable):
        run_import(services, user, vault_zip(extra=many))
    monkeypatch.undo()
    clock.advance(bulk.LOCK_LEASE_SECONDS + 1)
    services.vault.write(user, "after.md", "recovered")  # recovers, then writes
    note_count, total_bytes, files = _state(services, user)
    assert (note_count - 1, total_bytes - len("recovered"), files) == before
    assert services.attachments.download(user, "img/diagram.png")[1] == b"old bytes"


def test_the_retention_sweep_drops_bytes_no_file_references(
    services: Services, user: Caller
) -> None:
    from memvault.services.attachments import ORPHAN_GRACE_SECONDS

    att, store = services.attachments, services.attachments.store
    att.put(user, "a.png", b"first")
    att.put(user, "a.png", b"second")  # the first bytes are an orphan now
    att.put(user, "b.png", b"kept")
    store.stage_blob(
        user.account_id, sha256_bytes(b"staged, never committed"), b"staged, never committed"
    )
    # Within the grace period (a writer may be about to commit them), nothing goes.
    assert att.sweep_orphans(time.time()) == 0
    later = time.time() + 2 * ORPHAN_GRACE_SECONDS
    assert att.sweep_orphans(later) == 2
    with pytest.raises(NotFound):
        store.read_blob(user.account_id, sha256_bytes(b"first"))
    assert att.download(user, "a.png")[1] == b"second"
    assert att.download(user, "b.png")[1] == b"kept"
    assert att.sweep_orphans(later) == 0


def test_a_crash_mid_import_of_files_only_on_aws_leaves_the_files_as_they_were(
    services: Services, user: Caller, monkeypatch: pytest.MonkeyPatch, clock: FakeClock
) -> None:
    """An archive of attachments alone, too many for one transaction, is journaled like
    one with notes: the process dying mid-way (every write after the first refused, so
    nothing can be undone from memory) leaves no file of it once the lease has run out."""
    if services.settings.backend != "aws":
        pytest.skip("the journaled bulk commit is DynamoDB's; SQLite's is one transaction")
    from memvault.adapters.aws import bulk
    from memvault.errors import ServiceUnavailable

    services.attachments.put(user, "img/diagram.png", b"old bytes")
    before = _state(services, user)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("img/diagram.png", b"new bytes")
        for i in range(60):
            zf.writestr(f"img/{i}.png", b"png %d" % i)
    table = services.store.table  # type: ignore[attr-defined]
    calls = {"n": 0}

    def dies_after_the_first(write: Any) -> Any:
        def written(*args: object, **kwargs: object) -> object:
            calls["n"] += 1
            if calls["n"] >= 2:
                raise RuntimeError("the process died")
            return write(*args, **kwargs)

        return written

    def restore_fails(*_args: object, **_kwargs: object) -> None:
        raise ServiceUnavailable("gone", code="gone")

    for name in ("transact", "transact_once"):
        monkeypatch.setattr(table, name, dies_after_the_first(getattr(table, name)))
    monkeypatch.setattr(bulk, "_restore", restore_fails)
    with pytest.raises((ServiceUnavailable, RuntimeError)):
        run_import(services, user, buffer.getvalue())
    monkeypatch.undo()
    clock.advance(bulk.LOCK_LEASE_SECONDS + 1)
    services.vault.write(user, "after.md", "recovered")  # recovers, then writes
    note_count, total_bytes, files = _state(services, user)
    assert (note_count - 1, total_bytes - len("recovered"), files) == before
    assert services.attachments.download(user, "img/diagram.png")[1] == b"old bytes"
