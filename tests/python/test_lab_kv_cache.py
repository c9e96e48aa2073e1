"""The kv_cache lab: generating token by token with a key/value cache equals full causal
attention at every step (1e-12 in float64), against this package, against
torch.nn.functional.scaled_dot_product_attention(is_causal=True) and, with shared key/value
heads, against torch with enable_gqa and with repeat_interleave; the cache grows one row a
step; bad parameters name themselves."""

import json
import math

import numpy as np
import pytest
from attention_labs import causal_mask, multi_head_attention, softmax
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.labs.kv_cache import (
    LARGEST,
    decode_step,
    full_causal_attention,
    generate_with_cache,
    heads,
    random_model,
)
from attention_labs.params import LabParameterError

LAB = "kv_cache"
HEADS = [(1, 1), (4, 4), (4, 2), (4, 1), (8, 2), (6, 3)]  # (n_heads, n_kv_heads)


def result(**params):
    return run_lab(LAB, params)["result"]


@pytest.mark.parametrize("n_heads,n_kv", HEADS)
def test_cached_steps_equal_full_causal_attention(n_heads, n_kv):
    x, W_Q, W_K, W_V = random_model(9, n_heads, n_kv, 5, seed=n_heads * 10 + n_kv)
    outs, weights, K, V = generate_with_cache(x, W_Q, W_K, W_V, n_heads, n_kv)
    full, full_w = full_causal_attention(x, W_Q, W_K, W_V, n_heads, n_kv)
    assert np.abs(outs - full.transpose(1, 0, 2)).max() <= 1e-12
    for t, w in enumerate(weights):  # the step's weights are row t of the causal pattern
        assert w.shape == (n_heads, t + 1)
        np.testing.assert_allclose(w, full_w[:, t, : t + 1], rtol=0, atol=1e-12)
        assert np.all(full_w[:, t, t + 1 :] == 0)
    assert K.shape == V.shape == (n_kv, 9, 5)


