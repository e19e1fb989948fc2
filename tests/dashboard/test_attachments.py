"""Attachments in the dashboard, in headless Chromium against memvault on a real server:
the tree lists an imported vault's files, a file's page shows it (an image drawn from
/v1/files with the session cookie, a hostile SVG only through <img>, audio in the
browser's player), a note's embeds render from the server's resolution, wikilink
completion offers file names, and a file is uploaded, deleted and the delete undone.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

from tests.dashboard.conftest import Page
from tests.dashboard.helpers import archive

# What a hostile SVG tries: a script, an onload handler, and a foreignObject whose HTML
# carries an onerror. Drawn through <img>, none of it may run.
HOSTILE_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30" '
    "onload=\"window.top.__pwned='svg-onload'\">"
    "<script>window.top.__pwned='svg-script'</script>"
    '<foreignObject width="40" height="30"><img xmlns="http://www.w3.org/1999/xhtml" '
    'src="x" onerror="window.top.__pwned=\'svg-foreign\'"/></foreignObject>'
    '<rect width="40" height="30" fill="#c2255c"/></svg>'
)

NOTE = (
    "# Diagram note\n\n"
    "The diagram: ![[diagram.png]]\n\n"
    "Small: ![[diagram.png|48]]\n\n"
    "As markdown: ![the diagram](../img/diagram.png)\n\n"
    "Hostile: ![[hostile.svg]]\n\n"
    "Voice: ![[memo.wav]]\n\n"
    "Missing: ![[missing.png]]\n\n"
    "Injected: ![[x\" onerror=\"window.__pwned='embed'.png]]\n\n"
    "A link to it: [[diagram.png]]\n"
)


def png(width: int, height: int, rgb: tuple[int, int, int] = (47, 79, 201)) -> bytes:
    """A valid truecolour PNG of one colour (no imaging library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def wav(seconds: float = 0.2, rate: int = 8000) -> bytes:
    """A silent mono 8-bit WAV."""
    frames = int(seconds * rate)
    return (
        b"RIFF"
        + struct.pack("<I", 36 + frames)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate, 1, 8)
        + b"data"
        + struct.pack("<I", frames)
        + b"\x80" * frames
    )


def _import(tab: Page, files: dict[str, bytes | str]) -> None:
    with tab.server.client() as http:
        r = http.post(
            "/v1/import", content=archive(files), headers={"Content-Type": "application/zip"}
        )
        assert r.status_code == 200, r.text


def _natural_width(page: Any, selector: str) -> int:
    """An image's naturalWidth once it has loaded (0: it did not draw)."""
    page.wait_for_function(
        "s => { const i = document.querySelector(s); return i && i.complete; }", arg=selector
    )
    return int(page.evaluate("s => document.querySelector(s).naturalWidth", selector))


