"""The attention-map explorer (docs/explorer/, docs/javascripts/explorer/) in Chromium,
on the built site served locally, with the committed real assets."""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from attention_labs import real_maps
from helpers import ROOT

ASSETS = ROOT / "docs" / "assets" / "attention"
INDEX = json.loads((ASSETS / "index.json").read_text("utf-8"))
MODEL = INDEX["models"][0]
SLUG = MODEL["slug"]
MAP = ".attn-map"


def asset(sentence: str) -> dict:
    return json.loads((ASSETS / SLUG / f"{sentence}.json").read_text("utf-8"))


def open_explorer(rec, query: str = "", state: str = "ready"):
    page = rec.page
    page.goto(f"{rec.base}explorer/{query}")
    page.wait_for_selector(f"{MAP}[data-state={state}]", timeout=20_000)
    return page


def map_state(page) -> dict:
    return page.evaluate(f"() => document.querySelector('{MAP}').attnMap.state")


def test_grid_shows_every_layer_and_head_of_the_model(recorded):
    page = open_explorer(recorded, f"?model={SLUG}&sentence=bank-river&view=model")
    thumbs = page.locator(f"{MAP} .attn-map__thumb")
    assert thumbs.count() == MODEL["n_layers"] * MODEL["n_heads"]
    # each shows its statistic; the model is named above the grid
    data = asset("bank-river")
    value = data["head_stats"]["previous_token"][2][5]
    assert (
        f"{value:.2f}"
        in page.locator(f'{MAP} .attn-map__thumb[data-layer="2"][data-head="5"]').inner_text()
    )
    assert (
        "all-MiniLM-L6-v2" in page.locator(f"{MAP} .attn-map__model .attn-map__title").inner_text()
    )
    # ranked by a statistic: the first thumbnail holds the largest value
    page.select_option(f"{MAP} select[id$=-stat]", "first_token")
    page.select_option(f"{MAP} select[id$=-order]", "ranked")
    first = page.locator(f"{MAP} .attn-map__thumb").first
    scores = np.array(data["head_stats"]["first_token"])
    layer, head = np.unravel_index(scores.argmax(), scores.shape)
    assert (first.get_attribute("data-layer"), first.get_attribute("data-head")) == (
        str(layer),
        str(head),
    )
    assert recorded.errors == [] and recorded.external_requests() == []
    # only the picked sentence's asset was downloaded
    fetched = [u for u in recorded.requests if f"/assets/attention/{SLUG}/" in u]
    assert fetched == [f"{recorded.base}assets/attention/{SLUG}/bank-river.json"]


def test_hovered_cell_shows_the_decoded_weight(recorded):
    layer, head, q, k = 3, 7, 4, 1
    page = open_explorer(
        recorded, f"?model={SLUG}&sentence=fluffy-creature&view=head&layer={layer}&head={head}"
    )
    centre = page.evaluate(
        f"([q, k]) => document.querySelector('{MAP}').attnMap.main.heatmap.cellCentre(q, k)", [q, k]
    )
    page.locator(f"{MAP} .attn-map__panel--main canvas.attn-heatmap").hover(position=centre)
    info = page.locator(f"{MAP} .attn-map__panel--main .attn-map__cell")
    expected = real_maps.decode_attention(asset("fluffy-creature"))[layer, head, q, k]
    assert info.get_attribute("data-cell") == f"{q},{k}"
    assert float(info.get_attribute("data-weight")) == pytest.approx(expected, abs=1e-12)
    assert f"weight {expected:.4f}" in info.inner_text()
    tokens = asset("fluffy-creature")["tokens"]["text"]
    assert f"“{tokens[q]}” ({q}) → key “{tokens[k]}” ({k})" in info.inner_text()
    # the keyboard reads the same cells: focus, then arrows
    page.locator(f"{MAP} .attn-map__panel--main canvas.attn-heatmap").focus()
    page.keyboard.press("ArrowDown")  # the first key press selects the first cell
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    assert info.get_attribute("data-cell") == "1,1"
    assert recorded.errors == []


