"""Every number and claim in the prose of docs/lessons/04-masking.md, computed here with
attention_labs. The prose's numbers are ``{{ expr }}`` filled at build time from the
lesson's ```numbers fence (build_scripts/hooks/numbers.py); each claim below is formatted
here and looked up in the lesson as the build renders it, on the lab's default view."""

import itertools
import json
import re

import lesson_text
import numpy as np
import pytest
import torch
from attention_labs import causal_mask, padding_mask, sliding_window_mask, softmax
from attention_labs.labs import run_lab, run_lab_json
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts.hooks import exercise

LESSON_PATH = ROOT / "docs" / "lessons" / "04-masking.md"
SOURCE, RENDERED, TEXT = lesson_text.read("lessons/04-masking.md")


claim = lesson_text.claimer(TEXT)


def vec(values, spec=".3f"):
    return ", ".join(format(v, spec) for v in values)


def lab_params():
    return lesson_text.lab_params(SOURCE, "masking")


def default(**changes):
    return run_lab("masking", {**lab_params(), **changes})["result"]


def fences(kind):
    return lesson_text.fence_bodies(SOURCE, kind)


def test_front_matter():
    front = meta.get_data(SOURCE)[1]
    assert front["title"] == "Masking"
    assert front["prerequisites"] == ["03-attention-pattern"]


def test_the_lab_fence_is_the_labs_default():
    assert run_lab("masking", lab_params()) == run_lab("masking")


# ----------------------------------------------------------------------------
# before and after softmax


def test_masking_before_softmax_keeps_rows_summing_to_one_and_after_does_not():
    row = np.array([1.0, 3.0, 2.0, 4.0])
    visible = causal_mask(4)[2]
    before, full = softmax(row, where=visible), softmax(row)
    after = full * visible
    assert before.sum() == pytest.approx(1, abs=1e-15) and before[3] == 0.0
    assert after.sum() < 0.5  # "had taken most of the budget"
    assert full[3] > 0.5
    claim(f"Masked before softmax, its weights are \\(({vec(before)})\\), which sum to 1.")
    claim(f"set the hidden weight to zero, we would get \\(({vec(after)})\\), which sums to only")
    claim(f"{after.sum():.3f}: the last key, the one the query must not see, had taken most")
    # "Dividing that row by its new sum would repair it"
    np.testing.assert_allclose(after / after.sum(), before, rtol=0, atol=1e-15)
    claim("Dividing that row by its new sum would repair it: it gives exactly the weights masked")
    # the same through torch: -inf before softmax
    t = torch.tensor(np.where(visible, row, -np.inf))
    np.testing.assert_allclose(torch.softmax(t, -1).numpy(), before, rtol=0, atol=1e-15)


def test_causal_grid_counts():
    n = 6
    hidden = int((~causal_mask(n)).sum())
    assert hidden == n * (n - 1) // 2
    claim(f"In a causal grid of {n} tokens the mask hides {hidden} of the {n * n} entries")


def test_generation_uses_the_same_computation():
    # The newest token is the last query: the mask changes nothing for its row, so its
    # output equals attention over the whole prefix with no mask (same code path).
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((7, 4)) for _ in range(3))
    from attention_labs import scaled_dot_product_attention as sdpa

    full, _ = sdpa(q, k, v, mask=causal_mask(7))
    for i in range(7):
        last, _ = sdpa(q[i : i + 1], k[: i + 1], v[: i + 1])
        np.testing.assert_allclose(full[i], last[0], rtol=0, atol=1e-12)
    claim("for that row the mask changes nothing")


# ----------------------------------------------------------------------------
# padding, sliding windows, a fully masked row


def test_padding_mask_example():
    mask = padding_mask([5, 3], 5)
    rows = [" & ".join(str(int(v)) for v in r) for r in mask]
    assert rows == ["1 & 1 & 1 & 1 & 1", "1 & 1 & 1 & 0 & 0"]
    claim(f"\\begin{{pmatrix}} {rows[0]} \\\\ {rows[1]} \\end{{pmatrix}}")
    claim("For two sentences of 5 and 3 tokens padded to 5")
    # "including the padding's own queries: those rows are distributions over the real keys"
    w = softmax(np.random.default_rng(1).normal(size=(2, 5, 5)), where=mask[:, None, :])
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)
    assert np.all(w[1][:, 3:] == 0)
    claim("those rows are distributions over the real keys")


