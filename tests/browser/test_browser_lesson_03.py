"""Lesson 3's scaling lab in headless Chromium: the build's result is drawn before Python,
and moving its controls recomputes in Pyodide exactly what CPython computes. One page and
one Pyodide start for the whole module. (The attention_pattern lab of the same page is
tested in test_browser_lab.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from attention_labs.labs import run_lab
from lab_pages import PYTHON_TIMEOUT_MS, lab, lab_state, next_frames, open_lesson
from lab_pages import wait_for_runs as runs

LESSON = "lessons/03-attention-pattern/"
LAB = lab("scaling")


@pytest.fixture(scope="module")
def lesson(browser, server):
    yield from open_lesson(browser, server, LESSON, ["scaling"])


def state(page):
    return lab_state(page, LAB, keep_nonfinite=True)


def wait_for_runs(page, n):
    runs(page, LAB, n)


def assert_same_as_cpython(got):
    expected = run_lab("scaling", got["params"])["result"]
    assert got["result"]["d_heads"] == expected["d_heads"]
    assert got["result"]["marker"] == expected["marker"]
    for name in ("scaled", "unscaled"):
        for key in ("entropy_bits", "gradient", "peaked"):
            np.testing.assert_allclose(
                got["result"][name][key], expected[name][key], rtol=0, atol=1e-9
            )


def readout(page):
    return page.locator(f"{LAB} .attn-scaling__readout").inner_text()


def test_the_builds_result_is_drawn_before_python_with_a_text_alternative(lesson):
    page = lesson.page
    got = state(page)
    assert got["runs"] == 0
    assert_same_as_cpython(got)  # the build's CPython result
    assert page.locator(f"{LAB} svg").count() >= 2  # the two charts
    res = got["result"]
    i = res["marker"]["index"]
    text = readout(page)
    assert "At d_head = 64" in text
    assert f"{res['unscaled']['gradient'][i]:.4f} unscaled" in text
    # each chart has a data table for screen readers, one row per width
    assert page.locator(f"{LAB} table").count() >= 2


def test_moving_the_controls_recomputes_in_pyodide_equal_to_cpython(lesson):
    page = lesson.page
    page.locator(LAB).scroll_into_view_if_needed()
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    seq_len = page.locator(f"{LAB} input[id$='-seq_len']")
    seq_len.fill("24")
    seq_len.press("Enter")
    wait_for_runs(page, 1)
    got = state(page)
    assert got["params"]["seq_len"] == 24
    assert_same_as_cpython(got)
    page.select_option(f"{LAB} select[id$='-d_head']", "256")
    wait_for_runs(page, 2)
    got = state(page)
    assert got["params"]["d_head"] == 256
    assert_same_as_cpython(got)
    res = run_lab("scaling", got["params"])["result"]
    text = readout(page)
    assert "At d_head = 256, over 24 random rows" in text
    assert f"{res['scaled']['entropy_bits'][6]:.2f} bits scaled" in text
    page.click(f"{LAB} button.attn-lab__reseed")
    wait_for_runs(page, 3)
    got = state(page)
    assert got["params"]["seed"] == 1
    assert_same_as_cpython(got)
    assert lesson.errors == []


def test_a_bad_seq_len_says_what_is_allowed(lesson):
    page = lesson.page
    seq_len = page.locator(f"{LAB} input[id$='-seq_len']")
    seq_len.fill("99")
    seq_len.press("Enter")
    error = page.locator(f"{LAB} .attn-lab__error")
    assert (
        error.is_visible() and "seq_len must be a whole number from 2 to 64" in error.inner_text()
    )
    seq_len.fill("8")
    seq_len.press("Enter")
    page.wait_for_function(f"() => document.querySelector('{LAB}').attnLab.params.seq_len === 8")
    wait_for_runs(page, 4)
    assert_same_as_cpython(state(page))


def test_the_marker_label_sits_above_the_plot_at_390_px(lesson):
    page = lesson.page
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        next_frames(page)  # the charts redraw on resize
        boxes = page.evaluate(
            """(sel) => [...document.querySelectorAll(`${sel} .attn-chart__marker`)].map((g) => {
              const label = g.querySelector('.attn-chart__rule-label').getBoundingClientRect();
              const rule = g.querySelector('.attn-chart__rule').getBoundingClientRect();
              const svg = g.ownerSVGElement.getBoundingClientRect();
              return {text: g.textContent, bottom: label.bottom, top: label.top,
                      left: label.left, right: label.right, plotTop: rule.top,
                      svgTop: svg.top, svgLeft: svg.left, svgRight: svg.right};
            })""",
            LAB,
        )
        assert len(boxes) == 2
        for b in boxes:
            assert b["text"].startswith("d_head = ")
            # above the plot area (where the lines are), inside the chart
            assert b["bottom"] <= b["plotTop"] + 1, b
            assert b["top"] >= b["svgTop"] and b["left"] >= b["svgLeft"], b
            assert b["right"] <= b["svgRight"], b
    finally:
        page.set_viewport_size({"width": 1200, "height": 900})
    assert lesson.errors == []
