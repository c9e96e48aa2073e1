"""A reader without JavaScript (Playwright's java_script_enabled=False, a phone's viewport)
sees every lab's first result as the build wrote it (build_scripts/hooks/lab_static.py):
the sentence saying so and a captioned table or the key numbers, scrolling inside its own
box on a narrow screen. With JavaScript the lab controller replaces that static form with
the widget when it mounts (docs/javascripts/labs/controller.js)."""

from __future__ import annotations

import re

import pytest
import yaml
from attention_labs.labs import run_lab
from helpers import ROOT

from build_scripts.hooks import lab_static, scanner

PHONE = {"width": 390, "height": 844}
INTRO = lab_static.INTRO


def lessons_with_labs() -> dict[str, list[dict]]:
    """lesson page path -> the lab fences of its Markdown, in page order."""
    out = {}
    for path in sorted((ROOT / "docs" / "lessons").glob("*.md")):
        fences = [yaml.safe_load(f.body) for f in scanner.find_fences(path.read_text(), ("lab",))]
        if fences:
            out[f"lessons/{path.stem}/"] = fences
    return out


LESSONS = lessons_with_labs()

LABS = """() => [...document.querySelectorAll('.attn-lab')].map((lab) => {
  const stat = lab.querySelector('.attn-static');
  const box = (e) => e.getBoundingClientRect();
  return {
    lab: lab.dataset.lab, status: lab.dataset.status || null,
    intro: stat?.querySelector('.attn-lab-noscript')?.innerText ?? null,
    visible: stat ? box(stat).height > 0 : false,
    tables: [...(stat?.querySelectorAll('table') ?? [])].map((t) => ({
      caption: t.caption?.innerText ?? null,
      cols: [...t.querySelectorAll('thead th')].map((th) => [th.scope, th.textContent]),
      rows: [...t.querySelectorAll('tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent)),
      rowScopes: [...t.querySelectorAll('tbody th')].map((th) => th.scope),
      scroller: getComputedStyle(t.parentElement).overflowX,
      fits: box(t.parentElement).right <= innerWidth + 0.5,
    })),
    texts: [...(stat?.querySelectorAll('.attn-static__text') ?? [])].map((p) => p.innerText),
  };
})"""


@pytest.fixture(scope="module")
def no_js(browser, server):
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    yield page
    context.close()


@pytest.mark.parametrize("path", list(LESSONS))
def test_without_javascript_every_lab_shows_its_first_result(no_js, server, path):
    no_js.goto(server.base + path)
    labs = no_js.evaluate(LABS)
    fences = LESSONS[path]
    assert [lab["lab"] for lab in labs] == [f["lab"] for f in fences]
    for lab in labs:
        name = lab["lab"]
        assert lab["status"] is None, f"{name}: a controller ran without JavaScript"
        assert lab["intro"] == INTRO and lab["visible"], name
        assert lab["tables"] or any(re.search(r"\d", t) for t in lab["texts"]), name
        for table in lab["tables"]:
            assert table["caption"], name
            assert {scope for scope, _ in table["cols"]} == {"col"}, name
            assert table["rows"] and set(table["rowScopes"]) == {"row"}, name
            # On a phone a wide table scrolls inside its own box; the page does not.
            assert table["scroller"] == "auto" and table["fits"], name
    # The page as a whole is no wider than the phone.
    assert no_js.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]


def test_without_javascript_the_weights_are_the_builds(no_js, server):
    no_js.goto(server.base + "lessons/03-attention-pattern/")
    (pattern, scaling) = no_js.evaluate(LABS)
    fence = LESSONS["lessons/03-attention-pattern/"][0]
    res = run_lab("attention_pattern", {k: v for k, v in fence.items() if k != "lab"})["result"]
    (table,) = pattern["tables"]
    assert [text for _, text in table["cols"]][1:] == res["tokens"]
    for row, tokens_row, weights in zip(table["rows"], res["tokens"], res["weights"], strict=True):
        assert row[0] == tokens_row
        assert row[1:] == [f"{w:.2f}" if w is not None else "—" for w in weights]
    assert "sums to 1" in table["caption"]
    assert scaling["tables"][0]["cols"][0] == ["col", "d_head"]


def test_without_javascript_the_cache_formula_is_written_out(no_js, server):
    no_js.goto(server.base + "lessons/09-kv-cache-mqa-gqa/")
    size = next(lab for lab in no_js.evaluate(LABS) if lab["lab"] == "cache_size")
    assert size["texts"][0] == (
        "Llama-2-70B, GQA, fp16: 2 × 80 layers × 8 key/value heads × 128 (d_head) × "
        "4,096 tokens × 2 bytes = 1,342,177,280 bytes ≈ 1.34 GB."
    )
    assert [row[0] for row in size["tables"][0]["rows"]] == [
        "MHA (64 key/value heads)",
        "GQA (8 key/value heads)",
        "MQA (1 key/value head)",
    ]


def test_with_javascript_the_widget_replaces_the_static_form(recorded):
    page = recorded.page
    page.goto(recorded.base + "lessons/03-attention-pattern/")
    page.wait_for_selector(".attn-lab[data-lab=attention_pattern][data-status=initial]")
    page.wait_for_selector(".attn-lab[data-lab=scaling][data-status=initial]")
    assert page.locator(".attn-lab .attn-static").count() == 0
    assert INTRO not in page.inner_text("article")
    assert page.locator(".attn-lab[data-lab=attention_pattern] canvas.attn-heatmap").count() == 1
    assert recorded.errors == []
