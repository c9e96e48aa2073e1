"""Tests for attention_labs.attention: the NumPy math core against PyTorch, plus
the properties and errors that the docstrings promise."""

import math

import numpy as np
import pytest
from attention_labs import attention as attention_module
from attention_labs.attention import (
    attention_logits,
    causal_mask,
    entropy_bits,
    multi_head_attention,
    scaled_dot_product_attention,
    softmax,
)

torch = pytest.importorskip("torch")
F = torch.nn.functional

ATOL = 1e-6


def t(a):
    """float64 NumPy array -> torch tensor."""
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))


def torch_weights(Q, K, scale, mask=None):
    """Reference attention weights: softmax((q @ k^T) * scale + additive_mask)."""
    logits = (t(Q) @ t(K).transpose(-2, -1)) * scale
    if mask is not None:
        logits = logits.masked_fill(~torch.from_numpy(mask), float("-inf"))
    return torch.softmax(logits, dim=-1).numpy()


def random_qkv(rng, lead, seq_q, seq_k, d_head, d_v):
    Q = rng.standard_normal((*lead, seq_q, d_head))
    K = rng.standard_normal((*lead, seq_k, d_head))
    V = rng.standard_normal((*lead, seq_k, d_v))
    return Q, K, V


# ----------------------------------------------------------------------------
# scaled dot-product attention vs torch.nn.functional.scaled_dot_product_attention

SDPA_CASES = [  # (seed, leading dims)
    (0, ()),
    (1, ()),
    (2, (2, 3)),
    (3, (2, 3)),
]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("seed,lead", SDPA_CASES)
def test_sdpa_equals_torch_sdpa(seed, lead, causal):
    rng = np.random.default_rng(seed)
    seq = int(rng.integers(5, 10))
    d_head = int(rng.integers(4, 17))
    d_v = int(rng.integers(4, 17))
    Q, K, V = random_qkv(rng, lead, seq, seq, d_head, d_v)
    mask = causal_mask(seq) if causal else None

    out, weights = scaled_dot_product_attention(Q, K, V, mask=mask)

    ref_out = F.scaled_dot_product_attention(t(Q), t(K), t(V), is_causal=causal).numpy()
    ref_w = torch_weights(Q, K, 1 / math.sqrt(d_head), mask)
    assert out.shape == (*lead, seq, d_v) and out.dtype == np.float64
    assert weights.shape == (*lead, seq, seq) and weights.dtype == np.float64
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=ATOL)
    np.testing.assert_allclose(weights, ref_w, rtol=0, atol=ATOL)
    np.testing.assert_allclose(out, weights @ V, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [4, 5])
def test_sdpa_with_boolean_attn_mask_equals_torch_sdpa(seed):
    rng = np.random.default_rng(seed)
    Q, K, V = random_qkv(rng, (2, 3), 6, 8, 8, 5)
    mask = rng.random((2, 1, 6, 8)) < 0.7
    mask[..., 0] = True  # every query may attend somewhere (torch gives NaN otherwise)

    out, weights = scaled_dot_product_attention(Q, K, V, mask=mask)

    ref_out = F.scaled_dot_product_attention(
        t(Q), t(K), t(V), attn_mask=torch.from_numpy(mask)
    ).numpy()
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=ATOL)
    np.testing.assert_allclose(
        weights, torch_weights(Q, K, 1 / math.sqrt(8), mask), rtol=0, atol=ATOL
    )


@pytest.mark.parametrize("temperature", [0.25, 0.7, 1.0, 3.0])
def test_temperature_equals_torch_sdpa_with_scale_over_temperature(temperature):
    rng = np.random.default_rng(6)
    d_head = 12
    Q, K, V = random_qkv(rng, (2, 3), 7, 7, d_head, 9)
    torch_scale = 1 / (math.sqrt(d_head) * temperature)

    out, weights = scaled_dot_product_attention(Q, K, V, temperature=temperature)

    ref_out = F.scaled_dot_product_attention(t(Q), t(K), t(V), scale=torch_scale).numpy()
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=ATOL)
    np.testing.assert_allclose(weights, torch_weights(Q, K, torch_scale), rtol=0, atol=ATOL)