def test_url_state_round_trips(recorded):
    page = open_explorer(recorded, f"?model={SLUG}&sentence=induction-random&view=model")
    page.locator(f'{MAP} .attn-map__thumb[data-layer="3"][data-head="7"]').click()
    page.locator(f'{MAP} .attn-map__panel--main .attn-lines__token[data-q="5"]').click()
    page.check(f"{MAP} input[id$=-sinks]")
    page.check(f"{MAP} input[id$=-compare]")
    page.select_option(f"{MAP} .attn-map__panel--compare select[id$=-layer]", "1")
    state = map_state(page)
    params = parse_qs(urlsplit(page.url).query)
    assert params["layer"] == ["3"] and params["head"] == ["7"] and params["query"] == ["5"]
    assert params["view"] == ["head"] and params["sinks"] == ["exclude"]
    assert params["compare"][0].startswith(f"{SLUG}:1:")
    url = page.url
    page.goto(recorded.base)
    page.goto(url)
    page.wait_for_selector(f"{MAP}[data-state=ready]")
    assert map_state(page) == state
    assert (
        page.locator(f"{MAP} .attn-map__panel--main .attn-map__title")
        .inner_text()
        .startswith("all-MiniLM-L6-v2 · layer 3, head 7")
    )
    assert (
        page.locator(f'{MAP} .attn-lines__token[data-q="5"]').first.get_attribute("aria-pressed")
        == "true"
    )
    assert page.is_checked(f"{MAP} input[id$=-sinks]")
    # a link to something that does not exist says so and shows what is closest
    page.goto(f"{recorded.base}explorer/?model={SLUG}&sentence=no-such-sentence&layer=99")
    page.wait_for_selector(f"{MAP}[data-state=ready]")
    notice = page.locator(f"{MAP} .attn-map__notice").inner_text()
    assert "no-such-sentence" in notice and "layer 99" in notice
    assert not [u for u in recorded.requests if "/assets/attention/" in u and "no-such" in u]
    assert recorded.errors == []


def test_tokens_with_markup_characters_show_literally(recorded):
    literal = "<b>\"x\"</b> & 'y' <img src=x onerror=alert(1)>"
    data = asset("quotation")
    data["tokens"]["text"][2] = literal
    data["sentence"]["text"] = literal
    recorded.page.route(
        f"**/assets/attention/{SLUG}/quotation.json",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps(data)
        ),
    )
    page = open_explorer(recorded, f"?model={SLUG}&sentence=quotation&view=head&query=2")
    token = page.locator(f'{MAP} .attn-map__panel--main .attn-lines__token[data-q="2"]')
    assert token.inner_text() == literal
    assert literal in page.locator(f"{MAP} .attn-map__sentence").inner_text()
    page.locator(f"{MAP} .attn-map__table summary").first.click()
    assert literal in page.locator(f"{MAP} .attn-map__table").first.inner_text()
    assert page.locator(f"{MAP} b, {MAP} img").count() == 0
    # the real sentence's quotes, untouched
    quotes = [t for t in asset("quotation")["tokens"]["text"] if '"' in t]
    assert quotes, "the quotation sentence should have quote tokens"
    assert recorded.errors == []


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"status": 404, "body": "not here"}, "HTTP 404"),
        ({"status": 200, "body": '{"schema_version": 1, "sent'}, "not valid JSON"),
        ({"status": 200, "body": '{"schema_version": 2}'}, "does not match asset.schema.json"),
    ],
)
def test_missing_or_corrupted_asset_shows_an_error_and_the_page_keeps_working(
    recorded, answer, message
):
    recorded.page.route(
        f"**/assets/attention/{SLUG}/counting.json",
        lambda route: route.fulfill(content_type="application/json", **answer),
    )
    page = open_explorer(recorded, f"?model={SLUG}&sentence=counting", state="error")
    error = page.locator(f"{MAP} .attn-map__error")
    assert error.get_attribute("role") == "alert"
    assert message in error.inner_text() and "counting.json" in error.inner_text()
    assert page.locator(f"{MAP} .attn-map__model").is_hidden()
    # another sentence loads and draws
    page.select_option(f"{MAP} select[id$=-sentence]", "bank-loan")
    page.wait_for_selector(f"{MAP}[data-state=ready]")
    assert error.is_hidden()
    assert page.locator(f"{MAP} .attn-map__thumb").count() == MODEL["n_layers"] * MODEL["n_heads"]
    assert recorded.errors == []


