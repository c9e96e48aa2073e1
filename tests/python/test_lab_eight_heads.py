"""The eight_heads and concat_wo labs (labs/eight_heads.py, labs/concat_wo.py): one synthetic
multi-head layer, checked against torch.nn.MultiheadAttention with the same weights; what
each hand-built head does; each head's share of the output summing to the output."""

import json

import numpy as np
import pytest
import torch
from attention_labs import entropy_bits
from attention_labs.labs import concat_wo, eight_heads, run_lab, run_lab_json
from attention_labs.params import LabParameterError

SENTENCE = ["The", "fluffy", "blue", "creature", "roamed", "the", "verdant", "forest"]


def torch_layer(W):
    """torch.nn.MultiheadAttention holding the lab's weights (it computes x @ W^T)."""
    d = eight_heads.D_MODEL
    mha = torch.nn.MultiheadAttention(d, eight_heads.N_HEADS, bias=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(
            torch.from_numpy(np.concatenate([W["W_Q"], W["W_K"], W["W_V"]], 1).T)
        )
        mha.in_proj_bias.copy_(torch.from_numpy(np.concatenate([W["b_Q"], np.zeros(2 * d)])))
        mha.out_proj.weight.copy_(torch.from_numpy(W["W_O"].T.copy()))
        mha.out_proj.bias.zero_()
    return mha


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("tokens", [SENTENCE, ["a"], [f"w{i % 5}" for i in range(32)]])
def test_layer_equals_torch_multihead_attention(tokens, seed):
    X, W, output, pattern = eight_heads.layer(tokens, seed)
    x = torch.from_numpy(X)[:, None, :]  # (seq_len, batch=1, d_model)
    ref_out, ref_w = torch_layer(W)(x, x, x, average_attn_weights=False)
    np.testing.assert_allclose(output, ref_out[:, 0].detach().numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(pattern, ref_w[0].detach().numpy(), rtol=0, atol=1e-12)
    res = run_lab("eight_heads", {"tokens": tokens, "seed": seed, "query": 0})["result"]
    np.testing.assert_allclose(res["weights"], pattern, rtol=0, atol=0)
    np.testing.assert_allclose(res["entropy_bits"], entropy_bits(pattern), atol=0)
    assert res["top_key"] == pattern.argmax(-1).tolist()


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_positional_heads_find_their_position_at_any_length(seed):
    for n in (2, 8, 32):
        top = np.array(
            run_lab(
                "eight_heads", {"tokens": [f"w{i}" for i in range(n)], "seed": seed, "query": 0}
            )["result"]["top_key"]
        )
        i = np.arange(n)
        assert (top[0, 1:] == i[1:] - 1).all()  # previous token
        assert (top[1] == 0).all()  # first token
        assert (top[2] == i).all()  # self
        assert (top[3, :-1] == i[:-1] + 1).all()  # next token


def test_default_view_heads_differ():
    res = run_lab("eight_heads")["result"]
    assert res["kinds"][:5] == ["previous token", "first token", "self", "next token", "same word"]
    w = np.array(res["weights"])
    assert w.shape == (8, 8, 8)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
    mean = np.array(res["mean_entropy_bits"])
    assert mean[:4].max() < 0.5 < 2 < mean[5:].min()  # positional heads sharp, random ones spread
    assert res["max_entropy_bits"] == 3.0
    # same word: "the" (5) reads "The" (0) and itself
    assert res["top_key"][4][5] in (0, 5) and w[4, 5, 0] + w[4, 5, 5] > 0.8


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize("query", [0, 3, 7])
def test_head_contributions_sum_to_the_output(query, seed):
    res = run_lab("concat_wo", {"query": query, "seed": seed})["result"]
    contributions = np.array(res["contributions"])
    assert contributions.shape == (8, 64)
    assert res["widths"] == [8] * 8 and sum(res["widths"]) == res["d_model"]
    assert res["offsets"] == list(range(0, 64, 8))
    np.testing.assert_allclose(contributions.sum(0), res["output"], rtol=0, atol=1e-12)
    assert res["sum_error"] < 1e-12
    np.testing.assert_allclose(res["norms"], np.linalg.norm(contributions, axis=1), atol=0)
    # the same through the concatenation, computed independently
    X, W, output, pattern = eight_heads.layer(SENTENCE, seed)
    V = X @ W["W_V"]
    concat = np.concatenate([pattern[h, query] @ V[:, 8 * h : 8 * h + 8] for h in range(8)])
    np.testing.assert_allclose(concat @ W["W_O"], output[query], atol=1e-12)
    np.testing.assert_allclose(np.ravel(res["head_outputs"]), concat, atol=1e-12)


@pytest.mark.parametrize("lab", ["eight_heads", "concat_wo"])
@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"query": 8}, "query", ["0 to 7", "got 8"]),
        ({"query": 32}, "query", ["0 to 31"]),
        ({"tokens": ["x"] * 33}, "tokens", ["1 to 32", "33 tokens"]),
        ({"seed": 2**31}, "seed", ["0 to"]),
    ],
)
def test_bad_parameters_name_the_parameter_and_the_range(lab, params, param, words):
    with pytest.raises(LabParameterError) as err:
        run_lab(lab, params)
    assert err.value.param == param
    for word in words:
        assert word in str(err.value)
    assert json.loads(run_lab_json(lab, json.dumps(params)))["param"] == param


@pytest.mark.parametrize("module", [eight_heads, concat_wo])
def test_largest_runs(module):
    name = module.__name__.rsplit(".", 1)[1]
    assert json.loads(run_lab_json(name, json.dumps(module.LARGEST)))["ok"]
