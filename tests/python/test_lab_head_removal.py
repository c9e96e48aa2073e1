"""The head_removal lab (labs_py/attention_labs/labs/head_removal.py): the trained induction
model with heads switched off, against the PyTorch model of build_scripts/induction with the
same heads' columns of W_O zeroed (an independent ablation)."""

from __future__ import annotations

import itertools
import json
import math
from importlib import resources

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from attention_labs import maps
from attention_labs.labs import head_removal as lab
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.models import induction
from attention_labs.params import LabParameterError

from build_scripts.induction import train_induction as ti

LAB = "head_removal"
HEADS = [(0, 0), (0, 1), (1, 0), (1, 1)]


def result(off=(), **params):
    return run_lab(LAB, {**params, **{f"off_l{layer}h{h}": True for layer, h in off}})["result"]


def torch_model(off=()):
    """The trained model in PyTorch (float64) with the heads of ``off`` removed: their input
    columns of W_O (torch stores W_O as (d_model out, d_model in)) set to zero."""
    cfg = ti.Config()
    model = ti.build_model(cfg)
    path = resources.files("attention_labs") / "data/induction/model.json"
    raw = json.loads(path.read_text())["weights"]
    state = {
        name: torch.from_numpy(
            maps.decode_vectors(e["data"], 1, int(np.prod(e["shape"]))).reshape(e["shape"])
        )
        for name, e in raw.items()
    }
    model.load_state_dict(state)
    model = model.double().eval()
    with torch.no_grad():
        for layer, head in off:
            cols = slice(head * cfg.d_head, (head + 1) * cfg.d_head)
            model.layers[layer].W_O.weight[:, cols] = 0.0
    return model


def torch_run(tokens, off=()):
    ids = torch.tensor([induction.encode("".join(tokens))])
    with torch.no_grad():
        logits, weights = torch_model(off)(ids)
    return ids[0], logits[0], weights[0]  # (n,), (n, vocab), (L, H, n, n)


def knowable(ids):
    """Positions whose next token repeats what followed an earlier copy of their own token."""
    ids = ids.tolist()
    return [
        q
        for q in range(len(ids) - 1)
        if any(ids[k] == ids[q] and ids[k + 1] == ids[q + 1] for k in range(q))
    ]


def torch_scores(ids, logits):
    pos = knowable(ids)
    if not pos:
        return None, None
    targets = ids[[q + 1 for q in pos]]
    acc = (logits[pos].argmax(-1) == targets).double().mean().item()
    loss = F.cross_entropy(logits[pos], targets).item()
    return acc, loss


OFF_SETS = [off for r in range(5) for off in itertools.combinations(HEADS, r)]


@pytest.mark.parametrize(
    "off", OFF_SETS, ids=lambda off: "+".join(f"{layer}{h}" for layer, h in off)
)
def test_every_set_of_removed_heads_equals_pytorch(off):
    tokens = lab.DEFAULT
    res = result(off)
    ids, logits, weights = torch_run(tokens, off)
    _, _, intact = torch_run(tokens)
    for i, (layer, head) in enumerate(HEADS):
        h = res["heads"][i]
        assert (h["layer"], h["head"], h["off"]) == (layer, head, (layer, head) in off)
        np.testing.assert_allclose(h["weights"], weights[layer, head].numpy(), atol=1e-10)
        moved = (weights[layer, head] - intact[layer, head]).abs().max().item()
        assert h["changed"] == pytest.approx(moved, abs=1e-10)
    acc, loss = torch_scores(ids, logits)
    assert res["copy_accuracy"] == pytest.approx(acc, abs=1e-12)
    assert res["loss"] == pytest.approx(loss, abs=1e-9)
    assert res["knowable"] == knowable(ids)
    probs = logits.softmax(-1)
    for q in range(len(tokens)):
        want = probs[q, ids[q + 1]].item() if q in res["knowable"] else None
        assert res["p_right"][q] == (want if want is None else pytest.approx(want, abs=1e-10))
    assert res["predicted"] == [chr(65 + int(i)) for i in logits.argmax(-1)]


