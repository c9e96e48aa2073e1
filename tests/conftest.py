"""Shared fixtures: the built site on a local server, and Debian's Chromium via Playwright."""

from __future__ import annotations

import pytest
import yaml
from helpers import ROOT, SITE, RecordedPage, start_server

from build_scripts.gates.browser import BrowserNotFound, launch


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
