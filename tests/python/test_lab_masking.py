"""The masking lab (labs_py/attention_labs/labs/masking.py) and the masks it uses,
attention.padding_mask and attention.sliding_window_mask, against PyTorch."""

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from attention_labs import (
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
    sliding_window_mask,
    softmax,
)
from attention_labs.labs import masking as lab
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.params import LabParameterError

LAB = "masking"
KINDS = ("none", "causal", "padding", "sliding_window")


def result(**params):
    return run_lab(LAB, params)["result"]


# ----------------------------------------------------------------------------
# padding_mask and sliding_window_mask


def test_padding_mask_marks_the_real_tokens():
    mask = padding_mask([3, 1, 4, 0], 4)
    assert mask.dtype == np.bool_ and mask.shape == (4, 4)
    assert mask.tolist() == [
        [True, True, True, False],
        [True, False, False, False],
        [True, True, True, True],
        [False, False, False, False],
    ]


def test_sliding_window_mask_sees_itself_and_window_minus_one_before():
    mask = sliding_window_mask(5, 2)
    assert mask.tolist() == [
        [True, False, False, False, False],
        [True, True, False, False, False],
        [False, True, True, False, False],
        [False, False, True, True, False],
        [False, False, False, True, True],
    ]
    assert np.array_equal(sliding_window_mask(5, 1), np.eye(5, dtype=bool))
    for window in (5, 6, 64):
        assert np.array_equal(sliding_window_mask(5, window), causal_mask(5))


def torch_sliding_window(seq_len, window):
    """An independent construction: lower triangle minus everything `window` or more back."""
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    return torch.tril(ones) & ~torch.tril(ones, diagonal=-window)


@pytest.mark.parametrize("seq_len,window", [(1, 1), (6, 1), (6, 3), (9, 4), (7, 7), (5, 12)])
def test_sliding_window_attention_equals_torch(seq_len, window):
    rng = np.random.default_rng(seq_len * 10 + window)
    q, k, v = (rng.standard_normal((2, seq_len, 4)) for _ in range(3))
    mask = sliding_window_mask(seq_len, window)
    assert np.array_equal(mask, torch_sliding_window(seq_len, window).numpy())
    out, weights = scaled_dot_product_attention(q, k, v, mask=mask)
    expected = F.scaled_dot_product_attention(
        *(torch.tensor(a) for a in (q, k, v)), attn_mask=torch.tensor(mask)
    )
    np.testing.assert_allclose(out, expected.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_causal_mask_equals_torch_is_causal():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((3, 6, 4)) for _ in range(3))
    out, _ = scaled_dot_product_attention(q, k, v, mask=causal_mask(6))
    expected = F.scaled_dot_product_attention(*(torch.tensor(a) for a in (q, k, v)), is_causal=True)
    np.testing.assert_allclose(out, expected.numpy(), rtol=0, atol=1e-12)


def test_padding_mask_equals_torch_sdpa_and_multihead_key_padding_mask():
    lengths, seq_len, d_model, n_heads = [5, 2, 3], 5, 8, 2
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, seq_len, d_model))
    keys = padding_mask(lengths, seq_len)  # (batch, seq_len)
    # scaled dot-product attention, batch of (seq_q, seq_k) grids: mask[:, None, :]
    out, weights = scaled_dot_product_attention(x, x, x, mask=keys[:, None, :])
    t = torch.tensor(x)
    expected = F.scaled_dot_product_attention(t, t, t, attn_mask=torch.tensor(keys[:, None, :]))
    np.testing.assert_allclose(out, expected.numpy(), rtol=0, atol=1e-12)
    assert np.all(weights[~np.broadcast_to(keys[:, None, :], weights.shape)] == 0.0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)  # pad queries too
    # torch.nn.MultiheadAttention: key_padding_mask is the negation (True = ignore)
    mha = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True, dtype=torch.float64)
    mha.eval()
    with torch.no_grad():
        _, w = mha(t, t, t, key_padding_mask=torch.tensor(~keys), average_attn_weights=False)
    assert np.all(w.numpy()[~np.broadcast_to(keys[:, None, None, :], w.shape)] == 0.0)


