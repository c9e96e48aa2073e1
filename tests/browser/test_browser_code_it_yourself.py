"""The "Code it yourself" page in headless Chromium with real Pyodide: every cell run in
order, its printed output equal to CPython's (every comparison with a lab says True), its
heatmaps drawn; then the first exercise submitted wrong (transposed scores: step 2 fails
and says so; step 1, and step 3 checked on the reader's own scores, pass) and right. One page, one Pyodide start."""

from __future__ import annotations

import pytest
import yaml
from attention_labs import cells
from helpers import ROOT, RecordedPage
from lab_pages import PYTHON_TIMEOUT_MS, run_cell

from build_scripts.hooks import scanner

PAGE = "code-it-yourself/"
SOURCE = (ROOT / "docs" / "code-it-yourself.md").read_text(encoding="utf-8")
CELL = ".attn-cell"
EXERCISE = "#exercise-head-steps"


@pytest.fixture(scope="module")
def page(browser, server):
    rec = RecordedPage(browser, server.base)
    rec.page.goto(rec.base + PAGE)
    rec.page.wait_for_selector(f"{CELL}[data-state]", state="attached")
    yield rec
    assert rec.errors == []
    assert rec.external_requests() == []
    rec.context.close()


def cpython_runs() -> list[dict]:
    ns = cells.new_namespace()
    codes = [f.body for f in scanner.find_fences(SOURCE, ("pycell",))]
    return [cells.run_cell(code, ns, f"<cell {n}>") for n, code in enumerate(codes, 1)]


def test_every_cell_runs_in_order_and_prints_what_cpython_prints(page):
    p = page.page
    expected = cpython_runs()
    assert p.locator(CELL).count() == len(expected)
    for n, want in enumerate(expected):
        assert run_cell(p, n) == "done", (n, p.locator(CELL).nth(n).inner_text())
        shown = p.locator(CELL).nth(n).locator(".attn-cell__output").inner_text()
        for line in "".join(o.get("text", "") for o in want["outputs"]).splitlines():
            assert line.strip() in shown, (n, line, shown)
    text = " ".join(p.locator(f"{CELL} .attn-cell__output").all_inner_texts())
    assert text.count(": True") >= 15 and ": False" not in text
    assert "equal to lesson 5's pattern: True" in text
    assert "equal to lesson 6's eight heads: True" in text
    figures = p.locator(f"{CELL} canvas.attn-heatmap")
    assert figures.count() == 3
    assert "causal mask" in figures.nth(1).get_attribute("aria-label")


def check(p, code: str) -> str:
    ex = p.locator(EXERCISE)
    p.wait_for_selector(f"{EXERCISE}[data-checks]", state="attached")
    ex.scroll_into_view_if_needed()
    p.wait_for_selector(f"{EXERCISE} .cm-editor")
    n = int(ex.get_attribute("data-checks"))
    p.evaluate(
        "([sel, code]) => { document.querySelector(sel).attnExercise.editor.code = code; }",
        [EXERCISE, code],
    )
    ex.locator("button.attn-exercise__check").click()
    p.wait_for_function(
        f"() => Number(document.querySelector('{EXERCISE}').dataset.checks) > {n}",
        timeout=PYTHON_TIMEOUT_MS,
    )
    return ex.get_attribute("data-result")


def test_the_head_exercise_says_which_step_is_wrong_then_accepts_the_solution(page):
    p = page.page
    (spec,) = [
        s
        for s in (yaml.safe_load(f.body) for f in scanner.find_fences(SOURCE, ("exercise",)))
        if s["id"] == "head-steps"
    ]
    cases = p.locator(f"{EXERCISE} .attn-exercise__cases li")
    wrong = spec["solution"].replace("scores = Q @ K.T", "scores = K @ Q.T")
    assert wrong != spec["solution"]
    assert check(p, wrong) == "failed"
    assert cases.count() == len(spec["checks"])
    assert cases.nth(0).get_attribute("class").endswith("--pass")  # step 1 is right
    assert cases.nth(1).get_attribute("class").endswith("--fail")
    assert "transposed: your scores are [key, query]" in cases.nth(1).inner_text()
    assert cases.nth(2).get_attribute("class").endswith("--pass")  # step 3 scales them right
    assert p.locator(EXERCISE).get_attribute("data-solved") is None

    assert check(p, spec["solution"]) == "passed"
    status = p.locator(f"{EXERCISE} .attn-cell__status").inner_text()
    assert f"All {len(spec['checks'])} hidden tests pass" in status
    assert p.locator(EXERCISE).get_attribute("data-solved") == "true"
