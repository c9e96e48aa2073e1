"""Shared fixtures: the built site on a local server, and Debian's Chromium via Playwright."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml

from build_scripts.gates.browser import BrowserNotFound, launch
from build_scripts.serve import make_server

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"


@pytest.fixture(scope="session")
def site_url() -> str:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    return config["site_url"]


@pytest.fixture(scope="session")
def server(site_url):
    """The built site/ on 127.0.0.1 at a free port; yields its base URL."""
    if not (SITE / "index.html").is_file():
        pytest.fail("site/ is not built: run `make build` (make test does it first)")
    httpd = make_server(SITE, 0, site_url=site_url)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}/"
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


class RecordedPage:
    """A fresh browser context and page, recording every request (workers' too)."""

    def __init__(self, browser, base: str):
        self.base = base
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def external_requests(self) -> list[str]:
        return [
            u
            for u in self.requests
            if not u.startswith(self.base)
            and not u.startswith("data:")
            and not u.startswith("blob:")
        ]


@pytest.fixture
def recorded(browser, server):
    rec = RecordedPage(browser, server.base)
    yield rec
    rec.context.close()
