"""Every number and claim of docs/lessons/08-cost-and-flashattention.md, computed here with
attention_labs (the tiled_attention lab). The prose's numbers come from the lesson's
```numbers fence at build time; here they are recomputed and looked up, formatted, in the
lesson as the build renders it."""

import math
import re

import lesson_text
import numpy as np
import yaml
from attention_labs import softmax
from attention_labs.labs import run_lab
from attention_labs.labs.tiled_attention import (
    memory_floats,
    random_qkv,
    tiled_attention,
    tiles_read,
    work_flops,
)

from build_scripts.hooks import exercise, scanner

NAME = "08-cost-and-flashattention"
SOURCE, RENDERED, TEXT = lesson_text.read(f"lessons/{NAME}.md")


claim = lesson_text.claimer(TEXT)


def lab(**params):
    return run_lab("tiled_attention", params)["result"]


def fence_params():
    (body,) = re.findall(r"^```lab\n(.*?)^```$", SOURCE, re.S | re.M)
    params = yaml.safe_load(body)
    assert params.pop("lab") == "tiled_attention"
    return params


def test_front_matter_and_links():
    front = yaml.safe_load(SOURCE.split("---")[1])
    assert front["prerequisites"] == ["04-masking", "06-multi-head-attention"]
    claim("[causal mask](04-masking.md)")
    claim("[many heads](06-multi-head-attention.md)")


def test_the_prose_numbers_are_computed_not_typed():
    prose = SOURCE.split("```numbers")[0] + SOURCE.split("```", 3)[-1]
    for typed in ("4,096", "17.2 billion", "34.4 GB", "274,560", "262,200"):
        assert typed not in prose, typed
        assert typed in TEXT, typed


def test_twice_the_tokens_is_four_times_the_work_and_the_pattern():
    for n in (64, 1000, 2048):
        assert work_flops(2 * n, 64) == 4 * work_flops(n, 64)
        assert memory_floats(2 * n, 64, 4, 4)["plain"] == 4 * memory_floats(n, 64, 4, 4)["plain"]
    claim("twice the tokens is four times the work and four times the pattern")
    assert (131072 / 2048) ** 2 == 4096
    claim("Going from 2,048 to 131,072 tokens (2K to 128K) multiplies them by \\((64)^2 = 4,096\\)")
    claim("2K to 128K tokens is 4,096 times")


def test_work_formula_counts_both_products():
    n, d = 16, 8
    assert work_flops(n, d) == 2 * (n * n * d) * 2  # multiply-add = 2 FLOPs, two products
    claim("\\text{work} \\approx 4 \\cdot \\text{seq\\_len}^2 \\cdot d_{\\text{head}}")


def test_one_head_at_128k():
    entries = 131072**2
    claim(f"one head's pattern has {entries / 1e9:.1f} billion entries")
    claim(f"{entries * 2 / 1e9:.1f} GB in 16-bit numbers, for one head of one layer")


def test_online_softmax_is_exact_and_never_overflows():
    # "exactly ... the same as plain attention, with no approximation": the lab's function
    Q, K, V = random_qkv(32, 8, 0)
    out = tiled_attention(Q * 200, K, V, 4, 4)  # huge scores
    expected = softmax((Q * 200) @ K.T / math.sqrt(8)) @ V
    assert np.all(np.isfinite(out)) and np.abs(out - expected).max() < 1e-12
    claim("with no approximation")
    claim("Attention keeps a third the same way (Rabe & Staats, 2021; Dao, 2023)")
    claim("so large scores cannot overflow")
    claim("when the maximum does not change it is 1")


def test_extra_memory_is_linear_and_the_largest_intermediate_is_one_tile():
    for bq, bk in ((4, 4), (8, 16)):
        sizes = [memory_floats(n, 8, bq, bk) for n in (64, 128, 256, 512)]
        assert all(s["tile"] == bq * bk for s in sizes)
        extra = [s["tiled"] - s["tile"] - bq * (8 + 2) for s in sizes]
        assert extra == [2 * n for n in (64, 128, 256, 512)]  # m and l per row
    claim("The extra memory is **linear** in `seq_len`, not quadratic.")


def test_compute_stays_quadratic():
    claim("It does not save compute.")
    claim("doubling the context still quadruples the arithmetic")
    sweep = lab()["sweep"]
    work = np.array(sweep["work"], dtype=float)
    n = np.array(sweep["seq_len"], dtype=float)
    assert np.allclose(work / n**2, work[0] / n[0] ** 2)


def test_causal_skips_tiles_above_the_diagonal():
    all_tiles, causal = tiles_read(64, 4, 4, False), tiles_read(64, 4, 4, True)
    assert len(all_tiles) == 256 and len(all_tiles) - len(causal) == 120
    claim("of the 256 tiles of `seq_len` 64 in tiles of 4 × 4, 120 are never read")