def test_a_fully_masked_row_gives_zeros_here_nan_in_a_plain_softmax_and_uniform_with_minus_1e9():
    scores = np.array([[1.0, 2.0, 3.0]])
    none = np.zeros((1, 3), dtype=bool)
    assert softmax(scores, where=none).tolist() == [[0.0, 0.0, 0.0]]  # this project
    assert torch.softmax(torch.full((3,), -torch.inf), dim=-1).isnan().all()  # -inf: NaN
    filled = softmax(np.where(none, scores, -1e9))  # a large negative number: uniform
    np.testing.assert_allclose(filled, 1 / 3, rtol=0, atol=1e-12)
    # torch's scaled_dot_product_attention agrees with this project: a zero output row
    q = torch.ones(1, 3, 2, dtype=torch.float64)
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=torch.tensor(np.vstack([none] * 3)))
    assert out.abs().sum() == 0


@pytest.mark.parametrize(
    "call,words",
    [
        (lambda: padding_mask([2, 5], 4), "each length must be from 0 to seq_len = 4, got 5"),
        (lambda: padding_mask([-1], 4), "got -1"),
        (lambda: padding_mask([[1, 2]], 4), "1-D sequence of ints"),
        (lambda: padding_mask([1.5], 4), "must hold ints"),
        (lambda: padding_mask([1], 0), "seq_len must be an int >= 1"),
        (lambda: padding_mask([1], True), "seq_len must be an int >= 1"),
        (lambda: sliding_window_mask(4, 0), "window must be an int >= 1"),
        (lambda: sliding_window_mask(4, 2.0), "window must be an int >= 1"),
        (lambda: sliding_window_mask(0, 2), "seq_len must be an int >= 1"),
    ],
)
def test_bad_mask_arguments_say_what_is_allowed(call, words):
    with pytest.raises(ValueError) as info:
        call()
    assert words in str(info.value)


def test_padding_mask_of_an_empty_batch():
    assert padding_mask([], 3).shape == (0, 3)


# ----------------------------------------------------------------------------
# the lab


