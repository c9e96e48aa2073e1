"""The head_split lab (labs/head_split.py): parameters per matrix for 1, 2, 4, 8 heads,
the same whatever n_heads, shapes of the forward pass (checked against
torch.nn.MultiheadAttention's own parameter count and shapes), and its parameter errors."""

import numpy as np
import pytest
import torch
from attention_labs import multi_head_attention
from attention_labs.labs import head_split as lab
from attention_labs.labs import run_lab
from attention_labs.params import LabParameterError

LAB = "head_split"


def result(**params):
    return run_lab(LAB, params)["result"]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("d_model", [8, 64, 512, 768])
def test_count_is_4_d_model_squared_whatever_n_heads_and_equals_torch(d_model, bias):
    res = result(d_model=d_model, bias=bias)
    totals = {s["n_heads"]: s["total"] for s in res["splits"]}
    assert list(totals) == [1, 2, 4, 8]
    expected = 4 * d_model**2 + (4 * d_model if bias else 0)
    assert set(totals.values()) == {expected} == {res["formula_total"]}
    for s in res["splits"]:
        assert s["d_head"] * s["n_heads"] == d_model
        assert sum(s["parts"].values()) == s["total"]
        mha = torch.nn.MultiheadAttention(d_model, s["n_heads"], bias=bias)
        assert sum(p.numel() for p in mha.parameters()) == s["total"]


def test_the_picked_n_heads_gets_its_own_bar():
    assert [s["n_heads"] for s in result(d_model=768, n_heads=12)["splits"]] == [1, 2, 4, 8, 12]
    assert [s["n_heads"] for s in result(d_model=768, n_heads=3)["splits"]] == [1, 2, 3, 4, 8]
    assert [s["n_heads"] for s in result(d_model=768, n_heads=4)["splits"]] == [1, 2, 4, 8]
    assert result(d_model=768, n_heads=12)["splits"][-1]["d_head"] == 64


def test_per_head_blocks_add_up_to_the_matrix():
    res = result(d_model=512, n_heads=8)
    assert res["d_head"] == 64
    assert res["per_head"]["W_Q"] * 8 == 512 * 512


def test_shapes_match_a_real_forward_pass():
    d_model, n_heads, seq_len = 16, 4, 5
    res = result(d_model=d_model, n_heads=n_heads, seq_len=seq_len)
    shapes = {s["name"]: tuple(s["shape"]) for s in res["shapes"]}
    rng = np.random.default_rng(0)
    x = rng.standard_normal((seq_len, d_model))
    Ws = [rng.standard_normal((d_model, d_model)) for _ in range(4)]
    out, weights = multi_head_attention(x, *Ws, n_heads=n_heads)
    assert shapes["X"] == x.shape and shapes["output"] == out.shape
    assert shapes["scores, pattern"] == weights.shape
    assert shapes["reshape"] == (seq_len, n_heads, d_model // n_heads)
    assert shapes["transpose"] == shapes["heads' outputs"] == (n_heads, seq_len, 4)
    assert shapes["concatenate"] == (seq_len, d_model)


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"d_model": 12}, "d_model", ["multiple of 8", "12"]),
        ({"d_model": 4}, "d_model", ["8 to 16384", "4"]),
        ({"d_model": 64, "n_heads": 3}, "n_heads", ["divides d_model = 64", "3"]),
        ({"n_heads": 0}, "n_heads", ["1 to 128"]),
        ({"seq_len": 0}, "seq_len", ["1 to 4096"]),
        ({"bias": 1}, "bias", ["true or false"]),
    ],
)
def test_bad_parameters_name_the_parameter_and_the_range(params, param, words):
    with pytest.raises(LabParameterError) as err:
        run_lab(LAB, params)
    assert err.value.param == param
    for word in words:
        assert word in str(err.value)


def test_largest_runs():
    assert result(**lab.LARGEST)["d_head"] == 128
