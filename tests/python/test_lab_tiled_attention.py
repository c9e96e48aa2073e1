"""The tiled_attention lab: tiles plus an online softmax give plain attention's output
(1e-12 in float64, against this package and against torch's scaled_dot_product_attention,
causal and not), the running max and sum are the row's, the tiles read and the memory held
are what the lesson says, and bad parameters name themselves."""

import json
import math

import numpy as np
import pytest
from attention_labs import causal_mask, scaled_dot_product_attention, softmax
from attention_labs.labs import run_lab, run_lab_json
from attention_labs.labs.tiled_attention import (
    LARGEST,
    memory_floats,
    random_qkv,
    tiled_attention,
    tiles_read,
)
from attention_labs.params import LabParameterError

LAB = "tiled_attention"
SHAPES = [  # seq_len, d_head, block_q, block_k: blocks that divide seq_len and ones that do not
    (16, 8, 4, 4),
    (17, 5, 3, 5),
    (33, 16, 8, 4),
    (7, 3, 16, 16),  # one tile holds everything
    (64, 64, 1, 64),
]


def result(**params):
    return run_lab(LAB, params)["result"]


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n,d,bq,bk", SHAPES)
def test_tiled_equals_plain_attention_in_float64(n, d, bq, bk, causal):
    Q, K, V = random_qkv(n, d, seed=n)
    plain, _ = scaled_dot_product_attention(Q, K, V, mask=causal_mask(n) if causal else None)
    tiled = tiled_attention(Q, K, V, bq, bk, causal=causal)
    assert np.abs(tiled - plain).max() <= 1e-12


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n,d,bq,bk", SHAPES)
def test_tiled_equals_torch_scaled_dot_product_attention(n, d, bq, bk, causal):
    torch = pytest.importorskip("torch")
    Q, K, V = random_qkv(n, d, seed=n + 1)
    expected = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (Q, K, V)), is_causal=causal
    ).numpy()
    assert np.abs(tiled_attention(Q, K, V, bq, bk, causal=causal) - expected).max() <= 1e-12


def test_rectangular_and_wider_values():
    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((5, 4)), rng.standard_normal((9, 4)), rng.standard_normal((9, 7))
    plain, _ = scaled_dot_product_attention(Q, K, V)
    assert np.abs(tiled_attention(Q, K, V, 2, 4) - plain).max() <= 1e-12


def test_huge_scores_do_not_overflow():
    Q, K, V = random_qkv(12, 4, seed=5)
    Q = Q * 300  # scores in the hundreds: exp would overflow without the running max
    plain, _ = scaled_dot_product_attention(Q, K, V)
    out = tiled_attention(Q, K, V, 4, 4)
    assert np.all(np.isfinite(out)) and np.abs(out - plain).max() <= 1e-12


def test_bad_shapes_and_blocks_raise():
    Q, K, V = random_qkv(4, 2, 0)
    with pytest.raises(ValueError, match="shapes"):
        tiled_attention(Q, K[:, :1], V, 2, 2)
    with pytest.raises(ValueError, match="as many queries as keys"):
        tiled_attention(Q[:3], K, V, 2, 2, causal=True)
    with pytest.raises(ValueError, match="block_q and block_k"):
        tiled_attention(Q, K, V, 0, 2)


@pytest.mark.parametrize("causal", [False, True])
def test_callback_sees_the_tiles_in_order_and_the_final_max_and_sum_are_the_rows(causal):
    n, d, bq, bk = 17, 4, 4, 3
    Q, K, V = random_qkv(n, d, 9)
    calls = []
    tiled_attention(Q, K, V, bq, bk, causal=causal, on_tile=lambda *a: calls.append(a))
    assert [(qb, kb) for qb, kb, _, _ in calls] == tiles_read(n, bq, bk, causal)
    scores = Q @ K.T / math.sqrt(d)
    if causal:
        scores = np.where(causal_mask(n), scores, -np.inf)
    last = {}
    for qb, _, m, row_sum in calls:
        last[qb] = (m, row_sum)
    for qb, (m, row_sum) in last.items():
        rows = scores[qb * bq : (qb + 1) * bq]
        np.testing.assert_allclose(m, rows.max(axis=1), rtol=0, atol=1e-15)
        np.testing.assert_allclose(
            row_sum, np.exp(rows - rows.max(axis=1, keepdims=True)).sum(axis=1), rtol=1e-13
        )


def test_tiles_read_skips_only_tiles_above_the_diagonal():
    n, bq, bk = 16, 4, 4
    assert len(tiles_read(n, bq, bk, False)) == 16
    causal = tiles_read(n, bq, bk, True)
    assert len(causal) == 10  # 4 + 3 + 2 + 1 tiles on and below the diagonal
    mask = causal_mask(n)
    for qb in range(4):
        for kb in range(4):
            visible = mask[qb * bq : (qb + 1) * bq, kb * bk : (kb + 1) * bk].any()
            assert ((qb, kb) in causal) == bool(visible)


