"""The explorer with a decoder (SmolLM2-135M, its weights dequantised from a Q4_1 GGUF) in
Chromium: the statistics that matter for a causal model (first-token share, previous-token
share, an induction score only where a sequence repeats), the model named with how its
weights were made, and the same sentence compared across MiniLM and SmolLM2.

One page for the whole module (dark palette), on the built site with the committed assets.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from attention_labs import real_maps
from helpers import ROOT, RecordedPage

ASSETS = ROOT / "docs" / "assets" / "attention"
INDEX = json.loads((ASSETS / "index.json").read_text("utf-8"))
SMOL = "smollm2-135m"
MINI = "all-minilm-l6-v2"
SMOL_LABEL = "SmolLM2-135M-Instruct (Q4_1, dequantised)"
MAP = ".attn-map"


def asset(model: str, sentence: str) -> dict:
    return json.loads((ASSETS / model / f"{sentence}.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def rec(browser, server):
    rec = RecordedPage(browser, server.base)
    rec.context.close()
    rec.context = browser.new_context(viewport={"width": 1200, "height": 900}, color_scheme="dark")
    rec.context.on("request", lambda r: rec.requests.append(r.url))
    rec.page = rec.context.new_page()
    rec.page.on("pageerror", lambda e: rec.errors.append(str(e)))
    yield rec
    rec.context.close()


def open_explorer(rec, query: str):
    rec.page.goto(f"{rec.base}explorer/{query}")
    rec.page.wait_for_selector(f"{MAP}[data-state=ready]", timeout=30_000)
    return rec.page


def pick(page, selector: str, value: str):
    """Pick `value` in a select that reloads the map, and wait for it to be drawn again."""
    page.select_option(selector, value)
    page.wait_for_selector(f"{MAP}[data-state=ready]", timeout=30_000)


def thumb(page, layer: int, head: int):
    return page.locator(f'{MAP} .attn-map__thumb[data-layer="{layer}"][data-head="{head}"]')


def test_the_js_repeat_rule_is_real_maps_on_every_committed_asset(rec):
    """parts.js repeats() counts the induction score's queries and the longest repeated run
    exactly as real_maps.induction_targets and real_maps.longest_repeat do."""
    page = open_explorer(rec, f"?model={SMOL}&sentence=counting&view=model")
    got = page.evaluate(
        """async (paths) => {
          const { repeats } = await import(new URL('../javascripts/explorer/parts.js', location.href));
          const out = {};
          for (const p of paths) {
            const a = await (await fetch(new URL('../assets/attention/' + p, location.href))).json();
            out[p] = repeats(a);
          }
          return out;
        }""",
        [a["path"] for a in INDEX["assets"]],
    )
    for entry in INDEX["assets"]:
        tokens = asset(entry["model"], entry["sentence"])["tokens"]
        assert got[entry["path"]] == {
            "queries": len(real_maps.induction_targets(tokens["ids"], tokens["special"])),
            "longest": real_maps.longest_repeat(tokens["ids"], tokens["special"]),
        }, entry["path"]
    assert rec.errors == []


def test_decoder_grid_shows_the_induction_score_only_where_a_sequence_repeats(rec):
    page = open_explorer(rec, f"?model={SMOL}&sentence=induction-random&view=model&stat=induction")
    labels = page.locator(f"{MAP} select[id$=-stat] option").all_inner_texts()
    assert {"First-token share (attention sink)", "Previous-token share", "Induction score"} <= set(
        labels
    )
    data = asset(SMOL, "induction-random")
    scores = np.array(data["head_stats"]["induction"])
    layer, head = np.unravel_index(scores.argmax(), scores.shape)
    help_text = page.locator(f"{MAP} .attn-map__model .attn-map__help[aria-live]").inner_text()
    queries = len(real_maps.induction_targets(data["tokens"]["ids"], data["tokens"]["special"]))
    assert f"averaged over the {queries} tokens of this sentence that repeat" in help_text
    best = thumb(page, layer, head)
    assert best.inner_text().endswith(f"★ {scores[layer, head]:.2f}")
    assert "the most extreme" in best.get_attribute("aria-label")
    # the head panel's line of statistics has the number too
    best.click()
    stats = page.locator(f"{MAP} .attn-map__panel--main .attn-map__stats").inner_text()
    assert f"Induction score: {scores[layer, head]:.3f}" in stats
    page.locator(f"{MAP} .attn-map__view").first.click()  # back to the grid

    # a lone repeated word: no score, and the reason, instead of a number from one query
    pick(page, f"{MAP} select[id$=-sentence]", "code-line")
    help_text = page.locator(f"{MAP} .attn-map__model .attn-map__help[aria-live]").inner_text()
    assert "not measured: no sequence of 3 or more tokens repeats" in help_text
    assert "only single tokens repeat, at 1 query" in help_text and "induction-random" in help_text
    values = page.locator(f"{MAP} .attn-map__thumb-value").all_inner_texts()
    assert set(values) == {"–"} and page.locator(f"{MAP} .attn-map__thumb--best").count() == 0
    assert thumb(page, 0, 0).get_attribute("aria-label") == (
        "L0 H0 · KV0: layer 0, head 0, key/value head 0, shared with heads 1 and 2,"
        " induction score not measured"
    )
    thumb(page, 2, 1).click()
    stats = page.locator(f"{MAP} .attn-map__panel--main .attn-map__stats").inner_text()
    assert "Induction score: not measured" in stats
    page.locator(f"{MAP} .attn-map__view").first.click()

    # no token repeats at all
    pick(page, f"{MAP} select[id$=-sentence]", "fluffy-creature")
    help_text = page.locator(f"{MAP} .attn-map__model .attn-map__help[aria-live]").inner_text()
    assert "no token of this sentence appears twice" in help_text

    # the attention sink: the share on <|endoftext|>, the token SmolLM2's sentences start with
    page.select_option(f"{MAP} select[id$=-stat]", "first_token")
    help_text = page.locator(f"{MAP} .attn-map__model .attn-map__help[aria-live]").inner_text()
    assert "“<|endoftext|>”" in help_text and "attention sink" in help_text
    sink = np.array(asset(SMOL, "fluffy-creature")["head_stats"]["first_token"])
    assert thumb(page, 5, 4).inner_text().endswith(f"{sink[5, 4]:.2f}")
    page.select_option(f"{MAP} select[id$=-stat]", "previous_token")
    prev = np.array(asset(SMOL, "fluffy-creature")["head_stats"]["previous_token"])
    assert thumb(page, 0, 3).inner_text().endswith(f"{prev[0, 3]:.2f}")
    assert rec.errors == [] and rec.external_requests() == []


def test_grouped_query_attention_shows_which_query_heads_share_keys_and_values(rec):
    """SmolLM2's 9 query heads read 3 key/value heads (the asset's kv_heads): the grid names
    each head's key/value head and marks where a group starts; the head view says who shares."""
    page = open_explorer(rec, f"?model={SMOL}&sentence=fluffy-creature&view=model")
    kv_heads = asset(SMOL, "fluffy-creature")["model"]["kv_heads"]
    assert kv_heads == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    for h, kv in enumerate(kv_heads):
        t = thumb(page, 4, h)
        assert t.locator(".attn-map__thumb-label").inner_text() == f"L4 H{h} · KV{kv}"
        assert t.get_attribute("data-kv") == str(kv)
        others = [m for m, k in enumerate(kv_heads) if k == kv and m != h]
        assert f"key/value head {kv}, shared with heads {others[0]} and {others[1]}," in (
            t.get_attribute("aria-label")
        )
        first = "attn-map__thumb--kv-first" in t.get_attribute("class")
        assert first == (h == kv_heads.index(kv))
    note = page.locator(f"{MAP} .attn-map__model").inner_text()
    assert "Its 9 query heads share 3 key/value heads (grouped-query attention)" in note
    thumb(page, 4, 4).click()
    title = page.locator(f"{MAP} .attn-map__panel--main .attn-map__title").inner_text()
    assert "layer 4, head 4 (key/value head 1, shared with heads 3 and 5)" in title
    page.locator(f"{MAP} .attn-map__view").first.click()
    # an encoder with a key/value head per query head says nothing of groups
    pick(page, f"{MAP} select[id$=-model]", MINI)
    assert thumb(page, 0, 3).locator(".attn-map__thumb-label").inner_text() == "L0 H3"
    assert thumb(page, 0, 3).get_attribute("data-kv") is None
    assert "key/value" not in thumb(page, 0, 3).get_attribute("aria-label")
    assert rec.errors == []


