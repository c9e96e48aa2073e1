"""Shared fixtures: the built site on a local server, and Debian's Chromium via Playwright;
and the test tiers: each test gets the marker of its folder's tier (helpers.TIERS), unless
its module names one itself, so `pytest -m python` (or build, browser, engines) runs one tier
and the tiers together are the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from helpers import ROOT, SITE, TIERS, RecordedPage, start_server, tier_of

from build_scripts.gates.browser import BrowserNotFound, launch


def pytest_collection_modifyitems(config, items):
    """Every test in exactly one tier: its module's own tier marker, else its folder's. Then
    the modules with a slow test first, each module's tests still together and in order:
    `make test`'s workers (pytest-xdist, each file whole on one worker, handed out in this
    order) start the longest files first instead of finishing on them one by one."""
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
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    # stable sort: each module's tests stay together and in their order
    rank = {path: i for i, path in enumerate(LONGEST)}
    items.sort(key=lambda item: (rank.get(_rel(item.path), len(rank)), item.path not in slow))


# The files that take minutes on a 2-core machine (make bench-suite's durations), longest
# first: started before all others. A name here that no longer exists only loses its place.
LONGEST = (
    "build/test_site_checks.py",  # axe, offline and budget gates on every page
    "browser/test_first_lesson.py",  # a project copy: scaffold, build, check-lesson
    "browser/test_engines.py",  # Firefox and WebKit
)


def _rel(path) -> str:
    return Path(path).resolve().relative_to(ROOT / "tests").as_posix()


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


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        try:
            chromium = launch(pw)
        except BrowserNotFound as err:
            pytest.fail(str(err))
        yield chromium
        chromium.close()


@pytest.fixture
def recorded(browser, server):
    rec = RecordedPage(browser, server.base)
    yield rec
    rec.context.close()
