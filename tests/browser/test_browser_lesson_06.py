"""Lesson 6's labs (head_split, eight_heads, concat_wo) in headless Chromium with real
Pyodide: each shows the build's result before Python, then a moved control recomputes in
the browser, equal to CPython. One page and one Pyodide start for the whole lesson."""

from __future__ import annotations

import pytest
from helpers import RecordedPage
from lab_pages import (
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


def test_head_split_recomputes_for_a_new_width_and_biases(page):
    p = page.page
    root = lab("head_split")
    p.locator(root).scroll_into_view_if_needed()
    p.wait_for_selector(f"{root}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    press(p, f"{root} input[id$='-d_model']", "768")
    wait_for_runs(p, "head_split", 1)
    press(p, f"{root} input[id$='-n_heads']", "12")
    wait_for_runs(p, "head_split", 2)
    p.locator(f"{root} input[id$='-bias']").check()
    wait_for_runs(p, "head_split", 3)
    state = assert_same_as_cpython(p, "head_split")
    assert state["params"] == {"d_model": 768, "n_heads": 12, "bias": True, "seq_len": 10}
    assert {s["total"] for s in state["result"]["splits"]} == {4 * 768 * 768 + 4 * 768}
    # the picked n_heads (12) is a bar of its own, beside 1, 2, 4 and 8
    assert [s["n_heads"] for s in state["result"]["splits"]] == [1, 2, 4, 8, 12]
    assert p.locator(f"{root} .attn-chart", has_text="12 heads of 64").count() == 1
    text = " ".join(p.locator(f"{root} .attn-lab__summary").inner_text().split())
    assert "2,362,368 parameters" in text and "d_head = 768 / 12 = 64" in text
    assert "(12 × 10 × 64)" in p.locator(f"{root} .attn-shapes").inner_text()
    # n_heads = 5 does not divide 768: Python's message names the parameter
    press(p, f"{root} input[id$='-n_heads']", "5")
    p.wait_for_function(
        f"() => document.querySelector('{root}').dataset.status === 'error'",
        timeout=PYTHON_TIMEOUT_MS,
    )
    assert "divides d_model = 768" in p.locator(f"{root} .attn-lab__error").inner_text()
    assert p.locator(f"{root} input[id$='-n_heads']").get_attribute("aria-invalid") == "true"


def test_concat_wo_recomputes_for_another_query(page):
    p = page.page
    root = lab("concat_wo")
    p.locator(root).scroll_into_view_if_needed()
    p.wait_for_selector(f"{root}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    p.select_option(f"{root} select[id$='-query']", "0")
    wait_for_runs(p, "concat_wo", 1)
    p.click(f"{root} button.attn-lab__reseed")
    wait_for_runs(p, "concat_wo", 2)
    state = assert_same_as_cpython(p, "concat_wo")
    assert state["params"]["query"] == 0 and state["params"]["seed"] == 1
    assert state["result"]["sum_error"] < 1e-12
    assert p.locator(f"{root} .attn-concat li").count() == 8
    assert "“The”" in p.locator(f"{root} .attn-lab__summary").nth(1).inner_text()
