"""The own_sentence map source (labs_py/attention_labs/models/own_sentence.py) in CPython,
called as the browser's worker calls it (models.sources.run_source_json): its result is a
valid asset (asset.schema.json) whose maps are the model's, weights are loaded once, and bad
text gets a clear message. (In CPython an empty weights_url means the float32 weights of the
installed package; the browser test covers the int8 files and blob: URLs.)"""

from __future__ import annotations

import json

import jsonschema
import numpy as np
from attention_labs import maps
from attention_labs.models import minilm, own_sentence
from attention_labs.models.sources import run_source_json
from helpers import ROOT

SCHEMA = json.loads((ROOT / "docs/assets/attention/asset.schema.json").read_text("utf-8"))


def answer(**params):
    return json.loads(run_source_json("own_sentence", json.dumps(params)))


def test_result_is_a_valid_asset_with_the_models_maps():
    out = answer(text="The keys to the old wooden cabinet are on the kitchen table.")
    assert out["ok"], out
    asset = out["result"]["asset"]
    jsonschema.validate(asset, SCHEMA)
    committed = json.loads(
        (ROOT / "docs/assets/attention/all-minilm-l6-v2/keys-cabinet.json").read_text("utf-8")
    )
    assert asset["tokens"] == committed["tokens"]
    assert asset["seq_len"] == committed["seq_len"]
    got, stored = maps.decode_attention(asset), maps.decode_attention(committed)
    assert np.abs(got - stored).max() <= 2 / 255 + 1e-6  # float32 vs float32, both to 1/255
    for name, values in committed["head_stats"].items():
        if values is not None:
            np.testing.assert_allclose(asset["head_stats"][name], values, atol=2e-3)
    assert out["result"]["pieces"][:3] == ["[CLS]", "the", "keys"]


def test_weights_are_loaded_once():
    answer(text="first")
    wp, weights, sha, _ = own_sentence.load()
    again = answer(text="second run")
    assert again["result"]["run"]["load_ms"] == 0
    assert own_sentence.load()[1] is weights


def test_bad_text_is_named():
    assert answer(text="  \n ")["error"] == "Type a sentence first: the text is empty."
    long = answer(text="word " * 200)
    assert not long["ok"] and "202 tokens" in long["error"] and "at most 128" in long["error"]
    assert "only control characters" in answer(text="\x00\x01")["error"]
    too_many = answer(text="x" * 2001)
    assert too_many["param"] == "text" and "at most 2000 characters" in too_many["error"]


def test_unusual_script_gives_a_real_map():
    out = answer(text="東京 🤖 𝔘𝔫𝔦")["result"]
    assert out["pieces"] == ["[CLS]", "東", "京", "[UNK]", "[UNK]", "[SEP]"]
    w = maps.decode_attention(out["asset"])
    assert w.shape == (minilm.CONFIG["n_layers"], minilm.CONFIG["n_heads"], 6, 6)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
