"""Lesson 4's masking lab in headless Chromium: the build's result is drawn before Python,
and moving its controls recomputes in Pyodide exactly what CPython computes. One page and
one Pyodide start for the whole module."""

from __future__ import annotations

import numpy as np
import pytest
from attention_labs.labs import run_lab
from lab_pages import PYTHON_TIMEOUT_MS, lab, lab_state, open_lesson
from lab_pages import wait_for_runs as runs

LESSON = "lessons/04-masking/"
LAB = lab("masking")


@pytest.fixture(scope="module")
def lesson(browser, server):
    yield from open_lesson(browser, server, LESSON, ["masking"])


def state(page):
    return lab_state(page, LAB)


def wait_for_runs(page, n):
    runs(page, LAB, n)


def assert_same_as_cpython(got):
    expected = run_lab("masking", got["params"])["result"]
    res = got["result"]
    assert res["tokens"] == expected["tokens"]
    assert res["counts"] == expected["counts"]
    assert res["cost"] == expected["cost"]
    np.testing.assert_allclose(res["weights"], expected["weights"], rtol=0, atol=1e-12)
    assert [s is None for s in res["row_sums"]] == [s is None for s in expected["row_sums"]]
    np.testing.assert_allclose(
        [s or 0 for s in res["row_sums"]], [s or 0 for s in expected["row_sums"]], atol=1e-12
    )
    assert (res["empty_rows"], res["nan_rows"]) == (expected["empty_rows"], expected["nan_rows"])
    assert res["row_notes"] == expected["row_notes"]
    assert res["logits"] == [
        [v if v is None else pytest.approx(v, abs=1e-12) for v in row] for row in expected["logits"]
    ]
    assert res["top_key"] == expected["top_key"]


def summary(page):
    return page.locator(f"{LAB} .attn-masking__summary").inner_text()


def test_the_builds_result_is_drawn_before_python(lesson):
    page = lesson.page
    got = state(page)
    assert got["runs"] == 0
    assert_same_as_cpython(got)
    assert page.locator(f"{LAB} canvas.attn-heatmap").count() == 1
    assert page.locator(f"{LAB} .attn-lab__table tbody tr").count() == 8
    text = summary(page)
    assert text.startswith("The causal mask, applied before softmax: keeps 36 of 64 entries")
    assert "blocks 28 (43.8%); every row sums to 1." in text
    assert page.locator(f"{LAB} .attn-masking__cost svg").count() >= 1  # chart (+ legend)
    assert page.locator(f"{LAB} .attn-masking__cost table").count() == 1  # text alternative
    # the full grid at 64 is written 4,096, as in the prose; the causal mask only: 2 curves
    assert "4,096" in page.locator(f"{LAB} .attn-masking__cost table").text_content()
    assert page.locator(f"{LAB} .attn-masking__cost .attn-chart__legend li").count() == 2
    # only the controls of the chosen mask are shown
    assert page.locator(f"{LAB} input[id$='-pad']").is_hidden()
    assert page.locator(f"{LAB} input[id$='-window']").is_hidden()


def test_each_control_recomputes_in_pyodide_equal_to_cpython(lesson):
    page = lesson.page
    page.locator(LAB).scroll_into_view_if_needed()
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)

    def enter(name, value):
        box = page.locator(f"{LAB} input[id$='-{name}']")
        box.fill(str(value))
        box.press("Enter")

    steps = [
        lambda: page.select_option(f"{LAB} select[id$='-mask']", "padding"),
        lambda: enter("pad", 3),
        lambda: page.select_option(f"{LAB} select[id$='-apply']", "after"),
        lambda: page.select_option(f"{LAB} select[id$='-mask']", "sliding_window"),
        lambda: enter("window", 2),
        lambda: enter("seq_len", 20),
        lambda: enter("spread", 0.5),
        lambda: page.click(f"{LAB} button.attn-lab__reseed"),
    ]
    for n, step in enumerate(steps, start=1):
        step()
        wait_for_runs(page, n)
        assert_same_as_cpython(state(page))
        if n == 2:
            assert state(page)["result"]["tokens"][-3:] == ["PAD"] * 3
            assert page.locator(f"{LAB} input[id$='-window']").is_hidden()
        if n == 3:
            assert "0 of 8 rows sum to 1" in summary(page)
        if n == 4:  # the window's curve is drawn with the causal mask's, as the prose compares
            names = page.locator(
                f"{LAB} .attn-masking__cost .attn-chart__legend li"
            ).all_inner_texts()
            assert [t.strip() for t in names] == [
                "kept by the sliding window",
                "full grid (seq_len²)",
                "kept by the causal mask",
            ]
    got = state(page)
    assert got["params"] | {"seed": 0} == {
        "seq_len": 20,
        "spread": 0.5,
        "mask": "sliding_window",
        "pad": 3,
        "pad_side": "end",
        "window": 2,
        "apply": "after",
        "fill": "skip",
        "seed": 0,
    }
    assert "The sliding window, applied after softmax: keeps 39 of 400 entries" in summary(page)
    assert "nan" not in page.locator(LAB).inner_text().lower()
    assert lesson.errors == []