def test_full_causal_mha_equals_the_packages_multi_head_attention():
    n_heads, d_head = 4, 3
    x, W_Q, W_K, W_V = random_model(7, n_heads, n_heads, d_head, seed=3)
    full, _ = full_causal_attention(x, W_Q, W_K, W_V, n_heads, n_heads)
    d_model = n_heads * d_head
    concat, _ = multi_head_attention(
        x, W_Q, W_K, W_V, np.eye(d_model), n_heads=n_heads, mask=causal_mask(7)
    )
    np.testing.assert_allclose(
        full.transpose(1, 0, 2).reshape(7, d_model), concat, rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("n_heads,n_kv", HEADS)
def test_cached_steps_equal_torch_sdpa(n_heads, n_kv):
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x, W_Q, W_K, W_V = random_model(11, n_heads, n_kv, 4, seed=n_heads + 7 * n_kv)
    outs, _, _, _ = generate_with_cache(x, W_Q, W_K, W_V, n_heads, n_kv)
    Q = torch.from_numpy(heads(x @ W_Q, n_heads))  # (n_heads, seq_len, d_head)
    K = torch.from_numpy(heads(x @ W_K, n_kv))
    V = torch.from_numpy(heads(x @ W_V, n_kv))
    assert Q.dtype == torch.float64
    group = n_heads // n_kv
    rep = F.scaled_dot_product_attention(
        Q, K.repeat_interleave(group, dim=0), V.repeat_interleave(group, dim=0), is_causal=True
    ).numpy()
    gqa = F.scaled_dot_product_attention(Q, K, V, is_causal=True, enable_gqa=True).numpy()
    cached = outs.transpose(1, 0, 2)  # (n_heads, seq_len, d_head)
    assert np.abs(cached - rep).max() <= 1e-12
    assert np.abs(cached - gqa).max() <= 1e-12


def test_step_zero_reads_only_its_own_value():
    rng = np.random.default_rng(0)
    q, k, v = rng.standard_normal((3, 4, 2))
    empty = np.zeros((2, 0, 2))
    out, w, K, V = decode_step(q, k[:2], v[:2], empty, empty)
    assert K.shape == (2, 1, 2) and np.all(w == 1.0)
    np.testing.assert_allclose(out, np.repeat(v[:2], 2, axis=0), rtol=0, atol=0)


def test_one_decode_step_by_hand():
    rng = np.random.default_rng(4)
    Kc, Vc = rng.standard_normal((2, 1, 3, 2))  # one key/value head, 3 cached rows
    q, k, v = rng.standard_normal((1, 2)), rng.standard_normal((1, 2)), rng.standard_normal((1, 2))
    out, w, K, V = decode_step(q, k, v, Kc, Vc)
    keys = np.vstack([Kc[0], k])
    expected_w = softmax(q[0] @ keys.T / math.sqrt(2))
    np.testing.assert_allclose(w[0], expected_w, rtol=0, atol=1e-15)
    np.testing.assert_allclose(out[0], expected_w @ np.vstack([Vc[0], v]), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(K[0, :3], Kc[0])


def test_lab_default_view():
    res = result()
    assert res["tokens"] == ["The", "fluffy", "blue", "creature", "roamed", "the"]
    assert res["step"] == 3 and res["n_heads"] == res["n_kv_heads"] == 4
    assert np.array(res["K_cache"]).shape == (4, 4, 4)
    assert np.allclose(np.array(res["weights"]).sum(axis=1), 1)
    assert res["max_diff"] <= 1e-12 and len(res["diffs"]) == 6
    np.testing.assert_allclose(res["out"], res["full_out"], rtol=0, atol=1e-12)
    assert res["cache_floats"] == [2 * 4 * s * 4 for s in range(1, 7)]
    assert res["kv_rows"] == {"with_cache": 4, "without_cache": 16} and res["scores"] == 16


def test_lab_groups():
    res = result(n_kv_heads=2)
    assert res["group"] == 2 and res["kv_head_of"] == [0, 0, 1, 1]
    assert np.array(res["K_cache"]).shape == (2, 4, 4) and res["max_diff"] <= 1e-12
    assert result(n_kv_heads=1)["kv_head_of"] == [0, 0, 0, 0]


def test_sharing_keeps_the_draw():
    """MHA, GQA and MQA with the same seed share the tokens' embeddings and W_Q, and key/value
    head g is the MHA head of the first query head of its group (so numbers compare)."""
    x4, Q4, K4, V4 = random_model(6, 4, 4, 3, seed=7)
    for n_kv in (2, 1):
        x, Q, K, V = random_model(6, 4, n_kv, 3, seed=7)
        np.testing.assert_array_equal(x, x4)
        np.testing.assert_array_equal(Q, Q4)
        group = 4 // n_kv
        for g in range(n_kv):
            h = g * group
            np.testing.assert_array_equal(K[:, 3 * g : 3 * g + 3], K4[:, 3 * h : 3 * h + 3])
            np.testing.assert_array_equal(V[:, 3 * g : 3 * g + 3], V4[:, 3 * h : 3 * h + 3])
    mha, gqa, mqa = result(), result(n_kv_heads=2), result(n_kv_heads=1)
    for r in (gqa, mqa):  # query head 1 reads the same keys and values in all three
        np.testing.assert_allclose(r["weights"][0], mha["weights"][0], rtol=0, atol=1e-15)
        np.testing.assert_allclose(r["K_cache"][0], mha["K_cache"][0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(gqa["K_cache"][1], mha["K_cache"][2], rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"step": 6}, "step", "from 0 to 5"),
        ({"step": 16}, "step", "from 0 to 15"),
        ({"n_kv_heads": 3}, "n_kv_heads", "one of 1, 2, 4"),
        ({"n_heads": 2, "n_kv_heads": 4}, "n_kv_heads", "one of 1, 2, got 4"),
        ({"n_heads": 9}, "n_heads", "from 1 to 8"),
        ({"d_head": 0}, "d_head", "from 1 to 16"),
        ({"tokens": []}, "tokens", "1 to 16 tokens"),
        ({"tokens": ["x"] * 17}, "tokens", "1 to 16 tokens"),
    ],
)
def test_bad_parameters_name_the_parameter_and_the_range(params, param, words):
    with pytest.raises(LabParameterError) as err:
        run_lab(LAB, params)
    assert err.value.param == param and words in str(err.value)
    out = json.loads(run_lab_json(LAB, json.dumps(params)))
    assert out["ok"] is False and out["param"] == param


def test_largest_runs_and_is_exact():
    assert result(**LARGEST)["max_diff"] <= 1e-12


def test_output_is_strict_json():
    out = run_lab(LAB, {"n_kv_heads": 2})
    assert json.loads(json.dumps(out, allow_nan=False)) == out
