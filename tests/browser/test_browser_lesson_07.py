"""Lesson 7's parameter calculator in headless Chromium: the build's result is drawn before
Python, and picking a preset and editing a field recompute in Pyodide exactly what CPython
computes. One page and one Pyodide start for the whole module."""

from __future__ import annotations

import pytest
from attention_labs.labs import run_lab
from lab_pages import PYTHON_TIMEOUT_MS, lab, lab_state, open_lesson
from lab_pages import wait_for_runs as runs

LESSON = "lessons/07-counting-parameters/"
LAB = lab("param_calculator")


@pytest.fixture(scope="module")
def lesson(browser, server):
    yield from open_lesson(browser, server, LESSON, ["param_calculator"])


def state(page):
    return lab_state(page, LAB, keep_nonfinite=True)


def wait_for_runs(page, n):
    runs(page, LAB, n)


def test_the_builds_result_is_drawn_before_python(lesson):
    page = lesson.page
    got = state(page)
    assert got["runs"] == 0
    assert got["result"] == run_lab("param_calculator", got["params"])["result"]
    summary = page.locator(f"{LAB} .attn-lab__summary").inner_text()
    assert summary.startswith("GPT-2 small: 124,439,808 parameters")
    assert page.locator(f"{LAB} .attn-params__table", has_text="28,348,416").count() == 1
    assert page.locator(f"{LAB} .attn-params__chart svg").count() >= 1  # the stacked bars


def test_presets_and_fields_recompute_in_pyodide_equal_to_cpython(lesson):
    page = lesson.page
    page.locator(LAB).scroll_into_view_if_needed()
    steps = [
        lambda: page.select_option(f"{LAB} select[id$='-preset']", "llama2-70b"),
        # editing a field switches to your own model, starting from Llama-2-70B
        lambda: (
            page.fill(f"{LAB} input[id$='-n_kv_heads']", "64")
            or page.locator(f"{LAB} input[id$='-n_kv_heads']").press("Enter")
        ),
        lambda: page.locator(f"{LAB} input[id$='-tied']").check(),
    ]
    for n, step in enumerate(steps, start=1):
        step()
        wait_for_runs(page, n)
        got = state(page)
        assert got["result"] == run_lab("param_calculator", got["params"])["result"]
    got = state(page)
    assert got["params"]["preset"] == "custom"
    assert (
        got["result"]["config"]["d_model"] == 8192 and got["result"]["config"]["n_kv_heads"] == 64
    )
    assert got["result"]["counts"]["per_layer"]["attention"] == 4 * 8192**2
    assert page.locator(f"{LAB} select[id$='-preset']").input_value() == "custom"
    assert lesson.errors == []


def test_a_head_count_that_does_not_divide_shows_the_message(lesson):
    page = lesson.page
    runs = state(page)["runs"]
    box = page.locator(f"{LAB} input[id$='-n_heads']")
    box.fill("60")
    box.press("Enter")
    page.wait_for_function(
        f"() => document.querySelector('{LAB}').dataset.status === 'error'",
        timeout=PYTHON_TIMEOUT_MS,
    )
    error = page.locator(f"{LAB} .attn-lab__error").inner_text()
    assert "n_heads must divide d_model (8192)" in error
    assert box.get_attribute("aria-invalid") == "true"
    box.fill("64")
    box.press("Enter")
    wait_for_runs(page, runs + 1)
    assert state(page)["result"]["config"]["n_heads"] == 64


def test_things_to_try_change_n_heads_then_lower_n_kv_heads(lesson):
    """The page's advice as written: from GPT-2 small, n_heads = 6 (a divisor of 768) keeps
    the count (n_kv_heads follows n_heads, GPT-2 having no GQA); n_kv_heads = 2 shrinks
    attention. A model with GQA clamps n_kv_heads to a divisor of the new n_heads."""
    page = lesson.page
    runs = state(page)["runs"]
    page.select_option(f"{LAB} select[id$='-preset']", "gpt2-small")
    wait_for_runs(page, runs + 1)
    before = state(page)["result"]["counts"]
    box = page.locator(f"{LAB} input[id$='-n_heads']")
    box.fill("6")
    box.press("Enter")
    wait_for_runs(page, runs + 2)
    got = state(page)
    assert page.locator(LAB).get_attribute("data-status") != "error"
    assert got["result"]["config"]["n_heads"] == 6
    assert got["result"]["config"]["n_kv_heads"] == 6
    assert got["result"]["counts"]["total"] == before["total"] == 124_439_808
    assert got["result"] == run_lab("param_calculator", got["params"])["result"]
    kv = page.locator(f"{LAB} input[id$='-n_kv_heads']")
    assert kv.input_value() == "6"
    kv.fill("2")
    kv.press("Enter")
    wait_for_runs(page, runs + 3)
    got = state(page)
    att = got["result"]["counts"]["per_layer"]["attention"]
    assert att < before["per_layer"]["attention"]
    # with GQA (2 of 6), n_heads = 4 clamps n_kv_heads to 2, n_heads = 3 to 1
    for heads, kv_heads in ((4, 2), (3, 1)):
        n = state(page)["runs"]
        box.fill(str(heads))
        box.press("Enter")
        wait_for_runs(page, n + 1)
        got = state(page)
        assert got["result"]["config"]["n_heads"] == heads
        assert got["result"]["config"]["n_kv_heads"] == kv_heads
    assert lesson.errors == []
