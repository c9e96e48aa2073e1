"""The attention-pattern lab in a real headless Chromium, with real Pyodide and NumPy,
against the built site on a local server."""

from __future__ import annotations

import time

import lab_pages
import numpy as np
import pytest
from attention_labs.labs import run_lab
from lab_pages import PYTHON_TIMEOUT_MS

LESSON = "lessons/03-attention-pattern/"
# The page also has the scaling lab, after this one: in JS, the first .attn-lab is this lab.
LAB = ".attn-lab[data-lab=attention_pattern]"


def lab_state(page) -> dict:
    """The lab's parameters and current result, typed arrays as lists (-inf as None)."""
    return lab_pages.lab_state(page, "attention_pattern")


def wait_for_runs(page, n: int):
    lab_pages.wait_for_runs(page, "attention_pattern", n)


def assert_same_as_cpython(state: dict):
    expected = run_lab("attention_pattern", state["params"])["result"]
    got = state["result"]
    assert got["tokens"] == expected["tokens"]
    np.testing.assert_allclose(got["weights"], expected["weights"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got["entropy_bits"], expected["entropy_bits"], rtol=0, atol=1e-6)
    assert got["logits"] == [
        [v if v is None else pytest.approx(v, abs=1e-6) for v in row] for row in expected["logits"]
    ]
    assert got["top_key"] == expected["top_key"]


def test_lesson_shows_prerendered_result_and_katex_before_python(recorded):
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    state = lab_state(page)
    assert state["runs"] == 0
    assert_same_as_cpython(state)  # the build's CPython result, drawn without Pyodide
    assert page.locator(f"{LAB} canvas.attn-heatmap").count() == 1
    # KaTeX loads once the labs are drawn (it must not delay them), still before Python
    page.wait_for_function("() => document.querySelectorAll('.katex').length > 5")
    assert page.locator(".katex").count() > 5, "KaTeX did not render the lesson's math"
    assert lab_state(page)["runs"] == 0
    assert page.locator(f"{LAB} .attn-lab__table tbody tr").count() == 8


def test_control_moved_before_python_is_ready_is_queued_then_computed(recorded):
    page = recorded.page
    # Python starts as the page opens: hold its WebAssembly download (the worker's request)
    # until the control has moved, so "before Python is ready" holds on any machine.
    held = []
    recorded.context.route("**/pyodide.asm.wasm", lambda route: held.append(route))
    page.goto(recorded.base + LESSON)
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    deadline = time.monotonic() + PYTHON_TIMEOUT_MS / 1000
    while not held and time.monotonic() < deadline:  # until the worker has asked for it
        page.wait_for_timeout(50)
    assert held, "the worker never requested pyodide.asm.wasm"
    assert page.locator(LAB).get_attribute("data-runtime") == "loading"
    page.locator("input[id$='-causal']").check()  # before Python is ready
    assert page.locator(LAB).get_attribute("data-status") == "queued"
    for route in held:
        route.continue_()
    recorded.context.unroute("**/pyodide.asm.wasm")
    wait_for_runs(page, 1)
    state = lab_state(page)
    assert state["params"]["causal"] is True
    weights = np.array(state["result"]["weights"])
    assert np.all(weights[np.triu_indices(8, 1)] == 0.0)
    assert_same_as_cpython(state)
    assert recorded.errors == []


def test_each_control_recomputes_in_pyodide_equal_to_cpython(recorded):
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.locator(LAB).scroll_into_view_if_needed()
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    steps = [
        lambda: page.select_option("select[id$='-preset']", "previous_token"),
        lambda: page.locator("input[id$='-scale']").uncheck(),
        lambda: (
            page.fill("input[id$='-temperature']", "2.5")
            or page.locator("input[id$='-temperature']").press("Enter")
        ),
        lambda: (
            page.fill("input[id$='-d_head']", "16")
            or page.locator("input[id$='-d_head']").press("Enter")
        ),
        lambda: (
            page.fill("input[id$='-tokens']", 'a b c a b c <b>&"x"')
            or page.locator("input[id$='-tokens']").press("Enter")
        ),
        lambda: page.click(f"{LAB} button.attn-lab__reseed"),
        # The temperature slider is logarithmic: 10 ** -0.5 = 0.316..., shown as 0.32.
        lambda: page.locator(f"{LAB} input[type=range]").fill("-0.5"),
    ]
    for n, step in enumerate(steps, start=1):
        step()
        wait_for_runs(page, n)
        assert_same_as_cpython(lab_state(page))
    state = lab_state(page)
    assert state["params"] | {"seed": 0} == {
        "tokens": ["a", "b", "c", "a", "b", "c", '<b>&"x"'],
        "preset": "previous_token",
        "temperature": 0.32,
        "causal": False,
        "scale": False,
        "d_head": 16,
        "seed": 0,
    }
    assert state["params"]["seed"] == 1
    assert page.locator("input[id$='-temperature']").input_value() == "0.32"
    # Every arrow key press on the slider changes the temperature, near T = 1 too.
    slider = page.locator(f"{LAB} input[type=range]")
    slider.fill("0")
    wait_for_runs(page, len(steps) + 1)
    assert lab_state(page)["params"]["temperature"] == 1
    seen = []
    for key, n in [("ArrowRight", 2), ("ArrowRight", 3), ("ArrowLeft", 4), ("ArrowLeft", 5)]:
        slider.press(key)
        wait_for_runs(page, len(steps) + n)
        seen.append(lab_state(page)["params"]["temperature"])
    assert seen == [1.1, 1.3, 1.1, 1.0]
    slider.press("ArrowLeft")
    wait_for_runs(page, len(steps) + 6)
    assert lab_state(page)["params"]["temperature"] == 0.89
    # The token is text in the table, never HTML.
    assert page.locator(f"{LAB} .attn-lab__table td", has_text='<b>&"x"').count() >= 1
    assert page.locator(f"{LAB} .attn-lab__table b").count() == 0


def test_invalid_values_show_a_message_and_the_lab_keeps_working(recorded):
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.locator(LAB).scroll_into_view_if_needed()
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    error = page.locator(f"{LAB} .attn-lab__error")

    temperature = page.locator("input[id$='-temperature']")
    temperature.fill("-3")
    temperature.press("Enter")
    assert error.is_visible() and "temperature" in error.inner_text()
    assert temperature.get_attribute("aria-invalid") == "true"

    # A value only Python can reject (a 40-character token) comes back as a message too.
    tokens = page.locator("input[id$='-tokens']")
    tokens.fill("short " + "x" * 40)
    tokens.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('.attn-lab').dataset.status === 'error'",
        timeout=PYTHON_TIMEOUT_MS,
    )
    assert "token 2 of 2" in error.inner_text() and "32" in error.inner_text()
    assert lab_state(page)["result"]["tokens"][0] == "The"  # the old drawing stays

    tokens.fill("now it works again")
    tokens.press("Enter")
    temperature.fill("0.5")
    temperature.press("Enter")
    wait_for_runs(page, 2)
    page.wait_for_function("() => document.querySelector('.attn-lab').dataset.status === 'live'")
    assert error.is_hidden()
    state = lab_state(page)
    assert state["params"]["temperature"] == 0.5
    assert state["result"]["tokens"] == ["now", "it", "works", "again"]
    assert_same_as_cpython(state)
    assert recorded.errors == []