def test_scale_false_skips_sqrt_d_head():
    rng = np.random.default_rng(7)
    Q, K, V = random_qkv(rng, (), 5, 6, 9, 4)
    np.testing.assert_allclose(attention_logits(Q, K, scale=False), Q @ K.T, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        attention_logits(Q, K, scale=True, temperature=2.0), Q @ K.T / 3.0 / 2.0, atol=1e-12
    )
    _, weights = scaled_dot_product_attention(Q, K, V, scale=False)
    np.testing.assert_allclose(weights, torch_weights(Q, K, 1.0), rtol=0, atol=ATOL)


def test_sdpa_broadcasts_leading_dims_of_k_and_v():
    rng = np.random.default_rng(8)
    Q = rng.standard_normal((2, 3, 5, 4))
    K = rng.standard_normal((1, 3, 6, 4))
    V = rng.standard_normal((6, 7))
    out, weights = scaled_dot_product_attention(Q, K, V)
    assert out.shape == (2, 3, 5, 7) and weights.shape == (2, 3, 5, 6)
    ref_out = F.scaled_dot_product_attention(
        t(Q), t(K).expand(2, 3, 6, 4), t(V).expand(2, 3, 6, 7)
    ).numpy()
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=ATOL)


# ----------------------------------------------------------------------------
# multi-head attention vs torch.nn.MultiheadAttention


def torch_mha_and_numpy_params(rng, d_model, n_heads):
    mha = torch.nn.MultiheadAttention(
        d_model, n_heads, bias=True, batch_first=True, dtype=torch.float64
    )
    with torch.no_grad():  # torch initialises the biases to 0: make them random
        mha.in_proj_bias.copy_(t(rng.standard_normal(3 * d_model)))
        mha.out_proj.bias.copy_(t(rng.standard_normal(d_model)))
    W_in = mha.in_proj_weight.detach().numpy()  # (3*d_model, d_model), used as x @ W_in^T
    b_in = mha.in_proj_bias.detach().numpy()  # (3*d_model,)
    params = dict(
        W_Q=W_in[:d_model].T,
        W_K=W_in[d_model : 2 * d_model].T,
        W_V=W_in[2 * d_model :].T,
        W_O=mha.out_proj.weight.detach().numpy().T,
        b_Q=b_in[:d_model],
        b_K=b_in[d_model : 2 * d_model],
        b_V=b_in[2 * d_model :],
        b_O=mha.out_proj.bias.detach().numpy(),
    )
    return mha, params


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("lead", [(), (2,)], ids=["2d_x", "3d_x"])
@pytest.mark.parametrize("d_model,n_heads", [(12, 3), (16, 4), (8, 1)])
def test_multi_head_attention_equals_torch_multihead_attention(d_model, n_heads, lead, causal):
    rng = np.random.default_rng(d_model * 10 + n_heads)
    seq_len = 7
    mha, params = torch_mha_and_numpy_params(rng, d_model, n_heads)
    x = rng.standard_normal((*lead, seq_len, d_model))
    mask = causal_mask(seq_len) if causal else None

    out, weights = multi_head_attention(x, n_heads=n_heads, mask=mask, **params)

    with torch.no_grad():
        ref_out, ref_w = mha(
            t(x),
            t(x),
            t(x),
            attn_mask=None if mask is None else torch.from_numpy(~mask),  # torch: True = blocked
            need_weights=True,
            average_attn_weights=False,
        )
    assert out.shape == x.shape
    assert weights.shape == (*lead, n_heads, seq_len, seq_len)
    np.testing.assert_allclose(out, ref_out.numpy(), rtol=0, atol=ATOL)
    np.testing.assert_allclose(weights, ref_w.numpy(), rtol=0, atol=ATOL)


