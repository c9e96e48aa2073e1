"""Shared fixtures: the built site on a local server, and Debian's Chromium via Playwright;
and the test tiers: each test gets the marker of its folder's tier (helpers.TIERS), unless
its module names one itself, so `pytest -m python` (or build, browser, engines) runs one tier
and the tiers together are the whole suite."""

from __future__ import annotations

import helpers
import pytest
import yaml
from helpers import ROOT, SITE, TIERS, RecordedPage, start_server, tier_of

from build_scripts.gates.browser import BrowserNotFound, launch


def pytest_collection_modifyitems(config, items):
    """Every test in exactly one tier: its module's own tier marker, else its folder's; the
    modules with a slow test run first."""
    for item in items:
        own = {m.name for m in item.iter_markers() if m.name in TIERS}
        if len(own) > 1:
            raise pytest.UsageError(f"{item.nodeid}: in more than one tier: {sorted(own)}")
        if not own:
            tier = tier_of(item.path)
            if tier is None:
                raise pytest.UsageError(
                    f"{item.nodeid}: in no test tier: add its folder to FOLDER_TIERS in "
                    "tests/helpers.py, or mark the module (pytestmark = pytest.mark.<tier>)"
                )
            item.add_marker(getattr(pytest.mark, tier))
    # The modules with a slow test first, each whole and in its order: pytest-xdist hands
    # out files in this order (the Makefile's --no-loadscope-reorder; by default it hands
    # out the files with the most tests first), so the longest start early instead of
    # running alone at the end while the other workers idle.
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


@pytest.fixture(scope="session", autouse=True)
def notebook_pages(tmp_path_factory):
    """The project copies of this process share their rendered notebook pages
    (helpers.NOTEBOOK_PAGES), in this session's temporary folder."""
    helpers.NOTEBOOK_PAGES = tmp_path_factory.mktemp("notebook-pages")
    yield helpers.NOTEBOOK_PAGES
    helpers.NOTEBOOK_PAGES = None


@pytest.fixture(scope="session")
def site_url() -> str:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    return config["site_url"]


@pytest.fixture(scope="session")
def server(site_url):
    """The built site/ on 127.0.0.1 at a free port; yields its base URL."""
    if not (SITE / "index.html").is_file():
        pytest.fail("site/ is not built: run `make build` (make test does it first)")
    httpd = start_server(SITE, site_url)
    yield httpd
    httpd.shutdown()


@pytest.fixture
def unavailable(server):
    """A set of path suffixes the server answers with 503 during one test."""
    paths = server.RequestHandlerClass.func.unavailable
    yield paths
    paths.clear()


# WebAssembly by V8's baseline compiler (Liftoff) only: the tests check what Python
# computes, not how fast, and re-optimising Pyodide at every start took the cores from the
# other worker. `make bench` and `make check-site` keep the defaults, as a reader's browser
# does. Measured: CONTRIBUTING.md, "Workers".
TEST_CHROMIUM_ARGS = ["--js-flags=--liftoff-only"]


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        try:
            chromium = launch(pw, extra_args=TEST_CHROMIUM_ARGS)
        except BrowserNotFound as err:
            pytest.fail(str(err))
        yield chromium
        chromium.close()


@pytest.fixture
def recorded(browser, server):
    rec = RecordedPage(browser, server.base)
    yield rec
    rec.context.close()
