"""The position math (attention_labs.sinusoidal_positions, rope_frequencies, apply_rope) and
lesson 10's three labs (permutation, sinusoidal, rope): against direct loops, a
complex-number RoPE, Hugging Face Llama's apply_rotary_pos_emb (when transformers is
importable), the equivariance of attention without positions, and their parameter errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from attention_labs import (
    LabParameterError,
    apply_rope,
    attention_logits,
    rope_frequencies,
    sinusoidal_positions,
    softmax,
)
from attention_labs.labs import get_lab, run_lab, validate_params
from attention_labs.labs.permutation import embed, head


# ---------------------------------------------------------------- sinusoidal encodings
def test_sinusoids_match_the_papers_formula_element_by_element():
    n, d, base = 20, 12, 10000.0
    got = sinusoidal_positions(np.arange(n), d, base)
    expected = np.empty((n, d))
    for pos in range(n):
        for j in range(d):
            i = j // 2  # pair index: PE(pos, 2i) = sin(pos / base^(2i/d)), PE(pos, 2i+1) = cos
            angle = pos / base ** (2 * i / d)
            expected[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


def test_sinusoid_dot_products_depend_on_the_offset_only():
    pe = sinusoidal_positions(np.arange(300), 64)
    for m, n, s in [(10, 3, 100), (50, 49, 200), (0, 7, 290)]:
        assert abs(pe[m] @ pe[n] - pe[m + s] @ pe[n + s]) < 1e-10
    assert np.allclose(np.sum(pe**2, axis=1), 32)  # each pair sin^2 + cos^2 = 1


def test_frequencies_are_geometric_from_one():
    w = rope_frequencies(8, 100.0)
    np.testing.assert_allclose(
        w, [1, 100 ** (-2 / 8), 100 ** (-4 / 8), 100 ** (-6 / 8)], rtol=1e-15
    )


# --------------------------------------------------------------------------- RoPE
def rope_complex(x, positions, base=10000.0):
    """RoPE written differently: pairs as complex numbers, times e^{i m theta} (Su et al.
    2021, section 3.2, eq. 12)."""
    x = np.asarray(x, dtype=float)
    d = x.shape[-1]
    z = x[..., 0::2] + 1j * x[..., 1::2]
    theta = base ** (-np.arange(d // 2) * 2.0 / d)
    z = z * np.exp(1j * np.asarray(positions, dtype=float)[..., None] * theta)
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = z.real, z.imag
    return out


def test_rope_equals_the_complex_number_form():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 10, 16))
    pos = np.arange(10) * 37.0
    np.testing.assert_allclose(apply_rope(x, pos), rope_complex(x, pos), rtol=0, atol=1e-12)
    np.testing.assert_allclose(apply_rope(x, pos, 500.0), rope_complex(x, pos, 500.0), atol=1e-12)


def test_rope_relative_property_to_1e12():
    rng = np.random.default_rng(1)
    for d in (2, 8, 64, 128):
        q, k = rng.normal(size=d), rng.normal(size=d)
        for m, n, s in [(5, 2, 100), (0, 40, 7), (3, 3, 1000), (17, 90, 250)]:
            a = apply_rope(q, m) @ apply_rope(k, n)
            b = apply_rope(q, m + s) @ apply_rope(k, n + s)
            assert abs(a - b) < 1e-12, (d, m, n, s, a - b)
            assert abs(a - q @ apply_rope(k, n - m)) < 1e-12


def test_rope_keeps_lengths_and_position_zero_is_the_identity():
    x = np.random.default_rng(2).normal(size=(7, 32))
    np.testing.assert_array_equal(apply_rope(x, 0), x)
    np.testing.assert_allclose(
        np.linalg.norm(apply_rope(x, np.arange(7) * 91), axis=-1),
        np.linalg.norm(x, axis=-1),
        rtol=1e-13,
    )


def test_rope_matches_hugging_face_llama():
    torch = pytest.importorskip("torch")
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    from transformers import LlamaConfig

    d_head, n_heads, seq_len = 16, 2, 9
    config = LlamaConfig(
        hidden_size=d_head * n_heads,
        num_attention_heads=n_heads,
        num_key_value_heads=n_heads,
        rope_theta=10000.0,
        max_position_embeddings=64,
    )
    rotary = llama.LlamaRotaryEmbedding(config=config)
    rng = np.random.default_rng(3)
    q = rng.normal(size=(1, n_heads, seq_len, d_head))
    k = rng.normal(size=(1, n_heads, seq_len, d_head))
    position_ids = torch.arange(seq_len)[None, :]
    # Llama pairs dimension j with j + d_head/2 (rotate_half); ours pairs 2i with 2i + 1.
    # The same rotation in another order of dimensions: ours = HF(x[..., perm])[..., inverse].
    perm = np.concatenate([np.arange(0, d_head, 2), np.arange(1, d_head, 2)])
    inverse = np.argsort(perm)
    qt = torch.tensor(q[..., perm], dtype=torch.float64)
    kt = torch.tensor(k[..., perm], dtype=torch.float64)
    cos, sin = rotary(qt, position_ids)
    q_hf, k_hf = llama.apply_rotary_pos_emb(qt, kt, cos.to(torch.float64), sin.to(torch.float64))
    pos = np.arange(seq_len)
    # HF computes its frequencies in float32: agreement to float32 accuracy.
    np.testing.assert_allclose(q_hf.numpy()[..., inverse], apply_rope(q, pos), rtol=0, atol=1e-5)
    np.testing.assert_allclose(k_hf.numpy()[..., inverse], apply_rope(k, pos), rtol=0, atol=1e-5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: apply_rope(np.ones(3), 0), "even length"),
        (lambda: apply_rope(np.ones((2, 4)), [1, 2, 3]), "do not broadcast"),
        (lambda: apply_rope(np.ones(4), 0, base=1.0), "base must be"),
        (lambda: apply_rope(np.ones(4), np.nan), "positions must contain only finite"),
        (lambda: sinusoidal_positions(np.arange(3), 5), "d_model must be an even int"),
        (lambda: sinusoidal_positions(np.ones((2, 2)), 4), "positions must be 1-D"),
        (lambda: rope_frequencies(True), "d_head must be an even int"),
    ],
)
def test_math_errors_name_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# ------------------------------------------------------------------ permutation lab
def test_without_positions_the_pattern_and_outputs_permute_exactly():
    rng = np.random.default_rng(4)
    tokens = ["a", "b", "c", "a", "d", "e", "f"]
    for _ in range(5):
        order = rng.permutation(len(tokens))
        res = run_lab("permutation", {"tokens": tokens, "order": [str(i) for i in order]})["result"]
        A, As = np.array(res["weights"]), np.array(res["shuffled_weights"])
        out, out_s = np.array(res["output"]), np.array(res["shuffled_output"])
        # A' = P A P^T and O' = P O: the shuffled results are the old ones, reordered.
        np.testing.assert_allclose(As, A[order][:, order], rtol=0, atol=1e-15)
        np.testing.assert_allclose(out_s, out[order], rtol=0, atol=1e-13)
        assert res["pattern_diff"] < 1e-15 and res["output_diff"] < 1e-13
        np.testing.assert_allclose(A.sum(axis=-1), 1.0, atol=1e-12)


def test_with_positions_the_pattern_changes_for_real():
    res = run_lab("permutation", {"order": ["0", "4", "2", "3", "1"], "positions": True})["result"]
    assert res["pattern_diff"] > 0.1 and res["output_diff"] > 0.1


def test_the_lab_head_is_an_ordinary_scaled_attention_head():
    from attention_labs.labs.permutation import _head

    tokens = ["x", "y", "z"]
    X = embed(tokens, True, 3)
    W_Q, W_K, W_V = _head(3, 8)
    A = softmax(attention_logits(X @ W_Q, X @ W_K))
    got_A, got_O = head(X, 3, 8)
    np.testing.assert_allclose(got_A, A, atol=1e-15)
    np.testing.assert_allclose(got_O, A @ X @ W_V, atol=1e-13)


def test_the_shuffle_seed_and_identity():
    res = run_lab("permutation", {"shuffle": 0})["result"]
    assert res["order"] == [0, 1, 2, 3, 4] and res["pattern_diff"] == 0.0
    a = run_lab("permutation", {"shuffle": 7})["result"]["order"]
    assert a == np.random.default_rng(7).permutation(5).tolist()


def test_equivariance_against_torch_sdpa():
    torch = pytest.importorskip("torch")
    from attention_labs.labs.permutation import _head

    tokens = ["the", "dog", "bit", "the", "man"]
    X = embed(tokens, False, 0)
    W_Q, W_K, W_V = _head(0, 16)
    t = lambda a: torch.tensor(a, dtype=torch.float64)  # noqa: E731
    ref = torch.nn.functional.scaled_dot_product_attention(t(X @ W_Q), t(X @ W_K), t(X @ W_V))
    res = run_lab("permutation", {"order": ["0", "4", "2", "3", "1"]})["result"]
    np.testing.assert_allclose(res["output"], ref.numpy(), atol=1e-12)


# ------------------------------------------------------------------ sinusoidal lab
def test_sinusoidal_lab_returns_the_encodings_and_offset_dots():
    res = run_lab("sinusoidal", {"d_model": 16, "n_positions": 10, "position": 3})["result"]
    pe = sinusoidal_positions(np.arange(10), 16)
    np.testing.assert_allclose(res["encodings"], pe, atol=0)
    assert res["offsets"] == list(range(-3, 7))
    np.testing.assert_allclose(res["dots"], pe @ pe[3], atol=1e-12)
    np.testing.assert_allclose(res["wavelengths"], 2 * np.pi / rope_frequencies(16), rtol=1e-15)


# ------------------------------------------------------------------------ rope lab
def test_rope_lab_curves_coincide_and_match_a_direct_computation():
    res = run_lab(
        "rope", {"d_head": 16, "key_a": 5, "key_b": 900, "max_offset": 20, "same_vector": False}
    )["result"]
    assert res["curve_diff"] < 1e-12
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=16), rng.normal(size=16)
    for o in (0, 3, 20):
        expected = rope_complex(q, 5 + o) @ rope_complex(k, 5) / 4
        assert abs(res["score_a"][o] - expected) < 1e-12
    assert abs(res["unrotated"] - q @ k / 4) < 1e-12


# ------------------------------------------------------------------ parameter errors
@pytest.mark.parametrize(
    ("lab", "params", "param", "message"),
    [
        ("permutation", {"order": ["0", "1"]}, "order", "order must list each of 0 to 4 once"),
        ("permutation", {"order": ["0", "1", "2", "3", "3"]}, "order", "a permutation"),
        ("permutation", {"order": ["a", "1", "2", "3", "4"]}, "order", "order must list"),
        ("permutation", {"d_head": 65}, "d_head", "from 2 to 64"),
        ("permutation", {"shuffle": -1}, "shuffle", "from 0 to 9999"),
        ("permutation", {"tokens": [f"t{i}" for i in range(33)]}, "tokens", "1 to 32 tokens"),
        ("sinusoidal", {"d_model": 7}, "d_model", "even"),
        ("sinusoidal", {"d_model": 258}, "d_model", "from 2 to 256"),
        ("sinusoidal", {"n_positions": 10, "position": 10}, "position", "0 to n_positions - 1 = 9"),
        ("sinusoidal", {"base": 1.0}, "base", "from 2 to 1e\\+06"),
        ("rope", {"d_head": 9}, "d_head", "even"),
        ("rope", {"max_offset": 0}, "max_offset", "from 1 to 512"),
        ("rope", {"key_b": 5000}, "key_b", "from 0 to 4096"),
    ],
)
def test_parameter_errors_name_the_parameter_and_the_range(lab, params, param, message):
    with pytest.raises(LabParameterError, match=message) as err:
        run_lab(lab, params)
    assert err.value.param == param


@pytest.mark.parametrize("name", ["permutation", "sinusoidal", "rope"])
def test_largest_settings_are_allowed(name):
    module = get_lab(name)
    module.compute(validate_params(name, module.LARGEST))