def test_multi_head_attention_per_batch_mask_4d():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 5, 8))
    W = [rng.standard_normal((8, 8)) for _ in range(4)]
    mask = np.stack([causal_mask(5), np.ones((5, 5), bool)])[:, None]  # (batch, 1, seq, seq)
    _, weights = multi_head_attention(x, *W, n_heads=2, mask=mask)
    assert np.all(weights[0][:, ~causal_mask(5)] == 0.0)
    assert np.all(weights[1] > 0)


def test_multi_head_attention_without_biases_is_plain_matmuls():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((4, 6))
    W_Q, W_K, W_V, W_O = (rng.standard_normal((6, 6)) for _ in range(4))
    out, weights = multi_head_attention(x, W_Q, W_K, W_V, W_O, n_heads=1)
    ref_out, ref_w = scaled_dot_product_attention(x @ W_Q, x @ W_K, x @ W_V)
    np.testing.assert_allclose(out, ref_out @ W_O, atol=1e-12)
    np.testing.assert_allclose(weights[0], ref_w, atol=1e-12)


# ----------------------------------------------------------------------------
# properties of the weights


def test_weight_rows_sum_to_one():
    rng = np.random.default_rng(11)
    Q, K, V = random_qkv(rng, (2, 3), 6, 9, 8, 8)
    _, weights = scaled_dot_product_attention(Q, K, V)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    assert np.all(weights > 0)
    _, causal = scaled_dot_product_attention(Q, K, V, mask=causal_mask(9)[3:])  # (6, 9) mask
    np.testing.assert_allclose(causal.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_causal_weights_above_diagonal_are_exactly_zero():
    rng = np.random.default_rng(12)
    Q, K, V = random_qkv(rng, (2, 3), 8, 8, 4, 4)
    Q *= 30.0  # large logits must not leak through the mask either
    _, weights = scaled_dot_product_attention(Q, K, V, mask=causal_mask(8))
    upper = np.triu(np.ones((8, 8), bool), k=1)
    assert np.all(weights[..., upper] == 0.0)
    assert np.all(weights[..., ~upper] > 0.0)


def test_causal_mask_is_lower_triangular_bool():
    m = causal_mask(4)
    assert m.dtype == np.bool_ and m.shape == (4, 4)
    assert m.tolist() == [
        [True, False, False, False],
        [True, True, False, False],
        [True, True, True, False],
        [True, True, True, True],
    ]
    assert causal_mask(np.int64(1)).tolist() == [[True]]


def test_fully_masked_row_gives_zero_weights_and_zero_output():
    rng = np.random.default_rng(13)
    Q, K, V = random_qkv(rng, (2, 3), 5, 5, 4, 6)
    mask = np.broadcast_to(causal_mask(5), (2, 3, 5, 5)).copy()
    mask[1, 2, 3, :] = False  # query 3 of batch 1, head 2 may attend to nothing
    out, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    assert not np.any(np.isnan(out)) and not np.any(np.isnan(weights))
    assert np.all(weights[1, 2, 3] == 0.0)
    assert np.all(out[1, 2, 3] == 0.0)
    np.testing.assert_allclose(np.delete(weights[1, 2], 3, axis=0).sum(-1), 1.0, atol=1e-12)


def test_fully_masked_row_output_matches_torch_sdpa_when_torch_gives_zeros():
    # Recent torch (2.5+) returns a zero output row from F.scaled_dot_product_attention
    # for a fully masked query (older versions, and nn.MultiheadAttention, give NaN).
    rng = np.random.default_rng(18)
    Q, K, V = random_qkv(rng, (), 4, 4, 4, 3)
    mask = causal_mask(4)
    mask[2] = False
    out, _ = scaled_dot_product_attention(Q, K, V, mask=mask)
    ref = F.scaled_dot_product_attention(t(Q), t(K), t(V), attn_mask=torch.from_numpy(mask))
    if torch.isnan(ref).any():
        pytest.skip(f"torch {torch.__version__} gives NaN for a fully masked query row")
    np.testing.assert_allclose(out, ref.numpy(), rtol=0, atol=ATOL)


def test_softmax_fully_masked_and_all_neg_inf_rows_are_zero():
    logits = np.array([[1.0, 2.0, 3.0], [-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 0.0]])
    where = np.array([[False, False, False], [True, True, True], [True, True, True]])
    p = softmax(logits, where=where)
    assert p[0].tolist() == [0.0, 0.0, 0.0]
    assert p[1].tolist() == [0.0, 0.0, 0.0]
    assert p[2].tolist() == [0.5, 0.0, 0.5]


def test_softmax_of_huge_logits_is_finite():
    logits = np.array([[1e4, 0.0, -1e4], [3e4, 3e4 - 1.0, 2e4]])
    p = softmax(logits)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(-1), 1.0, atol=1e-12)
    assert p[0].tolist() == [1.0, 0.0, 0.0]
    np.testing.assert_allclose(p[1, :2], [1 / (1 + math.exp(-1)), 1 / (1 + math.e)], atol=1e-12)