def test_keyboard_reaches_every_head_and_enter_opens_it(recorded):
    page = open_explorer(recorded, f"?model={SLUG}&sentence=tower-paris&view=model")
    page.locator(f"{MAP} .attn-map__thumb").first.focus()
    n_layers, n_heads = MODEL["n_layers"], MODEL["n_heads"]
    focused = "() => [document.activeElement.dataset.layer, document.activeElement.dataset.head]"
    seen = [tuple(page.evaluate(focused))]
    for _ in range(n_layers * n_heads - 1):
        page.keyboard.press("ArrowRight")
        seen.append(tuple(page.evaluate(focused)))
    assert seen == [(str(layer), str(h)) for layer in range(n_layers) for h in range(n_heads)]
    page.keyboard.press("ArrowRight")  # the last head stays put
    assert tuple(page.evaluate(focused)) == (str(n_layers - 1), str(n_heads - 1))
    # only one head is a tab stop (roving focus)
    assert page.locator(f'{MAP} .attn-map__thumb[tabindex="0"]').count() == 1
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    assert map_state(page)["view"] == "head"
    # focus follows, once the head is drawn: the opened head's heatmap, named after the
    # model, layer and head
    page.wait_for_function("() => document.activeElement?.classList.contains('attn-heatmap')")
    focused = page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    assert focused.startswith(
        f"Attention weights of all-MiniLM-L6-v2, layer {n_layers - 2}, head {n_heads - 1}"
    )
    assert (map_state(page)["layer"], map_state(page)["head"]) == (n_layers - 2, n_heads - 1)
    assert recorded.errors == []


def test_causal_model_masks_later_keys(recorded):
    """A decoder's asset (lower-triangle layout) draws and describes masked cells."""
    data = asset("fluffy-creature")
    n = data["seq_len"]
    w = np.tril(np.random.default_rng(1).random((2, 2, n, n)) + 0.01)
    w /= w.sum(axis=-1, keepdims=True)
    packed = real_maps.quantise_rows(w, causal=True)
    data["model"] |= {"causal": True, "n_layers": 2, "n_heads": 2}
    data["attention"] |= {
        "layout": "lower-triangle",
        "data": [
            [base64.b64encode(packed[layer, h].tobytes()).decode() for h in range(2)]
            for layer in range(2)
        ],
    }
    data["head_stats"] = {
        k: (v if v is None else [row[:2] for row in v[:2]]) for k, v in data["head_stats"].items()
    }
    data["qkv"]["heads"] = []
    recorded.page.route(
        f"**/assets/attention/{SLUG}/fluffy-creature.json",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps(data)
        ),
    )
    page = open_explorer(
        recorded, f"?model={SLUG}&sentence=fluffy-creature&view=head&layer=1&head=1"
    )
    centre = page.evaluate(
        "() => document.querySelector('.attn-map').attnMap.main.heatmap.cellCentre(1, 3)"
    )
    page.locator(f"{MAP} .attn-map__panel--main canvas.attn-heatmap").hover(position=centre)
    assert (
        "masked, weight 0"
        in page.locator(f"{MAP} .attn-map__panel--main .attn-map__cell").inner_text()
    )
    assert "decoder" in page.locator(f"{MAP} .attn-map__status").inner_text()
    assert recorded.errors == []


