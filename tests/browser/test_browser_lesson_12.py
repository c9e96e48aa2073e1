"""Lesson 12's two labs in headless Chromium: each is drawn from the build's result before
Python, and its controls recompute in Pyodide what CPython computes (the training story
and the model's weights come from the labs wheel). One page and one Pyodide start for the
whole module."""

from __future__ import annotations

import numpy as np
import pytest
from attention_labs.labs import run_lab
from lab_pages import PYTHON_TIMEOUT_MS, lab_state, open_lesson, wait_for_runs
from lab_pages import lab as sel

LESSON = "lessons/12-real-heads/"
TRAINING = sel("induction_training")
MODEL = sel("induction_model")
REMOVAL = sel("head_removal")


@pytest.fixture(scope="module")
def lesson(browser, server):
    yield from open_lesson(browser, server, LESSON, [TRAINING, MODEL, REMOVAL])


def state(page, name):
    return lab_state(page, name, keep_nonfinite=True)


def numeric(value):
    """``value`` as a float array, or None if it holds text or None."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return None if arr.dtype == object else arr


def assert_same_as_cpython(name, got):
    expected = run_lab(name, got["params"])["result"]
    res = got["result"]
    for key, value in expected.items():
        want = numeric(value)
        if key == "heads":
            for h, e in zip(res[key], value, strict=True):
                for k, v in e.items():
                    assert (v is None and h[k] is None) or abs(h[k] - v) < 1e-9, (key, k)
        elif want is not None and not isinstance(value, bool):
            # float64 in both; Pyodide's BLAS may round the last digit differently
            np.testing.assert_allclose(numeric(res[key]), want, atol=1e-9, err_msg=key)
        else:
            assert res[key] == value, key


def test_both_labs_are_drawn_from_the_build_before_python(lesson):
    page = lesson.page
    for name, lab in (("induction_training", TRAINING), ("induction_model", MODEL)):
        got = state(page, lab)
        assert got["runs"] == 0
        assert_same_as_cpython(name, got)
    text = page.locator(f"{TRAINING} .attn-induction__readout").inner_text()
    assert text.startswith("At step 1200, layer 1, head 0 puts")
    assert page.locator(f"{TRAINING} .attn-induction__chart svg").count() >= 2
    text = page.locator(f"{MODEL} .attn-induction__readout").inner_text()
    assert "induction score 0.80" in text
    assert page.locator(f"{MODEL} .attn-induction__guesses tr").count() == 3


def test_training_lab_controls_recompute_equal_to_cpython(lesson):
    page = lesson.page
    page.locator(TRAINING).scroll_into_view_if_needed()
    page.locator(f"{TRAINING} input[type=range]").fill("0")
    wait_for_runs(page, TRAINING, 1)
    got = state(page, TRAINING)
    assert got["params"]["checkpoint"] == 0 and got["result"]["step"] == 0
    assert_same_as_cpython("induction_training", got)
    assert page.locator(f"{TRAINING} output").inner_text() == "step 0"
    page.locator(f"{TRAINING} select").select_option("0:0")
    wait_for_runs(page, TRAINING, 2)
    got = state(page, TRAINING)
    assert (got["params"]["layer"], got["params"]["head"]) == (0, 0)
    assert_same_as_cpython("induction_training", got)
    assert lesson.errors == []


def test_model_lab_takes_typed_letters_a_switch_and_names_bad_input(lesson):
    page = lesson.page
    page.locator(MODEL).scroll_into_view_if_needed()
    box = page.locator(f"{MODEL} input[id$='-tokens']")
    box.fill("abcdef abcdef")
    box.press("Enter")
    wait_for_runs(page, MODEL, 1)
    got = state(page, MODEL)
    assert got["params"]["tokens"] == list("abcdefabcdef")
    assert got["result"]["tokens"] == list("ABCDEFABCDEF")
    assert_same_as_cpython("induction_model", got)
    page.locator(f"{MODEL} input[id$='-ablate']").check()
    wait_for_runs(page, MODEL, 2)
    got = state(page, MODEL)
    assert got["params"]["ablate"] is True
    assert_same_as_cpython("induction_model", got)
    assert "switched off" in page.locator(f"{MODEL} .attn-induction__readout").inner_text()
    # a digit: the lab says what is allowed and keeps its last good picture
    box.fill("abc1")
    box.press("Enter")
    page.wait_for_selector(f"{MODEL} .attn-lab__error:visible", timeout=PYTHON_TIMEOUT_MS)
    assert "only the letters A to Z" in page.locator(f"{MODEL} .attn-lab__error").inner_text()
    assert state(page, MODEL)["result"]["tokens"] == list("ABCDEFABCDEF")
    assert lesson.errors == []


def assert_removal_same_as_cpython(got):
    expected = run_lab("head_removal", got["params"])["result"]
    res = got["result"]
    assert set(res) == set(expected)
    for h, e in zip(res["heads"], expected["heads"], strict=True):
        assert (h["layer"], h["head"], h["off"]) == (e["layer"], e["head"], e["off"])
        np.testing.assert_allclose(h["weights"], e["weights"], atol=1e-9)
        for k in ("induction", "previous_token", "changed"):
            assert (e[k] is None and h[k] is None) or abs(h[k] - e[k]) < 1e-9, k
    for key in ("tokens", "predicted", "knowable", "masked"):
        assert res[key] == expected[key], key
    for key in ("copy_accuracy", "loss", "chance_loss"):
        assert (expected[key] is None and res[key] is None) or abs(res[key] - expected[key]) < 1e-9
    assert [p is None for p in res["p_right"]] == [p is None for p in expected["p_right"]]
    for s_got, s_want in zip(
        res["single"] + [res["intact"]], expected["single"] + [expected["intact"]], strict=True
    ):
        assert s_got == pytest.approx(s_want, abs=1e-9)


def test_removal_lab_is_drawn_from_the_build_and_its_switches_recompute(lesson):
    """The four heads' maps and switches, the build's result before Python; switching the
    previous-token head off recomputes in Pyodide what CPython computes, moves the layer-1
    maps and says what the model lost."""
    page = lesson.page
    got = state(page, REMOVAL)
    assert got["runs"] == 0
    assert_removal_same_as_cpython(got)
    assert page.locator(f"{REMOVAL} canvas.attn-heatmap").count() == 4
    assert page.locator(f"{REMOVAL} input[type=checkbox]").count() == 4
    readout = page.locator(f"{REMOVAL} .attn-removal__readout")
    assert readout.inner_text().startswith(
        "With every head on, the model continues the repeat right 78%"
    )
    tables = page.locator(f"{REMOVAL} table")
    assert tables.count() == 3
    alone = tables.nth(2).inner_text()
    assert "layer 0, head 0\t11%\t3.40" in alone and "none (intact)\t78%\t0.82" in alone
    page.locator(REMOVAL).scroll_into_view_if_needed()
    page.locator(f"{REMOVAL} input[id$='-off_l0h0']").check()
    wait_for_runs(page, REMOVAL, 1)
    got = state(page, REMOVAL)
    assert got["params"]["off_l0h0"] is True
    assert_removal_same_as_cpython(got)
    text = readout.inner_text()
    assert text.startswith(
        "With layer 0, head 0 switched off, the model continues the repeat right 11%"
    )
    captions = page.locator(f"{REMOVAL} figcaption").all_inner_texts()
    assert "(off: output removed)" in captions[0] and "unchanged" in captions[0]
    assert "moved by up to 0.92" in captions[2]
    # a letter that is not one: the lab names it and keeps its picture
    box = page.locator(f"{REMOVAL} input[id$='-tokens']")
    box.fill("abc!")
    box.press("Enter")
    page.wait_for_selector(f"{REMOVAL} .attn-lab__error:visible", timeout=PYTHON_TIMEOUT_MS)
    assert "only the letters A to Z" in page.locator(f"{REMOVAL} .attn-lab__error").inner_text()
    assert lesson.errors == []
