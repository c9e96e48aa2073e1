"""Shared by the lessons' browser tests: one page per lesson for all its labs (a
module-scoped fixture over ``open_lesson``: one Pyodide start), each lab's state read from
the page, and a wait until its runs are done; a code cell's Run."""

from __future__ import annotations

import numpy as np
from attention_labs.labs import run_lab
from helpers import RecordedPage
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

# How long any browser test waits for Python: the gates' own wait (a cold start on a busy
# 2-core machine), one figure for every test.
from build_scripts.gates.check_site import PYTHON_TIMEOUT_MS

FRAMES_JS = """(n) => new Promise((done) => {
  const step = (left) => (left ? requestAnimationFrame(() => step(left - 1)) : done());
  step(n);
})"""


def next_frames(page, n: int = 3) -> None:
    """Wait for ``n`` rendered frames: after a resize, frame 1 lays out and runs the charts'
    ResizeObservers, frame 2 runs the redraw they asked for, so 3 frames see it drawn, on a
    fast machine or a busy one (no fixed sleep)."""
    page.evaluate(FRAMES_JS, n)


def lab(name: str) -> str:
    """The selector of lab ``name`` on its page (a selector is returned as it is)."""
    return name if name.startswith(".attn-lab") else f".attn-lab[data-lab={name}]"


def open_lesson(browser, server, path: str, labs):
    """For a module-scoped fixture (``yield from``): a recorded page on lesson ``path``,
    once every lab of ``labs`` shows the build's result; closed after the module."""
    rec = RecordedPage(browser, server.base)
    rec.page.goto(rec.base + path)
    for name in labs:
        rec.page.wait_for_selector(f"{lab(name)}[data-status=initial]")
    yield rec
    rec.context.close()


def lab_state(page, name: str, keep_nonfinite: bool = False) -> dict:
    """The lab's parameters and current result, typed arrays as lists; their -inf and NaN
    as None unless ``keep_nonfinite``."""
    return page.evaluate(
        """([sel, keep]) => { const c = document.querySelector(sel).attnLab;
          const num = (x) => keep || Number.isFinite(x) ? x : null;
          const plain = (v) => ArrayBuffer.isView(v) ? Array.from(v, num)
            : Array.isArray(v) ? v.map(plain)
            : (v && typeof v === 'object') ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
            : v;
          return {params: c.params, result: plain(c.result), runs: c.runs}; }""",
        [lab(name), keep_nonfinite],
    )


def wait_for_runs(page, name: str, n: int):
    """Until lab ``name`` has answered ``n`` runs and has none in flight or queued."""
    page.wait_for_function(
        f"() => ((r) => Number(r.dataset.runs || 0) >= {n} && !r.attnLab?.inFlight && !r.attnLab?.latest)(document.querySelector('{lab(name)}'))",
        timeout=PYTHON_TIMEOUT_MS,
    )


def run_cell(page, n: int, timeout_ms: int = PYTHON_TIMEOUT_MS) -> str:
    """Press Run on the page's code cell ``n`` (0-based) and wait until it has answered;
    returns its state ("done", "error", ...)."""
    cell = page.locator(".attn-cell").nth(n)
    before = int(cell.get_attribute("data-runs"))
    # Enter on the focused button, as a keyboard reader runs it: a mouse click is aimed at
    # where the button was, and the cell above can still grow (its output drawn) under the
    # pointer. Under load a click was lost that way: the cell stayed idle, never run.
    cell.locator(".attn-cell__run").press("Enter")
    try:
        page.wait_for_function(
            "([n, runs]) => { const r = document.querySelectorAll('.attn-cell')[n];"
            " return r.dataset.state !== 'running' && Number(r.dataset.runs) > runs; }",
            arg=[n, before],
            timeout=timeout_ms,
        )
    except PlaywrightTimeoutError:
        # Say where it stood: the cell's status line and Python's start-up.
        where = page.evaluate(
            "(n) => { const r = document.querySelectorAll('.attn-cell')[n];"
            " const rt = window.AttnLabs?.runtime;"
            " return {cell: r.dataset.state, status: r.querySelector('.attn-cell__status')?.textContent,"
            " runtime: rt?.state, progress: rt?.progress, timings: rt?.timings}; }",
            n,
        )
        raise AssertionError(f"cell {n} did not answer within {timeout_ms} ms: {where}") from None
    return cell.get_attribute("data-state")


def assert_close_tree(got, expected, path="result"):
    """`got` (from the page) equals `expected` (CPython) to 1e-9, key by key."""
    if isinstance(expected, dict):
        assert set(got) == set(expected), path
        for k in expected:
            assert_close_tree(got[k], expected[k], f"{path}.{k}")
    elif isinstance(expected, list) and expected and isinstance(expected[0], dict):
        assert len(got) == len(expected), path
        for k, (g, e) in enumerate(zip(got, expected, strict=True)):
            assert_close_tree(g, e, f"{path}[{k}]")
    elif isinstance(expected, list) and expected and not isinstance(expected[0], str):
        np.testing.assert_allclose(
            np.array(got, dtype=float),
            np.array(expected, dtype=float),
            rtol=0,
            atol=1e-9,
            err_msg=path,
        )
    elif isinstance(expected, float):
        assert abs(got - expected) < 1e-9, path
    else:
        assert got == expected, path


def assert_same_as_cpython(page, name: str) -> dict:
    state = lab_state(page, name)
    assert_close_tree(state["result"], run_lab(name, state["params"])["result"])
    return state


def press(page, selector: str, value: str):
    page.fill(selector, value)
    page.locator(selector).press("Enter")