@pytest.mark.parametrize("kind", KINDS)
def test_the_labs_mask_is_the_library_mask(kind):
    n, pad, window = 9, 3, 4
    res = result(seq_len=n, mask=kind, pad=pad, window=window)
    expected = {
        "none": np.ones((n, n), dtype=bool),
        "causal": causal_mask(n),
        "padding": np.broadcast_to(padding_mask([n - pad], n), (n, n)),
        "sliding_window": sliding_window_mask(n, window),
    }[kind]
    visible = np.array([[v is not None for v in row] for row in res["logits"]])
    assert np.array_equal(visible, expected)
    weights = np.array(res["weights"])
    assert np.all(weights[~expected] == 0.0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    assert res["counts"] == {
        "total": n * n,
        "kept": int(expected.sum()),
        "masked": int((~expected).sum()),
        "blocked_percent": pytest.approx(100 * (~expected).sum() / n**2),
    }


@pytest.mark.parametrize("kind", KINDS)
def test_masked_before_softmax_equals_torch_sdpa_weights(kind):
    res = result(seq_len=7, mask=kind, pad=2, window=3, spread=3.0, seed=5)
    scores = np.array([[np.nan if v is None else v for v in row] for row in res["logits"]])
    mask = ~np.isnan(scores)
    # torch: the weights are the attention output for V = identity; scale 1 keeps scores as given
    q = torch.tensor(np.where(mask, scores, 0.0))
    eye = torch.eye(7, dtype=torch.float64)
    expected = F.scaled_dot_product_attention(q, eye, eye, attn_mask=torch.tensor(mask), scale=1.0)
    np.testing.assert_allclose(res["weights"], expected.numpy(), rtol=0, atol=1e-12)


def test_zeroing_after_softmax_leaves_rows_that_do_not_sum_to_one():
    before, after = result(apply="before"), result(apply="after")
    assert before["logits"] == after["logits"]
    mask = np.array([[v is not None for v in row] for row in after["logits"]])
    full = softmax(np.array(run_lab(LAB, {"mask": "none"})["result"]["logits"], dtype=float))
    np.testing.assert_allclose(after["weights"], full * mask, rtol=0, atol=1e-15)
    sums = np.array(after["row_sums"])
    assert np.all(sums[:-1] < 1) and sums[-1] == pytest.approx(1)  # only the last row sees all
    np.testing.assert_allclose(before["row_sums"], 1.0, rtol=0, atol=1e-12)
    assert after["entropy_bits"] is None and after["max_entropy_bits"] is None


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("pad,window", [(0, 1), (5, 3), (20, 64)])
def test_cost_curve_closed_forms_equal_counting_the_mask(kind, pad, window):
    res = result(mask=kind, pad=pad, window=window, seq_len=max(pad + 1, 2))
    cost = res["cost"]
    for length, kept, full in zip(cost["lengths"], cost["kept"], cost["full"], strict=True):
        mask = lab.build_mask(kind, length, pad, window)
        assert (kept, full) == (int(mask.sum()), length * length), (kind, length)
    assert cost["lengths"][-1] == 64
    assert cost["lengths"][0] == (max(2, pad + 1) if kind == "padding" else 2)


def test_padding_tokens_are_named_pad_and_keep_their_query_rows():
    res = result(mask="padding", pad=3, seq_len=6)
    assert res["tokens"] == ["t1", "t2", "t3", "PAD", "PAD", "PAD"]
    weights = np.array(res["weights"])
    np.testing.assert_allclose(weights[3:].sum(axis=-1), 1.0)  # pad queries read real keys
    assert np.all(weights[:, 3:] == 0.0)


def test_no_nan_reaches_the_page_at_any_extreme():
    for kind in KINDS:
        for params in (
            {"seq_len": 64, "pad": 63, "window": 1, "spread": 8.0},
            {"seq_len": 2, "pad": 1, "window": 64, "spread": 0.0},
        ):
            for apply in ("before", "after"):
                text = run_lab_json(LAB, json.dumps({**params, "mask": kind, "apply": apply}))
                out = json.loads(text)  # run_lab_json refuses NaN (allow_nan=False)
                assert out["ok"] is True
                weights = np.array(run_lab(LAB, {**params, "mask": kind})["result"]["weights"])
                assert np.all(np.isfinite(weights))


def test_spread_zero_gives_uniform_rows_over_the_visible_keys():
    weights = np.array(result(spread=0.0)["weights"])
    np.testing.assert_allclose(weights[3, :4], 0.25)


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"seq_len": 1}, "seq_len", "whole number from 2 to 64"),
        ({"seq_len": 65}, "seq_len", "whole number from 2 to 64"),
        ({"spread": -1}, "spread", "number from 0 to 8"),
        ({"spread": 9}, "spread", "number from 0 to 8"),
        ({"mask": "diagonal"}, "mask", "one of 'none', 'causal', 'padding', 'sliding_window'"),
        ({"pad": 64}, "pad", "whole number from 0 to 63"),
        ({"mask": "padding", "seq_len": 4, "pad": 4}, "pad", "from 0 to seq_len - 1 = 3, got 4"),
        ({"window": 0}, "window", "whole number from 1 to 64"),
        ({"apply": "never"}, "apply", "one of 'before', 'after'"),
        ({"seed": 2**31}, "seed", "whole number from 0 to"),
    ],
)
def test_bad_parameters_name_the_parameter_and_the_allowed_range(params, param, words):
    with pytest.raises(LabParameterError) as info:
        run_lab(LAB, params)
    assert info.value.param == param and words in str(info.value)
    out = json.loads(run_lab_json(LAB, json.dumps(params)))
    assert out["ok"] is False and out["param"] == param and words in out["error"]


def test_a_pad_count_too_large_is_fine_when_the_mask_is_not_padding():
    assert result(mask="causal", seq_len=4, pad=10)["counts"]["kept"] == 10


# ----------------------------------------------------------------------------
# the lab: causal + padding together, padding at either side, and the three fills


@pytest.mark.parametrize("side", ["end", "start"])
@pytest.mark.parametrize("pad", [0, 1, 3, 7])
def test_causal_padding_is_the_causal_mask_and_the_padding_mask(side, pad):
    n = 8
    res = result(seq_len=n, mask="causal_padding", pad=pad, pad_side=side)
    real = np.arange(n) < n - pad if side == "end" else np.arange(n) >= pad
    expected = causal_mask(n) & real[None, :]
    assert np.array_equal(lab.build_mask("causal_padding", n, pad, 3, side), expected)
    visible = np.array([[v is not None for v in row] for row in res["logits"]])
    assert np.array_equal(visible, expected)
    assert res["tokens"] == [f"t{i + 1}" if r else "PAD" for i, r in enumerate(real)]
    assert res["empty_rows"] == [i for i in range(n) if not expected[i].any()]
    # left padding leaves the first `pad` queries with nothing to see; right padding never
    assert res["empty_rows"] == (list(range(pad)) if side == "start" else [])


