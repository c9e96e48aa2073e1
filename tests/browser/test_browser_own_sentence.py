"""The explorer's "Your own sentence" (explorer/own-sentence.js and the map source
models/own_sentence.py) in a real headless Chromium with real Pyodide and NumPy and the real
int8 all-MiniLM-L6-v2 built into docs/vendor/minilm/: nothing downloads before Run; a failed
download says so and Retry works; the grid shows the reader's sentence, equal to CPython's
run of the same code; a second Run reuses the loaded weights; empty, over-long and
unusual-script text; the sentence picker shows the reader's sentence and a precomputed one
loads again; lesson 12's induction-head model on the reader's letters (models/own_letters.py),
equal to CPython's, and a bad sequence. One page for the module (the tests run in order and
share it, as a reader would)."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from attention_labs import real_maps
from attention_labs.models import induction, minilm
from attention_labs.models.wordpiece import WordPiece
from helpers import ROOT, RecordedPage
from lab_pages import run_cell

PAGE = "explorer/"
MINILM = ROOT / "docs" / "vendor" / "minilm"
PYTHON_TIMEOUT_MS = 180_000  # cold Pyodide start plus 23 MB of weights on a busy machine
OWN = ".attn-own"

STATE = """() => { const m = document.querySelector('.attn-map'); const p = m.attnMap.ownPanel;
  return {state: p.root.dataset.state, own: m.dataset.own || null, runs: p.runs,
          status: p.status.textContent, error: p.error.hidden ? null : p.errorText.textContent,
          retry: !p.retry.hidden, pieces: p.pieces.hidden ? null : p.pieces.textContent,
          thumbs: m.querySelectorAll('.attn-map__grid canvas').length,
          lastRun: p.lastRun || null, mapState: m.dataset.state,
          sentencePick: m.attnMap.sentenceSel.select.selectedOptions[0]?.textContent ?? null,
          modelPick: m.attnMap.modelSel.select.selectedOptions[0]?.textContent ?? null,
          asset: m.attnMap.cache.asset.sentence.id, model: m.attnMap.cache.asset.model.slug}; }"""


@pytest.fixture(scope="module")
def rec(browser, server):
    r = RecordedPage(browser, server.base)
    yield r
    r.context.close()


def state(rec):
    return rec.page.evaluate(STATE)


def run(rec, text, runs_before):
    rec.page.fill(f"{OWN} textarea", text)
    rec.page.click(f"{OWN} .attn-own__run")
    rec.page.wait_for_function(
        f"() => ((p) => p.runs > {runs_before} || p.root.dataset.state === 'error')"
        "(document.querySelector('.attn-map').attnMap.ownPanel)",
        timeout=PYTHON_TIMEOUT_MS,
    )
    return state(rec)


def weight_requests(rec):
    return [u for u in rec.requests if "vendor/minilm/" in u]


def test_the_page_states_the_size_and_downloads_nothing_before_run(rec):
    manifest = json.loads((MINILM / "minilm.json").read_text())
    size = (manifest["files"]["all-minilm-l6-v2.int8.safetensors"]["bytes"]
            + manifest["files"]["vocab.txt"]["bytes"]) / 1e6  # fmt: skip
    rec.page.goto(rec.base + PAGE)
    rec.page.wait_for_selector(".attn-map[data-state=ready]", timeout=60_000)
    rec.page.wait_for_selector(OWN)
    panel = rec.page.inner_text(OWN)
    assert f"{size:.1f} MB" in panel
    assert "all-MiniLM-L6-v2" in panel and "not sent anywhere" in panel
    licence = rec.page.get_attribute(f"{OWN} a", "href")
    assert licence.endswith("vendor/minilm/LICENSE")
    assert weight_requests(rec) == []


def test_a_failed_download_says_so_and_retry_works(rec):
    rec.page.route("**/vendor/minilm/*.safetensors", lambda route: route.fulfill(status=404))
    got = run(rec, "The cat sat on the mat.", 0)
    assert got["state"] == "error" and "HTTP 404" in got["error"] and got["retry"]
    assert got["mapState"] == "ready"  # the precomputed map still works
    rec.page.click(".attn-map__view:has-text('One head')")
    rec.page.click(".attn-map__view:has-text('All heads')")
    rec.page.unroute("**/vendor/minilm/*.safetensors")
    rec.page.click(f"{OWN} .attn-own__retry")
    rec.page.wait_for_function(
        "() => document.querySelector('.attn-map').attnMap.ownPanel.runs >= 1",
        timeout=PYTHON_TIMEOUT_MS,
    )
    got = state(rec)
    assert got["state"] == "ready" and got["own"] == "true" and got["error"] is None
    assert got["pieces"].startswith("Word pieces (9 tokens): [CLS] · the · cat")
    assert got["lastRun"]["quantised"] and got["lastRun"]["load_ms"] > 0
    # the Linear layers ran in the WebAssembly SIMD kernel, not in NumPy's fallback; opening
    # it needed no module of the stdlib's second part (whose download took 1.3-2.3 s)
    assert got["lastRun"]["products"] == "wasm-simd"
    assert [u for u in rec.requests if "python_stdlib-more" in u] == []


def test_the_grid_shows_the_sentence_as_cpython_computes_it(rec):
    asset = rec.page.evaluate("() => document.querySelector('.attn-map').attnMap.cache.asset")
    assert asset["sentence"]["text"] == "The cat sat on the mat."
    assert asset["tokens"]["text"] == ["[CLS]", "The", "cat", "sat", "on", "the", "mat", ".",
                                       "[SEP]"]  # fmt: skip
    wp = WordPiece((MINILM / "vocab.txt").read_text("utf-8"))
    weights = minilm.load_weights((MINILM / "all-minilm-l6-v2.int8.safetensors").read_bytes())
    enc = wp.encode(asset["sentence"]["text"])
    want = minilm.forward(enc.ids, weights)["weights"].astype(np.float64)
    got = real_maps.decode_attention(asset)
    assert np.abs(got - want).max() <= 1 / 255 + 1e-4
    grid = rec.page.locator(".attn-map canvas")
    assert grid.count() >= 6 * 12
    stats = rec.page.inner_text(".attn-map")
    assert "computed in your browser" in stats and "9 tokens" in stats
    assert base64.b64decode(asset["attention"]["data"][0][0])  # bytes like a precomputed asset


def pick_sentence(rec, sentence_id):
    rec.page.select_option(".attn-map__field--sentence select", sentence_id)
    rec.page.wait_for_function(
        "(id) => { const m = document.querySelector('.attn-map');"
        " return !m.dataset.own && m.dataset.state === 'ready'"
        " && m.attnMap.cache.asset.sentence.id === id; }",
        arg=sentence_id,
        timeout=60_000,
    )
    return state(rec)


def test_the_sentence_picker_shows_your_sentence_and_a_precomputed_one_loads_again(rec):
    got = state(rec)
    assert got["sentencePick"] == "Your sentence: The cat sat on the mat."
    assert got["modelPick"].startswith("all-MiniLM-L6-v2")
    got = pick_sentence(rec, "bank-loan")
    assert got["asset"] == "bank-loan" and got["sentencePick"].startswith("bank-loan: ")
    options = rec.page.eval_on_selector_all(
        ".attn-map__field--sentence option", "os => os.map(o => o.textContent)"
    )
    assert not any(o.startswith("Your sentence") for o in options)  # the own option is gone


def test_a_second_run_reuses_the_loaded_weights(rec):
    before = len(weight_requests(rec))
    got = run(rec, "She went to the bank to ask for a loan.", 1)
    assert got["state"] == "ready" and got["runs"] == 2
    assert got["lastRun"]["load_ms"] == 0  # already in the worker
    assert len(weight_requests(rec)) == before  # nothing downloaded again
    assert "bank" in got["pieces"]


def test_empty_overlong_and_unusual_script(rec):
    got = run(rec, "   ", 2)
    assert got["state"] == "error" and "Type a sentence first" in got["error"]
    got = run(rec, "word " * 200, 2)
    assert (
        got["state"] == "error" and "202 tokens" in got["error"] and "at most 128" in got["error"]
    )
    # A pasted text over the box's 2,000 characters is kept whole and refused by its length.
    got = run(rec, "word " * 500, 2)
    assert rec.page.input_value(f"{OWN} textarea") == "word " * 500
    assert got["state"] == "error", got
    assert "2,500 characters" in got["error"] and "2,000" in got["error"], got["error"]
    assert "2,500 characters" in rec.page.inner_text(f"{OWN} .attn-own__hint")
    assert rec.page.get_attribute(f"{OWN} textarea", "aria-invalid") == "true"
    got = run(rec, "東京 🤖 𝔘𝔫𝔦 naïve", 2)
    assert rec.page.get_attribute(f"{OWN} textarea", "aria-invalid") == "false"
    assert got["state"] == "ready" and got["runs"] == 3
    assert "東 · 京 · [UNK]" in got["pieces"] and "naive" in got["pieces"]
    assert rec.external_requests() == []
    assert rec.errors == []


def test_your_letters_through_the_induction_model_equal_cpythons(rec):
    p = rec.page
    p.select_option(f"{OWN} .attn-own__model select", "letters")
    assert p.input_value(f"{OWN} textarea") == "QWERTYUIOPQWERTYUIOP"
    assert "Repeat a stretch" in p.inner_text(f"{OWN} .attn-own__hint")
    got = run(rec, "QWERTYUIOPQWERTYUIOP", 3)
    assert got["state"] == "ready" and got["own"] == "true" and got["lastRun"]["mode"] == "letters"
    assert got["model"] == "induction-head-model" and got["asset"] == "your-letters"
    assert got["pieces"].startswith("Tokens (20, one per letter): Q · W · E")
    assert got["sentencePick"] == "Your letters: QWERTYUIOPQWERTYUIOP"
    assert got["modelPick"] == "induction-head-model, decoder"
    assert got["thumbs"] == 2 * 2  # the grid: 2 layers x 2 heads
    asset = p.evaluate("() => document.querySelector('.attn-map').attnMap.cache.asset")
    ids = induction.encode("QWERTYUIOPQWERTYUIOP")
    _, want = induction.forward(ids)
    assert np.abs(real_maps.decode_attention(asset) - want).max() <= 1 / 255 + 1e-6
    np.testing.assert_allclose(
        asset["head_stats"]["induction"], real_maps.induction_score(want, ids), atol=5e-5
    )
    assert [u for u in rec.requests if "python_stdlib-more" in u] == []  # as for MiniLM
    text = p.inner_text(".attn-map")
    assert "induction-head-model computed in your browser (decoder" in text
    p.select_option(".attn-map__model select", "induction")  # the grid's statistic
    assert "★" in p.inner_text(".attn-map__thumb--best")
    assert p.get_attribute(".attn-map__thumb--best", "data-layer") == "1"


def test_a_bad_sequence_says_what_is_allowed_and_the_page_keeps_working(rec):
    got = run(rec, "QWERTY 123", 4)
    assert got["state"] == "error" and got["error"].startswith("Your letters:")
    assert "A to Z" in got["error"] and "'1'" in got["error"]
    got = run(rec, "Q", 4)
    assert got["state"] == "error" and "2 to 32 letters" in got["error"]
    got = run(rec, "ABCDEFGH" * 5, 4)
    assert got["state"] == "error" and "got 40" in got["error"]
    assert got["asset"] == "your-letters"  # the last map stays
    got = pick_sentence(rec, "induction-random")
    assert got["model"] == "all-minilm-l6-v2" and got["modelPick"].startswith("all-MiniLM")
    got = run(rec, "ABCABCABC", 4)
    assert got["state"] == "ready" and got["runs"] == 5 and got["thumbs"] == 4
    assert rec.external_requests() == [] and rec.errors == []


def cell_output(p, n: int) -> str:
    assert run_cell(p, n, PYTHON_TIMEOUT_MS) == "done", p.locator(".attn-cell").nth(n).inner_text()
    return p.locator(".attn-cell").nth(n).locator(".attn-cell__output").inner_text()


def test_the_real_model_page_runs_its_cells_on_the_int8_weights(rec):
    p = rec.page
    p.goto(rec.base + "real-model/")
    p.wait_for_selector(".attn-cell[data-state]", state="attached")
    out = [cell_output(p, n) for n in range(p.locator(".attn-cell").count())]
    assert "6 layers, vocabulary of 30522 tokens, d_model 384" in out[0]
    assert "'roam', '##ed'" in out[1]
    assert "by hand equals minilm.encoder_layer: True" in out[4]
    assert "every row sums to 1: True" in out[5]
    assert "layer 0: largest change of any weight 0.000" in out[6]
    assert "def attention_block" in out[7]
    assert p.locator(".attn-cell canvas.attn-heatmap").count() == 2
    assert any(u.endswith("vendor/minilm/all-minilm-l6-v2.int8.safetensors") for u in rec.requests)
    assert rec.external_requests() == [] and rec.errors == []