def test_softmax_matches_torch_and_respects_axis():
    rng = np.random.default_rng(14)
    z = rng.standard_normal((3, 4, 5)) * 5
    for axis in (0, 1, -1):
        np.testing.assert_allclose(softmax(z, axis=axis), torch.softmax(t(z), dim=axis), atol=1e-12)


def test_softmax_where_broadcasts():
    z = np.zeros((2, 3, 4))
    p = softmax(z, where=np.array([True, True, False, False]))
    assert np.all(p[..., :2] == 0.5) and np.all(p[..., 2:] == 0.0)


def test_entropy_bits_one_hot_uniform_and_zero_rows():
    w = np.array([[0.0, 1.0, 0.0, 0.0, 0.0, 0.0], np.full(6, 1 / 6), np.zeros(6)])
    h = entropy_bits(w)
    assert h.shape == (3,)
    assert h[0] == 0.0 and h[2] == 0.0
    assert h[1] == pytest.approx(math.log2(6)) and h[1] == pytest.approx(2.585, abs=1e-3)
    assert entropy_bits(np.array([0.5, 0.5])) == pytest.approx(1.0)
    assert entropy_bits(w.T, axis=0).tolist() == h.tolist()


def test_entropy_bits_of_attention_weights_bounded_by_log2_seq_k():
    rng = np.random.default_rng(15)
    Q, K, V = random_qkv(rng, (2, 3), 5, 8, 4, 4)
    _, weights = scaled_dot_product_attention(Q, K, V)
    h = entropy_bits(weights)
    assert h.shape == (2, 3, 5)
    assert np.all(h >= 0) and np.all(h <= 3.0 + 1e-12)


# ----------------------------------------------------------------------------
# documented ValueErrors


