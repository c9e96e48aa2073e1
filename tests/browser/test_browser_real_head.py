"""The real_head lab created at run time (mountLab of labs/controller.js + realHeadData of
labs/real_head.js) in a real
headless Chromium with real Pyodide and NumPy, on a built page, from a committed asset: the
stored weights first, then Python's recompute; destroy() stops its listeners."""

from __future__ import annotations

import json

import numpy as np
from attention_labs import real_maps
from attention_labs.labs import lab_schema, run_lab
from helpers import ROOT, head_params
from lab_pages import PYTHON_TIMEOUT_MS

ASSET = "all-minilm-l6-v2/fluffy-creature.json"
LESSON = "lessons/03-attention-pattern/"  # any built page with the site's scripts
TOLERANCE = 1 / 255 + 1e-4

MOUNT = """async ({path, schema, pick, base}) => {
  const { mountLab } = await import(base + 'javascripts/labs/controller.js');
  const { realHeadData } = await import(base + 'javascripts/labs/real_head.js');
  // The runtime config the build gave the lesson's own lab (where Pyodide and the wheel are).
  const runtime = JSON.parse(document.querySelector('.attn-lab').dataset.config).runtime;
  const asset = await AttnAssets.loadAsset(path);
  const entry = asset.qkv.heads[pick];
  const root = document.createElement('div');
  root.id = 'real-head';
  document.querySelector('article').append(root);
  const data = realHeadData(asset, entry, {lab: 'real_head', schema, runtime});
  window.realHead = await mountLab(root, data);
  return data.params;
}"""

STATE = """() => { const c = window.realHead;
  const plain = (v) => ArrayBuffer.isView(v) ? Array.from(v, (x) => Number.isFinite(x) ? x : null)
    : Array.isArray(v) ? v.map(plain)
    : (v && typeof v === 'object') ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
    : v;
  const root = document.getElementById('real-head');
  return {params: c.params, result: plain(c.result), runs: c.runs,
          source: root.querySelector('.attn-real-head__source').textContent,
          summary: root.querySelector('.attn-real-head__summary').textContent,
          shows: root.querySelector('.attn-lab__body').dataset.source,
          rows: root.querySelectorAll('.attn-lab__table tbody tr').length}; }"""


def wait_for_runs(page, n: int):
    page.wait_for_function(
        f"() => ((r) => Number(r.dataset.runs || 0) >= {n} && !r.attnLab?.inFlight && !r.attnLab?.latest)(document.getElementById('real-head'))",
        timeout=PYTHON_TIMEOUT_MS,
    )


def test_real_head_shows_stored_weights_then_pythons_recompute(recorded):
    asset = json.loads((ROOT / "docs" / "assets" / "attention" / ASSET).read_text("utf-8"))
    n = asset["seq_len"]
    # the most spread-out head the asset carries, so that scaling visibly matters
    pick = int(
        np.argmax(
            [
                run_lab("real_head", head_params(asset, e))["result"]["mean_entropy_bits"]
                for e in asset["qkv"]["heads"]
            ]
        )
    )
    entry = asset["qkv"]["heads"][pick]
    stored = real_maps.unpack_head(
        asset["attention"]["data"][entry["layer"]][entry["head"]], n, asset["model"]["causal"]
    )
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.wait_for_selector(".attn-lab[data-status=initial]")
    # The explorer page will load this script; the lesson does not need it.
    page.evaluate(
        "async (url) => { window.AttnAssets = await import(url); }",
        recorded.base + "javascripts/maps.js",
    )
    params = page.evaluate(
        MOUNT,
        {"path": ASSET, "schema": lab_schema("real_head"), "pick": pick, "base": recorded.base},
    )
    assert params == head_params(asset, entry)

    # 1. The stored weights, drawn at once, and said to be the stored ones.
    page.wait_for_selector("#real-head.attn-lab[data-status=initial]")
    state = page.evaluate(STATE)
    assert state["runs"] == 0 and state["shows"] == "stored"
    assert "stored weights" in state["source"]
    np.testing.assert_allclose(state["result"]["weights"], stored, rtol=0, atol=1e-12)
    assert state["rows"] == n
    assert page.locator("#real-head canvas.attn-heatmap").count() == 1

    # 2. Scaling off: Python recomputes, the result is CPython's and not the stored pattern.
    page.locator("#real-head input[id$='-scale']").uncheck()
    wait_for_runs(page, 1)
    state = page.evaluate(STATE)
    assert state["shows"] == "python" and "not divided by √d_head" in state["source"]
    expected = run_lab("real_head", head_params(asset, entry, scale=False))["result"]
    np.testing.assert_allclose(state["result"]["weights"], expected["weights"], atol=1e-9)
    assert state["result"]["stored_max_abs_diff"] > 0.05
    assert "no longer the pattern the model computes" in state["summary"]

    # 3. Back to the model's settings: Python's weights are the stored ones within 1/255.
    page.locator("#real-head button", has_text="The model's settings").click()
    wait_for_runs(page, 2)
    state = page.evaluate(STATE)
    assert state["params"]["scale"] is True and state["params"]["temperature"] == 1
    weights = np.array(state["result"]["weights"])
    assert np.abs(weights - stored).max() <= TOLERANCE
    assert state["result"]["stored_max_abs_diff"] <= TOLERANCE
    assert "the model's own pattern" in state["summary"]
    assert "Mean entropy" in state["summary"]

    # 4. The mounted lab is not mounted twice, and destroy() stops its palette observer.
    assert page.locator("#real-head .attn-lab__body").count() == 1
    redraws = page.evaluate(
        """async () => {
          const heatmap = window.realHead.widget.heatmap;
          let drawn = 0;
          heatmap.draw = () => { drawn += 1; };
          const flip = async () => {
            const body = document.body;
            const now = body.getAttribute('data-md-color-scheme');
            body.setAttribute('data-md-color-scheme', now === 'slate' ? 'default' : 'slate');
            await new Promise((r) => setTimeout(r, 50));
          };
          await flip();
          const before = drawn;
          window.realHead.destroy();
          window.realHead.destroy(); // twice is harmless
          await flip();
          return [before, drawn - before];
        }"""
    )
    assert redraws == [1, 0]
    # the lesson's own lab is untouched
    assert page.locator(".attn-lab").first.get_attribute("data-status") == "initial"
    assert recorded.errors == []
    assert recorded.external_requests() == []
