"""Lesson 5's lab (value_update) in headless Chromium with real Pyodide: the build's result
first, then the query, d_head, sentence and seed recomputed in the browser, equal to
CPython; the shape diagram follows d_head and seq_len. One page, one Pyodide start."""

from __future__ import annotations

import pytest
from helpers import RecordedPage
from lab_pages import (
    PYTHON_TIMEOUT_MS,
    assert_same_as_cpython,
    lab,
    next_frames,
    press,
    wait_for_runs,
)

LESSON = "lessons/05-values-and-the-update/"
NAME = "value_update"
ROOT = lab(NAME)


@pytest.fixture(scope="module")
def page(browser, server):
    rec = RecordedPage(browser, server.base)
    rec.page.goto(rec.base + LESSON)
    yield rec
    assert rec.errors == []
    assert rec.external_requests() == []
    rec.context.close()


def diagram(p) -> str:
    return " ".join(p.locator(f"{ROOT} .attn-shapes").inner_text().split())


def test_lab_first_shows_the_builds_result_with_its_shapes(page):
    p = page.page
    p.wait_for_selector(f"{ROOT}[data-status=initial]")
    state = assert_same_as_cpython(p, NAME)
    assert state["runs"] == 0
    text = diagram(p)
    assert "X (8 × 16)" in text and "× W_V (16 × 4)" in text and "V (8 × 4)" in text
    assert "pattern A (8 × 8)" in text and "× W_O (4 × 16)" in text and "Δ (8 × 16)" in text
    assert "“creature”" in p.locator(f"{ROOT} .attn-lab__summary").inner_text()


LABELS = """(root) => {
  const svg = document.querySelector(`${root} .attn-chart--plane svg`);
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll('.attn-chart__vector-label')].filter((t) => t.textContent)
    .map((t) => { const r = t.getBoundingClientRect();
      return {text: t.textContent, l: r.left - box.left, t: r.top - box.top,
              r: r.right - box.left, b: r.bottom - box.top, w: box.width, h: box.height}; });
}"""


def overlapping(labels):
    return [
        (a["text"], b["text"])
        for i, a in enumerate(labels)
        for b in labels[i + 1 :]
        if a["l"] < b["r"] and b["l"] < a["r"] and a["t"] < b["b"] and b["t"] < a["b"]
    ]


def test_plane_labels_legend_and_diagram_read_clearly(page):
    """Every token's arrow has its label (The and the are one word at two positions, so two
    arrows: lesson 2's convention); no two labels overprint; none is clipped at 390 px; x + Δ
    is named in the legend; the scores step of the diagram reads plainly."""
    p = page.page
    p.wait_for_selector(f"{ROOT} .attn-chart--plane svg .attn-chart__vector-label")
    for width in (800, 390):
        p.set_viewport_size({"width": width, "height": 900})
        next_frames(p)  # the plane redraws on resize
        labels = p.evaluate(LABELS, ROOT)
        texts = [x["text"] for x in labels]
        assert "The" in texts and "the" in texts and "x" in texts and "x + Δ" in texts
        assert overlapping(labels) == []
        for x in labels:
            assert (
                x["l"] >= 0 and x["r"] <= x["w"] + 0.5 and x["t"] >= 0 and x["b"] <= x["h"] + 0.5
            ), x
    p.set_viewport_size({"width": 1280, "height": 900})
    legend = p.locator(f"{ROOT} .attn-chart--plane .attn-chart__legend").inner_text()
    assert "x and x + Δ" in legend and "update Δ" in legend and "values v_j W_O" in legend
    assert "other" not in legend
    # the hidden table still names every token
    table = p.locator(f"{ROOT} .attn-chart--plane table").text_content()
    assert table.count("embedding(") == 2 and "other" not in table  # x and x + Δ
    text = diagram(p)
    assert "→ Q and K: Q Kᵀ / √d_head → scores (8 × 8)" in text
    assert "Q, K Q" not in text


def test_controls_recompute_in_pyodide_equal_to_cpython(page):
    p = page.page
    p.locator(ROOT).scroll_into_view_if_needed()
    p.wait_for_selector(f"{ROOT}[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    steps = [
        lambda: p.select_option(f"{ROOT} select[id$='-query']", "6"),
        lambda: press(p, f"{ROOT} input[id$='-d_head']", "2"),
        lambda: press(p, f"{ROOT} input[id$='-tokens']", "one two three"),
        lambda: p.click(f"{ROOT} button.attn-lab__reseed"),
    ]
    for n, step in enumerate(steps, start=1):
        step()
        wait_for_runs(p, NAME, n)
        assert_same_as_cpython(p, NAME)
    state = assert_same_as_cpython(p, NAME)
    assert state["params"] == {
        "tokens": ["one", "two", "three"],
        "query": 2,
        "d_head": 2,
        "seed": 1,
    }
    text = diagram(p)
    assert "X (3 × 16)" in text and "V (3 × 2)" in text and "scores (3 × 3)" in text
    assert "× W_O (2 × 16)" in text
