"""Lesson 10's three labs (permutation, sinusoidal, rope) in headless Chromium: each draws the
build's result before Python, and moving a control recomputes in Pyodide what CPython
computes. One page and one Pyodide start for the whole module."""

from __future__ import annotations

import numpy as np
import pytest
from attention_labs.labs import run_lab
from lab_pages import lab as sel
from lab_pages import lab_state, open_lesson, wait_for_runs

LESSON = "lessons/10-position/"


@pytest.fixture(scope="module")
def lesson(browser, server):
    yield from open_lesson(browser, server, LESSON, ["permutation", "sinusoidal", "rope"])


def state(page, name):
    return lab_state(page, name, keep_nonfinite=True)


def assert_same_as_cpython(lab, got, exact=()):
    expected = run_lab(lab, got["params"])["result"]
    assert set(got["result"]) == set(expected)
    for key, want in expected.items():
        have = got["result"][key]
        if (
            key in exact
            or isinstance(want, (str, int))
            or (isinstance(want, list) and want and isinstance(want[0], (str, int)))
        ):
            assert have == want, key
        else:
            np.testing.assert_allclose(have, want, rtol=0, atol=1e-12, err_msg=key)


def test_permutation_shuffles_moves_and_positions(lesson):
    page, lab = lesson.page, "permutation"
    got = state(page, lab)
    assert got["runs"] == 0
    assert_same_as_cpython(lab, got)
    box = sel(lab)
    assert page.locator(f"{box} canvas.attn-heatmap").count() == 2
    assert page.locator(box, has_text="Shuffled: “the man bit the dog”").count() == 1
    page.locator(box).scroll_into_view_if_needed()
    steps = [
        lambda: page.click(f"{box} button:has-text('Shuffle')"),
        lambda: page.click(f"{box} button:has-text('Move later')"),
        lambda: page.locator(f"{box} input[id$='-positions']").check(),
    ]
    for n, step in enumerate(steps, start=1):
        step()
        wait_for_runs(page, lab, n)
        got = state(page, lab)
        assert_same_as_cpython(lab, got)
    # Shuffle moved the seed on by one and cleared the order; Move later swapped places 1, 2.
    shuffled = run_lab(lab, {"shuffle": 2})["result"]["order"]
    moved = [shuffled[1], shuffled[0], *shuffled[2:]]
    assert got["params"]["shuffle"] == 2
    assert got["params"]["order"] == [str(i) for i in moved]
    assert got["result"]["order"] == moved
    assert got["result"]["pattern_diff"] > 0.05
    verdict = page.locator(f"{box} .attn-permutation__verdict").inner_text()
    assert verdict.startswith("With positions:")
    assert f"{got['result']['pattern_diff']:.3f}" in verdict
    assert "changed the pattern for real" in verdict
    # Order as written, positions still on: the identity, so nothing to compare.
    page.click(f"{box} button:has-text('Order as written')")
    wait_for_runs(page, lab, len(steps) + 1)
    got = state(page, lab)
    assert_same_as_cpython(lab, got)
    assert got["result"]["order"] == list(range(len(got["result"]["tokens"])))
    verdict = page.locator(f"{box} .attn-permutation__verdict").inner_text()
    assert verdict.startswith("With positions: the order is as written")
    assert "nothing to compare" in verdict
    assert "for real" not in verdict
    assert lesson.errors == []


def type_and_recompute(page, lab, name, value):
    """The build's result is CPython's; then ``name`` typed as ``value`` recomputes in
    Pyodide what CPython computes. Returns the lab's state after it."""
    got = state(page, lab)
    assert got["runs"] == 0
    assert_same_as_cpython(lab, got)
    page.locator(sel(lab)).scroll_into_view_if_needed()
    field = page.locator(f"{sel(lab)} input[id$='-{name}']")
    field.fill(str(value))
    field.press("Enter")
    wait_for_runs(page, lab, 1)
    got = state(page, lab)
    assert got["params"][name] == value
    assert_same_as_cpython(lab, got)
    return got


def test_sinusoidal_recomputes_at_another_width(lesson):
    page, lab = lesson.page, "sinusoidal"
    type_and_recompute(page, lab, "d_model", 16)
    box = sel(lab)
    rows = page.locator(f"{box} .attn-lab__rows tbody tr")
    assert rows.count() == 8  # one row per pair of dimensions
    assert page.locator(f"{box} .attn-sinusoidal__chart svg").count() >= 1
    assert lesson.errors == []


def test_rope_curves_coincide_after_moving_a_key(lesson):
    page, lab = lesson.page, "rope"
    got = type_and_recompute(page, lab, "key_b", 2000)
    box = sel(lab)
    assert got["result"]["curve_diff"] < 1e-11
    text = page.locator(f"{box} .attn-lab__cell").first.inner_text()
    assert "with the key at 0 or at 2000" in text
    # Every score is non-negative here: the y axis starts at 0, so drops are not exaggerated.
    assert min(got["result"]["score_a"] + got["result"]["score_b"]) >= 0
    ticks = page.locator(f"{box} .attn-chart__axis--y .tick text").all_text_contents()
    assert float(ticks[0].replace("\u2212", "-")) == 0, ticks
    assert lesson.errors == []