def test_the_tree_file_pages_and_note_embeds_show_attachments_safely(tab: Page) -> None:
    _import(
        tab,
        {
            "notes/Diagram note.md": NOTE,
            "img/diagram.png": png(64, 40),
            "img/hostile.svg": HOSTILE_SVG,
            "audio/memo.wav": wav(),
            "Other.md": "# Other\n",
        },
    )
    tab.sign_in_with_key()
    page = tab.page
    tree = page.get_by_role("tree", name="Notes and files by folder")
    tree.get_by_role("treeitem", name="img").click()
    image_row = tree.get_by_role("treeitem", name="diagram.png")
    image_row.wait_for()
    assert "file" in (image_row.get_attribute("class") or "")
    assert image_row.get_attribute("data-type") == "image"
    assert tree.get_by_role("treeitem", name="hostile.svg").get_attribute("data-type") == "svg"

    # The png's page: drawn from /v1/files with the session cookie, its facts, its backlinks.
    image_row.click()
    view = page.get_by_role("region", name="File diagram.png")
    view.wait_for()
    assert _natural_width(page, ".file-image") == 64
    assert (
        page.locator(".file-image")
        .get_attribute("src", timeout=1000)
        .startswith("/v1/files/img/diagram.png")
    )
    facts = view.locator(".file-facts").inner_text()
    assert "image/png" in facts and "64 × 40 px" in facts
    backlinks = view.locator(".links-panel")
    backlinks.get_by_role("link", name="Diagram note").wait_for()
    assert view.get_by_role("link", name="Download").get_attribute("download") == "diagram.png"
    tab.screenshot("file-image")
    assert tab.axe() == []

    # The hostile SVG: drawn as an image, never as the page's DOM; nothing in it runs.
    tree.get_by_role("treeitem", name="hostile.svg").click()
    page.get_by_role("region", name="File hostile.svg").wait_for()
    assert _natural_width(page, ".file-image") == 40
    assert page.evaluate("() => document.querySelectorAll('svg rect, svg script').length") == 0
    assert page.evaluate("() => window.__pwned") is None

    # Audio plays in the browser's own player (the page's CSP lets media load from itself).
    page.goto(tab.server.url + "/dashboard/vault/audio/memo.wav")
    page.locator("audio.file-media").wait_for()
    page.wait_for_function("() => document.querySelector('audio.file-media').readyState >= 1")

    # The note's embeds, resolved by the server: images drawn, the width kept, audio in a
    # player, the missing file and the hostile name dangling, nothing run.
    tab.open_note("notes/Diagram note.md")
    body = page.locator(".markdown-body")
    body.locator("img.embed-image").nth(3).wait_for()
    images = page.evaluate(
        """() => [...document.querySelectorAll('.markdown-body img.embed-image')].map(i => ({
            src: i.getAttribute('src'), width: i.getAttribute('width')}))"""
    )
    assert [i["src"].split("?")[0] for i in images] == [
        "/v1/files/img/diagram.png",
        "/v1/files/img/diagram.png",
        "/v1/files/img/diagram.png",
        "/v1/files/img/hostile.svg",
    ]
    assert images[1]["width"] == "48"
    for n in range(4):
        page.wait_for_function(
            "n => { const i = document.querySelectorAll('.markdown-body img.embed-image')[n];"
            " return i.complete && i.naturalWidth > 0; }",
            arg=n,
        )
    page.wait_for_function("() => document.querySelector('.markdown-body audio').readyState >= 1")
    dangling = body.locator("a.wikilink.dangling.embed")
    assert dangling.count() == 2
    assert dangling.first.inner_text() == "missing.png"
    found = page.evaluate(
        """() => {
            const root = document.querySelector('.markdown-body');
            return {
                handlers: [...root.querySelectorAll('*')].filter(
                    e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
                inlineSvg: root.querySelectorAll('svg').length,
                pwned: window.__pwned ?? null,
            };
        }"""
    )
    assert found == {"handlers": 0, "inlineSvg": 0, "pwned": None}
    link = body.locator("a.wikilink:not(.embed)", has_text="diagram.png")
    assert link.get_attribute("href") == "/dashboard/vault/img/diagram.png"
    outgoing = page.locator(".links-panel").get_by_role("link", name="diagram.png (file)")
    assert outgoing.get_attribute("href") == "/dashboard/vault/img/diagram.png"
    missing = page.locator(".links-panel").get_by_role("link", name="missing.png (no file yet)")
    assert missing.get_attribute("href") == "/dashboard/vault/missing.png"
    assert dangling.first.get_attribute("href") == "/dashboard/vault/missing.png"
    tab.screenshot("note-embeds")
    assert tab.axe() == []

    # Completion offers files first after "![[", by name with the extension.
    tab.open_note("Other.md")
    page.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("![[diag")
    option = page.locator(".cm-tooltip-autocomplete li", has_text="diagram.png")
    option.wait_for()
    tab.screenshot("attachment-completion")
    page.wait_for_timeout(250)  # CodeMirror's interaction delay (see test_pages)
    page.keyboard.press("Enter")
    assert tab.editor_text().endswith("![[diagram.png]]")
    page.locator(".markdown-body img.embed-image").wait_for()
    assert _natural_width(page, ".markdown-body img.embed-image") == 64