def test_explorer_after_instant_navigation_palette_change_and_on_a_phone(recorded):
    page = recorded.page
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(recorded.base)
    page.wait_for_function("() => typeof document$ !== 'undefined'")
    page.evaluate("() => { window.__kept = true; }")
    page.evaluate(
        "() => { const a = document.createElement('a'); a.href = 'explorer/'; a.id = 'go'; a.textContent = 'go'; document.querySelector('.md-content').prepend(a); }"
    )
    page.click("#go")
    page.wait_for_selector(f"{MAP}[data-state=ready]", timeout=20_000)
    assert page.evaluate("() => window.__kept") is True  # no full reload: instant navigation
    assert page.locator(f"{MAP} .attn-map__thumb").count() == MODEL["n_layers"] * MODEL["n_heads"]
    # the page does not scroll sideways on a phone
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    page.locator(f"{MAP} .attn-map__thumb").first.click()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    # the line view keeps its height (no resize loop), once its lines are drawn: they are
    # drawn a frame after the columns (token_lines.js), at the query column's height
    page.wait_for_function(
        f"""() => {{
          const svg = document.querySelector('{MAP} .attn-lines__svg');
          const column = document.querySelector('{MAP} .attn-lines__col--query');
          return svg && column && column.offsetHeight > 0
            && svg.getAttribute('height') === String(column.offsetHeight);
        }}"""
    )
    heights = []
    for _ in range(3):
        heights.append(
            page.evaluate(f"() => document.querySelector('{MAP} .attn-lines').offsetHeight")
        )
        page.wait_for_timeout(300)
    assert len(set(heights)) == 1, heights
    page.check(f"{MAP} input[id$=-compare]")  # two heads still fit a phone
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    # palette change: the heatmap redraws with the new colours, nothing breaks
    page.evaluate("() => document.body.setAttribute('data-md-color-scheme', 'slate')")
    page.locator(f"{MAP} .attn-map__panel--main canvas.attn-heatmap").focus()
    page.keyboard.press("ArrowDown")
    assert (
        page.locator(f"{MAP} .attn-map__panel--main .attn-map__cell").get_attribute("data-cell")
        == "0,0"
    )
    assert recorded.errors == [] and recorded.external_requests() == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_head_view_with_comparison_passes_axe_in_both_palettes(browser, server, scheme):
    from build_scripts.gates.check_site import _axe_problems

    context = browser.new_context(viewport={"width": 1200, "height": 900}, color_scheme=scheme)
    try:
        page = context.new_page()
        query = f"?model={SLUG}&sentence=code-line&view=head&layer=1&head=4&query=3&sinks=exclude"
        page.goto(f"{server.base}explorer/{query}&compare={SLUG}:2:0")
        page.wait_for_selector(f"{MAP}[data-state=ready]")
        for summary in page.locator(f"{MAP} details > summary").all():
            summary.click()
        assert page.locator(f"{MAP} .attn-map__panel").count() == 2
        assert _axe_problems(page, f"explorer head view ({scheme})") == []
        page.locator(f"{MAP} .attn-map__view").first.click()  # back to the grid
        assert _axe_problems(page, f"explorer grid ({scheme})") == []
    finally:
        context.close()


def test_recompute_panel_rebuilds_a_real_head_in_python(recorded):
    data = asset("long-passage")
    entry = data["qkv"]["heads"][0]
    page = open_explorer(recorded, f"?model={SLUG}&sentence=long-passage&view=head&layer=0&head=0")
    # a head without vectors lists the heads that have them
    if (entry["layer"], entry["head"]) != (0, 0):
        page.locator(f"{MAP} .attn-map__qkv-head").first.click()
    assert map_state(page)["layer"] == entry["layer"] and map_state(page)["head"] == entry["head"]
    page.locator(f"{MAP} .attn-map__start").click()
    lab = page.locator(f"{MAP} .attn-map__recompute .attn-lab")
    page.wait_for_function(
        f"() => document.querySelector('{MAP} .attn-map__recompute .attn-lab').dataset.runs >= 1",
        timeout=120_000,
    )
    result = page.evaluate(
        f"() => document.querySelector('{MAP} .attn-map__recompute .attn-lab').attnLab.result"
    )
    assert result["stored_max_abs_diff"] <= 1 / 255 + 1e-4  # the model's own pattern
    # this head is nearly one-hot: dropping the scaling changes little, a hot softmax a lot
    lab.locator("input[type=number][id$=-temperature]").fill("5")
    lab.locator("input[type=number][id$=-temperature]").press("Enter")
    page.wait_for_function(
        f"() => document.querySelector('{MAP} .attn-map__recompute .attn-lab').dataset.runs >= 2",
        timeout=60_000,
    )
    result = page.evaluate(
        f"() => document.querySelector('{MAP} .attn-map__recompute .attn-lab').attnLab.result"
    )
    assert result["stored_max_abs_diff"] > 0.05
    # another head: the panel is replaced, the old lab is gone
    page.locator(f"{MAP} .attn-map__panel--main .attn-map__step").last.click()
    assert page.locator(f"{MAP} .attn-map__recompute .attn-lab").count() == 0
    assert recorded.errors == [] and recorded.external_requests() == []