def test_the_decoder_is_named_as_dequantised_from_q4_1_wherever_it_is_named(rec):
    page = open_explorer(rec, f"?model={SMOL}&sentence=next-word&view=model")
    options = page.locator(f"{MAP} select[id$=-model] option").all_inner_texts()
    assert f"{SMOL_LABEL}, decoder" in options and "all-MiniLM-L6-v2, encoder" in options
    assert (
        page.locator(f"{MAP} .attn-map__model .attn-map__title")
        .inner_text()
        .startswith(f"Every head of {SMOL_LABEL} on “next-word”")
    )
    assert page.locator(f"{MAP} .attn-map__status").inner_text().startswith(SMOL_LABEL)
    assert (
        page.locator(MAP).get_attribute("aria-label") == f"Attention map: {SMOL_LABEL}, next-word"
    )
    thumb(page, 3, 4).click()
    title = page.locator(f"{MAP} .attn-map__panel--main .attn-map__title").inner_text()
    assert title.startswith(f"{SMOL_LABEL} · layer 3, head 4")
    canvas = page.locator(f"{MAP} .attn-map__panel--main canvas.attn-heatmap")
    assert canvas.get_attribute("aria-label").startswith(f"Attention weights of {SMOL_LABEL},")
    assert rec.errors == []


