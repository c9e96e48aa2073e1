"""The browser gates of build_scripts/check_site.py: axe-core in light and dark with the labs
expanded and started, text alternatives for canvases, offline (nothing from another host,
nothing missing, the lab starts), and the per-page budget.

First the real built site must pass them all; then a copy of docs/ with deliberately broken
pages, built by the real `mkdocs build --strict`, must fail each with a useful message."""

from __future__ import annotations

import base64
import json
import random
import re

import pytest
from helpers import SITE, mkdocs_build, project_copy

from build_scripts.compress import compress_site
from build_scripts.gates.check_site import (
    PageBytes,
    budget_problems,
    budget_table,
    check_site,
    load_budget,
    site_pages,
)

pytestmark = pytest.mark.slow  # the browser gates on every page

# ----------------------------------------------------------------------------
# (a) the real site


@pytest.fixture(scope="module")
def real_report(browser, site_url):
    if not (SITE / "index.html").is_file():
        pytest.fail("site/ is not built: run `make build` (make test does it first)")
    return check_site(SITE, browser, site_url=site_url)


def test_every_page_passes_axe_offline_and_budget(real_report):
    print("\n" + budget_table(real_report.bytes, load_budget()))
    assert real_report.problems == [], "\n".join(real_report.problems)


def test_every_page_was_checked_and_the_lab_payload_measured(real_report):
    checked = [r.page for r in real_report.bytes]
    assert checked == site_pages(SITE)
    assert "" in checked and "404.html" in checked
    lesson = next(r for r in real_report.bytes if r.page == "lessons/03-attention-pattern/")
    assert 10e6 < lesson.payload < 20e6  # Pyodide + NumPy + the labs wheel, uncompressed
    assert all(0 < r.initial_sent < r.initial_raw for r in real_report.bytes)  # gzip as sent


def test_pages_fetch_only_the_site_code_they_use(real_report):
    by_page = {r.page: r for r in real_report.bytes}
    for page in ("", "about/", "404.html"):
        assert by_page[page].heavy_code_sent() == 0, by_page[page].code
        assert "labs" not in by_page[page].code and "main" in by_page[page].code
    lesson = by_page["lessons/03-attention-pattern/"]
    assert {"main", "runtime", "labs"} <= set(lesson.code)
    assert by_page["explorer/"].code.get("explorer", 0) > 0


# ----------------------------------------------------------------------------
# (b) broken pages

PIXEL = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4"/></svg>'
BROKEN = {
    "broken/no-alt.md": '# No alt\n\n<img src="../pixel.svg" width="40" height="40">\n',
    "broken/external.md": (
        "# External\n\n"
        '<img src="https://example.com/logo.png" alt="The example logo" width="40" height="40">\n'
        '<div style="height: 5000px"></div>\n'  # a lazy image far below is never fetched...
        '<img loading="lazy" src="//example.org/far.png" alt="Far" width="4" height="4">\n'
    ),
    "broken/canvas.md": '# Canvas\n\n<canvas class="my-heatmap" width="40" height="40"></canvas>\n',
    "broken/heavy.md": '# Heavy\n\n<script src="../heavy.js"></script>\n',
    "broken/missing.md": '# Missing\n\n<script src="../no-such-file.js"></script>\n',
    # Faults that only the dark palette shows (Material hides an "#only-dark" image in
    # light; dark grey text is fine on white, unreadable on slate): the page is switched
    # live from light to dark, and must fail there.
    "broken/dark-only.md": (
        "# Dark only\n\n"
        '<img src="../pixel.svg#only-dark" width="40" height="40">\n\n'
        '<p style="color: #333">Dark grey text.</p>\n'
    ),
    "broken/pixel.svg": PIXEL,
    # Random text: gzip cannot shrink it much (~680 kB as sent).
    "broken/heavy.js": "// "
    + base64.b64encode(random.Random(0).randbytes(675_000)).decode()
    + "\n",
}


@pytest.fixture(scope="module")
def broken_report(tmp_path_factory, browser):
    tmp = tmp_path_factory.mktemp("broken")
    config = project_copy(tmp, pages=BROKEN)
    proc, output = mkdocs_build(tmp / "site", config)
    assert proc.returncode == 0, output  # these are not build errors: only the browser sees them
    compress_site(tmp / "site")  # as `make build` does: the budget counts bytes as sent
    pages = [f"broken/{name}/" for name in ("no-alt", "external", "canvas", "heavy", "missing")]
    report = check_site(
        tmp / "site", browser, pages, schemes=("light",), start_labs=False, docs=tmp / "docs"
    )
    report.site = tmp / "site"
    return report


def problems_of(report, page):
    return [p for p in report.problems if p.startswith(f"docs/broken/{page}.md (page /broken/")]