def test_lesson_embeds_a_map_that_opens_in_the_explorer(recorded):
    page = recorded.page
    page.goto(f"{recorded.base}lessons/03-attention-pattern/")
    page.wait_for_selector(f"{MAP}[data-state=waiting]")
    # nothing is downloaded until the reader gets near the map
    assert not [u for u in recorded.requests if "/assets/attention/" in u or "ajv" in u]
    assert "all-MiniLM-L6-v2" in page.locator(f"{MAP} .attn-map__status").inner_text()
    page.locator(MAP).scroll_into_view_if_needed()
    page.wait_for_selector(f"{MAP}[data-state=ready]", timeout=20_000)
    assert page.locator(MAP).count() == 1
    assert "A real previous-token head" in page.locator(f"{MAP} .attn-map__caption").inner_text()
    title = page.locator(f"{MAP} .attn-map__panel--main .attn-map__title").inner_text()
    assert title.startswith("all-MiniLM-L6-v2 · layer 0, head 2")
    assert page.locator(f"{MAP} select[id$=-sentence]").count() == 0  # no pickers in a lesson
    assert page.url.endswith("/lessons/03-attention-pattern/")  # a lesson's URL is left alone
    page.locator(f"{MAP} .attn-map__open").click()
    page.wait_for_url("**/explorer/**")
    page.wait_for_selector(f"{MAP}[data-state=ready]")
    state = map_state(page)
    assert (state["sentence"], state["view"], state["layer"], state["head"], state["query"]) == (
        "fluffy-creature",
        "head",
        0,
        2,
        3,
    )
    assert recorded.errors == [] and recorded.external_requests() == []


def test_back_returns_from_a_head_to_the_grid(recorded):
    page = open_explorer(recorded, f"?model={SLUG}&sentence=bank-river&view=model")
    page.locator(f'{MAP} .attn-map__thumb[data-layer="1"][data-head="3"]').click()
    assert map_state(page)["view"] == "head"
    page.go_back()
    page.wait_for_function(
        f"() => document.querySelector('{MAP}')?.attnMap?.state.view === 'model'"
        f" && document.querySelector('{MAP}').dataset.state === 'ready'"
    )
    assert "view=model" in page.url
    assert page.locator(f"{MAP} .attn-map__thumb").count() == MODEL["n_layers"] * MODEL["n_heads"]
    # the keyboard is back on the head that was open
    focused = page.evaluate(
        "() => [document.activeElement.dataset.layer, document.activeElement.dataset.head]"
    )
    assert focused == ["1", "3"]
    assert recorded.errors == []


def test_the_decoder_smollm2_draws_its_270_heads_and_recomputes_a_gqa_head(recorded):
    """The second model of the index: a causal GQA decoder, picked from the model picker."""
    smol = next(m for m in INDEX["models"] if m["slug"] == "smollm2-135m")
    page = open_explorer(recorded, f"?model={SLUG}&sentence=next-word&view=model")
    options = page.locator(f"{MAP} select[id$=-model] option").all_inner_texts()
    assert any("all-MiniLM-L6-v2" in o for o in options)
    assert "SmolLM2-135M-Instruct (Q4_1, dequantised), decoder" in options
    page.select_option(f"{MAP} select[id$=-model]", "smollm2-135m")
    page.wait_for_function(
        f"() => document.querySelectorAll('{MAP} .attn-map__thumb').length === "
        f"{smol['n_layers'] * smol['n_heads']}",
        timeout=20_000,
    )
    assert map_state(page)["model"] == "smollm2-135m"
    note = page.locator(f"{MAP} .attn-map__model-note").inner_text()
    assert "9 query heads share 3 key/value heads" in note
    assert "dequantised to float32 from the 4-bit Q4_1 GGUF" in note
    data = json.loads((ASSETS / "smollm2-135m" / "next-word.json").read_text("utf-8"))
    entry = data["qkv"]["heads"][0]
    page = open_explorer(
        recorded,
        f"?model=smollm2-135m&sentence=next-word&view=head&layer={entry['layer']}"
        f"&head={entry['head']}",
    )
    page.locator(f"{MAP} .attn-map__start").click()
    page.wait_for_function(
        f"() => document.querySelector('{MAP} .attn-map__recompute .attn-lab').dataset.runs >= 1",
        timeout=120_000,
    )
    result = page.evaluate(
        f"() => document.querySelector('{MAP} .attn-map__recompute .attn-lab').attnLab.result"
    )
    assert result["stored_max_abs_diff"] <= 1 / 255 + 1e-4  # the model's own pattern
    assert recorded.errors == [] and recorded.external_requests() == []
