"""Lesson 8's tiled-attention lab in headless Chromium: the build's result is drawn before
Python, and the block sliders, the causal mask and the step buttons recompute in Pyodide
exactly what CPython computes. One page and one Pyodide start for the whole module."""

from __future__ import annotations

import numpy as np
import pytest
from attention_labs.labs import run_lab
from lab_pages import lab, lab_state, open_lesson
from lab_pages import wait_for_runs as runs

LESSON = "lessons/08-cost-and-flashattention/"
LAB = lab("tiled_attention")


@pytest.fixture(scope="module")
def lesson(browser, server):
    yield from open_lesson(browser, server, LESSON, ["tiled_attention"])


def state(page):
    return lab_state(page, LAB, keep_nonfinite=True)


def wait_for_runs(page, n):
    runs(page, LAB, n)


def assert_same_as_cpython(got):
    expected = run_lab("tiled_attention", got["params"])["result"]
    res = got["result"]
    for key in ("tiles", "current", "rows", "cols", "memory", "sweep", "step", "n_q_blocks"):
        assert res[key] == expected[key], key
    for key in ("running_max", "running_sum", "output", "plain"):
        np.testing.assert_allclose(res[key], expected[key], rtol=0, atol=1e-12)
    assert res["max_abs_diff"] <= 1e-12


def test_the_builds_result_is_drawn_before_python(lesson):
    page = lesson.page
    got = state(page)
    assert got["runs"] == 0
    assert_same_as_cpython(got)
    # 4 x 4 tiles, each outlined (one subpath each), the first one the current tile
    outline = page.get_attribute(f"{LAB} .attn-tiles__outline", "d")
    assert outline.count("M") == 16
    current = page.locator(f"{LAB} .attn-tiles__current")
    assert [float(current.get_attribute(a)) for a in ("x", "y", "width", "height")] == [
        0,
        0,
        60,
        60,
    ]
    text = page.locator(f"{LAB} .attn-lab__cell").first.inner_text()
    assert text.startswith("Tile 1 of 16: query rows 1 to 4, key columns 1 to 4")
    assert page.locator(f"{LAB} table", has_text="Running max m").count() == 1
    assert page.locator(f"{LAB} .attn-tiles__chart svg").count() >= 1
    # the plot's table: raw counts under headers that say so, seq_len written exactly
    rows = page.eval_on_selector_all(
        f"{LAB} .attn-tiles__chart table tr",
        "(trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent))",
    )
    assert rows[0] == [
        "seq_len",
        "memory, plain (floats)",
        "memory, tiled (floats)",
        "work, plain and tiled (FLOPs)",
    ]
    by_n = {r[0]: r[1:] for r in rows[1:]}
    assert by_n["4"] == ["16", "64", "512"]
    assert by_n["16,384"][0] == "268,435,456"
    assert by_n["131,072"][:2] == ["17,179,869,184", "262,200"]


def test_controls_recompute_in_pyodide_equal_to_cpython(lesson):
    page = lesson.page
    page.locator(LAB).scroll_into_view_if_needed()
    steps = [
        lambda: page.click(f"{LAB} button:has-text('Next tile')"),
        lambda: page.locator(f"{LAB} input[id$='-block_k']").fill("8"),
        lambda: page.locator(f"{LAB} input[id$='-causal']").check(),
        lambda: page.click(f"{LAB} button:has-text('Next tile')"),
    ]
    for n, step in enumerate(steps, start=1):
        step()
        wait_for_runs(page, n)
        assert_same_as_cpython(state(page))
    got = state(page)
    assert got["params"] | {"seed": 0} == {
        "seq_len": 16,
        "d_head": 8,
        "block_q": 4,
        "block_k": 8,
        "causal": True,
        "step": 1,
        "seed": 0,
    }
    assert got["result"]["current"] == [1, 0]  # query block 0 reads one tile, then block 1
    text = page.locator(f"{LAB} .attn-lab__cell").first.inner_text()
    assert "tiles above the diagonal are skipped" in text
    assert lesson.errors == []