def test_lowering_seq_len_below_the_pad_count_lowers_the_pad_count(lesson):
    page = lesson.page
    runs = state(page)["runs"]
    page.select_option(f"{LAB} select[id$='-mask']", "padding")
    wait_for_runs(page, runs + 1)
    box = page.locator(f"{LAB} input[id$='-seq_len']")
    box.fill("3")
    box.press("Enter")
    wait_for_runs(page, runs + 2)
    got = state(page)
    assert (got["params"]["seq_len"], got["params"]["pad"]) == (3, 2)
    assert page.locator(f"{LAB} input[id$='-pad']").get_attribute("max") == "2"
    assert page.locator(f"{LAB} .attn-lab__error").is_hidden()
    assert_same_as_cpython(got)


def test_one_row_summing_to_one_is_said_in_the_singular(lesson):
    page = lesson.page
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    runs = state(page)["runs"]
    page.select_option(f"{LAB} select[id$='-mask']", "causal")
    wait_for_runs(page, runs + 1)
    box = page.locator(f"{LAB} input[id$='-seq_len']")
    box.fill("8")
    box.press("Enter")
    wait_for_runs(page, runs + 2)
    got = state(page)
    assert got["params"]["apply"] == "after" and got["params"]["mask"] == "causal"
    assert_same_as_cpython(got)
    assert "1 of 8 rows sums to 1; the others sum to between" in summary(page)
    assert lesson.errors == []


def test_causal_and_left_padding_show_empty_rows_three_ways(lesson):
    """Causal + padding with the padding at the start: the first rows see nothing; each fill
    recomputes equal to CPython, the NaN rows are named (never drawn as numbers) and the
    table shows the first empty row under the three fills side by side."""
    page = lesson.page
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    fill_box = page.locator(f"{LAB} select[id$='-fill']")
    wanted = {"apply": "before", "mask": "causal_padding", "pad_side": "start", "fill": "skip"}
    for control, value in wanted.items():  # whatever the earlier tests left
        if state(page)["params"][control] != value:
            runs = state(page)["runs"]
            page.select_option(f"{LAB} select[id$='-{control}']", value)
            wait_for_runs(page, runs + 1)
    if state(page)["params"]["seq_len"] != 8:
        runs = state(page)["runs"]
        box = page.locator(f"{LAB} input[id$='-seq_len']")
        box.fill("8")
        box.press("Enter")
        wait_for_runs(page, runs + 1)
    assert fill_box.is_visible()
    runs = state(page)["runs"]
    got = state(page)
    assert_same_as_cpython(got)
    pads = got["params"]["pad"]
    assert got["result"]["empty_rows"] == list(range(pads))
    assert got["result"]["tokens"][:pads] == ["PAD"] * pads
    fills = page.locator(f"{LAB} .attn-masking__fills")
    assert fills.is_visible()
    assert (
        f"{pads} rows see no key at all" in page.locator(f"{LAB} .attn-masking__empty").inner_text()
    )
    rows = fills.locator("tbody tr").all_inner_texts()
    assert rows[0].startswith("−∞, plain softmax") and rows[0].count("NaN") == 9  # 8 keys + sum
    assert rows[1].startswith("−10⁹") and rows[1].count("0.125") == 8 and "1.000" in rows[1]
    assert rows[2].startswith("−∞, an empty row gives 0s") and rows[2].count("0.000") == 9
    page.select_option(f"{LAB} select[id$='-fill']", "neg_inf")
    wait_for_runs(page, runs + 1)
    got = state(page)
    assert_same_as_cpython(got)
    assert got["result"]["nan_rows"] == list(range(pads))
    assert f"{pads} rows are NaN (0/0), shown blank" in summary(page)
    table = page.locator(f"{LAB} .attn-lab__table tbody tr").first.text_content()
    assert "NaN (0/0)" in table
    page.select_option(f"{LAB} select[id$='-fill']", "neg_1e9")
    wait_for_runs(page, runs + 2)
    got = state(page)
    assert_same_as_cpython(got)
    assert got["result"]["weights"][0] == [0.125] * 8
    assert "every row sums to 1" in summary(page)
    # after softmax nothing is filled: the choice is hidden
    page.select_option(f"{LAB} select[id$='-apply']", "after")
    wait_for_runs(page, runs + 3)
    assert fill_box.is_hidden()
    assert lesson.errors == []
