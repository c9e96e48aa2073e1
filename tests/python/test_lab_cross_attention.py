"""The cross_attention lab (labs_py/attention_labs/labs/cross_attention.py) and
attention.cross_attention, against torch.nn.MultiheadAttention (different query and
key/value inputs, kdim/vdim, key_padding_mask) and torch.nn.functional.
scaled_dot_product_attention with a rectangular mask, in float64 to 1e-12."""

import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from attention_labs import (
    cross_attention,
    multi_head_attention,
    padding_mask,
    scaled_dot_product_attention,
)
from attention_labs.labs import cross_attention as lab
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.params import LabParameterError

LAB = "cross_attention"
ATOL = 1e-12


def result(**params):
    return run_lab(LAB, params)["result"]


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))


# ----------------------------------------------------------------------------
# attention.cross_attention against torch


def torch_cross_mha(rng, d_q, d_kv, n_heads):
    """A float64 MultiheadAttention with kdim = vdim = d_kv (source width) and no biases,
    and the same weights in this project's row-vector form."""
    mha = torch.nn.MultiheadAttention(
        d_q, n_heads, bias=False, kdim=d_kv, vdim=d_kv, batch_first=True, dtype=torch.float64
    )
    with torch.no_grad():
        for p in (mha.q_proj_weight, mha.k_proj_weight, mha.v_proj_weight, mha.out_proj.weight):
            p.copy_(t(rng.standard_normal(tuple(p.shape)) / math.sqrt(p.shape[1])))
    W = {
        "W_Q": mha.q_proj_weight.detach().numpy().T,  # (d_q, d_q)
        "W_K": mha.k_proj_weight.detach().numpy().T,  # (d_kv, d_q)
        "W_V": mha.v_proj_weight.detach().numpy().T,  # (d_kv, d_q)
        "W_O": mha.out_proj.weight.detach().numpy().T,  # (d_q, d_q)
    }
    return mha, W


@pytest.mark.parametrize("n_heads", [1, 2, 4])
@pytest.mark.parametrize("seq_q,seq_k", [(2, 3), (4, 6), (5, 1), (7, 4)])
def test_cross_attention_equals_torch_multihead_attention_with_kdim_vdim(n_heads, seq_q, seq_k):
    rng = np.random.default_rng(100 * n_heads + 10 * seq_q + seq_k)
    d_q, d_kv, batch = 8, 6, 3
    mha, W = torch_cross_mha(rng, d_q, d_kv, n_heads)
    x = rng.standard_normal((batch, seq_q, d_q))  # the target
    src = rng.standard_normal((batch, seq_k, d_kv))  # the source, another width
    lengths = [seq_k, max(1, seq_k - 1), 1]
    keep = padding_mask(lengths, seq_k)  # (batch, seq_k) True = real
    out, weights = cross_attention(x, src, n_heads=n_heads, source_mask=keep, **W)
    assert out.shape == (batch, seq_q, d_q)
    assert weights.shape == (batch, n_heads, seq_q, seq_k)
    ref_out, ref_w = mha(
        t(x), t(src), t(src), key_padding_mask=t(~keep).bool(), average_attn_weights=False
    )
    np.testing.assert_allclose(out, ref_out.detach().numpy(), rtol=0, atol=ATOL)
    np.testing.assert_allclose(weights, ref_w.detach().numpy(), rtol=0, atol=ATOL)
    assert np.all(weights[~np.broadcast_to(keep[:, None, None, :], weights.shape)] == 0.0)


@pytest.mark.parametrize("seq_q,seq_k", [(2, 3), (4, 6), (6, 4)])
def test_rectangular_weights_equal_torch_sdpa_with_a_rectangular_mask(seq_q, seq_k):
    rng = np.random.default_rng(seq_q * seq_k)
    Q = rng.standard_normal((2, seq_q, 5))
    K = rng.standard_normal((2, seq_k, 5))
    V = rng.standard_normal((2, seq_k, 3))
    mask = rng.random((2, seq_q, seq_k)) < 0.7
    mask[..., 0] = True  # every row sees a key
    out, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    ref = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=t(mask).bool())
    np.testing.assert_allclose(out, ref.numpy(), rtol=0, atol=ATOL)
    assert weights.shape == (2, seq_q, seq_k)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=ATOL)


def test_a_fully_padded_source_gives_zero_weights_and_output_like_torch_sdpa():
    rng = np.random.default_rng(7)
    x, src = rng.standard_normal((3, 4)), rng.standard_normal((5, 4))
    W = {n: rng.standard_normal((4, 4)) for n in ("W_Q", "W_K", "W_V")}
    none = np.zeros(5, dtype=bool)
    out, weights = cross_attention(x, src, source_mask=none, **W)
    assert not np.isnan(out).any() and np.all(out == 0.0) and np.all(weights == 0.0)
    ref = F.scaled_dot_product_attention(
        t(x @ W["W_Q"]), t(src @ W["W_K"]), t(src @ W["W_V"]), attn_mask=t(none).bool()
    )
    np.testing.assert_allclose(out, ref.numpy(), rtol=0, atol=ATOL)  # torch 2.13 CPU: zeros


