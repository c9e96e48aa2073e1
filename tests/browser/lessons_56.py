"""Shared by the browser tests of lessons 5 and 6: one page per lesson for all its labs
(a module-scoped fixture: one Pyodide start), and each lab's state read from the page."""

from __future__ import annotations

import numpy as np
from attention_labs.labs import run_lab

PYTHON_TIMEOUT_MS = 120_000  # cold Pyodide start on a busy 2-core machine


def lab(name: str) -> str:
    return f".attn-lab[data-lab={name}]"


def lab_state(page, name: str) -> dict:
    """The lab's parameters and current result, typed arrays as lists (-inf as None)."""
    return page.evaluate(
        """(sel) => { const c = document.querySelector(sel).attnLab;
          const plain = (v) => ArrayBuffer.isView(v) ? Array.from(v, (x) => Number.isFinite(x) ? x : null)
            : Array.isArray(v) ? v.map(plain)
            : (v && typeof v === 'object') ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
            : v;
          return {params: c.params, result: plain(c.result), runs: c.runs}; }""",
        lab(name),
    )


def wait_for_runs(page, name: str, n: int):
    page.wait_for_function(
        f"() => ((r) => Number(r.dataset.runs || 0) >= {n} && !r.attnLab?.inFlight && !r.attnLab?.latest)(document.querySelector('{lab(name)}'))",
        timeout=PYTHON_TIMEOUT_MS,
    )


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