def test_lab_defaults_match_plain_attention_and_show_the_first_tile():
    res = result()
    assert res["max_abs_diff"] <= 1e-12
    assert res["current"] == [0, 0] and res["rows"] == [0, 4] and res["cols"] == [0, 4]
    Q, K, _ = random_qkv(16, 8, 0)
    first = Q[:4] @ K[:4].T / math.sqrt(8)
    np.testing.assert_allclose(res["running_max"], first.max(axis=1), rtol=0, atol=1e-15)
    assert res["n_q_blocks"] == res["n_k_blocks"] == 4 and len(res["tiles"]) == 16


def test_running_sum_after_the_last_tile_of_a_row_normalises_its_weights():
    res = result(step=3)  # the last tile of query block 0
    Q, K, _ = random_qkv(16, 8, 0)
    scores = Q[:4] @ K.T / math.sqrt(8)
    weights = (
        np.exp(scores - np.array(res["running_max"])[:, None])
        / np.array(res["running_sum"])[:, None]
    )
    np.testing.assert_allclose(weights, softmax(scores), rtol=0, atol=1e-14)


def test_memory_counter():
    assert memory_floats(16, 8, 4, 4) == {"plain": 256, "tile": 16, "tiled": 16 + 4 * 10 + 32}
    assert memory_floats(8, 8, 64, 64)["tile"] == 64  # a tile is cut to seq_len
    res = result()
    assert res["memory"] == memory_floats(16, 8, 4, 4)
    sweep = res["sweep"]
    n = np.array(sweep["seq_len"])
    assert np.all(np.array(sweep["memory_plain"]) == n * n)
    tiled = np.array(sweep["memory_tiled"])
    assert np.all(np.diff(tiled) == 2 * np.diff(n))  # linear in seq_len: 2 floats a row
    work = np.array(sweep["work"])
    assert np.all(work[1:] == 4 * work[:-1])  # twice the tokens, four times the work


def test_step_past_the_last_tile_names_step_and_the_range():
    with pytest.raises(LabParameterError) as err:
        run_lab(LAB, {"causal": True, "step": 10})
    assert err.value.param == "step" and "from 0 to 9" in str(err.value)
    assert result(causal=True, step=9)["current"] == [3, 3]


@pytest.mark.parametrize(
    "params,param,words",
    [
        ({"block_q": 0}, "block_q", "from 1 to 64"),
        ({"block_k": 65}, "block_k", "from 1 to 64"),
        ({"seq_len": 64, "block_q": 1, "block_k": 1, "step": 4096}, "step", "from 0 to 4095"),
        ({"seq_len": 1}, "seq_len", "from 2 to 64"),
        ({"d_head": 0}, "d_head", "from 1 to 64"),
        ({"causal": 1}, "causal", "true or false"),
    ],
)
def test_bad_parameters_name_the_parameter_and_the_range(params, param, words):
    with pytest.raises(LabParameterError) as err:
        run_lab(LAB, params)
    assert err.value.param == param and words in str(err.value)
    out = json.loads(run_lab_json(LAB, json.dumps(params)))
    assert out["ok"] is False and out["param"] == param


def test_largest_runs_and_is_exact():
    assert result(**LARGEST)["max_abs_diff"] <= 1e-12


@pytest.mark.parametrize("block", [1, 2, 3])
def test_the_smallest_blocks_are_allowed_and_exact(block):
    """The lesson says "whatever the block sizes": 1 (a key at a time, Milakov &
    Gimelshein's online softmax) and blocks that do not divide seq_len are in the lab."""
    res = result(block_q=block, block_k=block)
    assert res["max_abs_diff"] <= 1e-12
    n_blocks = math.ceil(16 / block)
    assert len(res["tiles"]) == n_blocks * n_blocks
    last = result(seq_len=64, block_q=block, block_k=block, step=math.ceil(64 / block) ** 2 - 1)
    assert last["max_abs_diff"] <= 1e-12


def test_the_docstrings_name_flashattention_2s_loop_order():
    from attention_labs.labs import tiled_attention as lab

    for doc in (lab.__doc__, lab.tiled_attention.__doc__):
        text = " ".join(doc.split())
        assert "FlashAttention-2's" in text and "Dao 2023" in text
    assert "K/V blocks outside" in " ".join(lab.__doc__.split())


def test_output_is_strict_json():
    out = run_lab(LAB, {"causal": True})
    assert json.loads(json.dumps(out, allow_nan=False)) == out