def good_qkv():
    rng = np.random.default_rng(16)
    return random_qkv(rng, (2, 3), 5, 5, 4, 4)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(Q=np.ones(4)), r"Q must have at least 2 dimension"),
        (dict(K=np.ones(4)), r"K must have at least 2 dimension"),
        (dict(V=np.ones(5)), r"V must have at least 2 dimension"),
        (
            dict(K=np.ones((2, 3, 5, 3))),
            r"K must have the same last dimension \(d_head\) as Q: Q has 4, K has 3",
        ),
        (
            dict(V=np.ones((2, 3, 6, 4))),
            r"V must have the same number of rows \(seq_k\) as K: K has 5, V has 6",
        ),
        (dict(K=np.ones((4, 3, 5, 4))), r"K has leading"),
        (dict(V=np.ones((2, 2, 5, 4))), r"V has leading"),
        (dict(Q=np.full((5, 4), np.nan)), r"Q must contain only finite"),
        (dict(K=np.full((5, 4), np.inf)), r"K must contain only finite"),
        (dict(V=np.full((5, 4), -np.inf)), r"V must contain only finite"),
        (dict(Q=np.ones((5, 4), dtype=complex)), r"Q must hold real numbers"),
        (dict(Q=[["a"] * 4] * 5), r"Q must be an array of real numbers"),
        (dict(Q=np.ones((5, 0)), K=np.ones((5, 0))), r"d_head\) >= 1"),
        (dict(temperature=0.0), r"temperature must be a finite number > 0, got 0.0"),
        (dict(temperature=-1.0), r"temperature must be a finite number > 0, got -1.0"),
        (dict(temperature=math.inf), r"temperature must be a finite number > 0"),
        (dict(temperature=math.nan), r"temperature must be a finite number > 0"),
        (dict(temperature="2"), r"temperature must be a finite number > 0"),
        (dict(temperature=True), r"temperature must be a finite number > 0"),
        (dict(scale=0.5), r"scale must be True or False"),
        (dict(mask=np.ones((5, 5))), r"mask must be a boolean array"),
        (dict(mask=np.ones((4, 5), bool)), r"mask of shape \(4, 5\) is not broadcastable"),
        (dict(mask=np.ones((3, 2, 3, 5, 5), bool)), r"mask of shape .* is not broadcastable"),
        (dict(Q=np.full((5, 4), 1e200), K=np.full((5, 4), 1e200)), r"overflowed"),
    ],
)
def test_sdpa_raises_value_error(kwargs, match):
    Q, K, V = good_qkv()
    args = dict(Q=Q, K=K, V=V)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        scaled_dot_product_attention(**args)


def test_attention_logits_raises_value_error():
    msg = r"K must have the same last dimension \(d_head\) as Q: Q has 64, K has 32"
    with pytest.raises(ValueError, match=msg):
        attention_logits(np.ones((3, 64)), np.ones((3, 32)))
    with pytest.raises(ValueError, match=r"temperature must be a finite number > 0, got -1.0"):
        attention_logits(np.ones((3, 4)), np.ones((3, 4)), temperature=-1.0)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(logits=np.array([[1.0, np.nan]])), r"logits must contain only finite numbers or"),
        (dict(logits=np.array([[np.inf, 1.0]])), r"logits must contain only finite numbers or"),
        (dict(logits=np.float64(1.0)), r"logits must have at least 1 dimension"),
        (dict(where=np.ones((2, 3))), r"where must be a boolean array"),
        (dict(where=np.ones((3, 2), bool)), r"where of shape \(3, 2\) is not broadcastable"),
        (dict(axis=2), r"axis must be in \[-2, 2\)"),
        (dict(axis=1.0), r"axis must be an int"),
    ],
)
def test_softmax_raises_value_error(kwargs, match):
    args = dict(logits=np.zeros((2, 3)))
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        softmax(**args)


@pytest.mark.parametrize("seq_len", [0, -3, 2.0, True, "4", None])
def test_causal_mask_raises_value_error(seq_len):
    with pytest.raises(ValueError, match=r"seq_len must be an int >= 1"):
        causal_mask(seq_len)


@pytest.mark.parametrize(
    "weights,axis,match",
    [
        (np.array([0.5, -0.5, 1.0]), -1, r"weights must be non-negative"),
        (np.array([0.5, np.nan]), -1, r"weights must contain only finite"),
        (np.float64(1.0), -1, r"weights must have at least 1 dimension"),
        (np.ones((2, 3)), 2, r"axis must be in"),
    ],
)
def test_entropy_bits_raises_value_error(weights, axis, match):
    with pytest.raises(ValueError, match=match):
        entropy_bits(weights, axis=axis)


