"""The value_update lab (labs/value_update.py): one head's values, weighted sum, update and
shapes, checked against torch's scaled_dot_product_attention, and its parameter errors."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from attention_labs.labs import LABS, run_lab, run_lab_json
from attention_labs.labs import value_update as lab
from attention_labs.labs._synthetic import position_vectors
from attention_labs.params import LabParameterError

LAB = "value_update"


def result(**params):
    return run_lab(LAB, params)["result"]


def test_defaults_and_largest_give_finite_json():
    for params in ({}, lab.LARGEST):
        out = run_lab(LAB, params)["result"]
        assert np.isfinite(np.array(out["pattern"])).all()
        assert '"ok": true' in run_lab_json(LAB, "{}")


@pytest.mark.parametrize("d_head", [1, 4, 16])
def test_update_is_weighted_sum_of_values_through_W_O(d_head):
    res = result(d_head=d_head, query=2)
    X = lab.embeddings(res["tokens"], 0)
    W = lab.weights(d_head, 0)
    V = X @ W["W_V"]
    row = np.array(res["row"])
    np.testing.assert_allclose(row.sum(), 1.0, atol=1e-12)
    output = row @ V  # sum_j A_ij v_j
    np.testing.assert_allclose(res["output"], output, atol=1e-12)
    np.testing.assert_allclose(res["delta"], output @ W["W_O"], atol=1e-12)
    np.testing.assert_allclose(res["updated"], X[2] + output @ W["W_O"], atol=1e-12)
    np.testing.assert_allclose(res["values"], V, atol=1e-12)


def test_head_equals_torch_scaled_dot_product_attention():
    tokens = ["a", "b", "c", "a", "d"]
    X = lab.embeddings(tokens, 3)
    W = lab.weights(4, 3)
    head = lab.head_output(X, **W)
    t = torch.from_numpy
    ref = F.scaled_dot_product_attention(t(X @ W["W_Q"]), t(X @ W["W_K"]), t(X @ W["W_V"]))
    np.testing.assert_allclose(head["O"], ref.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(head["delta"], ref.numpy() @ W["W_O"], rtol=0, atol=1e-12)
    logits = (X @ W["W_Q"]) @ (X @ W["W_K"]).T / math.sqrt(4)
    np.testing.assert_allclose(head["pattern"], torch.softmax(t(logits), -1).numpy(), atol=1e-12)


@pytest.mark.parametrize("d_head", [1, 2, 4, 8, 16])
def test_value_map_has_rank_d_head_and_updates_lie_in_a_d_head_subspace(d_head):
    res = result(d_head=d_head, tokens=[f"w{i}" for i in range(20)])
    assert res["value_rank"] == min(d_head, lab.D_MODEL)
    assert res["update_rank"] == min(d_head, lab.D_MODEL, 20)


def test_plane_draws_x_delta_and_updated_exactly_and_adds_up():
    res = result()
    plane = res["plane"]
    x, delta = np.array(res["x"]), np.array(res["delta"])
    np.testing.assert_allclose(np.linalg.norm(plane["x"]), np.linalg.norm(x), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(plane["delta"]), np.linalg.norm(delta), atol=1e-12)
    np.testing.assert_allclose(
        np.array(plane["x"]) + plane["delta"], plane["updated"], rtol=0, atol=1e-12
    )
    # the weighted sum of the projected values is the projected update (linearity)
    np.testing.assert_allclose(
        np.array(res["row"]) @ np.array(plane["values"]), plane["delta"], atol=1e-12
    )
    assert plane["x"][1] == pytest.approx(0, abs=1e-12) and plane["x"][0] > 0
    kept = np.array(plane["kept"])
    assert np.all((kept >= 0) & (kept <= 1 + 1e-12))


def test_shapes_follow_d_model_d_head_and_seq_len():
    res = result(d_head=2, tokens=["a", "b", "c"], query=0)
    shapes = {s["name"]: tuple(s["shape"]) for s in res["shapes"]}
    assert shapes["X"] == (3, 16)
    assert shapes["W_V"] == (16, 2) and shapes["W_O"] == (2, 16)
    assert shapes["Q"] == shapes["K"] == shapes["V"] == shapes["weighted values"] == (3, 2)
    assert shapes["scores"] == shapes["pattern"] == (3, 3)
    assert shapes["delta"] == shapes["updated"] == (3, 16)


def test_same_word_shares_its_word_vector_not_its_position_and_seed_changes_everything():
    # Case-folded words plus positions (the convention of lessons 2 to 6): "The" and "the"
    # are one word, so their embeddings differ only by their positions' vectors.
    X = lab.embeddings(["The", "cat", "the"], 0)
    P = position_vectors(0, lab.MAX_TOKENS, lab.D_MODEL)
    np.testing.assert_allclose(X[0] - X[2], (P[0] - P[2]) / math.sqrt(2), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(lab.embeddings(["The"], 0), lab.embeddings(["the"], 0))
    assert not np.allclose(X[0], X[2])
    # a position's vector does not depend on the sentence's length
    np.testing.assert_array_equal(
        lab.embeddings(["a", "b"], 0)[1], lab.embeddings(["a", "b", "c"], 0)[1]
    )
    assert result(seed=1)["delta"] != result()["delta"]


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"query": 8}, "query", ["0 to 7", "got 8"]),
        ({"query": 64}, "query", ["0 to 63", "64"]),
        ({"d_head": 0}, "d_head", ["1 to 16", "0"]),
        ({"d_head": 17}, "d_head", ["1 to 16", "17"]),
        ({"tokens": []}, "tokens", ["1 to 64"]),
        ({"seed": -1}, "seed", ["0 to"]),
    ],
)
def test_bad_parameters_name_the_parameter_and_the_range(params, param, words):
    with pytest.raises(LabParameterError) as err:
        run_lab(LAB, params)
    assert err.value.param == param
    for word in words:
        assert word in str(err.value)
    assert f'"param": "{param}"' in run_lab_json(LAB, __import__("json").dumps(params))


def test_registered():
    assert LABS[LAB] is lab