def test_lab_fence_is_the_default_view():
    assert run_lab("tiled_attention", fence_params()) == run_lab("tiled_attention")
    claim("random queries, keys and values")
    claim("nothing here is a trained model")


def test_things_to_try_step_through():
    res = lab()
    assert res["n_q_blocks"] == res["n_k_blocks"] == 4 and len(res["tiles"]) == 16
    claim("With `block_q` = `block_k` = 4 the grid has 4 × 4 = 16 tiles")
    # "read one row of tiles at a time"
    assert res["tiles"] == [[q, k] for q in range(4) for k in range(4)]
    # "The running maximum of a row can only grow"
    maxima = [np.array(lab(step=s)["running_max"]) for s in range(4)]
    assert all(np.all(b >= a) for a, b in zip(maxima, maxima[1:], strict=False))
    # at step 3, m and l are the row's max and sum of exponentials
    last = lab(step=3)
    Q, K, _ = random_qkv(16, 8, 0)
    s = Q[:4] @ K.T / math.sqrt(8)
    np.testing.assert_allclose(last["running_max"], s.max(axis=1), rtol=0, atol=1e-15)
    np.testing.assert_allclose(
        last["running_sum"], np.exp(s - s.max(axis=1, keepdims=True)).sum(axis=1), rtol=1e-13
    )
    # the lab's status counts tiles from 1: step 3 is "Tile 4 of 16"
    assert last["step"] == 3
    claim("at the last tile of a row of tiles (tile 4 of 16)")


def test_things_to_try_difference_memory_causal_plot():
    res = lab()
    assert res["max_abs_diff"] < 1e-15
    claim(f"is {res['max_abs_diff']:.1e}: rounding in the last bits of a float64")
    for params in ({"block_q": 5, "block_k": 7}, {"block_q": 64, "block_k": 4}, {"causal": True}):
        assert lab(**params)["max_abs_diff"] < 1e-14  # "whatever the block sizes"
    claim("one tile of 16 floats against 256 for the whole matrix")
    big, n64 = lab(seq_len=64, block_q=16, block_k=16), lab(seq_len=64)
    assert n64["memory"]["tile"] == 16 and n64["memory"]["plain"] == 4096
    claim("Set `seq_len` to 64: still 16 floats against 4,096")
    assert len(big["tiles"]) == 16 and len(n64["tiles"]) == 256 and big["memory"]["tile"] == 256
    claim("(16 × 16) mean fewer tiles (16 instead of 256) but a larger one (256 floats)")
    causal = lab(causal=True)
    assert len(causal["tiles"]) == 10
    claim("Only 10 of the 16 tiles are read: those above the diagonal are skipped.")
    sweep = res["sweep"]
    n = np.log2(sweep["seq_len"])
    plain_slope = np.diff(np.log2(sweep["memory_plain"])) / np.diff(n)
    assert np.allclose(plain_slope, 2)
    tiled_slope = np.diff(np.log2(sweep["memory_tiled"])) / np.diff(n)
    assert np.all(tiled_slope < 1.01) and tiled_slope[-1] > 0.9  # about 1: linear
    claim("the plain matrix's memory climbs twice as steeply as the tiled method's")
    params = run_lab("tiled_attention")["params"]
    assert (params["d_head"], params["block_q"], params["block_k"]) == (8, 4, 4)
    claim("The plot uses the lab's `d_head` (8) and blocks (4 × 4).")
    # at seq_len 4, one block's fixed state (tile, running output, m and l) outweighs 4 x 4
    assert sweep["seq_len"][0] == 4
    assert (sweep["memory_tiled"][0], sweep["memory_plain"][0]) == (64, 16)
    assert memory_floats(4, 8, 4, 4) == {"plain": 16, "tile": 16, "tiled": 16 + 4 * 8 + 2 * 4 + 8}
    assert 16 + 4 * 8 + 2 * 4 > 16  # the block's state alone is more than the matrix
    claim("At its smallest `seq_len`, 4, the tiled method holds more than the plain one")
    claim("(64 floats against 16): its fixed state for one block of queries (the 16-float")
    claim("tile, the block's 4 × 8 running output and its \\(m\\) and \\(\\ell\\)) outweighs")
    less = [
        n
        for n, t, p in zip(
            *(sweep[k] for k in ("seq_len", "memory_tiled", "memory_plain")), strict=True
        )
        if t > p
    ]
    assert less == [4, 8]
    claim("plain holds less up to `seq_len` 8.")
    assert sweep["seq_len"][-1] == 131072 and sweep["memory_tiled"][-1] == 262_200
    assert memory_floats(131072, 8, 4, 4)["tiled"] == 262_200
    claim("At 131,072 tokens the plot's tiled method holds 262,200 floats.")
    mem = memory_floats(131072, 128, 64, 64)
    assert mem["tiled"] == 274_560
    claim("With a large model's `d_head` = 128 and 64 × 64 tiles it holds 274,560 floats")
    claim("against 17,179,869,184")


