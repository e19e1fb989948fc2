"""The dashboard in a real browser: headless Chromium (Debian's package) driven by
Playwright for Python, against memvault on a real HTTP server (the shared test server).

One browser for the package (its tests run first, on one worker: tests/conftest.py),
closed after its last test, and one tab, handed from test to test with nothing of the last
one left in it (no cookies, storage, cache, listeners or routes: ``_Tabs``), or a new tab
after a test that failed; each test has its own app over fresh storage. Without Chromium
or the built dashboard the browser tests are skipped with the reason, except under
``CI=true``, where they fail: ``.ci/run`` installs the browser and ``make test`` builds
the dashboard first.

axe-core comes from the dashboard's own npm packages (``dashboard/node_modules``). It is
evaluated into the page when a test first asks for ``axe()`` on that document, through
the DevTools protocol (``page.evaluate``), which the page's Content-Security-Policy does
not govern: ``add_script_tag`` would insert an inline ``<script>``, which the CSP rightly
refuses. As an init script it was compiled into every document and frame the tests
opened, ``about:blank`` included: 0.4 s of Chromium's CPU for each new page alone.

Screenshots are taken only under ``MEMVAULT_SCREENSHOTS=1`` (to
tests/dashboard/screenshots/, not committed): no assertion reads them, and each cost
about 0.1 s of Chromium's CPU, 35 of them a run.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault.dashboard.serving import STATIC_DIR
from tests.support.servers import LiveServer

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(__file__).parent / "screenshots"
AXE = ROOT / "dashboard" / "node_modules" / "axe-core" / "axe.min.js"
_AXE_SOURCE: list[str] = []  # read once, when first needed
VIEWPORT = {"width": 1366, "height": 820}
_EDITOR_TEXT = (
    "() => [...document.querySelectorAll('.cm-content .cm-line')]"
    ".map(l => l.textContent).join('\\n')"
)


def _chromium() -> str | None:
    found = os.environ.get("MEMVAULT_CHROMIUM") or shutil.which("chromium")
    if found:
        return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def _missing() -> str | None:
    if _chromium() is None:
        return "Chromium is not installed (apt-get install chromium; .ci/run does it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (make install)"
    if not (STATIC_DIR / "index.html").is_file():
        return "the dashboard is not built (make dashboard)"
    if not AXE.is_file():
        return "axe-core is missing (make dashboard installs dashboard/node_modules)"
    return None


def require_browser() -> None:
    reason = _missing()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"browser tests cannot run under CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(params=["sqlite"])
def backend(request: pytest.FixtureRequest) -> str:
    """The dashboard is a client of the REST API, whose backends the contract suite covers."""
    return str(request.param)


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
        chromium = p.chromium.launch(executable_path=_chromium(), args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


class Page:
    """A browser tab on one live server, with the helpers the tests share."""

    def __init__(self, page: Any, server: LiveServer) -> None:
        self.page = page
        self.server = server
        self.errors: list[str] = []
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def goto(self, path: str) -> None:
        self.page.goto(self.server.url + path)

    def sign_in_with_key(self, key: str | None = None) -> None:
        page = self.page
        self.goto("/")
        page.get_by_role("radio", name="API key").click()
        page.get_by_label("API key").fill(key or self.server.admin_key)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("navigation", name="Main").wait_for()

    def sign_in_with_password(self, email: str, password: str) -> None:
        page = self.page
        self.goto("/")
        page.get_by_label("Email").fill(email)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("navigation", name="Main").wait_for()

    def start_session_with_key(self, key: str | None = None) -> None:
        """Signed in without drawing the sign-in page: POST /v1/sessions, as the page
        sends it, from this tab's context (its cookie jar takes the session cookie), for
        a test whose next step opens a page of its own (``goto``, ``open_note``).

        Signing in through the page loaded the app twice (the sign-in page, then the
        vault it lands on) before the page the test is about: ~1 s of Chromium's CPU a
        test. The sign-in page itself is what test_sign_in_with_a_key_then_sign_out,
        test_password_sign_in_and_what_each_role_sees and the stage-prefix and
        session-expiry tests drive; the tests that stay on the page sign-in lands on
        still sign in through it."""
        self._start_session({"api_key": key or self.server.admin_key})

    def start_session_with_password(self, email: str, password: str) -> None:
        """``start_session_with_key``, for a person's email and password."""
        self._start_session({"email": email, "password": password})

    def _start_session(self, credentials: dict[str, str]) -> None:
        answer = self.page.request.post(self.server.url + "/v1/sessions", data=credentials)
        assert answer.ok, answer.text()
        assert any(c["httpOnly"] for c in self.page.context.cookies(self.server.url))

    def open_note(self, path: str) -> None:
        self.goto("/dashboard/vault/" + path)
        self.page.locator(".cm-content").wait_for()
        self.page.locator(".markdown-body").wait_for()

    def editor_text(self) -> str:
        """The editor's text, from its lines (a short note: all of them are drawn)."""
        return str(self.page.evaluate(_EDITOR_TEXT))

    def set_editor_text(self, text: str) -> None:
        """Replace the editor's text the way a person would: select all, type."""
        self.page.locator(".cm-content").click()
        self.page.keyboard.press("Control+a")
        self.page.keyboard.insert_text(text)

    def screenshot(self, name: str) -> None:
        """The page as a PNG, to look at by eye; only under MEMVAULT_SCREENSHOTS=1."""
        if os.environ.get("MEMVAULT_SCREENSHOTS") != "1":
            return
        SCREENSHOTS.mkdir(exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))

    def axe(self) -> list[dict[str, Any]]:
        """The serious and critical accessibility violations axe-core finds on the page."""
        if not self.page.evaluate("() => typeof window.axe === 'object'"):
            if not _AXE_SOURCE:
                _AXE_SOURCE.append(AXE.read_text(encoding="utf-8"))
            self.page.evaluate(_AXE_SOURCE[0])
        found: list[dict[str, Any]] = self.page.evaluate(
            """async () => {
                const r = await axe.run(document, {resultTypes: ['violations']});
                return r.violations
                    .filter(v => v.impact === 'serious' || v.impact === 'critical')
                    .map(v => ({id: v.id, impact: v.impact, help: v.help,
                                nodes: v.nodes.slice(0, 4).map(n => n.target.join(' '))}));
            }"""
        )
        return found


