"""Lesson 6's labs (head_split, eight_heads, concat_wo) in headless Chromium with real
Pyodide: each shows the build's result before Python, then a moved control recomputes in
the browser, equal to CPython. One page and one Pyodide start for the whole lesson."""

from __future__ import annotations

import pytest
from helpers import RecordedPage
from lessons_56 import (
    PYTHON_TIMEOUT_MS,
    assert_same_as_cpython,
    lab,
    press,
    wait_for_runs,
)

LESSON = "lessons/06-multi-head-attention/"


@pytest.fixture(scope="module")
def page(browser, server):
    rec = RecordedPage(browser, server.base)
    rec.page.goto(rec.base + LESSON)
    yield rec
    assert rec.errors == []
    assert rec.external_requests() == []
    rec.context.close()


@pytest.mark.parametrize("name", ["head_split", "eight_heads", "concat_wo"])
def test_lab_first_shows_the_builds_result(page, name):
    p = page.page
    p.wait_for_selector(f"{lab(name)}[data-status]", state="attached")
    state = assert_same_as_cpython(p, name)
    assert state["runs"] == 0
    if name == "eight_heads":
        assert p.locator(f"{lab(name)} canvas.attn-heatmap").count() == 8
        assert p.locator(f"{lab(name)} .attn-lab__table tbody tr").count() == 8


def test_eight_heads_recomputes_on_a_new_query_and_sentence(page):
    p = page.page
    root = lab("eight_heads")
    p.locator(root).scroll_into_view_if_needed()
    p.wait_for_selector(f"{root}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    p.select_option(f"{root} select[id$='-query']", "5")
    wait_for_runs(p, "eight_heads", 1)
    state = assert_same_as_cpython(p, "eight_heads")
    assert state["params"]["query"] == 5
    assert "“the” → “verdant”" in p.locator(f"{root} figcaption").nth(3).inner_text()
    press(p, f"{root} input[id$='-tokens']", "a cat saw a <b>cat</b>")
    wait_for_runs(p, "eight_heads", 2)
    state = assert_same_as_cpython(p, "eight_heads")
    assert state["params"]["query"] == 4  # the shorter sentence moved the query to its end
    assert p.locator(f"{root} select[id$='-query'] option").count() == 5
    assert p.locator(f"{root} td", has_text="<b>cat</b>").count() >= 1  # text, never HTML
    assert p.locator(f"{root} b").count() == 0