def test_self_attention_is_cross_attention_with_source_equal_to_target():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 8))
    W = {n: rng.standard_normal((8, 8)) / 3 for n in ("W_Q", "W_K", "W_V", "W_O")}
    out, weights = cross_attention(x, x, n_heads=2, **W)
    ref_out, ref_w = multi_head_attention(x, n_heads=2, **W)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=ATOL)
    np.testing.assert_allclose(weights, ref_w, rtol=0, atol=ATOL)


def test_source_keys_and_values_computed_once_serve_every_target_token():
    """Generating the target one token at a time with the source's K and V computed once
    gives the same rows as all target tokens at once."""
    rng = np.random.default_rng(11)
    x, src = rng.standard_normal((5, 6)), rng.standard_normal((7, 6))
    W = {n: rng.standard_normal((6, 4)) for n in ("W_Q", "W_K", "W_V")}
    keep = np.arange(7) < 5
    full, _ = cross_attention(x, src, source_mask=keep, **W)
    K, V = src @ W["W_K"], src @ W["W_V"]  # once
    rows = [
        scaled_dot_product_attention(x[i : i + 1] @ W["W_Q"], K, V, mask=keep)[0][0]
        for i in range(5)
    ]
    np.testing.assert_allclose(np.stack(rows), full, rtol=0, atol=ATOL)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"x": np.ones(3)}, "x must have shape"),
        ({"source": np.ones((2, 3, 4))}, "source must have shape"),
        ({"W_Q": np.ones((5, 4))}, "W_Q must have shape"),
        ({"W_K": np.ones((4, 2))}, "W_K must have the width of W_Q"),
        ({"n_heads": 3}, "n_heads = 3 must divide"),
        ({"n_heads": 0}, "n_heads must be an int >= 1"),
        ({"source_mask": np.ones(4)}, "source_mask must be a boolean array of shape"),
        ({"source_mask": np.ones(3, dtype=bool)}, r"source_mask must be .* shape \(4,\)"),
        ({"mask": np.ones((2, 2), dtype=bool)}, "mask of shape"),
        ({"W_O": np.ones((3, 4))}, "W_O must have shape"),
        ({"x": np.full((2, 4), np.nan)}, "x must contain only finite"),
    ],
)
def test_cross_attention_errors_name_the_argument(kwargs, match):
    rng = np.random.default_rng(0)
    args = {
        "x": rng.standard_normal((2, 4)),
        "source": rng.standard_normal((4, 4)),
        "W_Q": rng.standard_normal((4, 4)),
        "W_K": rng.standard_normal((4, 4)),
        "W_V": rng.standard_normal((4, 4)),
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        cross_attention(**args)


# ----------------------------------------------------------------------------
# the lab


@pytest.mark.parametrize("pair", list(lab.PAIRS))
@pytest.mark.parametrize("pad", [0, 2, lab.MAX_PAD])
def test_the_pattern_is_rectangular_and_rows_sum_to_one(pair, pad):
    r = result(pair=pair, pad=pad, query=0)
    p = lab.PAIRS[pair]
    seq_q, seq_k = len(p["target"]), len(p["source"]) + pad
    w = np.array(r["weights"])
    assert w.shape == (seq_q, seq_k)
    assert r["tokens"] == p["target"]
    assert r["key_tokens"] == p["source"] + ["PAD"] * pad
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=ATOL)
    assert np.all(w[:, len(p["source"]) :] == 0.0)  # padded keys: weight exactly 0
    assert np.array(r["self"]["weights"]).shape == (seq_q, seq_q)
    shapes = {s["name"]: s["shape"] for s in r["shapes"]}
    assert shapes == {
        "Q": [seq_q, lab.D_HEAD],
        "K": [seq_k, lab.D_HEAD],
        "V": [seq_k, lab.D_HEAD],
        "weights": [seq_q, seq_k],
        "output": [seq_q, lab.D_HEAD],
    }


