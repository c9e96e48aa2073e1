"""Lesson 1's lab (meaning_shift) in headless Chromium with real Pyodide: the page shows the
build's result, a slider recomputes in Pyodide, and the result equals CPython's."""

from __future__ import annotations

import numpy as np
import pytest
from attention_labs.labs import run_lab
from helpers import RecordedPage
from lab_pages import PYTHON_TIMEOUT_MS, lab_state, next_frames

LESSON = "lessons/01-why-attention/"


@pytest.fixture(scope="module")
def page(browser, server):
    rec = RecordedPage(browser, server.base)
    rec.page.goto(server.base + LESSON)
    yield rec
    rec.context.close()


def same_as_cpython(state):
    expected = run_lab("meaning_shift", state["params"])["result"]
    got = state["result"]
    for key in ("tokens", "context_words", "sense_names", "nearest_before", "nearest_after"):
        assert got[key] == expected[key], key
    for key in ("weights", "delta", "updated", "cos_before", "cos_after", "context_vectors"):
        np.testing.assert_allclose(got[key], expected[key], rtol=0, atol=1e-12, err_msg=key)


def test_meaning_shift_slider_recomputes_in_pyodide_equal_to_cpython(page):
    p = page.page
    lab = ".attn-lab[data-lab=meaning_shift]"
    p.wait_for_selector(f"{lab}[data-status=initial]")
    initial = lab_state(p, lab, keep_nonfinite=True)
    assert initial["runs"] == 0
    same_as_cpython(initial)  # the build's result, drawn before Python
    assert p.locator(f"{lab} figure.attn-chart").count() == 1
    assert "animal (cosine" in p.locator(f"{lab} .attn-lab__cell").inner_text()

    p.locator(lab).scroll_into_view_if_needed()
    slider = p.locator("input[id$='-w3']")
    slider.fill("0.2")  # weight on "lawn"
    p.wait_for_function(
        f"() => Number(document.querySelector('{lab}').dataset.runs || 0) >= 1",
        timeout=PYTHON_TIMEOUT_MS,
    )
    state = lab_state(p, lab, keep_nonfinite=True)
    assert state["params"]["w3"] == 0.2
    same_as_cpython(state)
    # the table shows the new weight; the label names the context word
    assert p.locator("label[for$='-w3']").inner_text() == "Weight on “lawn”"
    weight = f"{state['result']['weights'][2]:.2f}"
    assert (
        p.locator(f"{lab} table", has_text="Weights on the context words")
        .locator("td", has_text=weight)
        .count()
        >= 1
    )

    p.select_option("select[id$='-sentence']", "bank_river")
    p.wait_for_function(
        f"() => Number(document.querySelector('{lab}').dataset.runs || 0) >= 2",
        timeout=PYTHON_TIMEOUT_MS,
    )
    state = lab_state(p, lab, keep_nonfinite=True)
    same_as_cpython(state)
    assert p.locator("label[for$='-w1']").inner_text() == "Weight on “fished”"
    # a new sentence puts every slider back at 1 (w3 was 0.2): "Things to try" in order
    assert [state["params"][w] for w in ("w1", "w2", "w3")] == [1.0, 1.0, 1.0]
    assert p.locator("input[id$='-w3']").input_value() == "1"
    river = run_lab("meaning_shift", {"sentence": "bank_river"})["result"]
    np.testing.assert_allclose(state["result"]["cos_after"], river["cos_after"], rtol=0, atol=1e-12)
    cell = p.locator(f"{lab} .attn-lab__cell").inner_text()
    assert f"river side (cosine {river['cos_after'][0]:.2f}) after it" in cell
    assert page.errors == []
    assert page.external_requests() == []


UPDATED = "x\u2009+\u2009Δ"  # the plane's label of x + Δ, with thin spaces
LABELS_JS = """(sel) => {
  const svg = document.querySelector(`${sel} svg.attn-chart__svg`);
  const frame = svg.getBoundingClientRect();
  const boxes = [...svg.querySelectorAll('.attn-chart__vector-label, .attn-chart__dot text')]
    .filter((t) => t.textContent)
    .map((t) => { const r = t.getBoundingClientRect();
      return {text: t.textContent, l: r.left, r: r.right, t: r.top, b: r.bottom}; });
  return {frame: {l: frame.left, r: frame.right, t: frame.top, b: frame.bottom}, boxes};
}"""


def test_the_plane_has_its_own_legend_and_its_labels_fit_at_390_px(page):
    p = page.page
    lab = ".attn-lab[data-lab=meaning_shift]"
    # the widget's legend names x + Δ apart from x; the chart's kind-only legend is hidden
    legend = p.locator(f"{lab} .attn-lab__plane-legend li").all_inner_texts()
    assert [t.strip() for t in legend] == [
        "c1–c3: the context words (numbered in the sentence)",
        "x: the embedding",
        "Δ: the update (dashed)",
        "x + Δ: the updated vector",
        "dots: the senses",
    ]
    assert p.locator(f"{lab} figure.attn-chart .attn-chart__legend").is_hidden()
    rows = p.eval_on_selector_all(
        f"{lab} figure.attn-chart table tr",
        "(trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent))",
    )
    kinds = {r[0]: r[1] for r in rows if len(r) > 1}
    assert kinds["x"] == "embedding" and kinds[UPDATED] == "update", kinds
    p.set_viewport_size({"width": 390, "height": 844})
    try:
        for sentence in (
            "mole_animal",
            "mole_chemistry",
            "mole_skin",
            "mole_mixed",
            "bank_river",
            "bank_money",
        ):
            runs = p.evaluate(f"() => Number(document.querySelector('{lab}').dataset.runs || 0)")
            p.select_option("select[id$='-sentence']", sentence)
            p.wait_for_function(
                f"() => Number(document.querySelector('{lab}').dataset.runs || 0) > {runs}",
                timeout=PYTHON_TIMEOUT_MS,
            )
            next_frames(p)
            got = p.evaluate(LABELS_JS, lab)
            f, boxes = got["frame"], got["boxes"]
            texts = [b["text"] for b in boxes]
            assert "x" in texts and UPDATED in texts and "c1" in texts, texts
            for b in boxes:  # inside the frame
                assert b["l"] >= f["l"] - 0.5 and b["r"] <= f["r"] + 0.5, (sentence, b)
            overlaps = {
                frozenset((a["text"], b["text"]))
                for k, a in enumerate(boxes)
                for b in boxes[k + 1 :]
                if not (
                    a["r"] <= b["l"] or b["r"] <= a["l"] or a["b"] <= b["t"] or b["b"] <= a["t"]
                )
            }
            # x's label is clear of x + Δ's. Not yet: the plane puts a sense's name at a
            # fixed offset from its dot, so an arrow ending next to a sense still touches
            # its name (c1 and x + Δ near "chemistry" in mole_chemistry, c1 in mole_mixed,
            # though "c1" is now 2 characters where "chemist" was 7).
            assert frozenset(("x", UPDATED)) not in overlaps, (sentence, overlaps)
    finally:
        p.set_viewport_size({"width": 1200, "height": 900})
    assert page.errors == []
