"""SmolLM2-135M token by token in a real headless Chromium with real Pyodide and NumPy and the
repacked GGUF that `make vendor` writes into docs/vendor/smollm2/: the explorer's "Your own
sentence" with model SmolLM2 (explorer/own-sentence.js, own-decoder.js and the map source
models/own_decoder.py) states the size and downloads nothing before Run; a failed download
says so and Retry works; the maps equal CPython's run of the same code; the next-token list,
Next token, a chosen token and a short generation; the KV cache's bytes grow by 46,080 a
token; refused memory is a message and the page keeps working; lesson 12's induction heads
switched off on repeated random words; then the page "A real decoder, token by token" runs
its cells. A few tokens only; one page for the module (the tests share it in order, as a
reader would)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from attention_labs import maps
from attention_labs.models import own_decoder
from attention_labs.params import validate
from helpers import ROOT, RecordedPage
from lab_pages import run_cell

VENDORED = ROOT / "docs" / "vendor" / "smollm2"
PYTHON_TIMEOUT_MS = 300_000  # cold Pyodide, 97.8 MB of weights and their dequantising
OWN = ".attn-own"
PROMPT = "The capital of France is"

STATE = """() => { const m = document.querySelector('.attn-map'); const p = m.attnMap.ownPanel;
  const r = p.decoderResult && p.decoderResult.result;
  return {state: p.root.dataset.state, own: m.dataset.own || null, runs: p.runs,
          status: p.status.textContent, error: p.error.hidden ? null : p.errorText.textContent,
          retry: !p.retry.hidden, pieces: p.pieces.hidden ? null : p.pieces.textContent,
          lastRun: p.lastRun || null, mapState: m.dataset.state, query: m.attnMap.state.query,
          ids: r ? r.ids : null, cache: r ? r.cache : null, next: r ? r.next : null,
          copy: r ? r.copy : null, headsOff: r ? r.heads_off : null,
          facts: p.decoder.root.hidden ? null : p.decoder.facts.textContent,
          model: m.attnMap.cache.asset.model.slug, seqLen: m.attnMap.cache.asset.seq_len}; }"""


@pytest.fixture(scope="module")
def rec(browser, server):
    r = RecordedPage(browser, server.base)
    yield r
    r.context.close()


def state(rec):
    return rec.page.evaluate(STATE)


def wait_runs(rec, before):
    rec.page.wait_for_function(
        f"() => ((p) => p.runs > {before} || p.root.dataset.state === 'error')"
        "(document.querySelector('.attn-map').attnMap.ownPanel)",
        timeout=PYTHON_TIMEOUT_MS,
    )
    return state(rec)


def click(rec, selector):
    before = state(rec)["runs"]
    rec.page.click(selector)
    return wait_runs(rec, before)


def weight_requests(rec):
    return [u for u in rec.requests if "vendor/smollm2/" in u]


def cpython(**params):
    return own_decoder.compute(validate(own_decoder.SCHEMA, params))


def test_the_panel_states_the_size_and_downloads_nothing_before_run(rec):
    manifest = json.loads((VENDORED / "smollm2.json").read_text())
    files = manifest["files"]
    size = (
        files["smollm2-135m.q4_1.safetensors"]["bytes"] + files["tokenizer.json"]["bytes"]
    ) / 1e6
    rec.page.goto(rec.base + "explorer/")
    rec.page.wait_for_selector(".attn-map[data-state=ready]", timeout=60_000)
    rec.page.wait_for_selector(OWN)
    rec.page.select_option(f"{OWN} .attn-own__model select", "decoder")
    about = rec.page.inner_text(f"{OWN} .attn-own__about")
    assert f"{size:.1f} MB" in about and "SmolLM2-135M-Instruct" in about
    assert "not sent anywhere" in about
    assert rec.page.get_attribute(f"{OWN} .attn-own__about a", "href").endswith(
        "vendor/smollm2/LICENSE"
    )
    assert rec.page.input_value(f"{OWN} textarea") == own_decoder.DEFAULT
    assert rec.page.is_hidden(f"{OWN} .attn-own__decoder")
    assert weight_requests(rec) == []


def test_a_failed_download_says_so_and_retry_runs_the_prompt(rec):
    rec.page.route("**/vendor/smollm2/*.safetensors", lambda route: route.fulfill(status=404))
    rec.page.fill(f"{OWN} textarea", PROMPT)
    got = click(rec, f"{OWN} .attn-own__run")
    assert got["state"] == "error" and "HTTP 404" in got["error"] and got["retry"]
    assert got["mapState"] == "ready"  # the precomputed map still works
    rec.page.unroute("**/vendor/smollm2/*.safetensors")
    got = click(rec, f"{OWN} .attn-own__retry")
    assert got["state"] == "ready" and got["own"] == "true" and got["error"] is None, got
    assert got["model"] == "smollm2-135m" and got["seqLen"] == 6
    assert got["pieces"] == "Tokens (6): <|endoftext|> · The ·  capital ·  of ·  France ·  is"
    assert got["lastRun"]["load_ms"] > 0 and got["lastRun"]["action"] == "run"
    assert got["lastRun"]["products"] == "wasm-simd"  # the WebAssembly SIMD kernel
    assert got["next"][0]["text"] == " Paris" and got["next"][0]["p"] > 0.5
    assert got["cache"]["bytes"] == 46_080 * 6
    assert "276,480 bytes for 6 tokens" in got["facts"] and "First-token share" in got["facts"]
    assert got["query"] == 5  # the head view shows the newest token's row


def test_the_maps_and_next_tokens_equal_cpythons(rec):
    asset = rec.page.evaluate("() => document.querySelector('.attn-map').attnMap.cache.asset")
    want = cpython(text=PROMPT)
    assert asset["tokens"]["ids"] == want["ids"]
    assert np.abs(maps.decode_attention(asset) - maps.decode_attention(want["asset"])).max() <= (
        1 / 255 + 1e-6
    )
    got = state(rec)["next"]
    assert [t["id"] for t in got] == [t["id"] for t in want["next"]]
    assert np.allclose([t["p"] for t in got], [t["p"] for t in want["next"]], atol=1e-4)
    assert rec.page.locator(".attn-map canvas").count() >= 30 * 9  # every layer and head


def test_next_token_a_chosen_token_and_a_short_generation(rec):
    got = click(rec, f"{OWN} .attn-own__step")
    assert got["ids"][-1] == 7042 and got["seqLen"] == 7  # " Paris"
    assert got["cache"]["bytes"] == 46_080 * 7 and got["query"] == 6
    assert got["lastRun"]["action"] == "next" and got["lastRun"]["load_ms"] == 0
    second = rec.page.locator(f"{OWN} .attn-own__token").nth(1)
    token = int(second.get_attribute("data-id"))
    got = click(rec, f"{OWN} .attn-own__token >> nth=1")
    assert got["ids"][-1] == token and got["cache"]["bytes"] == 46_080 * 8
    before = got["runs"]
    rec.page.evaluate(
        "() => document.querySelector('.attn-map').attnMap.ownPanel.step('generate', {n_new: 3})"
    )
    got = wait_runs(rec, before)
    assert got["state"] == "ready" and got["seqLen"] == 11 and got["cache"]["bytes"] == 46_080 * 11
    want = cpython(text=PROMPT, action="generate", ids=",".join(map(str, got["ids"][:8])), n_new=3)
    assert got["ids"] == want["ids"]  # greedy, the same tokens as CPython
    assert "Added" in got["facts"] and got["lastRun"]["ms_per_token"] > 0
    from build_scripts.gates.check_site import _axe_problems

    assert _axe_problems(rec.page, "explorer, SmolLM2 token by token") == []
    assert weight_requests(rec) and len(set(weight_requests(rec))) == 2  # weights + tokenizer


def test_refused_memory_is_a_message_and_the_page_keeps_working(rec):
    """The worker's Python is told to fail allocating the weights (as a browser that refuses
    0.8 GB does); the panel says so, and the explorer keeps drawing."""
    p = rec.page
    breaking = (
        "import attention_labs.models.smollm2 as m, attention_labs.models.own_decoder as d\n"
        "def refuse(data):\n    raise MemoryError\n"
        "m._real_load = m.load_weights\nm.load_weights = refuse\nd._MODEL.clear()\n"
    )
    restoring = "m.load_weights = m._real_load\n"
    cell = (
        "async (code) => { const { runtime } = await import(new URL("
        "'../javascripts/runtime/lab-runtime.js', location.href));"
        " runtime.configure(document.querySelector('.attn-map').attnMap.ownPanel.own.runtime);"
        " return runtime.runCell('explorer', code, 'test'); }"
    )
    assert p.evaluate(cell, breaking)["error"] is None
    got = click(rec, f"{OWN} .attn-own__run")
    assert got["state"] == "error" and "refused the memory" in got["error"], got
    assert got["mapState"] == "ready"
    p.click(".attn-map__view:has-text('One head')")
    p.click(".attn-map__view:has-text('All heads')")
    assert p.evaluate(cell, restoring)["error"] is None
    got = click(rec, f"{OWN} .attn-own__run")
    assert got["state"] == "ready" and got["seqLen"] == 6


def test_switching_the_induction_heads_off_on_repeated_words(rec):
    got = click(rec, f"{OWN} .attn-own__repeat")
    assert got["state"] == "ready" and got["copy"] is not None, got
    whole = got["copy"]
    assert whole["queries"] >= 8 and whole["accuracy"] >= 0.5, whole
    assert "Copying" in got["facts"]
    rec.page.click(f"{OWN} .attn-own__induction")
    assert rec.page.input_value(f"{OWN} .attn-own__heads-off") == "induction"
    got = click(rec, f"{OWN} .attn-own__run")
    assert got["headsOff"] == [list(h) for h in own_decoder.INDUCTION_HEADS]
    cut = got["copy"]
    assert cut["accuracy"] <= whole["accuracy"] / 2, (whole, cut)
    assert cut["probability"] < whole["probability"] / 3, (whole, cut)
    assert "17.3, 17.4, 17.5, 18.6, 18.7" in got["facts"]
    rec.page.fill(f"{OWN} .attn-own__heads-off", "30.1")
    got = click(rec, f"{OWN} .attn-own__run")
    assert got["state"] == "error" and "is not a head" in got["error"]
    rec.page.fill(f"{OWN} .attn-own__heads-off", "")
    rec.page.fill(f"{OWN} textarea", "   ")
    got = click(rec, f"{OWN} .attn-own__run")
    assert got["state"] == "error" and "Type a prompt first" in got["error"]
    assert rec.external_requests() == [] and rec.errors == []


def cell_output(p, n: int) -> str:
    assert run_cell(p, n, PYTHON_TIMEOUT_MS) == "done", p.locator(".attn-cell").nth(n).inner_text()
    return p.locator(".attn-cell").nth(n).locator(".attn-cell__output").inner_text()


def test_the_real_decoder_page_runs_its_cells(rec):
    p = rec.page
    p.goto(rec.base + "real-decoder/")
    p.wait_for_selector(".attn-cell[data-state]", state="attached")
    out = [cell_output(p, n) for n in range(p.locator(".attn-cell").count())]
    assert "30 layers, 9 query heads, 3 key/value heads" in out[0]
    assert "by hand equals smollm2.attention_block: True" in out[2]
    assert "' Paris' 0.80" in out[3]
    assert "cache  322,560 bytes for 7 tokens" in out[4]
    assert "induction off:" in out[7]
    assert p.locator(".attn-cell canvas.attn-heatmap").count() == 2
    assert any(u.endswith("vendor/smollm2/smollm2-135m.q4_1.safetensors") for u in rec.requests)
    assert rec.external_requests() == [] and rec.errors == []
