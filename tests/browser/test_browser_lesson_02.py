"""Lesson 2's labs (qk_geometry, query_picker, real_scores) in headless Chromium with real Pyodide, on
one page and one Python start: a control moved (an arrow head by keyboard, a query picked)
recomputes in Pyodide and the result equals CPython's."""

from __future__ import annotations

import numpy as np
import pytest
from attention_labs.labs import run_lab
from helpers import RecordedPage
from lab_pages import PYTHON_TIMEOUT_MS, lab_state

LESSON = "lessons/02-queries-and-keys/"


@pytest.fixture(scope="module")
def page(browser, server):
    rec = RecordedPage(browser, server.base)
    rec.page.goto(server.base + LESSON)
    rec.page.wait_for_selector(".attn-lab[data-lab=qk_geometry][data-status]")
    rec.page.wait_for_selector(".attn-lab[data-lab=query_picker][data-status]")
    rec.page.wait_for_selector(".attn-lab[data-lab=real_scores][data-status]")
    yield rec
    rec.context.close()


def wait_for_runs(p, lab, n):
    p.wait_for_function(
        f"() => ((r) => Number(r.dataset.runs || 0) >= {n} && !r.attnLab?.inFlight && !r.attnLab?.latest)(document.querySelector('{lab}'))",
        timeout=PYTHON_TIMEOUT_MS,
    )


def close(got, expected, keys):
    for key in keys:
        np.testing.assert_allclose(got[key], expected[key], rtol=0, atol=1e-12, err_msg=key)


def test_qk_geometry_keyboard_drag_recomputes_equal_to_cpython(page):
    p = page.page
    lab = ".attn-lab[data-lab=qk_geometry]"
    state = lab_state(p, lab, keep_nonfinite=True)
    keys = ("scores", "weights", "cosines", "key_lengths", "angles_deg", "query", "keys")
    close(state["result"], run_lab("qk_geometry", state["params"])["result"], keys)
    p.locator(lab).scroll_into_view_if_needed()
    handle = p.locator(f"{lab} [role=slider][data-id=q]")
    assert handle.get_attribute("aria-valuetext") == "x 2.00, y 1.00"
    handle.focus()
    p.keyboard.press("ArrowUp")  # the query's head: (2, 1) -> (2, 1.1)
    wait_for_runs(p, lab, 1)
    state = lab_state(p, lab, keep_nonfinite=True)
    assert state["params"]["qx"] == 2.0 and state["params"]["qy"] == pytest.approx(1.1)
    expected = run_lab("qk_geometry", state["params"])["result"]
    close(state["result"], expected, keys)
    # the bars and the table show the new scores
    score = f"{expected['scores'][2]:.2f}"  # key 3 is no longer at a right angle
    assert score != "0.00"
    assert p.locator(f"{lab} details table td", has_text=f"= {score}").count() == 1
    assert page.errors == []


def test_query_picker_pick_a_query_recomputes_equal_to_cpython(page):
    p = page.page
    lab = ".attn-lab[data-lab=query_picker]"
    p.locator(lab).scroll_into_view_if_needed()
    before = lab_state(p, lab, keep_nonfinite=True)["runs"]
    p.select_option("select[id$='-query']", "4")  # "tunnel"
    wait_for_runs(p, lab, before + 1)
    state = lab_state(p, lab, keep_nonfinite=True)
    assert state["params"]["query"] == 4
    expected = run_lab("query_picker", state["params"])["result"]
    close(state["result"], expected, ("q", "scores", "weights", "S"))
    assert state["result"]["shapes"] == expected["shapes"]
    row = p.locator(f"{lab} table.attn-lab__grid tr[aria-current=true]")
    assert row.locator("th").inner_text() == "tunnel"
    # a row header picks its query too
    p.locator(f"{lab} table.attn-lab__grid button", has_text="lawn").click()
    wait_for_runs(p, lab, before + 2)
    state = lab_state(p, lab, keep_nonfinite=True)
    assert state["params"]["query"] == 7
    close(state["result"], run_lab("query_picker", state["params"])["result"], ("scores",))
    assert "(8, 64)" in p.locator(f"{lab} .attn-lab__shapes").inner_text()
    assert page.errors == []
    assert page.external_requests() == []


def scores_close(got, expected):
    """Equal to CPython's result; a score hidden by a mask is None in both."""
    for key in ("q", "weights"):
        np.testing.assert_allclose(got[key], expected[key], rtol=0, atol=1e-9, err_msg=key)
    for key in ("scores", "S"):
        g = np.array(got[key], dtype=float)  # None -> nan
        e = np.array(expected[key], dtype=float)
        np.testing.assert_allclose(g, e, rtol=0, atol=1e-9, equal_nan=True, err_msg=key)
    for key in ("tokens", "labels", "pick", "query", "top_key", "d_head", "causal"):
        assert got[key] == expected[key], key


def test_real_scores_is_drawn_from_the_build_and_picking_recomputes_equal_to_cpython(page):
    """The trained head's lab: the build's result (filled from the committed asset) before
    Python; picking another head and another query recomputes in Pyodide as in CPython."""
    p = page.page
    lab = ".attn-lab[data-lab=real_scores]"
    state = lab_state(p, lab, keep_nonfinite=True)
    assert state["runs"] == 0
    scores_close(state["result"], run_lab("real_scores", state["params"])["result"])
    source = p.locator(f"{lab} .attn-real-scores__source").inner_text()
    assert "layer 0, head 2: highest previous-token score" in source
    assert "Its scores run from -112.0 to 155.6" in source
    summary = p.locator(f"{lab} .attn-lab__cell").inner_text()
    assert summary.startswith("Query “dug” (3)") and "key of “mole” (120.56)" in summary
    assert p.locator(f"{lab} table.attn-lab__grid tbody tr").count() == 13
    p.locator(lab).scroll_into_view_if_needed()
    before = state["runs"]
    p.locator(f"{lab} select[id$='-pick']").select_option("2")  # the first-token head
    wait_for_runs(p, lab, before + 1)
    state = lab_state(p, lab, keep_nonfinite=True)
    assert state["params"]["pick"] == 2
    scores_close(state["result"], run_lab("real_scores", state["params"])["result"])
    assert state["result"]["tokens"][state["result"]["top_key"]] == "[CLS]"
    p.locator(f"{lab} table.attn-lab__grid button", has_text="garden").click()
    wait_for_runs(p, lab, before + 2)
    state = lab_state(p, lab, keep_nonfinite=True)
    assert state["params"]["query"] == 10
    scores_close(state["result"], run_lab("real_scores", state["params"])["result"])
    row = p.locator(f"{lab} table.attn-lab__grid tr[aria-current=true]")
    assert row.locator("th").inner_text() == "garden"
    assert page.errors == []
    assert page.external_requests() == []
