"""docs/real-decoder.md ("A real decoder, token by token"): its numbers are computed, its cells
run in order in CPython on the files `make vendor` wrote (the browser runs the same code on
the same files), and what its prose says of them holds."""

from __future__ import annotations

import re

import numpy as np
import pytest
import yaml
from attention_labs import cells
from attention_labs.models import own_decoder
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts import hooks
from build_scripts.hooks import scanner

PAGE = ROOT / "docs" / "real-decoder.md"
SOURCE = PAGE.read_text(encoding="utf-8")
RENDERED = hooks.render_page(meta.get_data(SOURCE)[0], "real-decoder.md", kinds=())
TEXT = re.sub(r"\s+", " ", RENDERED)


@pytest.fixture(scope="module")
def runs():
    ns = cells.new_namespace()
    codes = [f.body for f in scanner.find_fences(SOURCE, ("pycell",))]
    return [cells.run_cell(code, ns, f"<cell {n}>") for n, code in enumerate(codes, 1)], ns


def printed(run) -> str:
    return "".join(o["text"] for o in run["outputs"] if o["type"] == "stream")


def test_in_the_nav_after_the_encoder_page():
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    at = nav.index({"A real model in 100 lines": "real-model.md"})
    assert nav[at + 1] == {"A real decoder, token by token": "real-decoder.md"}


def test_the_numbers_are_computed():
    assert "{{" not in TEXT
    n = int(re.search(r"forward pass is (\d+) lines of NumPy", TEXT).group(1))
    assert 60 <= n <= 160
    assert "30 layers whose 9 query heads share 3 key/value heads" in TEXT
    assert "= 46,080 bytes a token" in TEXT and "it would be 138,240" in TEXT
    vendored = ROOT / "docs" / "vendor" / "smollm2"
    weights = (vendored / "smollm2-135m.q4_1.safetensors").stat().st_size / 1e6
    assert f"downloads the model once: {weights:.1f} MB of weights" in TEXT
    assert "take 0.54 GB" in TEXT


def test_cells_run_in_order_and_say_what_the_prose_says(runs):
    results, ns = runs
    assert [r["error"] for r in results] == [None] * len(results)
    out = [printed(r) for r in results]
    assert "30 layers, 9 query heads, 3 key/value heads, vocabulary of 49152" in out[0]
    assert "[0, 504, 3575, 282, 4649, 314]" in out[1]
    assert "by hand equals smollm2.attention_block: True" in out[2]
    assert "' Paris' 0.80" in out[3]  # the most likely next token, as the prose leads to
    sizes = [int(s.replace(",", "")) for s in re.findall(r"cache\s+([\d,]+) bytes", out[4])]
    assert np.all(np.diff(sizes) == 46_080) and sizes[0] == 46_080 * 7
    assert "The capital of France is Paris." in out[4]
    share = float(re.search(r"all 270 heads: (\S+)", out[6]).group(1))
    assert share > 0.5  # "most of it lands on <|endoftext|>"
    whole, cut = re.findall(r"(\d+)% of the repeated words", out[7])
    assert int(whole) >= 80 and int(cut) <= 30, out[7]
    assert str(own_decoder.INDUCTION_HEADS) in out[7]
    assert "def attention_block" in out[8]
    heat = [o for r in results for o in r["outputs"] if o["type"] == "heatmap"]
    assert len(heat) == 2 and len(heat[1]["values"]) == 30