def test_image_without_alt_fails_axe_naming_page_rule_and_element(broken_report):
    (message,) = problems_of(broken_report, "no-alt")
    assert (
        "docs/broken/no-alt.md (page /broken/no-alt/, light): axe critical 'image-alt'" in message
    )
    assert "at img (Element does not have an alt attribute)" in message
    assert "dequeuniversity.com/rules/axe/" in message  # where to read how to fix it


def test_faults_only_the_dark_palette_shows_fail_there(broken_report, browser):
    site = broken_report.site
    report = check_site(
        site, browser, ["broken/dark-only/"], start_labs=False, docs=site.parent / "docs"
    )
    where = "docs/broken/dark-only.md (page /broken/dark-only/, "
    assert not [p for p in report.problems if p.startswith(where + "light")], report.problems
    dark = [p for p in report.problems if p.startswith(where + "dark)")]
    assert len(dark) == 2, report.problems
    assert "axe critical 'image-alt'" in dark[0] or "axe critical 'image-alt'" in dark[1]
    assert any("axe serious 'color-contrast'" in p for p in dark), dark
    assert len(report.problems) == 2, report.problems


def test_page_requesting_an_external_url_fails_with_the_url(broken_report):
    near, far = problems_of(broken_report, "external")
    assert near.startswith(
        "docs/broken/external.md (page /broken/external/, light): "
        "asks for https://example.com/logo.png: a page may load nothing from another host"
    )
    assert "vendor the file" in near
    assert "asks for //example.org/far.png" in far  # ...but its HTML is read too


def test_canvas_without_text_alternative_fails(broken_report):
    (message,) = problems_of(broken_report, "canvas")
    assert '<canvas class="my-heatmap"' in message
    assert 'has no text alternative: give it role="img" and an aria-label' in message


def test_page_over_budget_fails_with_the_numbers(broken_report):
    (message,) = problems_of(broken_report, "heavy")
    assert "docs/broken/heavy.md (page /broken/heavy/)" in message
    assert "kB of HTML+CSS+JS before any lab starts" in message
    assert re.search(r"\(html \d+ kB, css \d+ kB, js \d{3} kB\)", message)  # where it goes
    assert f"over the budget of {load_budget()['default']['initial_kb']} kB" in message
    assert "build_scripts/gates/budget.json" in message
    heavy = next(r for r in broken_report.bytes if r.page == "broken/heavy/")
    assert heavy.initial_sent > 700_000


def test_missing_file_fails_with_status_and_url(broken_report):
    (message,) = problems_of(broken_report, "missing")
    assert "404 http://127.0.0.1:" in message and "/broken/no-such-file.js" in message
    assert "missing from the built site" in message


def test_lab_that_cannot_start_offline_fails_saying_what_the_lab_says(broken_report, browser):
    site = broken_report.site
    # NumPy as the runtime loads it: the archive of the wheel precompiled at vendor time
    pre = json.loads((site / "vendor" / "manifest.json").read_text("utf-8"))["precompiled"]
    numpy = site / "vendor" / pre["archives"]["numpy"]
    numpy.unlink()  # as if the vendored runtime were incomplete
    lesson = "lessons/03-attention-pattern/"
    report = check_site(site, browser, [lesson], schemes=("light",), docs=site.parent / "docs")
    where = f"docs/{lesson[:-1]}.md (page /{lesson}, light)"
    missing = [p for p in report.problems if "a file the page asks for is missing" in p]
    assert missing and missing[0].startswith(f"{where}: 404 ") and numpy.name in missing[0]
    (failed,) = [p for p in report.problems if "did not start" in p]
    assert failed.startswith(f"{where}: the lab did not start from the local site")
    assert "NumPy" in failed and "make vendor" in failed


# ----------------------------------------------------------------------------
# (c) the budget arithmetic


def test_lab_payload_over_budget_fails_with_the_numbers():
    record = PageBytes("lessons/x/", sent={"html": 10_000}, raw={"html": 30_000}, payload=25e6)
    budget = {"default": {"initial_kb": 500, "lab_payload_mb": 20}, "pages": {}}
    (message,) = budget_problems([record], budget, lambda page: f"docs/{page}")
    assert message.startswith("docs/lessons/x/: its lab fetches 25.0 MB")
    assert "over the budget of 20 MB" in message


def test_a_page_entry_in_the_budget_file_overrides_the_default():
    record = PageBytes("big/", sent={"js": 700_000}, raw={"js": 2_000_000})
    budget = {"default": {"initial_kb": 500, "lab_payload_mb": 20}, "pages": {}}
    assert budget_problems([record], budget, str)
    budget["pages"]["big/"] = {"initial_kb": 800}
    assert budget_problems([record], budget, str) == []


def test_the_committed_budget_has_the_targets_of_the_issue():
    default = load_budget()["default"]
    assert default["initial_kb"] <= 500 and default["lab_payload_mb"] <= 20
