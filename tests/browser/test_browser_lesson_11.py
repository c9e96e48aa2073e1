"""Lesson 11's cross_attention lab in headless Chromium: the build's result is drawn before
Python (a rectangular pattern, the two sentences as tokens), and the masks, the pair and the
query recompute in Pyodide exactly what CPython computes. One page and one Pyodide start
for the whole module."""

from __future__ import annotations

import numpy as np
import pytest
from attention_labs.labs import run_lab
from lab_pages import lab, lab_state, open_lesson
from lab_pages import wait_for_runs as runs

LESSON = "lessons/11-cross-attention/"
LAB = lab("cross_attention")


@pytest.fixture(scope="module")
def lesson(browser, server):
    yield from open_lesson(browser, server, LESSON, ["cross_attention"])


def state(page):
    return lab_state(page, LAB, keep_nonfinite=True)


def wait_for_runs(page, n):
    runs(page, LAB, n)


def assert_same_as_cpython(got):
    expected = run_lab("cross_attention", got["params"])["result"]
    res = got["result"]
    for key in ("tokens", "key_tokens", "top_key", "unseen_keys", "query", "shapes"):
        assert res[key] == expected[key], key
    for key in ("weights", "row", "row_sums", "entropy_bits"):
        np.testing.assert_allclose(res[key], expected[key], rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        res["self"]["weights"], expected["self"]["weights"], rtol=0, atol=1e-12
    )


def chips(page, side):
    return page.locator(f"{LAB} .attn-cross__{side} .attn-cross__chip").all_inner_texts()


def test_the_builds_result_is_drawn_before_python(lesson):
    page = lesson.page
    got = state(page)
    assert got["runs"] == 0
    assert_same_as_cpython(got)
    assert chips(page, "source") == ["the", "black", "cat", "sleeps", "PAD", "PAD"]
    assert chips(page, "target") == ["le", "chat", "noir", "dort"]
    assert page.locator(f"{LAB} .attn-cross__chip--hidden").count() == 2
    summary = page.locator(f"{LAB} .attn-cross__summary").inner_text()
    assert summary.startswith("4 target queries × 6 source keys.")
    assert "Every row sums to 1" in summary and "not an alignment" in summary
    # the heatmaps' text tables: the cross pattern's top keys are source words
    rows = page.eval_on_selector_all(
        f"{LAB} table.attn-lab__rows",
        "(ts) => ts.map((t) => [...t.tBodies[0].rows].map((r) => r.cells[1].textContent))",
    )
    assert rows[0] == [got["result"]["key_tokens"][k] for k in got["result"]["top_key"]]
    assert len(rows[1]) == 4  # the decoder's self-attention table
    assert page.locator(f"{LAB} canvas.attn-heatmap").count() == 2


def test_controls_recompute_in_pyodide_equal_to_cpython(lesson):
    page = lesson.page
    page.locator(LAB).scroll_into_view_if_needed()
    steps = [
        lambda: page.locator(f"{LAB} input[id$='-causal']").check(),
        lambda: page.locator(f"{LAB} input[id$='-source_padding_mask']").uncheck(),
        lambda: page.locator(f"{LAB} select[id$='-query']").select_option("3"),
        lambda: page.locator(f"{LAB} select[id$='-pair']").select_option("en-de-short"),
    ]
    for n, step in enumerate(steps, start=1):
        step()
        wait_for_runs(page, n)
        assert_same_as_cpython(state(page))
    got = state(page)
    # the shorter pair moved the query inside it in the same update
    assert got["params"]["pair"] == "en-de-short" and got["params"]["query"] == 1
    assert got["params"]["causal"] is True and got["params"]["source_padding_mask"] is False
    assert chips(page, "target") == ["es", "regnet"]
    # causal: "raining" and the PAD keys after it are read by no query
    assert got["result"]["unseen_keys"] == [2, 3, 4]
    summary = page.locator(f"{LAB} .attn-cross__summary").inner_text()
    assert "; a causal mask (wrongly) hides later source keys" in summary
    assert "(raining, PAD, PAD)" in summary
    # the pair's option names its sentences
    option = page.locator(f"{LAB} select[id$='-pair'] option[value='en-de-short']")
    assert option.inner_text() == "it is raining → es regnet"
    # causal: the first query sees one key, and the cell readout says so (no "0 of 0 bits")
    page.locator(f"{LAB} select[id$='-query']").select_option("0")
    wait_for_runs(page, len(steps) + 1)
    assert_same_as_cpython(state(page))
    cell = page.locator(f"{LAB} .attn-lab__cell").first.inner_text()
    assert "One key visible: it takes all of the row's weight" in cell, cell
    assert "bits of at most" not in cell
    assert lesson.errors == []
