"""/v1/files over HTTP on both backends: list, download with its content type, put,
delete, backlinks of an attachment, the refusals (typed, changing nothing), and another
organisation's files never seen (404)."""

from __future__ import annotations

from memvault.domain.models import Limits
from tests.support.people import make_org
from tests.support.servers import LiveServer

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'


def test_files_are_stored_listed_served_and_deleted(live_server: LiveServer) -> None:
    with live_server.client() as c:
        r = c.put("/v1/files/img/diagram.png", content=PNG)
        assert r.status_code == 201, r.text
        assert r.json()["file"]["content_type"] == "image/png"
        assert c.put("/v1/files/img/diagram.png", content=PNG).json()["changed"] is False
        assert c.put("/v1/files/logo.svg", content=SVG).status_code == 201
        assert c.put("/v1/files/.obsidian/app.json", content=b"{}").status_code == 201

        got = c.get("/v1/files/img/diagram.png")
        assert got.status_code == 200 and got.content == PNG
        assert got.headers["content-type"] == "image/png"
        assert got.headers["content-disposition"].startswith("inline;")
        assert got.headers["x-content-type-options"] == "nosniff"
        svg = c.get("/v1/files/logo.svg")
        assert svg.headers["content-type"].startswith("image/svg+xml")
        assert svg.headers["content-disposition"].startswith("attachment;")  # never inline
        assert "sandbox" in svg.headers["content-security-policy"]

        listed = c.get("/v1/files").json()
        assert [f["path"] for f in listed["files"]] == ["img/diagram.png", "logo.svg"]
        assert [
            f["path"] for f in c.get("/v1/files", params={"prefix": "img/"}).json()["files"]
        ] == ["img/diagram.png"]
        with_config = c.get("/v1/files", params={"config": "true", "limit": 2}).json()
        assert [f["path"] for f in with_config["files"]] == [
            ".obsidian/app.json",
            "img/diagram.png",
        ]
        assert with_config["next_cursor"] == "img/diagram.png"

        c.put("/v1/notes/Home.md", json={"markdown": "![[diagram.png]]\n[[logo.svg]]"})
        back = c.get("/v1/notes/img/diagram.png/backlinks")
        assert [n["path"] for n in back.json()] == ["Home.md"]

        assert c.delete("/v1/files/logo.svg").status_code == 200
        assert c.get("/v1/files/logo.svg").json()["error"]["code"] == "file_not_found"
        assert c.get("/v1/notes/logo.svg/backlinks").status_code == 404


def test_refusals_are_typed_and_change_nothing(live_server: LiveServer) -> None:
    services = live_server.services
    with live_server.client() as c:
        services.accounts.set_limits("local", Limits(max_file_bytes=100, max_files=1))
        big = c.put("/v1/files/big.bin", content=b"x" * 101)
        assert big.status_code == 413 and big.json()["error"]["code"] == "file_too_large"
        assert c.put("/v1/files/one.bin", content=b"1").status_code == 201
        full = c.put("/v1/files/two.bin", content=b"2")
        assert full.status_code == 413 and full.json()["error"]["code"] == "vault_file_limit"
        bad = c.put("/v1/files/a%5Cb.png", content=b"1")  # a backslash
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_path"
        note = c.put("/v1/files/Note.md", content=b"1")
        assert note.status_code == 400 and note.json()["error"]["code"] == "invalid_path"
        hidden = c.put("/v1/files/.trash/x.png", content=b"1")
        assert hidden.status_code == 400
        assert [f["path"] for f in c.get("/v1/files").json()["files"]] == ["one.bin"]
        assert c.delete("/v1/files/none.bin").status_code == 404
        assert c.get("/v1/files", params={"limit": 0}).status_code == 400
    with live_server.client("not-a-key") as anonymous:
        assert anonymous.get("/v1/files/one.bin").status_code == 401
        assert anonymous.put("/v1/files/x.bin", content=b"1").status_code == 401


def test_another_organisations_files_are_never_seen(live_server: LiveServer) -> None:
    other = make_org(live_server.services, "other")
    with live_server.client() as mine:
        assert mine.put("/v1/files/secret.pdf", content=b"%PDF mine").status_code == 201
    with live_server.client(other.owner.vault_key.secret) as theirs:
        assert theirs.get("/v1/files/secret.pdf").status_code == 404
        assert theirs.get("/v1/files").json()["files"] == []
        assert theirs.delete("/v1/files/secret.pdf").status_code == 404
        assert theirs.get("/v1/notes/secret.pdf/backlinks").status_code == 404
        assert theirs.put("/v1/files/secret.pdf", content=b"theirs").status_code == 201
    with live_server.client() as mine:
        assert mine.get("/v1/files/secret.pdf").content == b"%PDF mine"


def test_an_export_names_the_files_windows_cannot_extract(live_server: LiveServer) -> None:
    with live_server.client() as c:
        assert c.put("/v1/files/img/what?.png".replace("?", "%3F"), content=b"1").status_code == 201
        assert c.put("/v1/files/img/fine.png", content=b"1").status_code == 201
        exported = c.get("/v1/export")
        assert exported.headers["X-Export-Windows-Unsafe"] == "1"
        listed = c.get("/v1/export/windows-unsafe").json()
        assert listed["count"] == 1 and listed["notes"][0]["path"] == "img/what?.png"