@pytest.mark.parametrize("side", ["end", "start"])
@pytest.mark.parametrize("kind", ["padding", "causal_padding"])
def test_padded_masks_before_softmax_equal_torch_sdpa_with_the_combined_boolean_mask(side, kind):
    """torch's scaled_dot_product_attention with the same boolean mask (True = may attend),
    the weights read off as the output for V = identity: equal, fully masked rows included
    (PyTorch 2.13 on the CPU gives them zeros, as this project's softmax does)."""
    n = 7
    res = result(seq_len=n, mask=kind, pad=3, pad_side=side, spread=3.0, seed=4)
    mask = lab.build_mask(kind, n, 3, 3, side)
    scores = np.where(mask, np.array(res["logits"], dtype=float), 0.0)
    eye = torch.eye(n, dtype=torch.float64)
    expected = F.scaled_dot_product_attention(
        torch.tensor(scores), eye, eye, attn_mask=torch.tensor(mask), scale=1.0
    )
    np.testing.assert_allclose(res["weights"], expected.numpy(), rtol=0, atol=1e-12)


def empty_row_case(fill):
    return result(mask="causal_padding", pad_side="start", pad=3, fill=fill, spread=2.0, seed=1)


def test_a_fully_masked_row_under_each_fill_equals_torch():
    """The three conventions of lesson 4 on the rows that see nothing, against torch: -inf
    and torch.softmax give NaN; -1e9 and torch.softmax a uniform row over every key; this
    site's skip gives zeros, as F.scaled_dot_product_attention with a boolean mask."""
    n, empty = 8, [0, 1, 2]
    mask = torch.tensor(lab.build_mask("causal_padding", n, 3, 3, "start"))
    skip, neg_inf, big = (empty_row_case(f) for f in ("skip", "neg_inf", "neg_1e9"))
    scores = torch.tensor(np.array(big["fill_compare"]["scores"]))  # row 0's raw scores
    for res in (skip, neg_inf, big):
        assert res["empty_rows"] == empty
    # -inf, plain softmax: torch says NaN; the lab reports the rows and sends zeros
    raw = torch.tensor(np.random.default_rng(1).standard_normal((n, n)) * 2.0)
    torch_inf = torch.softmax(raw.masked_fill(~mask, -torch.inf), dim=-1)
    assert torch_inf[empty].isnan().all() and not torch_inf[3:].isnan().any()
    assert neg_inf["nan_rows"] == empty and neg_inf["row_sums"][:3] == [None] * 3
    assert np.all(np.array(neg_inf["weights"])[empty] == 0.0)
    assert neg_inf["fill_compare"]["neg_inf_is_nan"] is True
    assert neg_inf["row_notes"][:3] == ["→ NaN (0/0)"] * 3 and neg_inf["row_notes"][3] is None
    # -1e9, plain softmax: uniform over all n keys, the hidden ones included
    torch_big = torch.softmax(raw.masked_fill(~mask, -1e9), dim=-1)
    np.testing.assert_allclose(np.array(big["weights"]), torch_big.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array(big["weights"])[empty], 1 / n, rtol=0, atol=1e-15)
    assert big["nan_rows"] == [] and big["max_entropy_bits"][0] == 3.0  # log2(8): all keys
    np.testing.assert_allclose(big["entropy_bits"][:3], 3.0, rtol=0, atol=1e-12)
    assert big["logits"][0] == [-1e9] * n  # drawn with their weights, not blank
    # this site: zeros, as torch's scaled_dot_product_attention
    eye = torch.eye(n, dtype=torch.float64)
    sdpa = F.scaled_dot_product_attention(raw, eye, eye, attn_mask=mask, scale=1.0)
    np.testing.assert_allclose(np.array(skip["weights"]), sdpa.numpy(), rtol=0, atol=1e-12)
    assert skip["row_sums"][:3] == [0.0] * 3 and skip["max_entropy_bits"][:3] == [None] * 3
    # side by side, the first empty row under each convention
    cmp = skip["fill_compare"]
    assert cmp["row"] == 0 and cmp["skip"] == [0.0] * n and cmp["neg_inf"] is None
    np.testing.assert_allclose(cmp["neg_1e9"], 1 / n, rtol=0, atol=1e-15)
    np.testing.assert_allclose(cmp["scores"], raw[0].numpy(), rtol=0, atol=0)
    assert scores.shape == (n,)


