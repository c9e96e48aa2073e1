"""The site published under a sub-path, as a project site on GitHub Pages is
(``https://user.github.io/repo/``): built with ``SITE_URL`` for that address, served under
``/attn-book/`` with nothing at the host root, and driven in headless Chromium.

One build for the module (the companion notebooks are not executed: their pages are not
what is checked here, and the real build runs them); the gates run on the real pages."""

from __future__ import annotations

import socket
import threading
import urllib.error
import urllib.request

import pytest
from helpers import mkdocs_build, project_copy
from lab_pages import PYTHON_TIMEOUT_MS

from build_scripts.gates.check_site import check_site
from build_scripts.serve import make_server

pytestmark = pytest.mark.slow  # the site built for a sub-path, the gates on it

PREFIX = "/attn-book/"
LESSON = "lessons/03-attention-pattern/"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """The site built for http://127.0.0.1:<port>/attn-book/ and served there (only there):
    the address in its sitemap is the one the browser opens, as on the real host."""
    tmp = tmp_path_factory.mktemp("subpath")
    port = free_port()
    url = f"http://127.0.0.1:{port}{PREFIX}"
    config = project_copy(tmp)
    proc, output = mkdocs_build(tmp / "site", config, env={"SITE_URL": url})
    assert proc.returncode == 0, output[-3000:]
    httpd = make_server(tmp / "site", port, site_url=url, prefix=PREFIX)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    httpd.base = url
    httpd.site = tmp / "site"
    yield httpd
    httpd.shutdown()


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


def click_link(page, selector: str) -> None:
    """A reader's click on a nav link (in the drawer, whether or not it is open)."""
    page.evaluate("(sel) => document.querySelector(sel).click()", selector)


def test_the_build_is_for_the_sub_path_and_nothing_is_at_the_host_root(published):
    site = published.site
    sitemap = (site / "sitemap.xml").read_text("utf-8")
    assert f"<loc>{published.base}{LESSON}</loc>" in sitemap
    assert "127.0.0.1:8000" not in sitemap
    root = published.base.removesuffix(PREFIX) + "/"
    assert status_of(root) == 404
    assert status_of(root + "javascripts/main.js") == 404
    assert status_of(published.base) == 200
    # The 404 page's links are absolute under the sub-path (it is sent at any depth).
    page = (site / "404.html").read_text("utf-8")
    assert f'href="{PREFIX}{LESSON}"' in page
    assert f'src="{PREFIX}javascripts/main.js"' in page or f"{PREFIX}javascripts/" in page


def test_browser_gates_pass_under_the_sub_path(published, browser):
    """Offline (nothing from another host, no missing file, no JavaScript error), a lab
    that starts and recomputes, axe: on the home page, a lesson, the explorer, the notices
    and the 404 page, all under /attn-book/."""
    pages = ["", LESSON, "explorer/", "third-party-notices/", "404.html"]
    report = check_site(
        published.site,
        browser,
        pages,
        schemes=("light",),
        site_url=published.base,
        prefix=PREFIX,
        budget={"default": {"initial_kb": 10_000, "lab_payload_mb": 100}},
    )
    assert report.problems == []
    assert [r.page for r in report.bytes] == pages
    lesson = report.bytes[1]
    assert lesson.payload and lesson.payload > 1e6  # Pyodide came from under the sub-path


def test_instant_navigation_then_a_cell_runs_and_a_real_map_and_the_explorer_draw(
    published, browser
):
    base = published.base
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(base)
        page.wait_for_function("() => typeof document$ !== 'undefined'")
        page.evaluate("() => { window.__samePage = true; }")
        # A click on a lesson link is intercepted (the sitemap lists it): no reload.
        click_link(page, f'a.md-nav__link[href$="{LESSON}"]')
        page.wait_for_url(base + LESSON)
        page.wait_for_selector(".attn-lab[data-status]", state="attached")
        assert page.evaluate("() => window.__samePage === true"), "the click reloaded the page"
        # The lesson's real map (an attention-map fence) loads its asset from the sub-path.
        page.locator(".attn-map").first.scroll_into_view_if_needed()
        page.wait_for_selector(".attn-map[data-state=ready] canvas", timeout=30_000)
        # A cell runs in Python.
        cell = page.locator(".attn-cell").first
        cell.scroll_into_view_if_needed()
        page.wait_for_selector(".attn-cell .cm-editor")
        page.evaluate(
            "() => { document.querySelector('.attn-cell').attnCell.editor.code ="
            " 'import numpy as np\\nprint(int(np.arange(5).sum()))'; }"
        )
        cell.locator(".attn-cell__run").click()
        page.wait_for_function(
            "() => { const r = document.querySelector('.attn-cell');"
            " return Number(r.dataset.runs) >= 1 && r.dataset.state !== 'running'; }",
            timeout=PYTHON_TIMEOUT_MS,
        )
        assert "10" in cell.locator(".attn-cell__output").inner_text()
        # The explorer, reached by instant navigation too, draws every head of the model.
        page.evaluate("() => { window.__samePage = true; }")
        click_link(page, 'a.md-nav__link[href$="explorer/"]')
        page.wait_for_selector(".attn-map[data-state=ready] .attn-map__thumb", timeout=30_000)
        assert page.locator(".attn-map__thumb").count() >= 12
        assert page.evaluate("() => window.__samePage === true")
    finally:
        context.close()
    assert errors == []
    outside = [u for u in requests if not u.startswith((base, "data:", "blob:"))]
    assert outside == []


def test_a_missing_page_gets_the_helpful_404_at_any_depth(published, browser):
    base = published.base
    context = browser.new_context()
    failed: list[str] = []
    context.on(
        "response",
        lambda r: failed.append(r.url) if r.status >= 400 and not r.url.endswith("/deep/") else 0,
    )
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        response = page.goto(base + "lessons/no-such-lesson/deep/")
        assert response.status == 404
        assert page.locator("h1").inner_text() == "Page not found"
        links = page.locator(".attn-404__lessons a")
        assert links.count() >= 12
        # Styled (the theme's CSS came from the sub-path) and its links work.
        assert page.evaluate(
            "() => getComputedStyle(document.querySelector('.md-header')).position"
        ) in ("sticky", "fixed")
        page.locator(".attn-404__links a").first.click()
        page.wait_for_url(base)
    finally:
        context.close()
    assert failed == [] and errors == []
