"""The dashboard's pages in headless Chromium, against memvault on a real server.

Each test signs in (through the sign-in page, as a person would, or, when its first step
opens a page of its own, with the session the page would get: ``start_session_with_key``),
acts, and checks what the vault then holds through the REST API. Under
MEMVAULT_SCREENSHOTS=1 screenshots of each page go to tests/dashboard/screenshots/ (not
committed); every page visited is checked with axe-core for serious and critical
accessibility violations.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from tests.dashboard.conftest import Page
from tests.dashboard.helpers import archive, note_count, put, read


def test_the_sign_in_page_is_accessible(tab: Page) -> None:
    tab.goto("/")
    tab.page.get_by_role("heading", name="Sign in").wait_for()
    tab.screenshot("signin")
    assert tab.axe() == []
    # Served under /dashboard/ too, with the same page for any of the app's routes.
    tab.goto("/dashboard/vault/some/note.md")
    tab.page.get_by_role("heading", name="Sign in").wait_for()


def test_sign_in_with_a_key_then_sign_out(tab: Page) -> None:
    tab.sign_in_with_key()
    page = tab.page
    page.get_by_role("heading", name="Vault").wait_for()
    cookies = page.context.cookies()
    assert cookies and all(c["httpOnly"] for c in cookies)
    assert all(c["sameSite"] in ("Lax", "Strict") for c in cookies)
    # Nothing secret in the page's storage: the key was sent once and forgotten.
    stored = page.evaluate("() => JSON.stringify({...localStorage, ...sessionStorage})")
    assert tab.server.admin_key not in stored
    tab.screenshot("vault")
    assert tab.axe() == []
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("heading", name="Sign in").wait_for()
    page.reload()
    page.get_by_role("heading", name="Sign in").wait_for()


def test_edit_and_save_then_a_conflicting_save_is_merged(tab: Page) -> None:
    put(tab.server, "plan.md", "# Plan\n\nalpha\n\nbeta\n")
    tab.start_session_with_key()
    tab.open_note("plan.md")
    page = tab.page
    tab.set_editor_text("# Plan\n\nalpha, edited here\n\nbeta\n")
    page.get_by_text("Unsaved changes").wait_for()
    page.keyboard.press("Control+s")
    page.get_by_text("Saved · version 2").wait_for()
    assert read(tab.server, "plan.md")["markdown"] == "# Plan\n\nalpha, edited here\n\nbeta\n"
    tab.screenshot("note")
    assert tab.axe() == []

    # Someone else saves version 3 meanwhile; this edit started from version 2.
    put(tab.server, "plan.md", "# Plan\n\nalpha, edited here\n\nbeta, edited elsewhere\n")
    tab.set_editor_text("# Plan\n\nalpha, edited here\n\nbeta\n\ngamma from the page\n")
    page.get_by_role("button", name="Save", exact=True).click()
    dialog = page.get_by_role("dialog", name="This note changed while you edited it")
    dialog.wait_for()
    assert "version 3" in dialog.inner_text()
    tab.screenshot("conflict")
    assert read(tab.server, "plan.md")["version"] == 3  # nothing was overwritten
    dialog.get_by_role("button", name="Merge both").click()
    page.locator(".cm-line", has_text="beta, edited elsewhere").wait_for()
    merged = tab.editor_text()
    assert "beta, edited elsewhere" in merged and "gamma from the page" in merged
    page.keyboard.press("Control+s")
    page.get_by_text("Saved · version 4").wait_for()
    assert read(tab.server, "plan.md")["markdown"] == merged


def test_a_hostile_note_never_runs(tab: Page) -> None:
    put(
        tab.server,
        "hostile.md",
        "# Hostile\n\n<script>window.__pwned = 1</script>\n\n"
        '<img src="x" onerror="window.__pwned = 2">\n\n'
        "[click](javascript:window.__pwned=3)\n\n"
        '<a href="javascript:window.__pwned=4">x</a> <svg onload="window.__pwned=5"></svg>\n\n'
        '<iframe src="https://example.com"></iframe> <form action="https://example.com"></form>\n\n'
        "[[Target]] and #tag\n",
    )
    tab.start_session_with_key()
    tab.open_note("hostile.md")
    page = tab.page
    body = page.locator(".markdown-body")
    body.get_by_role("link", name="Target").wait_for()
    page.locator(".markdown-body a.remote-image").wait_for()
    assert page.evaluate("() => window.__pwned") is None
    found = page.evaluate(
        """() => {
            const root = document.querySelector('.markdown-body');
            const all = [...root.querySelectorAll('*')];
            return {
                scripts: root.querySelectorAll('script, iframe, form, object, embed').length,
                handlers: all.filter(
                    e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
                js: [...root.querySelectorAll('a')].filter(
                    a => /^javascript:/i.test(a.getAttribute('href') || '')).length,
            };
        }"""
    )
    assert found == {"scripts": 0, "handlers": 0, "js": 0}
    tag = body.get_by_role("link", name="#tag")
    assert "/dashboard/search?tag=tag" in (tag.get_attribute("href") or "")
    tab.screenshot("hostile-note")


def test_wikilinks_complete_from_note_names(tab: Page) -> None:
    put(tab.server, "people/Checklist of things.md", "# Checklist of things\n")
    put(tab.server, "draft.md", "# Draft\n\n")
    tab.start_session_with_key()
    tab.open_note("draft.md")
    page = tab.page
    page.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("See [[Checkl")
    option = page.locator(".cm-tooltip-autocomplete li", has_text="Checklist of things")
    option.wait_for()
    tab.screenshot("wikilink-completion")
    # CodeMirror ignores Enter on a completion list younger than its interaction delay
    # (75 ms), and inserts a newline instead: a loaded machine can press it sooner.
    page.wait_for_timeout(250)
    page.keyboard.press("Enter")
    assert tab.editor_text().endswith("See [[Checklist of things]]")
    page.locator(".markdown-body a.wikilink", has_text="Checklist of things").wait_for()


def test_a_link_clicked_before_the_index_arrived_opens_the_note_the_server_resolves(
    tab: Page,
) -> None:
    put(tab.server, "deep/folder/Far away.md", "# Far away\n\nArrived.\n")
    put(tab.server, "Hub.md", "# Hub\n\nGo [[Far away]] or [[Nowhere]].\n")
    tab.start_session_with_key()
    page = tab.page
    held: list[Any] = []  # the index's pages, held back as a slow network would
    page.route(re.compile(r".*/v1/notes\?limit=500.*"), lambda route: held.append(route))
    # The hub's own links too, at first: a click can come before their answer.
    links = re.compile(r".*/v1/notes/Hub\.md/links$")
    held_links: list[Any] = []
    page.route(links, lambda route: held_links.append(route))
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    tab.goto("/dashboard/vault/Hub.md")
    link = page.locator(".markdown-body a.wikilink", has_text="Far away")
    link.wait_for()
    assert "dangling" in (link.get_attribute("class") or "")  # nothing knows it yet
    link.click()
    page.wait_for_timeout(200)
    assert page.url.endswith("/dashboard/vault/Hub.md")  # waits for the server's answer
    page.unroute(links)
    for route in held_links:
        route.continue_()
    page.wait_for_url(re.compile(r".*/dashboard/vault/deep/folder/Far%20away\.md$"))
    page.locator(".markdown-body", has_text="Arrived.").wait_for()
    assert held and not any("/v1/notes/Far%20away.md" in u for u in asked)  # never the root
    page.go_back()  # one history entry for the click
    page.wait_for_url(re.compile(r".*/dashboard/vault/Hub\.md$"))
    # Opened again, the hub's links are resolved in its preview as soon as it shows.
    page.locator(".markdown-body a.wikilink:not(.dangling)", has_text="Far away").wait_for()
    assert page.locator(".links-panel a", has_text="Far away").get_attribute("href") == (
        "/dashboard/vault/deep/folder/Far%20away.md"
    )
    # A link the server found dangling offers its note to create, without the index.
    page.locator(".markdown-body a.wikilink.dangling", has_text="Nowhere").click()
    page.wait_for_url(re.compile(r".*/dashboard/vault/Nowhere\.md$"))
    page.get_by_text("There is no note at").wait_for()
    assert page.get_by_role("button", name="Create").is_visible()
    assert len(held) == 1  # the index's first page is still held: nothing waited for it
    for route in held:
        route.continue_()
    assert tab.errors == []


def test_a_link_the_index_and_the_server_resolve_apart_follows_the_server(tab: Page) -> None:
    put(tab.server, "x/Plan.md", "# Plan in x\n")
    put(tab.server, "Start.md", "# Start\n\nSee [[Hub]].\n")
    put(tab.server, "Hub.md", "# Hub\n\nThe [[Plan]].\n")
    tab.start_session_with_key()
    tab.open_note("Start.md")
    page = tab.page
    page.locator(".side-title .count", has_text="3").wait_for()  # the index is in
    # Someone else adds Plan.md at the root: [[Plan]] names it now (an exact vault path
    # wins), while this page's index still knows one Plan only, in x/.
    put(tab.server, "Plan.md", "# Plan at the root\n\nThe root one.\n")
    page.locator(".markdown-body a.wikilink", has_text="Hub").click()
    plan = page.locator(".markdown-body a.wikilink", has_text="Plan")
    page.locator('.markdown-body a.wikilink[href="/dashboard/vault/Plan.md"]').wait_for()
    plan.click()
    page.wait_for_url(re.compile(r".*/dashboard/vault/Plan\.md$"))
    page.locator(".markdown-body", has_text="The root one.").wait_for()
    assert tab.errors == []


def test_rename_rewrites_the_links_to_the_note(tab: Page) -> None:
    put(tab.server, "Target.md", "# Target\n")
    put(tab.server, "Source.md", "# Source\n\nSee [[Target]].\n")
    tab.start_session_with_key()
    tab.open_note("Target.md")
    page = tab.page
    page.locator(".links-panel").get_by_role("link", name="Source").wait_for()
    page.get_by_role("button", name="Rename / move").click()
    dialog = page.get_by_role("dialog", name="Rename or move")
    dialog.get_by_label("New path").fill("archive/Moved target.md")
    dialog.get_by_role("button", name="Move").click()
    page.wait_for_url(re.compile(r".*/dashboard/vault/archive/Moved%20target\.md$"))
    page.locator(".note-path", has_text="Moved target.md").wait_for()
    assert "[[archive/Moved target]]" in str(read(tab.server, "Source.md")["markdown"]) or (
        "[[Moved target]]" in str(read(tab.server, "Source.md")["markdown"])
    )


def test_history_shows_a_diff_and_restores(tab: Page) -> None:
    put(tab.server, "h.md", "# H\n\none\n")
    put(tab.server, "h.md", "# H\n\none\ntwo\n")
    put(tab.server, "h.md", "# H\n\nthree\n")
    tab.start_session_with_key()
    tab.open_note("h.md")
    page = tab.page
    page.get_by_role("button", name="History").click()
    dialog = page.get_by_role("dialog", name="History of h.md")
    dialog.locator(".diff-line.added", has_text="three").wait_for()
    dialog.get_by_label("Compare from version 1").check()
    dialog.locator(".diff-line.removed", has_text="one").wait_for()
    tab.screenshot("history")
    assert tab.axe() == []
    dialog.get_by_role("button", name="Restore version 1").click()
    page.get_by_text("Saved · version 4").wait_for()
    assert read(tab.server, "h.md")["markdown"] == "# H\n\none\n"
    assert "one" in tab.editor_text()


def test_delete_is_undone_from_history(tab: Page) -> None:
    put(tab.server, "gone.md", "# Gone\n\nkeep me\n")
    tab.start_session_with_key()
    tab.open_note("gone.md")
    page = tab.page
    page.get_by_role("button", name="Delete").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    page.get_by_role("heading", name="Vault").wait_for()
    with tab.server.client() as http:
        assert http.get("/v1/notes/gone.md").status_code == 404
    page.get_by_role("button", name="Undo").click()
    page.locator(".note-path", has_text="gone.md").wait_for()
    assert read(tab.server, "gone.md")["markdown"] == "# Gone\n\nkeep me\n"


def test_search_as_you_type_with_filters(tab: Page) -> None:
    put(
        tab.server,
        "projects/Launch.md",
        "---\ntags: [launch]\n---\n# Launch\n\nShip the beta on Friday.\n",
    )
    put(tab.server, "notes/Other.md", "# Other\n\nThe beta of something else.\n")
    tab.sign_in_with_key()
    page = tab.page
    page.keyboard.press("/")
    page.get_by_role("heading", name="Search").wait_for()
    page.get_by_label("Words").type("beta")
    page.get_by_text("2 results").wait_for()
    assert page.locator(".results mark", has_text="beta").count() >= 1
    page.get_by_label("Tag").select_option("launch")
    page.get_by_text("1 result").wait_for()
    tab.screenshot("search")
    assert tab.axe() == []
    page.get_by_label("Words").press("Enter")
    page.locator(".note-path", has_text="Launch.md").wait_for()


def test_import_and_export_run_as_jobs_with_progress_refusals_and_a_report(
    tab: Page, tmp_path: Path
) -> None:
    body = "Some words about the launch plan. " * 200  # ~7 KB a note, stored uncompressed
    good = tmp_path / "vault.zip"
    good.write_bytes(
        archive({f"imported/n{i}.md": f"# Note {i}\n\n[[n{i + 1}]]\n{body}" for i in range(40)})
    )
    bad = tmp_path / "bad.zip"
    bad.write_bytes(archive({"ok.md": "# fine\n", "big.md": "x" * (1024 * 1024 + 10)}))
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 this is not really a zip archive" * 40)
    tab.sign_in_with_key()
    page = tab.page
    uploads: list[tuple[str, dict[str, str]]] = []
    page.on(
        "request",
        lambda r: uploads.append((r.url, r.headers)) if r.method == "PUT" else None,
    )
    # A slow uplink (about 1.2 s for the 290 KB archive), so the upload's progress shows.
    cdp = page.context.new_cdp_session(page)
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 250_000},
    )
    page.get_by_role("link", name="Import & export").click()
    page.get_by_label("Archive (.zip)").set_input_files(str(good))
    page.get_by_role("button", name="Import", exact=True).click()
    bar = page.locator("#import-bar")
    page.locator(".import-progress", has_text="Uploading the archive:").wait_for()
    page.wait_for_function(
        "() => { const b = document.querySelector('#import-bar');"
        " return b && b.value > 0 && b.value < 1; }"
    )
    tab.screenshot("import-uploading")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )
    summary = page.locator(".summary", has_text="Imported")
    summary.wait_for()
    assert bar.count() == 0  # the bar goes once the job has ended
    stats = summary.inner_text()
    assert "Created\n40" in stats and "Updated\n0" in stats and "Unchanged\n0" in stats
    assert note_count(tab.server) == 40
    # The archive went to the job's own upload URL, authorised by its token alone.
    assert len(uploads) == 1
    url, headers = uploads[0]
    assert re.search(r"/v1/imports/imp_[^/]+/upload\?token=", url)
    assert not {"authorization", "x-csrf-token"} & {h.lower() for h in headers}
    jobs = page.locator("table.jobs tbody tr")
    jobs.filter(has_text="vault.zip").filter(has_text="40 created").wait_for()
    tab.screenshot("import-done")

    page.get_by_label("Archive (.zip)").set_input_files(str(bad))
    page.get_by_role("button", name="Import", exact=True).click()
    refusal = page.locator(".refusal")
    refusal.wait_for()
    text = refusal.inner_text()
    assert "big.md" in text  # which file
    assert re.search(r"1[,.]?048[,.]?576|1 MB|1 MiB", text)  # which limit
    assert "untouched" in text
    assert note_count(tab.server) == 40
    jobs.filter(has_text="bad.zip").filter(has_text="failed").wait_for()
    tab.screenshot("import-refused")
    assert tab.axe() == []

    page.get_by_label("Archive (.zip)").set_input_files(str(broken))
    page.get_by_role("button", name="Import", exact=True).click()
    page.locator(".refusal", has_text="not a zip archive").wait_for()
    assert page.locator(".summary", has_text="Imported").count() == 0
    assert note_count(tab.server) == 40

    page.get_by_role("button", name="Export the vault").click()
    link = page.get_by_role("link", name="Download the vault (.zip)")
    link.wait_for()
    assert "40 notes" in page.locator(".summary", has_text="Exported").inner_text()
    assert re.search(r"/v1/exports/exp_[^/]+/download\?token=", link.get_attribute("href") or "")
    with page.expect_download() as download:
        link.click()
    saved = tmp_path / "export.zip"
    download.value.save_as(saved)
    with zipfile.ZipFile(saved) as z:
        assert len([n for n in z.namelist() if n.endswith(".md")]) == 40
    jobs.filter(has_text="Export").get_by_role("link", name=re.compile("Download")).wait_for()
    tab.screenshot("export-done")
    assert tab.axe() == []
    assert tab.errors == []


def test_keys_are_created_shown_once_and_revoked(tab: Page) -> None:
    tab.sign_in_with_key()
    page = tab.page
    page.get_by_role("link", name="Keys").click()
    page.get_by_role("button", name="Create a key").click()
    form = page.get_by_role("dialog", name="Create a key")
    form.get_by_label("Name").fill("ci-bot")
    form.get_by_role("button", name="Create").click()
    shown = page.get_by_role("dialog", name="Your new key")
    secret = shown.locator(".secret-value").inner_text().strip()
    assert secret.startswith("mvk_")
    text = shown.inner_text()
    for snippet in ("OpenAI SDK", "Anthropic SDK", "curl", "MCP client config", "mcpServers"):
        assert snippet in text
    tab.screenshot("key-created")
    assert tab.axe() == []
    with tab.server.client(secret) as http:
        assert http.get("/v1/notes").status_code == 200
    shown.get_by_role("button", name="I have copied it").click()
    row = page.get_by_role("row", name=re.compile("ci-bot"))
    # The switch saves at once (PATCH /v1/keys/{id}); revoke once that is answered.
    with page.expect_response(lambda r: r.request.method == "PATCH" and "/v1/keys/" in r.url):
        row.get_by_role("switch", name="mcp for ci-bot").check()
    row.get_by_role("button", name="Revoke ci-bot").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    page.get_by_text("Revoked ci-bot").wait_for()
    with tab.server.client(secret) as http:
        assert http.get("/v1/notes").status_code == 401
    tab.screenshot("keys")


def test_session_expiry_keeps_the_unsaved_edit(tab: Page) -> None:
    put(tab.server, "e.md", "# E\n")
    tab.start_session_with_key()
    tab.open_note("e.md")
    page = tab.page
    tab.set_editor_text("# E\n\nwritten while the session ended\n")
    page.context.clear_cookies()  # the session is gone (expired, or signed out elsewhere)
    page.keyboard.press("Control+s")
    dialog = page.get_by_role("dialog", name="Your session has ended")
    dialog.wait_for()
    tab.screenshot("session-expired")
    dialog.get_by_role("radio", name="API key").click()
    dialog.get_by_label("API key").fill(tab.server.admin_key)
    dialog.get_by_role("button", name="Sign in").click()
    page.get_by_text("Saved · version 2").wait_for()
    assert read(tab.server, "e.md")["markdown"] == "# E\n\nwritten while the session ended\n"


def test_every_page_renders_accessibly_in_both_themes(tab: Page) -> None:
    put(tab.server, "a.md", "# A\n\n#tag [[b]]\n")
    tab.start_session_with_key()
    page = tab.page
    for name, path in [
        ("usage", "/dashboard/usage"),
        ("balance", "/dashboard/balance"),
        ("members", "/dashboard/members"),
        ("memories", "/dashboard/memories"),
        ("import", "/dashboard/import"),
    ]:
        tab.goto(path)
        page.locator("main h1").wait_for()
        page.wait_for_load_state("networkidle")
        tab.screenshot(name)
        assert tab.axe() == [], name
    tab.open_note("a.md")
    page.get_by_role("button", name="Theme: system. Change theme").click()
    page.get_by_role("button", name="Theme: light. Change theme").click()
    page.get_by_role("button", name="Theme: dark. Change theme").wait_for()
    page.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
    tab.screenshot("note-dark")
    assert tab.axe() == []


def test_password_sign_in_and_what_each_role_sees(tab: Page) -> None:
    password = "correct horse battery staple"
    with tab.server.client() as http:
        invited = http.post("/v1/invitations", json={"email": "mia@example.com", "role": "member"})
        assert invited.status_code == 201, invited.text
        accepted = http.post(
            "/v1/invitations/accept",
            json={"token": invited.json()["token"], "name": "Mia", "password": password},
        )
        assert accepted.status_code == 201, accepted.text
    page = tab.page
    tab.sign_in_with_password("mia@example.com", password)
    nav = page.get_by_role("navigation", name="Main")
    nav.get_by_role("link", name="Vault").wait_for()
    assert nav.get_by_role("link", name="Members").count() == 0
    assert nav.get_by_role("link", name="Balance").count() == 0
    assert page.locator(".who").inner_text().startswith("Mia")
    tab.goto("/dashboard/members")
    page.get_by_role("heading", name="Not here").wait_for()
    tab.screenshot("member-view")
    page.get_by_role("button", name="Sign out").click()
    page.get_by_role("heading", name="Sign in").wait_for()

    tab.sign_in_with_key()  # the owner
    nav.get_by_role("link", name="Members").click()
    page.get_by_role("row", name=re.compile("Mia")).wait_for()
    page.get_by_role("combobox", name="Role of Mia").wait_for()
    tab.screenshot("members")
    assert tab.axe() == []
