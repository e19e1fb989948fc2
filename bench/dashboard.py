"""The dashboard's figures: compressed script on the vault page, and opening a note in a
10,000-note vault until its preview is painted. Printed, never asserted.

    .venv/bin/python bench/dashboard.py [--notes 10000] [--opens 20]

memvault runs on the embedded backend on a server of its own; Debian's chromium
(headless, via Playwright) signs in with the admin key, opens a hub note, then follows
its wikilinks one by one. Each opening is measured by the page itself, from the click's
``mv:navigate`` mark to the frame that paints the preview (``mv:note-open``). Two
figures: from a vault page whose note index is loaded (back to the hub through the
browser's history between openings, as someone moving among notes), and right after a
page load (the hub loaded afresh before each opening, the index of a large vault still
arriving while the link is clicked).
"""

from __future__ import annotations

import argparse
import io
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import common
from common import log
from memvault.api.app import create_app
from memvault.container import build_services
from memvault.services.accounts import LOCAL_ACCOUNT_ID
from memvault.services.context import Caller, Surface
from memvault.settings import Settings
from tests.support.servers import serve_app

BODY = "Some words about topic {i}, the beta, the launch and the plan. " * 12


def vault_zip(notes: int, opens: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(notes):
            z.writestr(
                f"area{i % 50}/folder{i % 7}/note {i}.md",
                f"---\ntags: [t{i % 20}]\n---\n# Note {i}\n\n{BODY.format(i=i)}\n\n"
                f"See [[note {(i + 1) % notes}]] #topic/{i % 9}\n",
            )
        hub = "\n".join(f"- [[note {i * 37 % notes}]]" for i in range(opens))
        z.writestr("Hub.md", f"# Hub\n\n{hub}\n")
    return buffer.getvalue()


def opens(page: Any, count: int, back: Callable[[], object], on_hub: bool) -> list[float]:
    """Open the hub's first ``count`` links one by one; ``back`` returns to the hub."""
    times: list[float] = []
    for i in range(count):
        if i or not on_hub:
            back()
        link = page.locator(".markdown-body a.wikilink").nth(i)
        link.wait_for()
        page.evaluate("() => performance.clearMeasures('mv:note-open')")
        link.click()
        page.wait_for_function("() => performance.getEntriesByName('mv:note-open').length > 0")
        times.append(
            float(page.evaluate("() => performance.getEntriesByName('mv:note-open')[0].duration"))
        )
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--opens", type=int, default=20)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as data:
        svc = build_services(Settings(backend="sqlite", data_dir=Path(data)))
        issued = svc.accounts.bootstrap_local()
        assert issued is not None
        log(f"importing {args.notes} notes")
        caller = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)
        svc.transfer.import_zip(caller, io.BytesIO(vault_zip(args.notes, args.opens)))
        with serve_app(create_app(svc)) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1366, "height": 820})
            page.goto(url + "/")
            page.get_by_role("radio", name="API key").click()
            page.get_by_label("API key").fill(issued.secret)
            page.get_by_role("button", name="Sign in").click()
            page.get_by_role("navigation", name="Main").wait_for()
            page.goto(url + "/dashboard/vault/Hub.md")
            page.locator(".cm-content").wait_for()
            page.wait_for_load_state("networkidle")
            scripts = page.evaluate(
                """() => performance.getEntriesByType('resource')
                    .filter(r => r.name.endsWith('.js'))
                    .map(r => [r.name.split('/').pop(), r.encodedBodySize, r.decodedBodySize])"""
            )
            page.locator(".tree-row").first.wait_for()
            loaded = page.evaluate("() => document.querySelector('.side-title .count').textContent")
            log(f"tree shows {loaded} notes")
            warm = opens(page, args.opens, page.go_back, on_hub=True)
            hub = url + "/dashboard/vault/Hub.md"
            cold = opens(page, args.opens, lambda: page.goto(hub), on_hub=False)
            browser.close()
    compressed = sum(s[1] for s in scripts)
    print(
        f"vault page script: {compressed / 1024:.1f} KB compressed "
        f"({sum(s[2] for s in scripts) / 1024:.1f} KB raw) in {len(scripts)} files "
        f"(target: under 300 KB)"
    )
    for name, enc, dec in scripts:
        print(f"  {name}: {enc / 1024:.1f} KB compressed, {dec / 1024:.1f} KB raw")
    for name, times in (("index loaded", warm), ("right after a page load", cold)):
        times.sort()
        print(
            f"open a note in a {args.notes}-note vault to a painted preview, {name}: median "
            f"{times[len(times) // 2]:.0f} ms, p90 {common.percentile_nearest_rank(times, 90):.0f}"
            f" ms, max {times[-1]:.0f} ms over {len(times)} opens (target: under 150 ms)"
        )


if __name__ == "__main__":
    main()