@pytest.mark.parametrize("padding", [True, False])
@pytest.mark.parametrize("temperature", [0.3, 1.0, 4.0])
def test_the_lab_equals_torch_mha_on_its_own_inputs(padding, temperature):
    """The lab's pattern is MultiheadAttention(target, source, source) with the lab's
    random W_Q, W_K, W_V (one head, d_head = 16), its key_padding_mask and temperature."""
    params = run_lab(LAB, {"source_padding_mask": padding, "temperature": temperature, "pad": 3})[
        "params"
    ]
    r = lab.compute(params)
    ins = lab.inputs(params)
    W = ins["W"]
    mha = torch.nn.MultiheadAttention(
        lab.D_HEAD, 1, bias=False, kdim=lab.D_MODEL, vdim=lab.D_MODEL, batch_first=True,
        dtype=torch.float64,
    )  # fmt: skip
    with torch.no_grad():  # temperature: fold 1 / temperature into the queries
        mha.q_proj_weight.copy_(t(np.eye(lab.D_HEAD) / temperature))
        mha.k_proj_weight.copy_(t(W["W_K"].T))
        mha.v_proj_weight.copy_(t(W["W_V"].T))
        mha.out_proj.weight.copy_(t(np.eye(lab.D_HEAD)))
    Q = ins["X_t"] @ W["W_Q"]
    pad_keys = t(~ins["source_mask"]).bool()[None]
    _, ref_w = mha(t(Q)[None], t(ins["X_s"])[None], t(ins["X_s"])[None], key_padding_mask=pad_keys)
    np.testing.assert_allclose(r["weights"], ref_w[0].detach().numpy(), rtol=0, atol=ATOL)
    mine, w = cross_attention(
        ins["X_t"] / temperature, ins["X_s"], W["W_Q"], W["W_K"], W["W_V"],
        source_mask=ins["source_mask"],
    )  # fmt: skip
    np.testing.assert_allclose(r["weights"], w[0], rtol=0, atol=ATOL)


@pytest.mark.parametrize("preset", ["random", "aligned"])
@pytest.mark.parametrize("causal", [False, True])
def test_the_lab_equals_torch_sdpa_with_its_rectangular_mask(preset, causal):
    params = run_lab(LAB, {"preset": preset, "causal": causal, "temperature": 0.5})["params"]
    r, ins = lab.compute(params), lab.inputs(params)
    Q, K, V = (t(ins[n]) for n in "QKV")
    mask = t(ins["mask"]).bool()
    scale = 1 / (math.sqrt(lab.D_HEAD) * 0.5)
    ref = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask, scale=scale)
    out, _ = scaled_dot_product_attention(
        ins["Q"], ins["K"], ins["V"], ins["mask"], temperature=0.5
    )
    np.testing.assert_allclose(out, ref.numpy(), rtol=0, atol=ATOL)
    logits = torch.where(mask, Q @ K.T * scale, -torch.inf)
    np.testing.assert_allclose(r["weights"], torch.softmax(logits, -1).numpy(), rtol=0, atol=ATOL)


def test_the_decoder_self_attention_is_causal_and_the_cross_attention_is_not():
    r = result()
    self_w = np.array(r["self"]["weights"])
    assert np.all(np.triu(self_w, 1) == 0.0)
    np.testing.assert_allclose(self_w.sum(axis=-1), 1.0, rtol=0, atol=ATOL)
    w = np.array(r["weights"])
    n_real = len(lab.PAIRS["en-fr"]["source"])
    assert np.all(w[:, :n_real] > 0)  # every query reads every real source word


def test_a_causal_mask_in_cross_attention_hides_source_words_for_nothing():
    r = result(causal=True, pair="en-de-short", pad=0)
    w = np.array(r["weights"])  # 2 queries x 3 keys
    assert r["unseen_keys"] == [2]  # "raining": no target query may read it
    assert np.all(w[:, 2] == 0.0) and w[0, 0] == 1.0


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("pair", list(lab.PAIRS))
@pytest.mark.parametrize("padding", [True, False])
def test_the_aligned_preset_puts_each_top_weight_on_the_aligned_word(seed, pair, padding):
    r = result(preset="aligned", seed=seed, pair=pair, query=0, source_padding_mask=padding)
    assert list(r["top_key"]) == lab.PAIRS[pair]["align"]


def test_no_padding_mask_lets_pad_keys_take_weight():
    assert result()["pad_weight"] == 0.0
    assert result(source_padding_mask=False)["pad_weight"] > 0.1


@pytest.mark.parametrize(
    "params,param,match",
    [
        ({"query": 5}, "query", "from 0 to 4"),
        ({"pair": "en-de-short", "query": 2}, "query", "from 0 to 1 for this pair"),
        ({"pad": 5}, "pad", "from 0 to 4"),
        ({"temperature": 0.0}, "temperature", "from 0.05 to 10"),
        ({"pair": "en-es"}, "pair", "one of 'en-fr'"),
        ({"preset": "trained"}, "preset", "one of 'random', 'aligned'"),
        ({"causal": "yes"}, "causal", "true or false"),
        ({"seed": -1}, "seed", "from 0 to"),
    ],
)
def test_bad_parameters_name_the_parameter_and_the_range(params, param, match):
    with pytest.raises(LabParameterError, match=match) as err:
        run_lab(LAB, params)
    assert err.value.param == param


def test_the_plain_result_has_masked_logits_as_null_and_weights_zero():
    res = json.loads(json.dumps(run_lab(LAB, {"causal": True})["result"]))
    assert res["logits"][0][1] is None and res["weights"][0][1] == 0.0
    assert res["self"]["logits"][0][1] is None
    packed = json.loads(run_lab_json(LAB, json.dumps({"causal": True})))
    assert packed["ok"] is True and packed["result"]["tokens"] == res["tokens"]