def test_sliding_window_keeps_at_most_w_per_row_and_grows_linearly():
    w = 3
    for n in (8, 16, 64):
        mask = sliding_window_mask(n, w)
        assert mask.sum(axis=-1).max() == w
        assert mask.sum() == n * w - w * (w - 1) // 2  # linear in n
    claim("A row then has at most \\(w\\) visible keys whatever the sentence length")
    # "each layer moves it up to w - 1 positions": k layers reach k (w - 1) back
    n, layers = 20, 3
    reach = np.linalg.matrix_power(sliding_window_mask(n, w).astype(int), layers) > 0
    assert reach[n - 1].argmax() == n - 1 - layers * (w - 1)
    claim("each layer moves it up to \\(w - 1\\) positions")
    claim("Mistral 7B uses a window of 4,096 keys over 32 layers")


def test_a_fully_masked_row():
    # the first row of the left-padding example: 3 tokens left-padded to 5, causal
    real = np.arange(5) >= 2
    nothing = (causal_mask(5) & real[None, :])[0]
    assert not nothing.any() and nothing.shape == (5,)
    scores = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    ours = softmax(scores, where=nothing)
    assert ours.tolist() == [0.0] * 5
    claim(f"returns a row of 5 zeros, \\(({vec(ours, 'g')})\\): the query reads nothing")
    uniform = softmax(np.where(nothing, scores, -1e9))
    np.testing.assert_allclose(uniform, 1 / 5, rtol=0, atol=1e-15)
    claim(f"softmax returns the uniform row \\(({vec(uniform)})\\) over all 5 keys")
    claim("the 2 padding keys and the 3 real tokens after the query")
    claim("such as \\(-10^{ 9 }\\) instead of")
    with np.errstate(invalid="ignore"):
        hidden = np.where(nothing, scores, -np.inf)
        plain = np.exp(hidden - hidden.max()) / np.exp(hidden - hidden.max()).sum()
    assert np.isnan(plain).all()
    assert torch.softmax(torch.tensor(hidden), -1).isnan().all()
    claim("the row is NaN (not a number)")


