"""The induction-head model in NumPy and its two labs (induction_training, induction_model)."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest
import torch
from attention_labs import real_maps
from attention_labs.labs import run_lab_json
from attention_labs.models import induction

from build_scripts.induction import train_induction as ti


def run(name, **params):
    return json.loads(run_lab_json(name, json.dumps(params)))


def shipped_torch_model():
    w = induction.load_weights()
    cfg = ti.Config()
    model = ti.build_model(cfg)
    state = {}
    path = resources.files("attention_labs") / "data/induction/model.json"
    raw = json.loads(path.read_text())["weights"]
    for name, entry in raw.items():
        size = int(np.prod(entry["shape"]))
        state[name] = torch.from_numpy(
            real_maps.decode_vectors(entry["data"], 1, size).reshape(entry["shape"])
        ).float()
    model.load_state_dict(state)
    assert w["config"]["d_model"] == cfg.d_model
    return model


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_numpy_forward_equals_the_pytorch_model(seed):
    model = shipped_torch_model().double()
    ids = torch.randint(26, (1, 5 + 9 * seed), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        logits_t, weights_t = model(ids)
    logits, weights = induction.forward(ids[0].tolist())
    np.testing.assert_allclose(logits, logits_t[0].numpy(), atol=1e-10)
    np.testing.assert_allclose(weights, weights_t[0].numpy(), atol=1e-10)


def test_the_stored_final_maps_are_the_numpy_models_within_a_byte():
    story = induction.training_story()
    _, weights = induction.forward(story["probe"])
    last = len(story["maps"]) - 1
    assert np.abs(induction.stored_map(last) - weights).max() <= 1 / 255


def test_encode_takes_letters_and_names_the_first_bad_character():
    assert induction.encode("ab C") == [0, 1, 2]
    with pytest.raises(ValueError, match="'é' is not one"):
        induction.encode("abé")
    with pytest.raises(ValueError, match="2 to 32 letters"):
        induction.encode("A" * 33)


def test_forward_refuses_out_of_range_tokens():
    with pytest.raises(ValueError, match=r"\[0, 26\)"):
        induction.forward([0, 26])
    with pytest.raises(ValueError, match="1 to 32 ids"):
        induction.forward(list(range(26)) + [0] * 7)


def test_training_lab_default_shows_the_formed_induction_head():
    r = run("induction_training")
    assert r["ok"]
    res = r["result"]
    assert res["step"] == res["steps"][-1] == ti.Config().steps
    assert res["induction"][-1] > res["threshold"] > res["induction"][0]
    assert len(res["tokens"]) == 24 and res["tokens"][:12] == res["tokens"][12:]


def test_training_lab_before_training_has_no_induction_head():
    res = run("induction_training", checkpoint=0)["result"]
    assert res["step"] == 0
    assert max(h["induction"] for h in res["heads"]) < 0.1


def test_model_lab_on_a_repeat_copies_and_on_no_repeat_has_no_score():
    res = run("induction_model")["result"]
    assert res["induction"] > 0.5
    assert res["copy_accuracy"] >= 0.7
    res = run("induction_model", tokens=list("ABCDEFGH"))["result"]
    assert res["induction"] is None and res["copy_accuracy"] is None


@pytest.mark.parametrize(
    ("name", "params", "needle"),
    [
        ("induction_model", {"tokens": list("AB1")}, "'1' is not one"),
        ("induction_model", {"tokens": ["A"]}, "2 to 32 tokens"),
        ("induction_model", {"tokens": ["AB", "C"]}, "1 to 1 characters"),
        ("induction_model", {"head": 2}, "head must be a whole number from 0 to 1"),
        ("induction_training", {"checkpoint": 8}, "checkpoint must be a whole number from 0 to 7"),
    ],
)
def test_bad_parameters_are_named(name, params, needle):
    r = run(name, **params)
    assert not r["ok"]
    assert needle in r["error"], r["error"]


def test_missing_data_says_how_to_make_it(monkeypatch):
    monkeypatch.setattr(
        induction,
        "_read",
        lambda name: (_ for _ in ()).throw(
            FileNotFoundError(f"{name} is missing: run `make train-induction`")
        ),
    )
    induction.training_story.cache_clear()
    try:
        with pytest.raises(FileNotFoundError, match="make train-induction"):
            induction.training_story()
    finally:
        monkeypatch.undo()
        induction.training_story.cache_clear()