def test_the_table_of_single_removals_and_the_intact_model_equal_pytorch():
    res = result()
    ids, logits, _ = torch_run(lab.DEFAULT)
    acc, loss = torch_scores(ids, logits)
    assert res["intact"] == {"copy_accuracy": pytest.approx(acc), "loss": pytest.approx(loss)}
    assert (res["copy_accuracy"], res["loss"]) == (
        res["intact"]["copy_accuracy"],
        res["intact"]["loss"],
    )
    for entry, (layer, head) in zip(res["single"], HEADS, strict=True):
        ids, logits, _ = torch_run(lab.DEFAULT, [(layer, head)])
        acc, loss = torch_scores(ids, logits)
        assert entry == {
            "layer": layer,
            "head": head,
            "copy_accuracy": pytest.approx(acc),
            "loss": pytest.approx(loss),
        }
    assert res["chance_loss"] == pytest.approx(math.log(26))


def test_a_removed_head_keeps_its_pattern_and_only_later_layers_move():
    for layer, head in HEADS:
        res = result([(layer, head)])
        for h in res["heads"]:
            if h["layer"] <= layer:
                assert h["changed"] == 0.0, (layer, head, h["layer"], h["head"])
    moved = result([(0, 0)])["heads"]
    assert min(moved[2]["changed"], moved[3]["changed"]) > 0.5


def test_rows_sum_to_one_and_the_future_is_hidden():
    res = result([(0, 0), (1, 1)], tokens=list("ABCDABCD"))
    masked = np.array(res["masked"])
    assert np.array_equal(masked, np.triu(np.ones((8, 8), bool), 1))
    for h in res["heads"]:
        w = np.array(h["weights"])
        np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
        assert np.all(w[masked] == 0.0)


def test_letters_without_a_repeat_have_no_score_and_lowercase_is_read_as_capitals():
    res = result(tokens=list("qwertyuiop"))
    assert res["tokens"] == list("QWERTYUIOP")
    assert res["copy_accuracy"] is None and res["loss"] is None and res["knowable"] == []
    assert res["p_right"] == [None] * 10
    assert all(s["copy_accuracy"] is None for s in res["single"])
    assert all(h["induction"] is None for h in res["heads"])


def test_the_answer_is_json_without_nan_and_largest_runs():
    for params in ({}, lab.LARGEST, {"tokens": ["A", "B"], "off_l0h0": True}):
        out = json.loads(run_lab_json(LAB, json.dumps(params)))  # allow_nan=False
        assert out["ok"] is True, out
    assert len(run_lab(LAB, lab.LARGEST)["result"]["tokens"]) == 32


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"tokens": list("AB1")}, "tokens", "only the letters A to Z; '1' is not one"),
        ({"tokens": ["A"]}, "tokens", "2 to 32 tokens"),
        ({"tokens": ["AB", "C"]}, "tokens", "1 to 1 characters"),
        ({"off_l0h0": "yes"}, "off_l0h0", "true or false"),
        ({"off_l2h0": True}, "off_l2h0", "unknown parameter"),
    ],
)
def test_bad_parameters_are_named(params, param, words):
    with pytest.raises(LabParameterError) as info:
        run_lab(LAB, params)
    assert info.value.param == param and words in str(info.value)
    out = json.loads(run_lab_json(LAB, json.dumps(params)))
    assert out["ok"] is False and out["param"] == param


def test_run_lab_answers_plain_json_for_the_build():
    """The build writes run_lab's answer into the page as JSON: arrays inside the list of
    heads must be plain lists too."""
    out = run_lab(LAB, {})
    text = json.dumps(out, allow_nan=False)
    assert json.loads(text)["result"]["heads"][0]["weights"][0][0] == 1.0