_CALL_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Notes a failed test, for ``tab`` to discard its tab rather than hand it on."""
    report = yield
    if report.failed:
        item.stash[_CALL_FAILED] = True
    return report


class _Tabs:
    """The package's one browser tab, handed from test to test, or a new one after a test
    that failed or left it in a state it cannot be reset from.

    A tab's first page costs Chromium a new renderer process, which then compiles the
    dashboard's scripts cold: about 1 s of CPU a test, against 0.4 s for the same page in
    a tab that has drawn it before (a new browser context with a new tab each test paid it
    every time; a shared context with a new tab does too). Between tests the tab is left
    with nothing of the last one: its listeners and routes removed, the origin's
    localStorage and sessionStorage emptied, the HTTP cache cleared, on about:blank; and
    the next test starts with no cookies. Each test still has its own app, storage and
    admin key (``live_server``).
    """

    def __init__(self, browser: Any) -> None:
        self.browser = browser
        self.context: Any = None
        self.page: Any = None
        self.cdp: Any = None

    def take(self) -> Any:
        if self.page is None:
            self.context = self.browser.new_context(viewport=VIEWPORT, accept_downloads=True)
            self.page = self.context.new_page()
            self.page.set_default_timeout(10_000)
            self.cdp = self.context.new_cdp_session(self.page)
        self.context.clear_cookies()
        return self.page

    def reset(self, server: LiveServer, listeners: list[tuple[str, Any]]) -> None:
        """Leave the tab as ``take`` made it; on any trouble, close it (a new one next)."""
        page = self.page

        def leave(dialog: Any) -> None:
            # An unsaved edit asks before the page is left (drafts.ts): leave it anyway.
            if dialog.type == "beforeunload":
                dialog.accept()
            else:
                dialog.dismiss()

        try:
            for event, handler in listeners:
                page.remove_listener(event, handler)
            page.unroute_all(behavior="ignoreErrors")
            page.on("dialog", leave)
            # On the server's origin, with no app running to write to its storage again.
            page.goto(server.url + "/favicon.svg")
            page.remove_listener("dialog", leave)
            page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
            self.cdp.send("Network.clearBrowserCache")
            page.goto("about:blank")
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        context, self.context, self.page, self.cdp = self.context, None, None, None
        if context is not None:
            context.close()


@pytest.fixture(scope="package")
def tabs(browser: Any) -> Iterator[_Tabs]:
    made = _Tabs(browser)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def tab(request: pytest.FixtureRequest, tabs: _Tabs, live_server: LiveServer) -> Iterator[Page]:
    page = tabs.take()
    # What the test listens to on the page, to be removed before the next test's turn.
    listeners: list[tuple[str, Any]] = []

    def on(event: str, handler: Any) -> None:
        listeners.append((event, handler))
        type(page).on(page, event, handler)

    page.on = on
    try:
        wrapped = Page(page, live_server)
        yield wrapped
    finally:
        del page.on
        if request.node.stash.get(_CALL_FAILED, False):
            tabs.close()
        else:
            tabs.reset(live_server, listeners)
    assert wrapped.errors == [], f"uncaught errors in the page: {wrapped.errors}"