def test_heatmap_is_usable_with_keyboard_and_click(recorded):
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    info = page.locator(f"{LAB} .attn-lab__cell")
    page.locator(f"{LAB} canvas.attn-heatmap").focus()
    page.keyboard.press("ArrowDown")  # selects (0, 0) first
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    result = lab_state(page)["result"]
    assert "“fluffy” (1) → key “fluffy” (1)" in info.inner_text()
    assert f"{result['weights'][1][1]:.4f}" in info.inner_text()
    # Click the cell of query 2 ("blue"), key 0 ("The").
    box = page.evaluate("""() => { const h = document.querySelector('.attn-lab').attnLab.widget.heatmap;
        const L = h.layout; return {x: L.labelW + 0.5 * L.cell, y: L.labelH + 2.5 * L.cell}; }""")
    page.locator(f"{LAB} canvas.attn-heatmap").click(position=box)
    assert "“blue” (2) → key “The” (0)" in info.inner_text()


def test_lab_works_again_after_instant_navigation(recorded):
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    page.evaluate("() => { window.__sameDocument = true; }")
    # The footer's "Previous" link (lesson 2) and that page's "Next" link back: instant
    # navigation both ways, whatever page comes before this lesson.
    page.click("a.md-footer__link--prev")
    page.wait_for_function("() => !location.pathname.endsWith('/03-attention-pattern/')")
    page.click("a.md-footer__link--next[href$='03-attention-pattern/']")
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    assert page.evaluate("() => window.__sameDocument") is True, "navigation reloaded the page"
    assert page.locator(LAB).count() == 1
    page.locator("input[id$='-scale']").uncheck()
    wait_for_runs(page, 1)
    assert_same_as_cpython(lab_state(page))
    assert page.locator(".katex").count() > 5