def test_pytorch_sdpa_gives_zeros_for_a_fully_masked_row_on_cpu():
    """The page claims it for PyTorch 2.13 on the CPU, math and flash backends, with a
    boolean mask or a -inf float mask; it claims nothing for other versions or GPUs."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    assert torch.__version__.startswith("2.13."), torch.__version__
    claim("does the same in PyTorch 2.13 on the CPU (its math and flash backends")
    real = torch.arange(5) >= 2
    mask = torch.ones(5, 5, dtype=torch.bool).tril() & real[None, :]  # rows 1, 2 see nothing
    float_mask = torch.zeros(5, 5).masked_fill(~mask, float("-inf"))
    q, k, v = torch.randn(3, 1, 2, 5, 4, generator=torch.Generator().manual_seed(0))
    for backend in (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION):
        for dtype in (torch.float32, torch.float64):
            for m in (mask, float_mask.to(dtype)):
                with sdpa_kernel(backend):
                    out = torch.nn.functional.scaled_dot_product_attention(
                        q.to(dtype), k.to(dtype), v.to(dtype), attn_mask=m
                    )
                assert not out.isnan().any(), (backend, dtype)
                assert out[..., :2, :].abs().max() == 0, (backend, dtype)
                assert out[..., 2:, :].abs().min() > 0, (backend, dtype)


def test_left_padding_with_a_causal_mask_leaves_rows_with_nothing_to_see():
    real = np.arange(5) >= 2  # 3 tokens left-padded to 5
    mask = causal_mask(5) & real[None, :]
    empty = np.flatnonzero(~mask.any(axis=-1)).tolist()
    assert empty == [0, 1]
    claim("The first 2 positions are padding")
    claim("Rows 1, 2 have nothing to see.")
    weights = softmax(np.ones((5, 5)), where=mask)
    assert np.all(weights[:2] == 0) and np.allclose(weights[2:].sum(axis=-1), 1)
    claim("a fully masked row sums to 0, not 1, and it is the only kind of row that does")


def test_no_nan_reaches_the_page():
    # NumPy formats a NaN as "nan" (the prose's word is "NaN"): no filled number is one
    assert not re.search(r"(?<![A-Za-z])nan(?![A-Za-z])", RENDERED)
    for kind in ("none", "causal", "padding", "sliding_window"):
        for apply in ("before", "after"):
            params = {"mask": kind, "apply": apply, "seq_len": 64, "pad": 63, "window": 1}
            assert json.loads(run_lab_json("masking", json.dumps(params)))["ok"] is True


# ----------------------------------------------------------------------------
# the lab's default view and "Things to try"


def test_default_causal_view():
    res = default()
    c = res["counts"]
    assert (c["kept"], c["total"], c["masked"]) == (36, 64, 28)
    claim(
        f"The mask keeps {c['kept']} of the {c['total']} entries and blocks {c['masked']} "
        f"({c['blocked_percent']:.1f}%); every row sums to 1, and the first row puts all its "
        "weight on itself."
    )
    np.testing.assert_allclose(res["row_sums"], 1.0, rtol=0, atol=1e-12)
    assert res["weights"][0][0] == 1.0


def test_after_softmax_only_the_last_row_sums_to_one():
    sums = np.array(default(apply="after")["row_sums"])
    assert sums[-1] == pytest.approx(1, abs=1e-12) and np.all(sums[:-1] < 1 - 1e-6)
    claim(
        "now only the last row, which hides nothing, sums to 1; the others sum to between "
        f"{sums.min():.2f} and {sums[:-1].max():.2f}."
    )


def test_padding_view():
    res = default(mask="padding")
    pads = res["tokens"].count("PAD")
    assert pads == lab_params().get("pad", 2) == 2
    weights = np.array(res["weights"])
    assert np.all(weights[:, -pads:] == 0)
    np.testing.assert_allclose(weights[-pads:].sum(axis=-1), 1.0)
    claim(f"The last {pads} tokens become `PAD` and their columns go blank")


def test_sliding_window_view_and_cost():
    res = default(mask="sliding_window")
    from attention_labs.labs.masking import SCHEMA

    window = next(p.default for p in SCHEMA if p.name == "window")
    assert window == 3
    claim(f"With a window of {window} the mask keeps {res['counts']['kept']} entries here.")
    causal64 = default(seq_len=64)["counts"]
    window64 = default(seq_len=64, mask="sliding_window")
    assert abs(causal64["kept"] / causal64["total"] - 0.5) < 0.02  # "about half"
    claim(
        f"the causal mask keeps {causal64['kept']:,d} of {causal64['total']:,d}, still about "
        f"half and still quadratic, while the window keeps {window64['counts']['kept']}"
    )
    # "its curve is a straight line"; the causal one is not
    kept = np.array(window64["cost"]["kept"])
    lengths = np.array(window64["cost"]["lengths"])
    assert np.all(np.diff(kept[lengths >= window]) == window)
    assert len(set(np.diff(default(seq_len=64)["cost"]["kept"]))) > 1
    claim("its curve is a straight line, drawn with the causal mask's curve for comparison")
    # the widget draws the causal curve as n (n + 1) / 2: the causal lab's own counts
    causal_cost = default(seq_len=64)["cost"]
    assert causal_cost["lengths"] == window64["cost"]["lengths"]
    assert causal_cost["kept"] == [n * (n + 1) // 2 for n in causal_cost["lengths"]]


def test_causal_and_padding_together_and_a_row_with_nothing_to_see_in_the_lab():
    """ "Causal + padding" in "Things to try": right padding leaves no empty row, left
    padding empties the first `pad` rows, which are zeros here, NaN with -inf and a plain
    softmax (torch agrees), uniform with -1e9; the widget names the fills as the prose."""
    end = default(mask="causal_padding")
    pads = end["tokens"].count("PAD")
    assert pads == 2 and end["empty_rows"] == [] and end["tokens"][-pads:] == ["PAD"] * pads
    weights = np.array(end["weights"])
    np.testing.assert_allclose(weights[-pads:].sum(axis=-1), 1.0)  # pad rows read real tokens
    claim(
        f"With the padding at the end, as the lab starts it, the {pads} `PAD` rows still read "
        "every real token, and no row is empty."
    )
    left = {
        f: default(mask="causal_padding", pad_side="start", fill=f)
        for f in ("skip", "neg_inf", "neg_1e9")
    }
    empty = left["skip"]["empty_rows"]
    assert empty == list(range(pads)) and left["skip"]["tokens"][:pads] == ["PAD"] * pads
    claim(
        f"Put the padding at the start: rows {', '.join(str(i + 1) for i in empty)} now see nothing"
    )
    assert np.all(np.array(left["skip"]["weights"])[empty] == 0.0)
    claim("With this site's softmax they are rows of zeros.")
    assert left["neg_inf"]["nan_rows"] == empty
    lesson_mask = causal_mask(8) & (np.arange(8) >= pads)[None, :]
    mask = torch.tensor(lesson_mask)
    scores = torch.tensor(np.random.default_rng(0).standard_normal((8, 8)) * 2.0)
    assert torch.softmax(scores.masked_fill(~mask, -torch.inf), -1)[empty].isnan().all()
    assert np.array_equal(
        np.array([[v is not None for v in r] for r in left["skip"]["logits"]]), lesson_mask
    )
    n = 8
    uniform = np.array(left["neg_1e9"]["weights"])[empty]
    np.testing.assert_allclose(uniform, 1 / n, rtol=0, atol=1e-15)
    claim(f"and each becomes uniform, {1 / n:g} on every key, the padding included.")
    claim("the table under the heatmap shows the first of them three ways")
    claim("Switch *A hidden score becomes* to")
    from attention_labs.labs.masking import SCHEMA

    spec = next(p for p in SCHEMA if p.name == "fill")
    widget = (ROOT / "docs/javascripts/labs/masking.js").read_text("utf-8")
    assert '"A hidden score becomes"' in widget
    assert spec.labels["neg_inf"] == "−∞, plain softmax" and spec.labels["neg_1e9"].startswith(
        "−10⁹"
    )
    claim("causal and padding together")


def test_minus_inf_and_minus_1e9_agree_wherever_a_key_is_visible():
    left = default(mask="causal_padding", pad_side="start")
    assert left["fill_agreement"] == 0.0
    assert np.exp(-1e9) == 0.0 and np.exp(np.float64(-1e9) + 50) == 0.0
    claim(
        "with both masks and the padding on the left, the largest difference between the two "
        "over those rows is 0. They part only on the empty rows."
    )
    # "in half precision -1e9 cannot be stored: it becomes -inf, and the NaN is back"
    half = torch.full((3,), -1e9, dtype=torch.float32).to(torch.float16)
    assert torch.isinf(half).all() and torch.softmax(half, dim=-1).isnan().all()
    claim("cannot even be stored: it becomes \\(-\\infty\\), and the NaN is back.")


def test_the_plot_and_the_prose_say_entries_kept():
    import pathlib

    widget = (pathlib.Path(ROOT) / "docs/javascripts/labs/masking.js").read_text("utf-8")
    assert 'yLabel: "entries kept"' in widget
    claim('The plot\'s "entries kept" are the entries of the score grid')
    assert '"Cost" in the plot' not in TEXT


# ----------------------------------------------------------------------------
# the cell and the exercises


def test_the_python_cell_rows_sum_to_one():
    from attention_labs import cells

    (cell,) = fences("pycell")
    out = cells.run_cell(cell, cells.new_namespace(), "<cell>")
    assert out["error"] is None
    assert out["value"] == "array([[1., 1., 1., 1., 1.],\n       [1., 1., 1., 1., 1.]])"


def rounded_both_ways(x):
    x = np.atleast_1d(x)
    lo, hi = np.floor(x * 100 + 1e-9) / 100, np.ceil(x * 100 - 1e-9) / 100
    for bits in itertools.product((False, True), repeat=len(x)):
        yield np.where(bits, hi, lo)


def test_the_numeric_exercise_accepts_every_two_decimal_reader():
    spec = next(
        s
        for s in (exercise.parse_exercise(b, "lesson") for b in fences("exercise"))
        if s["kind"] == "numeric"
    )
    ns = exercise.run_setup(spec, "lesson")
    s, visible = ns["s"], ns["visible"]
    worst_w = worst_sum = 0.0
    for e in rounded_both_ways(np.exp(s)):  # each exponential rounded down or up
        for kept in rounded_both_ways(e[visible].sum()):
            for w in rounded_both_ways(np.where(visible, e, 0) / kept[0]):
                worst_w = max(worst_w, np.abs(w - ns["w"]).max())
        for total in rounded_both_ways(e.sum()):
            for kept in rounded_both_ways(e[visible].sum()):
                for ratio in rounded_both_ways(kept[0] / total[0]):
                    worst_sum = max(worst_sum, abs(ratio[0] - ns["zeroed"].sum()))
    assert max(worst_w, worst_sum) <= spec["tolerance"] == ns["tolerance"]
    assert spec["tolerance"] - max(worst_w, worst_sum) < 0.005  # not much looser
    assert ns["hidden"] == 21
    # the reader computes: not the worked example's scores, nor its grid. Softmax does not
    # change when every score moves by the same amount, and the keys' order only reorders
    # the weights: the answers must differ from the worked example's as sets, so a shifted
    # or reordered copy of its scores (whose answers the lesson prints) cannot pass.
    worked = np.array([1.0, 3.0, 2.0, 4.0])
    printed_w = np.sort(softmax(worked, where=ns["visible"]))
    printed_sum = (softmax(worked) * ns["visible"]).sum()
    assert np.abs(np.sort(ns["w"]) - printed_w).max() > 3 * spec["tolerance"]
    assert abs(ns["zeroed"].sum() - printed_sum) > 3 * spec["tolerance"] and ns["m"] != 6
    assert "not the worked example's, nor a shift of them" in spec["setup"]
    prompt = exercise.fill_template(spec["prompt"], ns, "lesson")
    assert "Rounding every step to two decimals is fine" in re.sub(r"\s+", " ", prompt)
    # no typed number in the worked solution or hint (beyond the formula's "/ 2")
    for field in ("solution", "hint", "prompt"):
        bare = re.sub(r"\{\{.*?\}\}", "", spec[field])
        bare = re.sub(r"(keys?|query|token) \d", "", bare).replace("/ 2", "")
        assert not re.search(r"\d", bare), (field, re.findall(r".{20}\d.{20}", bare))


def test_the_code_exercise_checks_the_edge_cases_the_lesson_teaches():
    spec = next(
        s
        for s in (exercise.parse_exercise(b, "lesson") for b in fences("exercise"))
        if s["kind"] == "code"
    )
    names = [c["name"] for c in spec["checks"]]
    assert "a row with nothing to see is all zeros, never NaN" in names
    assert "padding queries still read the real keys" in names
    # a solution that fills with -inf and a plain softmax fails exactly the empty-row check
    naive = """