def test_exercises():
    specs = [
        exercise.parse_exercise(f.body, "lesson")
        for f in scanner.find_fences(SOURCE, ("exercise",))
    ]
    numeric = next(s for s in specs if s["kind"] == "numeric")
    ns = exercise.run_setup(numeric, "lesson")
    assert ns["worst"] < numeric["tolerance"]  # two decimals at every step are accepted
    claim("Two decimals are enough.")
    code = next(s for s in specs if s["kind"] == "code")
    names = " ".join(c["name"] for c in code["checks"])
    for edge in ("overflow", "block size", "masked keys", "whole first tile"):
        assert edge in names, edge


def test_sources():
    sources = SOURCE.split("## Sources")[1]
    for cite in (
        "Dao, T., Fu, D. Y., Ermon, S., Rudra, A. & Ré, C. (2022)",
        "NeurIPS",
        "Dao, T. (2023)",
        "Milakov, M. & Gimelshein, N. (2018)",
        "Rabe, M. N. & Staats, C. (2021)",
    ):
        assert cite in sources, cite


def test_flashattention_1_and_2_loop_orders_are_told_apart():
    """Issue 25: queries outside, K/V streaming inside and one division at the end is
    FlashAttention-2's order (Dao 2023); FlashAttention-1's Algorithm 1 keeps K/V blocks
    outside and writes the normalised O, l, m back after every step. The lab follows FA-2:
    for each query block, every key tile in turn."""
    from attention_labs.labs.tiled_attention import tiles_read

    order = tiles_read(16, 4, 4, False)
    assert order[:4] == [(0, 0), (0, 1), (0, 2), (0, 3)]  # one query block, all key tiles
    claim("**The original FlashAttention** (Algorithm 1 of Dao et al., 2022) puts the blocks of")
    claim("\\(K\\) and \\(V\\) in the outer loop")
    claim("writes the normalised output and \\(\\ell\\), \\(m\\) back")
    claim("**FlashAttention-2** (Dao, 2023) swaps the loops: a block of queries stays in SRAM")
    claim("\\(o\\) is divided by \\(\\ell\\) once, after the last tile")
    claim("The lab below, and the formulas above, use FlashAttention-2's order.")
    assert "is this loop, written as one GPU kernel: each block of" not in TEXT


def test_hbm_sram_kernel_flops_and_the_units_of_m_are_defined_before_use():
    """Issue 25: HBM, SRAM, "kernel" and FLOPs are defined where they first appear, and M
    of Theta(N^2 d^2 / M) is said to count numbers."""
    for term, definition in [
        ("FLOPs", "**FLOPs** (floating-point operations: one multiplication or one addition each)"),
        ("HBM", "**HBM** (high-bandwidth memory) is its main memory"),
        ("SRAM", "**SRAM** (static memory) sits on the processor chip itself"),
        ("kernel", "runs as a series of **kernels**: a kernel is one function that the GPU runs"),
    ]:
        claim(definition)
        assert TEXT.index(term) >= TEXT.index(definition), f"{term} is used before it is defined"
    sram_numbers = 192 * 1024 // 2
    claim(f"hold \\(M\\) = {sram_numbers:,d} numbers of 16 bits")
    claim(f"about 1/{sram_numbers / 64**2:.0f} for `d_head` = 64")
    claim(f"1/{sram_numbers / 128**2:.0f} for `d_head` = 128")
    claim("in numbers read or written, for an SRAM that holds \\(M\\) numbers")


def test_block_sizes_of_one_to_three_are_in_the_lab_and_exact():
    """Issue 25: "whatever the block sizes" while the lab's blocks started at 4."""
    from attention_labs.labs import tiled_attention

    spec = {p.name: p for p in tiled_attention.SCHEMA}
    assert spec["block_q"].minimum == spec["block_k"].minimum == 1
    assert spec["step"].maximum + 1 >= 64 * 64  # every tile of 1 x 1 at seq_len 64
    one = run_lab("tiled_attention", {"block_q": 1, "block_k": 1})["result"]
    three = run_lab("tiled_attention", {"block_q": 3, "block_k": 3})["result"]
    assert one["max_abs_diff"] < 1e-14 and three["max_abs_diff"] < 1e-14
    claim("Try blocks of 1, one key at a time")
    claim("or of 3, which do not divide `seq_len` 16")
    claim(f"the difference is {one['max_abs_diff']:.1e} and {three['max_abs_diff']:.1e}")