@pytest.mark.runtime  # Python's start-up, whatever the lab: left to make test
def test_every_request_goes_to_the_local_server(recorded):
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.locator(LAB).scroll_into_view_if_needed()
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    page.locator("input[id$='-causal']").check()
    wait_for_runs(page, 1)
    assert any(u.endswith("pyodide.asm.wasm") for u in recorded.requests)
    assert any("numpy-2.0.2" in u for u in recorded.requests)
    assert recorded.external_requests() == []


@pytest.mark.parametrize("scheme", ["slate", "default"])
def test_lab_follows_the_palette(recorded, scheme):
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    page.evaluate(f"() => document.body.setAttribute('data-md-color-scheme', '{scheme}')")
    bg = page.evaluate(
        "() => getComputedStyle(document.querySelector('.attn-lab')).backgroundColor"
    )
    luminance = sum(int(c) for c in bg[bg.index("(") + 1 : bg.index(")")].split(",")[:3]) / 3
    assert (luminance < 100) if scheme == "slate" else (luminance > 150), bg


@pytest.mark.runtime  # Python's start-up, whatever the lab: left to make test
def test_python_that_cannot_load_says_so_and_retry_recovers(recorded, unavailable):
    page = recorded.page
    # The host fails NumPy's download; later it is back. (Server-side: Playwright's
    # routing can miss a worker's first requests.)
    unavailable.add("_wasm32.tar.gz")  # NumPy's archive, which the worker unpacks
    page.goto(recorded.base + LESSON)
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    page.locator("input[id$='-causal']").check()  # queued while Python loads
    page.wait_for_selector(f"{LAB}[data-runtime=failed]", timeout=PYTHON_TIMEOUT_MS)
    status = page.locator(f"{LAB} .attn-lab__status-text").inner_text()
    assert "Python could not start: NumPy (numpy-2.0.2" in status, status
    assert "HTTP 503" in status, status  # the file, and how it failed
    assert "press Retry" in status
    assert page.locator(f"{LAB} .attn-lab__error").is_visible()  # the queued change says why
    assert lab_state(page)["result"]["tokens"][0] == "The"  # the drawing is still there
    unavailable.clear()
    page.click(f"{LAB} button.attn-lab__retry")
    wait_for_runs(page, 1)  # the change made before the failure runs by itself
    assert lab_state(page)["params"]["causal"] is True
    assert page.locator(f"{LAB} .attn-lab__error").is_hidden()
    page.locator("input[id$='-causal']").uncheck()
    wait_for_runs(page, 2)
    assert_same_as_cpython(lab_state(page))


@pytest.mark.runtime  # Python's start-up, whatever the lab: left to make test
def test_a_page_with_labs_starts_python_as_it_opens_wherever_the_lab_is(recorded):
    """The head's script starts the worker (hooks/preload.py), not the lab coming near
    view: the reader who scrolls to it finds Python loaded or loading."""
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    top = page.evaluate("() => document.querySelector('.attn-lab').getBoundingClientRect().top")
    assert top > 1.5 * 900, "the lab should start below the fold for this test"
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    assert page.evaluate("() => scrollY") == 0  # never scrolled
    assert any(u.endswith("pyodide.asm.wasm") for u in recorded.requests)
    assert recorded.errors == []


@pytest.mark.runtime  # Python's start-up, whatever the lab: left to make test
def test_python_stays_loaded_across_instant_navigation(recorded):
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.locator(LAB).scroll_into_view_if_needed()
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    wasm_fetches = sum(u.endswith("pyodide.asm.wasm") for u in recorded.requests)
    # The footer's "Previous" link (lesson 2) and that page's "Next" link back: instant
    # navigation both ways, whatever page comes before this lesson.
    page.click("a.md-footer__link--prev")
    page.wait_for_function("() => !location.pathname.endsWith('/03-attention-pattern/')")
    page.click("a.md-footer__link--next[href$='03-attention-pattern/']")
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    assert page.locator(LAB).get_attribute("data-runtime") == "ready"  # no second start-up
    page.locator("input[id$='-causal']").check()
    wait_for_runs(page, 1)
    assert_same_as_cpython(lab_state(page))
    assert sum(u.endswith("pyodide.asm.wasm") for u in recorded.requests) == wasm_fetches == 1
