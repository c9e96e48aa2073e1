"""`make bench`, first pictures: on every lesson page with a lab, when its first lab (in page
order) is drawn, the build's precomputed result, against the page's own DOMContentLoaded
(``domContentLoadedEventEnd``), both from navigation start, in headless Chromium. "Drawn" is
when the controller sets the lab's ``data-status`` (right after its widget rendered, where it
marks ``lab:initial``), seen by a MutationObserver the bench adds before the page's scripts:
the mark alone would not say which lab it was. Each run is a cold visit (a fresh browser
context: empty HTTP and code cache); the lessons are visited in turn, run after run, so a
busy machine slows them alike. Python starts as the page opens (the head's script,
hooks/preload.py), as for any reader: the first picture must not wait for it nor slow down.
Target ≤ 1.0×: the lab is drawn with the text, not after it (build_scripts/hooks/preload.py
has the head import every widget).

Its rows (``rows``, the contract of bench/contract.py) go into bench-results/REPORT.md
(bench_report.py). A benchmark, not a test: it asserts nothing.

Usage: python -m build_scripts.bench.bench_pictures [--runs 5]
"""

from __future__ import annotations

import re
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from build_scripts.bench.contract import Row, med, run_alone  # noqa: E402
from build_scripts.gates.browser import launch  # noqa: E402
from build_scripts.serve import make_server  # noqa: E402

TARGET = 1.0
LAB_CONFIG = re.compile(r'<div class="attn-lab" data-lab="([a-z_]+)"')

# Before the page's scripts: when the page's first lab gets its data-status.
WATCH_JS = """new MutationObserver((records, observer) => {
  const first = document.querySelector('.attn-lab');
  if (first && records.some((r) => r.target === first)) {
    window.benchPicture = performance.now();
    observer.disconnect();
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-status'] });"""

PICTURE_JS = """() => ({
  dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd,
  picture: window.benchPicture })"""


def lesson_pages(site: Path) -> dict[str, list[str]]:
    """Every lesson page of the built ``site`` with a lab: its path -> its labs, in page order."""
    out = {}
    for page in sorted((site / "lessons").glob("*/index.html")):
        labs = LAB_CONFIG.findall(page.read_text("utf-8"))
        if labs:
            out[f"lessons/{page.parent.name}/"] = labs
    return out


def visit(browser, url: str) -> dict:
    """One cold visit: {dcl, picture} in ms from navigation start."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        page.add_init_script(WATCH_JS)
        page.goto(url)
        page.wait_for_function("() => window.benchPicture !== undefined", timeout=60_000)
        return page.evaluate(PICTURE_JS)
    finally:
        context.close()


def run(runs: int = 5, site: Path = ROOT / "site") -> dict[str, list[dict]]:
    """{lesson path: [{dcl, picture} per run]}."""
    from playwright.sync_api import sync_playwright

    lessons = lesson_pages(site)
    httpd = make_server(site, 0, site_url=None)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}/"
    results: dict[str, list[dict]] = {path: [] for path in lessons}
    try:
        with sync_playwright() as pw:
            browser = launch(pw)
            try:
                for _ in range(runs):
                    for path in lessons:
                        results[path].append(visit(browser, base + path))
            finally:
                browser.close()
    finally:
        httpd.shutdown()
    return results


def rows(args) -> list[Row]:
    """One row per lesson with a lab: its first picture over its DOMContentLoaded."""
    site = ROOT / "site"
    lessons = lesson_pages(site)
    results = run(args.runs, site)
    out = []
    for path, visits in results.items():
        ratios = [v["picture"] / v["dcl"] for v in visits if v.get("picture")]
        name = path.removeprefix("lessons/").rstrip("/")
        worst = max(ratios)
        out.append(
            Row(
                f"first picture, {name}",
                "lab's first picture / page's DOMContentLoaded",
                f"{statistics.median(ratios):.2f}× ({min(ratios):.2f}–{worst:.2f})",
                f"first lab {lessons[path][0]}: its data-status set, over "
                f"domContentLoadedEventEnd; target ≤ {TARGET:.1f}×; first picture "
                + med([v["picture"] for v in visits])
                + ", DOMContentLoaded "
                + med([v["dcl"] for v in visits])
                + f"; {len(visits)} cold runs, Chromium",
            )
        )
    return out


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