def test_upload_a_file_into_a_folder_then_delete_it_and_undo(tab: Page) -> None:
    """Also: a file past 4 MiB goes through the presigned path (POST /v1/files/uploads,
    the bytes to the URL it names, then .../complete), never one PUT /v1/files."""
    _import(tab, {"uploads/Readme.md": "# Readme\n\n![[pic.png]]\n"})
    tab.start_session_with_key()
    page = tab.page
    tab.open_note("uploads/Readme.md")
    # The embed dangles until the file is there.
    page.locator(".markdown-body a.wikilink.dangling.embed", has_text="pic.png").wait_for()
    picture = png(30, 20, (43, 138, 62))
    page.get_by_role("button", name="Upload", exact=True).click()
    dialog = page.get_by_role("dialog", name="Upload files")
    assert dialog.get_by_label("Folder").input_value() == "uploads"
    dialog.get_by_label("Files").set_input_files(
        {"name": "pic.png", "mimeType": "image/png", "buffer": picture}
    )
    dialog.get_by_text("uploads/pic.png").wait_for()
    assert tab.axe() == []
    dialog.get_by_role("button", name="Upload").click()
    view = page.get_by_role("region", name="File pic.png")
    view.wait_for()
    assert _natural_width(page, ".file-image") == 30
    with tab.server.client() as http:
        stored = http.get("/v1/files/uploads/pic.png")
        assert stored.status_code == 200 and stored.content == picture
        assert stored.headers["content-type"] == "image/png"
    tree = page.get_by_role("tree", name="Notes and files by folder")
    tree.get_by_role("treeitem", name="pic.png").wait_for()
    # Its backlink, from the note, whose dangling embed is now the image.
    view.get_by_role("link", name="Readme").click()
    page.locator(".markdown-body img.embed-image").wait_for()
    assert _natural_width(page, ".markdown-body img.embed-image") == 30
    page.go_back()
    view.wait_for()

    view.get_by_role("button", name="Delete").click()
    confirm = page.get_by_role("dialog", name="Delete pic.png?")
    # The count comes with the file's backlinks, which may land after the dialog opens.
    confirm.get_by_text("1 note(s) that embed or link it").wait_for()
    tab.screenshot("file-delete")
    confirm.get_by_role("button", name="Delete").click()
    page.get_by_role("heading", name="Vault").wait_for()
    with tab.server.client() as http:
        assert http.get("/v1/files/uploads/pic.png").status_code == 404
    assert tree.get_by_role("treeitem", name="pic.png").count() == 0

    # Undo stores the bytes read before the delete again.
    page.locator(".toast").get_by_role("button", name="Undo").click()
    page.locator(".toast", has_text="Restored uploads/pic.png").wait_for()
    with tab.server.client() as http:
        assert http.get("/v1/files/uploads/pic.png").content == picture
    tree.get_by_role("treeitem", name="pic.png").wait_for()

    # A large file: through the upload the server names, not one PUT /v1/files/{path}.
    puts: list[str] = []
    page.on("request", lambda r: puts.append(r.url) if r.method == "PUT" else None)
    big = bytes(range(256)) * (4_600_000 // 256)
    # Dropped on the vault's side panel, as from the desktop: the dialog opens with it.
    page.evaluate(
        """size => {
            const bytes = new Uint8Array(size).map((_, i) => i % 256);
            const data = new DataTransfer();
            data.items.add(new File([bytes], 'big.bin', {type: 'application/octet-stream'}));
            const side = document.querySelector('.vault-side');
            const how = {dataTransfer: data, bubbles: true, cancelable: true};
            side.dispatchEvent(new DragEvent('dragover', how));
            side.dispatchEvent(new DragEvent('drop', how));
        }""",
        len(big),
    )
    dialog.get_by_text("big.bin").wait_for()
    assert dialog.get_by_label("Folder").input_value() == ""  # no note open: the root
    dialog.get_by_label("Folder").fill("media/")
    dialog.get_by_role("button", name="Upload").click()
    page.get_by_role("region", name="File big.bin").wait_for()
    assert len(puts) == 1 and "/v1/file-uploads/" in puts[0], puts
    with tab.server.client() as http:
        assert http.get("/v1/files/media/big.bin").content == big


def test_under_a_stage_prefix_images_load_from_the_prefixed_files_url(tab: Page) -> None:
    """As on API Gateway's /prod/ stage: the page and the API under one prefix (the
    browser's requests under /prod/ reach the server with X-Forwarded-Prefix)."""
    _import(tab, {"Pic note.md": "# Pic note\n\n![[p.png]]\n", "p.png": png(12, 9)})
    page = tab.page
    seen: list[str] = []

    def strip(route: Any) -> None:
        seen.append(route.request.url)
        headers = {**route.request.headers, "x-forwarded-prefix": "/prod/"}
        route.continue_(url=route.request.url.replace("/prod/", "/", 1), headers=headers)

    page.route("**/prod/**", strip)
    page.goto(tab.server.url + "/prod/")
    page.get_by_role("radio", name="API key").click()
    page.get_by_label("API key").fill(tab.server.admin_key)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("navigation", name="Main").wait_for()
    page.goto(tab.server.url + "/prod/dashboard/vault/Pic note.md")
    page.locator(".markdown-body img.embed-image").wait_for()
    assert _natural_width(page, ".markdown-body img.embed-image") == 12
    src = page.locator(".markdown-body img.embed-image").get_attribute("src") or ""
    assert src.startswith("/prod/v1/files/p.png"), src
    assert any("/prod/v1/files/p.png" in u for u in seen)
