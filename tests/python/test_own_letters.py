"""The own_letters map source (labs_py/attention_labs/models/own_letters.py) in CPython: the
reader's letters through lesson 12's induction-head model, returned as a valid asset of a
causal model whose maps and statistics are `induction.forward`'s; a repeat makes the induction
head fire; a bad sequence gets a message that names the input and what is allowed."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
from attention_labs import maps
from attention_labs.models import induction, own_letters
from attention_labs.models.sources import run_source_json
from helpers import ROOT

SCHEMA = json.loads((ROOT / "docs/assets/attention/asset.schema.json").read_text("utf-8"))


def answer(**params):
    return json.loads(run_source_json("own_letters", json.dumps(params)))


def test_the_asset_is_valid_and_holds_the_models_weights():
    out = answer(text="abc dxyz abc dxyz")
    assert out["ok"], out
    asset = out["result"]["asset"]
    jsonschema.validate(asset, SCHEMA)
    ids = induction.encode("ABCDXYZABCDXYZ")
    assert asset["tokens"]["ids"] == ids and asset["tokens"]["text"] == list("ABCDXYZABCDXYZ")
    assert asset["sentence"]["text"] == "ABCDXYZABCDXYZ" and asset["seq_len"] == 14
    assert asset["model"]["causal"] and asset["attention"]["layout"] == "lower-triangle"
    assert asset["model"]["weights_sha256"] == induction.weights_sha256()
    _, want = induction.forward(ids)  # (n_layers, n_heads, seq_len, seq_len)
    got = maps.decode_attention(asset)
    assert got.shape == want.shape == (2, 2, 14, 14)
    assert np.abs(got - want).max() <= 1 / 255 + 1e-9
    stats = asset["head_stats"]
    np.testing.assert_allclose(stats["induction"], maps.induction_score(want, ids), atol=5e-5)
    np.testing.assert_allclose(stats["previous_token"], maps.previous_token_score(want), atol=5e-5)


def test_the_default_repeat_makes_the_induction_head_fire():
    asset = answer()["result"]["asset"]
    assert asset["sentence"]["text"] == own_letters.DEFAULT
    induction_scores = np.array(asset["head_stats"]["induction"])
    layer, head = np.unravel_index(induction_scores.argmax(), induction_scores.shape)
    assert layer == 1 and induction_scores[layer, head] > 0.5
    # its partner in layer 0 looks at the previous letter
    assert np.array(asset["head_stats"]["previous_token"])[0].max() > 0.5


def test_no_repeat_has_no_induction_score():
    asset = answer(text="QWERTYUIOP")["result"]["asset"]
    assert asset["head_stats"]["induction"] is None
    jsonschema.validate(asset, SCHEMA)


def test_a_bad_sequence_names_the_input_and_what_is_allowed():
    bad = answer(text="ABC1")
    assert not bad["ok"] and bad["param"] == "text"
    assert bad["error"].startswith("Your letters:") and "A to Z" in bad["error"]
    assert "'1'" in bad["error"]
    short = answer(text="A")
    assert "2 to 32 letters" in short["error"] and "got 1" in short["error"]
    long = answer(text="AB" * 17)
    assert "2 to 32 letters" in long["error"] and "got 34" in long["error"]


def test_the_limits_the_page_states_are_the_models():
    cfg = induction.load_weights()["config"]
    assert (own_letters.MIN_LETTERS, own_letters.MAX_LETTERS) == (2, cfg["seq_len"])


def test_the_sources_are_not_labs_and_an_unknown_source_is_named():
    from attention_labs.labs import LABS

    assert "own_letters" not in LABS and "own_sentence" not in LABS
    bad = json.loads(run_source_json("no_such_source", "{}"))
    assert not bad["ok"] and bad["param"] == "source"
    assert "own_letters" in bad["error"] and "own_sentence" in bad["error"]
