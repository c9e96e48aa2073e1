"""docs/real-model.md ("A real model in 100 lines"): its numbers are computed, its cells run
in order in CPython (the browser runs the same code on the int8 weights), and what its prose
says of them holds."""

from __future__ import annotations

import functools
import re

import numpy as np
import pytest
import yaml
from attention_labs import cells
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts import hooks
from build_scripts.hooks import scanner

# The build tier, not its folder's (python): the page's numbers fence reads the vendored
# MiniLM files (docs/vendor/minilm/, made by `make vendor`).
pytestmark = pytest.mark.build

PAGE = ROOT / "docs" / "real-model.md"
SOURCE = PAGE.read_text(encoding="utf-8")


@functools.cache
def rendered() -> str:
    """The page's Markdown as built, whitespace-normalised; when a test runs (its numbers
    fence reads docs/vendor/minilm/, which collecting must not need)."""
    return re.sub(
        r"\s+", " ", hooks.render_page(meta.get_data(SOURCE)[0], "real-model.md", kinds=())
    )


@pytest.fixture(scope="module")
def runs():
    ns = cells.new_namespace()
    codes = [f.body for f in scanner.find_fences(SOURCE, ("pycell",))]
    return [cells.run_cell(code, ns, f"<cell {n}>") for n, code in enumerate(codes, 1)], ns


def printed(run) -> str:
    return "".join(o["text"] for o in run["outputs"] if o["type"] == "stream")


def test_in_the_nav_after_the_explorer():
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    assert {"A real model in 100 lines": "real-model.md"} in nav


def test_the_line_counts_are_computed_and_about_100():
    n = int(re.search(r"is (\d+) lines of NumPy", rendered()).group(1))
    assert 60 <= n <= 110  # the title's "100 lines" stays true
    assert "{{" not in rendered()


def test_cells_run_in_order_and_say_what_the_prose_says(runs):
    results, ns = runs
    assert [r["error"] for r in results] == [None] * len(results)
    assert "6 layers, vocabulary of 30522 tokens, d_model 384" in printed(results[0])
    assert "'roam', '##ed'" in printed(results[1])  # a word in pieces, as the prose says
    assert f"x: ({len(ns['enc'])}, 384) float32" in printed(results[2])
    assert "q, k, v: (12," in printed(results[3])
    assert "by hand equals minilm.encoder_layer: True" in printed(results[4])
    assert "every row sums to 1: True" in printed(results[5])
    changes = [
        float(v) for v in re.findall(r"largest change of any weight (\S+)", printed(results[6]))
    ]
    assert changes[0] == 0.0 and max(changes[1:]) > 0.01  # own layer unchanged, later ones not
    assert "def attention_block" in printed(results[7])
    heat = [o for r in results for o in r["outputs"] if o["type"] == "heatmap"]
    assert len(heat) == 2
    np.testing.assert_allclose(heat[0]["values"], ns["pattern"][2], atol=1e-12)
    prev = np.array(heat[0]["values"])
    assert np.mean([prev[i, i - 1] for i in range(1, len(prev))]) > 0.9  # the title's claim


def test_the_download_sizes_are_the_files_sizes():
    """Issue 25: 23.6 MB was the weights plus the vocabulary; the int8 file alone is 23.4 MB.
    Both are now computed from the vendored files."""
    vendored = ROOT / "docs" / "vendor" / "minilm"
    weights = (vendored / "all-minilm-l6-v2.int8.safetensors").stat().st_size / 1e6
    vocab = (vendored / "vocab.txt").stat().st_size / 1e6
    assert 0 < vocab < weights  # the vocabulary is not counted in the weights
    assert f"downloads the model once: {weights:.1f} MB of weights, stored as" in rendered()
    assert f"and its vocabulary ({vocab:.1f} MB)" in rendered()
    assert "23.6" not in SOURCE