def test_the_same_sentence_compared_across_minilm_and_smollm2(rec):
    from build_scripts.gates.check_site import _axe_problems

    page = rec.page
    page.set_viewport_size({"width": 390, "height": 800})
    rec.requests.clear()
    page = open_explorer(
        rec,
        f"?model={MINI}&sentence=bank-river&view=head&layer=1&head=2&query=6&compare={SMOL}:20:3",
    )
    compare = f"{MAP} .attn-map__panel--compare"
    title = page.locator(f"{compare} .attn-map__title").inner_text()
    assert title.startswith(
        f"{SMOL_LABEL} · layer 20, head 3 (key/value head 1, shared with heads 4 and 5)"
        " · sentence “bank-river”"
    )
    # the compared query is the same word in the other model's tokens ("bank" -> " bank")
    mini, smol = asset(MINI, "bank-river"), asset(SMOL, "bank-river")
    assert mini["tokens"]["text"][6] == "bank"
    q = next(i for i, t in enumerate(smol["tokens"]["text"]) if t == " bank")
    lines = page.locator(f"{compare} .attn-map__lines-head").inner_text()
    assert lines.startswith(f"Lines from query “ bank” ({q})")
    assert page.locator(f"{compare} select[id$=-model]").input_value() == SMOL
    # the decoder's later keys are masked in its panel
    centre = page.evaluate(
        f"() => document.querySelector('{MAP}').attnMap.comparePanel.heatmap.cellCentre(1, 4)"
    )
    page.locator(f"{compare} canvas.attn-heatmap").hover(position=centre)
    assert "masked, weight 0" in page.locator(f"{compare} .attn-map__cell").inner_text()
    fetched = sorted(u for u in rec.requests if "/assets/attention/" in u and u.endswith(".json"))
    assert [u.split("/assets/attention/")[1] for u in fetched if "/bank-river" in u] == [
        f"{MINI}/bank-river.json",
        f"{SMOL}/bank-river.json",
    ]
    # on a phone, in the dark palette: no sideways scroll, nothing axe can fault
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert _axe_problems(page, "explorer, MiniLM vs SmolLM2 (dark, 390 px)") == []

    # another sentence keeps the comparison across the two models
    pick(page, f"{MAP} select[id$=-sentence]", "mole-animal")
    state = page.evaluate(f"() => document.querySelector('{MAP}').attnMap.state")
    assert state["model"] == MINI and state["compare"]["model"] == SMOL
    assert "compare=smollm2-135m%3A" in page.url or "compare=smollm2-135m:" in page.url
    title = page.locator(f"{compare} .attn-map__title").inner_text()
    assert title.startswith(f"{SMOL_LABEL} · layer 20, head 3 (key/value head 1,")
    assert title.endswith("· sentence “mole-animal”")
    # turned off and on again: one panel, then a second within MiniLM
    page.uncheck(f"{MAP} input[id$=-compare]")
    assert page.locator(f"{MAP} .attn-map__panel").count() == 1
    page.check(f"{MAP} input[id$=-compare]")
    assert page.locator(f"{compare} .attn-map__title").inner_text().startswith("all-MiniLM-L6-v2")
    # and the compare panel's own picker goes to SmolLM2 again
    page.select_option(f"{compare} select[id$=-model]", SMOL)
    page.wait_for_function(
        f"() => document.querySelector('{compare} .attn-map__title')"
        f".textContent.startsWith('{SMOL_LABEL}')"
    )
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    assert rec.errors == [] and rec.external_requests() == []
