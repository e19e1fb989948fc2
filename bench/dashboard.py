"""The dashboard's figures: compressed script on the vault page, and opening a note in a
10,000-note vault until its preview is painted. Printed, never asserted.

    .venv/bin/python bench/dashboard.py [--notes 10000] [--opens 20] [--files 0]

memvault runs on the embedded backend on a server of its own; Debian's chromium
(headless, via Playwright) signs in with the admin key, opens a hub note, then follows
its wikilinks one by one. Each opening is measured by the page itself, from the click's
``mv:navigate`` mark to the frame that paints the preview (``mv:note-open``). Two
figures: from a vault page whose note index is loaded (back to the hub through the
browser's history between openings, as someone moving among notes), and right after a
page load (the hub loaded afresh before each opening, the index of a large vault still
arriving while the link is clicked). With ``--files N``, N small PNG attachments sit
beside the notes (the first N notes embed one each, so an opening draws an image), and a
third figure: the tree filtered to them (one flat list of up to 5,000 rows) scrolled a
screen a frame, its frame times and how many rows are in the DOM.
"""

from __future__ import annotations

import argparse
import io
import struct
import tempfile
import zipfile
import zlib
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


def tiny_png(seed: int) -> bytes:
    """A valid 8x8 PNG of one colour (no imaging library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    row = b"\x00" + bytes((seed % 256, 79, 201)) * 8
    header = struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * 8))
        + chunk(b"IEND", b"")
    )


def vault_zip(notes: int, opens: int, files: int = 0) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(notes):
            embed = f"\n![[pic {i}.png]]\n" if i < files else ""
            z.writestr(
                f"area{i % 50}/folder{i % 7}/note {i}.md",
                f"---\ntags: [t{i % 20}]\n---\n# Note {i}\n\n{BODY.format(i=i)}\n\n"
                f"See [[note {(i + 1) % notes}]] #topic/{i % 9}\n{embed}",
            )
        for i in range(files):
            z.writestr(f"area{i % 50}/img/pic {i}.png", tiny_png(i))
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
    parser.add_argument("--files", type=int, default=0)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as data:
        svc = build_services(Settings(backend="sqlite", data_dir=Path(data)))
        issued = svc.accounts.bootstrap_local()
        assert issued is not None
        log(f"importing {args.notes} notes")
        caller = Caller(account_id=LOCAL_ACCOUNT_ID, surface=Surface.REST)
        svc.transfer.import_zip(caller, io.BytesIO(vault_zip(args.notes, args.opens, args.files)))
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
            scroll = tree_scroll(page) if args.files else None
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
    if scroll is not None:
        frames, rows, in_dom = scroll
        frames.sort()
        p90 = common.percentile_nearest_rank(frames, 90)
        print(
            f"tree filtered to {rows} attachments, scrolled a screen a frame: frame median "
            f"{frames[len(frames) // 2]:.1f} ms, p90 {p90:.1f} ms, max {frames[-1]:.1f} ms over "
            f"{len(frames)} frames; {in_dom} rows in the DOM"
        )


def tree_scroll(page: Any) -> tuple[list[float], int, int]:
    """Filter the tree to the attachments, then scroll it a screen a frame to its end."""
    page.locator(".tree-row").first.wait_for()
    page.wait_for_function(
        "() => !document.querySelector('.vault-side')?.textContent.includes('Loading notes')"
    )
    page.get_by_label("Filter notes by name").fill("pic ")
    page.locator(".tree-row.file").first.wait_for()
    found: dict[str, Any] = page.evaluate(
        """async () => {
            const el = document.querySelector('.tree-scroll');
            const rows = el.querySelector('.tree').offsetHeight / 28;
            const times = [];
            let last = performance.now();
            let inDom = 0;
            while (el.scrollTop + el.clientHeight < el.scrollHeight - 1) {
                el.scrollTop += el.clientHeight;
                await new Promise(r => requestAnimationFrame(r));
                const now = performance.now();
                times.push(now - last);
                last = now;
                inDom = Math.max(inDom, el.querySelectorAll('.tree-row').length);
            }
            return {times, rows, inDom};
        }"""
    )
    return [float(t) for t in found["times"]], int(found["rows"]), int(found["inDom"])


if __name__ == "__main__":
    main()
