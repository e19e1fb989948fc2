"""Names Windows cannot extract (CON.md, a:b.md): legal in the vault, exported as they
are (the round trip stays exact), and named in the export's report (ADR 0022)."""

from __future__ import annotations

import io
import zipfile

from memvault.container import Services
from memvault.services.context import Caller
from memvault.services.transfer import WindowsUnsafe

NOTES = {
    "CON.md": "a device name",
    "notes/a:b.md": "a colon",
    "aux/inside.md": "a device name as a folder",
    "v1./x.md": "a folder ending in a dot",
    "ok/plain.md": "fine everywhere",
    "ok/com10.md": "COM10 is not a device",
}


def test_export_reports_the_entries_windows_cannot_extract(
    services: Services, user: Caller
) -> None:
    for path, text in NOTES.items():
        services.vault.write(user, path, text)
    out = io.BytesIO()
    report = services.transfer.export(user, out)

    assert report.notes == len(NOTES)
    unsafe = {entry.path: entry.reason for entry in report.windows_unsafe}
    # In the export's own order (by path key), as the archive lists them.
    assert list(unsafe) == ["aux/inside.md", "CON.md", "notes/a:b.md", "v1./x.md"]
    assert "reserved by Windows" in unsafe["CON.md"] and "AUX" in unsafe["aux/inside.md"]
    assert "':'" in unsafe["notes/a:b.md"] and "dot" in unsafe["v1./x.md"]
    # The listing, without writing an archive, says the same.
    assert services.transfer.windows_unsafe(user) == report.windows_unsafe

    # Every note is in the archive under its own name, byte for byte.
    with zipfile.ZipFile(io.BytesIO(out.getvalue())) as zf:
        assert {i.filename: zf.read(i).decode() for i in zf.infolist()} == NOTES
    # ...so importing it back changes nothing.
    again = services.transfer.import_zip(user, io.BytesIO(out.getvalue()))
    assert (again.created, again.updated, again.unchanged) == (0, 0, len(NOTES))


def test_a_vault_windows_can_extract_reports_nothing(services: Services, user: Caller) -> None:
    services.vault.write(user, "fine.md", "x")
    assert services.transfer.export(user, io.BytesIO()).windows_unsafe == []
    assert services.transfer.windows_unsafe(user) == []
    services.accounts.create_account("other", account_id="other")
    services.vault.write(Caller(account_id="other"), "CON.md", "theirs")
    assert services.transfer.windows_unsafe(user) == []
    assert services.transfer.windows_unsafe(Caller(account_id="other")) == [
        WindowsUnsafe("CON.md", "'CON.md' is CON, a device name reserved by Windows")
    ]
