"""Shared fixtures: the built site on a local server, and Debian's Chromium via Playwright."""

from __future__ import annotations

import shutil
import sys
import threading

import pytest
import yaml
from helpers import ROOT, SITE, RecordedPage

sys.path.insert(0, str(ROOT / "build_scripts"))

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Without this Chromium itself looks up Google hosts; tests serve on 127.0.0.1 only.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def chromium_path() -> str:
    for candidate in ("chromium", "chromium-browser"):
        found = shutil.which(candidate)
        if found:
            return found
    pytest.fail(
        "Chromium not found: install Debian's package (apt-get install chromium); "
        "the browser tests drive it with Playwright and download no browser."
    )


@pytest.fixture(scope="session")
def site_url() -> str:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    return config["site_url"]


@pytest.fixture(scope="session")
def server(site_url):
    """The built site/ on 127.0.0.1 at a free port; yields its base URL."""
    if not (SITE / "index.html").is_file():
        pytest.fail("site/ is not built: run `make build` (make test does it first)")
    from serve import make_server

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
        chromium = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def recorded(browser, server):
    rec = RecordedPage(browser, server.base)
    yield rec
    rec.context.close()