@pytest.mark.parametrize("fill", ["skip", "neg_inf", "neg_1e9"])
def test_minus_inf_and_minus_1e9_agree_on_every_row_that_sees_a_key(fill):
    for kind in ("causal", "causal_padding", "sliding_window"):
        res = result(mask=kind, pad_side="start", pad=3, fill=fill, spread=8.0, seq_len=12)
        assert res["fill_agreement"] == 0.0  # exp(-1e9 - max) underflows to exactly 0
        seen = [i for i in range(12) if i not in res["empty_rows"]]
        np.testing.assert_allclose(np.array(res["row_sums"], dtype=float)[seen], 1.0, atol=1e-12)


def test_with_no_empty_row_the_comparison_says_so():
    cmp = result()["fill_compare"]
    assert cmp["row"] is None and cmp["skip"] is None and cmp["neg_1e9"] is None


def test_fill_does_not_change_the_mistake_of_zeroing_after_softmax():
    a = result(mask="causal_padding", pad_side="start", apply="after", fill="skip")
    b = result(mask="causal_padding", pad_side="start", apply="after", fill="neg_1e9")
    assert a["weights"] == b["weights"] and a["entropy_bits"] is None
    assert a["row_notes"][:2] == ["→ nothing: all 0"] * 2


@pytest.mark.parametrize("side", ["end", "start"])
@pytest.mark.parametrize("pad", [0, 5, 20])
def test_causal_padding_cost_closed_forms_equal_counting_the_mask(side, pad):
    res = result(mask="causal_padding", pad=pad, pad_side=side, seq_len=max(pad + 1, 2))
    cost = res["cost"]
    assert cost["lengths"][0] == max(2, pad + 1)
    for length, kept in zip(cost["lengths"], cost["kept"], strict=True):
        mask = lab.build_mask("causal_padding", length, pad, 3, side)
        assert kept == int(mask.sum()), (side, length)


def test_no_nan_reaches_the_page_with_any_fill():
    for fill in ("skip", "neg_inf", "neg_1e9"):
        for params in (
            {"seq_len": 64, "pad": 63, "spread": 8.0},
            {"seq_len": 2, "pad": 1, "spread": 0.0},
        ):
            for side in ("end", "start"):
                call = {**params, "mask": "causal_padding", "pad_side": side, "fill": fill}
                out = json.loads(run_lab_json(LAB, json.dumps(call)))  # allow_nan=False
                assert out["ok"] is True


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"mask": "causal_padding", "seq_len": 4, "pad": 4}, "pad", "seq_len - 1 = 3, got 4"),
        ({"pad_side": "left"}, "pad_side", "one of 'end', 'start'"),
        ({"fill": "-inf"}, "fill", "one of 'skip', 'neg_inf', 'neg_1e9'"),
    ],
)
def test_bad_new_parameters_name_the_parameter(params, param, words):
    with pytest.raises(LabParameterError) as info:
        run_lab(LAB, params)
    assert info.value.param == param and words in str(info.value)


def test_the_static_view_names_the_empty_rows_and_shows_the_three_fills():
    from attention_labs.labs import static_view
    from attention_labs.static import Table, Text

    params = {"mask": "causal_padding", "pad_side": "start", "fill": "neg_inf"}
    out = run_lab(LAB, params)
    parts = static_view(LAB, out["result"], out["params"])
    weights, counts, says, fills = parts
    assert isinstance(weights, Table) and isinstance(fills, Table) and isinstance(says, Text)
    assert weights.rows[0][1] == [None] * 8  # a NaN row is shown masked, not as zeros
    assert "Queries 1, 2 may see no key" in says.text
    assert [r[0] for r in fills.rows][0] == "−∞, plain softmax" and fills.rows[0][1][0] == "NaN"
    assert fills.rows[1][1] == pytest.approx([0.125] * 8)
    assert len(static_view(LAB, result(), run_lab(LAB)["params"])) == 2  # no empty row: no table