def good_mha_args(d_model=12, batch=(2,)):
    rng = np.random.default_rng(17)
    args = dict(x=rng.standard_normal((*batch, 5, d_model)), n_heads=3)
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        args[name] = rng.standard_normal((d_model, d_model))
    return args


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(x=np.ones(12)), r"x must have shape \(seq_len, d_model\) or \(batch, seq_len, d_mod"),
        (dict(x=np.ones((1, 2, 5, 12))), r"x must have shape"),
        (dict(x=np.full((5, 12), np.nan)), r"x must contain only finite"),
        (dict(n_heads=0), r"n_heads must be an int >= 1, got 0"),
        (dict(n_heads=2.0), r"n_heads must be an int >= 1"),
        (dict(n_heads=True), r"n_heads must be an int >= 1"),
        (dict(n_heads=5), r"n_heads must divide d_model: d_model=12, n_heads=5"),
        (dict(W_Q=np.ones((12, 6))), r"W_Q must have shape \(d_model, d_model\) = \(12, 12\), got"),
        (dict(W_K=np.ones((6, 12))), r"W_K must have shape \(d_model, d_model\)"),
        (dict(W_V=np.ones(12)), r"W_V must have shape \(d_model, d_model\)"),
        (dict(W_O=np.ones((12, 13))), r"W_O must have shape \(d_model, d_model\)"),
        (dict(W_O=np.full((12, 12), np.inf)), r"W_O must contain only finite"),
        (dict(b_Q=np.ones(11)), r"b_Q must have shape \(d_model,\) = \(12,\), got \(11,\)"),
        (dict(b_K=np.ones((1, 12))), r"b_K must have shape \(d_model,\)"),
        (dict(b_V=np.full(12, np.nan)), r"b_V must contain only finite"),
        (dict(b_O=np.ones(13)), r"b_O must have shape \(d_model,\)"),
        (dict(mask=np.ones((5, 5), dtype=int)), r"mask must be a boolean array"),
        (dict(mask=np.ones((4, 5), bool)), r"mask of shape \(4, 5\) is not broadcastable"),
        (dict(mask=np.ones((2, 5, 5), bool)), r"mask for batched x must be"),
    ],
)
def test_multi_head_attention_raises_value_error(kwargs, match):
    args = good_mha_args()
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        multi_head_attention(**args)


# ----------------------------------------------------------------------------
# matmul: in the browser (no BLAS) large products go through einsum


@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ((128, 64), (64, 256)),  # einsum: above the threshold
        ((2, 3, 40, 32), (2, 3, 32, 40)),  # batched
        ((40, 32), (2, 32, 40)),  # leading dimensions broadcast
        ((3, 40, 32), (32, 40)),
        ((8, 16), (16, 8)),  # small: plain @
    ],
)
def test_matmul_without_blas_equals_the_at_operator(monkeypatch, a_shape, b_shape):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    expected = a @ b
    monkeypatch.setattr(attention_module, "_NO_BLAS", True)
    got = attention_module.matmul(a, b)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    # a transposed view and integers (which keep @) too
    np.testing.assert_allclose(
        attention_module.matmul(b.swapaxes(-1, -2), a.swapaxes(-1, -2)),
        expected.swapaxes(-1, -2),
        rtol=0,
        atol=1e-12,
    )
    ints = np.arange(12).reshape(3, 4)
    assert attention_module.matmul(ints, ints.T).tolist() == (ints @ ints.T).tolist()


def test_attention_without_blas_equals_attention_with_it(monkeypatch):
    rng = np.random.default_rng(1)
    Q, K, V = rng.standard_normal((3, 2, 64, 48))
    mask = causal_mask(64)
    out, weights = scaled_dot_product_attention(Q, K, V, mask=mask)
    monkeypatch.setattr(attention_module, "_NO_BLAS", True)
    out2, weights2 = scaled_dot_product_attention(Q, K, V, mask=mask)
    np.testing.assert_allclose(out2, out, rtol=0, atol=1e-12)
    np.testing.assert_allclose(weights2, weights, rtol=0, atol=1e-12)
    assert np.all(weights2[..., np.triu_indices(64, 1)[0], np.triu_indices(64, 1)[1]] == 0)