import numpy as np
def batch_weights(scores, lengths, causal):
    scores = np.asarray(scores, dtype=float)
    b, n, _ = scores.shape
    keys = np.arange(n)[None, :] < np.asarray(lengths)[:, None]
    mask = np.broadcast_to(keys[:, None, :], scores.shape)
    if causal:
        mask = mask & np.tri(n, dtype=bool)
    s = np.where(mask, scores, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
"""
    from attention_labs import cells

    # checked as the reader's browser checks it (cells.check_code)
    result = cells.check_code(naive, spec["checks"], names=exercise.interface(spec, "lesson"))
    assert result["run"]["error"] is None, result["run"]
    failed = [case["name"] for case in result["cases"] if not case["passed"]]
    assert failed == ["a row with nothing to see is all zeros, never NaN"]


def test_the_padding_rows_name_is_the_librarys_not_berts():
    """Issue 25: `attention_mask` is the Transformers library's name for the padding row,
    not something Devlin et al. (2019) describe; PyTorch's `key_padding_mask` is its
    negation, as the lesson says."""
    assert "BERT's `attention_mask`" not in TEXT and "Devlin" not in SOURCE
    claim("Hugging Face's Transformers library calls it `attention_mask` (1 for a real token, 0")
    claim("PyTorch's `key_padding_mask` is its negation (True for padding)")
    # the negation, checked: True in key_padding_mask hides a key, as False does here
    keep = padding_mask([3], 5)[0]
    mha = torch.nn.MultiheadAttention(4, 1, batch_first=True)
    x = torch.randn(1, 5, 4)
    _, w = mha(x, x, x, key_padding_mask=torch.from_numpy(~keep)[None])
    assert (w[0][:, ~torch.from_numpy(keep)] == 0).all()
    sources = SOURCE.split("## Sources", 1)[1]
    assert "Wolf, T. et al. (2020)" in sources and "key_padding_mask" in sources
