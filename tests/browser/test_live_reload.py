"""`make serve` as a contributor uses it (build_scripts/live.py): in a copy of the project
with the dev server running, a page open in Chromium reloads with a prose edit, with an edit
of labs_py (the labs wheel rebuilt, the lab's first result computed by the new labs), shows a
broken build's message and recovers; the page stays cross-origin isolated, and only the
dev server adds its script: the built files never hold it. The timings are
build_scripts/bench/bench_live.py's (the same LiveProject)."""

from __future__ import annotations

import tarfile
import zipfile

import pytest

from build_scripts.bench.bench_live import (
    LESSON,
    LESSON_URL,
    PROBE_MODULE,
    PROBE_URL,
    LiveProject,
    wait_for_text,
)
from build_scripts.serve import LIVE_PATH
from build_scripts.vendor.labs_wheel import archive_of

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    project = LiveProject(tmp_path_factory.mktemp("live")).make()
    built = project.build()
    assert built.returncode == 0, built.stdout + built.stderr
    project.start()
    yield project
    project.stop()


@pytest.fixture(scope="module")
def page(live, browser):
    context = browser.new_context()
    page = context.new_page()
    page.goto(live.base + LESSON_URL)
    page.wait_for_function("() => window.attnLive && window.attnLive.hello")
    yield page
    context.close()


def test_the_page_is_isolated_and_only_the_server_adds_the_script(live, page):
    assert page.evaluate("() => crossOriginIsolated") is True
    assert page.locator("script#attn-live").count() == 1
    built = (live.top / "site" / LESSON_URL / "index.html").read_text("utf-8")
    assert "attn-live" not in built and LIVE_PATH not in built


def test_a_prose_edit_reloads_the_page_with_it(live, page):
    live.edit(LESSON, "# Masking", "# Masking, edited live")
    wait_for_text(page, "article h1", "Masking, edited live")
    assert "attn-live" not in (live.top / "site" / LESSON_URL / "index.html").read_text("utf-8")
    live.wait_line(r"live: rebuilt", 60)


def test_a_broken_fence_shows_the_build_error_and_a_fix_reloads(live, page):
    live.edit(LESSON, "lab: masking", "lab: no_such_lab")
    wait_for_text(page, "#attn-live-error", "no_such_lab", timeout=60)
    assert "docs/lessons/04-masking.md:" in page.locator("#attn-live-error").text_content()
    live.edit(LESSON, "lab: no_such_lab", "lab: masking")
    live.wait_line(r"live: rebuilt", 60)
    page.wait_for_function("() => !document.getElementById('attn-live-error')", timeout=30_000)


def test_a_labs_edit_rebuilds_the_wheel_and_the_labs_first_result(live, page):
    page.goto(live.base + PROBE_URL)
    wait_for_text(page, "output.live-probe", "answer-0")
    live.edit(PROBE_MODULE, "answer-0", "answer-1")
    wait_for_text(page, "output.live-probe", "answer-1", timeout=120)
    (wheel,) = (live.top / "docs" / "vendor" / "labs").glob("attention_labs-*.whl")
    with zipfile.ZipFile(wheel) as zf:  # the browser's wheel holds the edit too
        assert b"answer-1" in zf.read("attention_labs/labs/live_probe.py")
    # and so does the archive the worker unpacks
    with tarfile.open(archive_of(wheel), "r:gz") as tar:
        assert b"answer-1" in tar.extractfile("attention_labs/labs/live_probe.py").read()
    assert page.evaluate("() => crossOriginIsolated") is True
