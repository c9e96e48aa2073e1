"""Every number and claim in the prose of docs/lessons/11-cross-attention.md, computed here
with attention_labs. The prose's numbers are ``{{ expr }}`` filled at build time from the
lesson's ```numbers fence (build_scripts/hooks/numbers.py); each claim below is formatted
here and looked up in the lesson as the build renders it, on the lab's default view."""

import itertools
import re

import lesson_text
import numpy as np
from attention_labs import cross_attention, multi_head_attention, padding_mask
from attention_labs.labs import cross_attention as lab
from attention_labs.labs import run_lab
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts.hooks import exercise

NAME = "11-cross-attention"
LESSON_PATH = ROOT / "docs" / "lessons" / f"{NAME}.md"
SOURCE, RENDERED, TEXT = lesson_text.read(f"lessons/{NAME}.md")


claim = lesson_text.claimer(TEXT)


def lab_params():
    return lesson_text.lab_params(SOURCE, "cross_attention")


def view(**changes):
    return run_lab("cross_attention", {**lab_params(), **changes})["result"]


def fences(kind):
    return lesson_text.fence_bodies(SOURCE, kind)


def exercise_spec(kind):
    return next(
        s
        for s in (exercise.parse_exercise(b, "lesson") for b in fences("exercise"))
        if s["kind"] == kind
    )


def test_front_matter():
    front = meta.get_data(SOURCE)[1]
    assert front["title"] == "Cross-attention"
    assert front["prerequisites"] == [
        "04-masking",
        "05-values-and-the-update",
        "06-multi-head-attention",
    ]


def test_the_lab_fence_is_the_labs_default():
    assert run_lab("cross_attention", lab_params()) == run_lab("cross_attention")


def test_the_default_view_is_a_rectangle_with_blank_pad_columns_and_rows_summing_to_one():
    r = view()
    w = np.array(r["weights"])
    pair = lab.PAIRS["en-fr"]
    n_src = len(pair["source"])
    assert w.shape == (4, 6) and w.shape[0] != w.shape[1]
    claim("On this view the pattern is 4 × 6. The 2 PAD columns are blank")
    assert np.all(w[:, n_src:] == 0.0)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    assert np.all(w[:, :n_src] > 0)  # every real source word is read by every query
    claim("the source's 4 English words followed by 2 PAD tokens")
    claim("the 4 French target words")


def test_the_default_query_is_not_aligned_random_weights():
    r = view()
    w = np.array(r["weights"])
    q = r["query"]
    assert r["tokens"][q] == "chat"
    top = r["key_tokens"][r["top_key"][q]]
    assert top != "cat"  # the point of the sentence: random weights are not an alignment
    claim(
        f"The query is *chat*: its largest weight, {w[q].max():.2f}, is on *{top}*, not on "
        f"*cat* ({w[q][2]:.2f})"
    )


def test_without_the_padding_mask_the_pad_keys_take_weight():
    w = np.array(view(source_padding_mask=False)["weights"])
    first = w[0, 4:].sum()
    share = w[:, 4:].sum() / 4
    assert first > 0.5 and share > 0.2  # "take weight", a lot of it
    claim(f"{first:.2f} of the first row, and {100 * share:.0f}% of all the weight on average")


def test_a_causal_mask_in_cross_attention_is_a_triangle_and_hides_a_word_for_nothing():
    w = np.array(view(causal=True)["weights"])
    assert w[0, 0] == 1.0 and np.all(w[0, 1:] == 0.0)
    assert np.all(w[1, 2:] == 0.0) and np.all(w[1, :2] > 0)  # the second: the first two
    claim("*le*, can now read only *the* (weight 1)")
    short = run_lab(
        "cross_attention", {"pair": "en-de-short", "pad": 0, "causal": True, "query": 0}
    )["result"]
    assert short["unseen_keys"] == [2] and short["key_tokens"][2] == "raining"
    assert lab.PAIRS["en-de-short"]["align"][-1] == 2  # regnet translates raining
    # the prose names the pair as its option does, and says to set PAD to 0
    (pair_param,) = [p for p in lab.SCHEMA if p.name == "pair"]
    assert pair_param.labels["en-de-short"] == "it is raining → es regnet"
    claim("Choose the pair *it is raining → es regnet* and set the PAD tokens to 0")
    claim("with the causal mask, *raining* is read by no target word at all")
    claim("it is the word *regnet* translates")


def test_the_aligned_preset_puts_each_rows_top_on_the_aligned_word():
    for name, pair in lab.PAIRS.items():
        r = view(preset="aligned", pair=name, query=0)
        assert list(r["top_key"]) == pair["align"]
    claim("Each row's top key becomes that word, in every pair")
    least = {}
    for name, pair in lab.PAIRS.items():
        w = np.array(view(preset="aligned", pair=name, query=0)["weights"])
        least[name] = min(w[i, a] for i, a in enumerate(pair["align"]))
        assert least[name] > 0.5, name  # a clear majority of the row, in every pair
    assert least["en-de"] < least["en-fr"] and least["en-de"] < least["en-de-short"]
    claim(
        f"at least {least['en-fr']:.2f} of its row's weight in the French pair, at least "
        f"{least['en-de']:.2f} in the longer German pair"
    )
    claim(f"at least {least['en-de-short']:.2f} in the short one")
    # the crossing: chat -> cat (key 2), noir -> black (key 1)
    assert lab.PAIRS["en-fr"]["align"][1:3] == [2, 1]
    assert lab.PAIRS["en-de"]["target"][-1] == "gesehen"
    assert lab.PAIRS["en-de"]["align"][-1] == 2  # gesehen <- seen, moved to the end
    claim("the German pair moves *gesehen* to the end")


def test_temperature_and_new_weights_keep_the_rectangle_the_blank_pads_and_the_sums():
    base = np.array(view()["weights"])
    for changes in ({"temperature": 0.3}, {"temperature": 5.0}, {"seed": 1}, {"seed": 7}):
        w = np.array(view(**changes)["weights"])
        assert w.shape == (4, 6) and np.all(w[:, 4:] == 0.0)
        np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
        assert not np.allclose(w, base)
    sharp = np.array(view(temperature=0.3)["entropy_bits"])
    flat = np.array(view(temperature=5.0)["entropy_bits"])
    assert np.all(sharp < np.array(view()["entropy_bits"])) and np.all(flat > sharp)


def test_the_decoder_self_attention_beside_it_is_causal():
    s = np.array(view()["self"]["weights"])
    assert s.shape == (4, 4) and np.all(np.triu(s, 1) == 0.0)
    claim("a square with its upper triangle masked")


def test_self_attention_is_the_special_case():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 8))
    W = {n: rng.normal(size=(8, 8)) for n in ("W_Q", "W_K", "W_V", "W_O")}
    a, wa = cross_attention(x, x, n_heads=2, **W)
    b, wb = multi_head_attention(x, n_heads=2, **W)
    assert np.array_equal(a, b) and np.array_equal(wa, wb)
    claim("`cross_attention(x, x, ...)` returns exactly what `multi_head_attention(x, ...)` does")


def test_keys_and_values_once_counts():
    claim("that is 20 rows of keys (and of values) per layer, instead of 600")
    claim("a 64 × 64 grid, and its network")


def test_a_fully_padded_source_is_zeros_as_in_lesson_4():
    rng = np.random.default_rng(1)
    x, src = rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    W = [rng.normal(size=(4, 4)) for _ in range(3)]
    out, w = cross_attention(x, src, *W, source_mask=padding_mask([0], 5)[0])
    assert np.all(out == 0.0) and np.all(w == 0.0) and not np.isnan(out).any()
    claim("all-zero weights and a zero output, never NaN")


def test_the_python_cell_shapes_and_pad_column():
    from attention_labs import cells

    (cell,) = fences("pycell")
    out = cells.run_cell(cell, cells.new_namespace(), "<cell>")
    assert out["error"] is None
    assert "(1, 3, 5) (3, 4)" in str(out["outputs"])
    ns = cells.new_namespace()
    exec(cell, ns)  # noqa: S102
    w = ns["weights"][0]
    assert np.all(w[:, 4] == 0.0)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def rounded_both_ways(x):
    x = np.atleast_1d(x)
    lo, hi = np.floor(x * 100 + 1e-9) / 100, np.ceil(x * 100 - 1e-9) / 100
    for bits in itertools.product((False, True), repeat=len(x)):
        yield np.where(bits, hi, lo)


def test_the_numeric_exercise_accepts_every_two_decimal_reader():
    spec = exercise_spec("numeric")
    ns = exercise.run_setup(spec, "lesson")
    assert ns["scores"].shape == (2, 3)  # a 2 x 3 cross-attention pattern
    assert np.all(ns["scores"] * 100 == np.round(ns["scores"] * 100))  # exact in 2 decimals
    worst = 0.0
    for row in range(2):
        ex = np.exp(ns["scores"][row])
        for real, exact in ((np.ones(3, bool), ns["weights"]), (ns["real"], ns["padded"])):
            for e in rounded_both_ways(ex):
                for total in rounded_both_ways(e[real].sum()):
                    for w in rounded_both_ways(np.where(real, e, 0) / total[0]):
                        worst = max(worst, np.abs(w - exact[row]).max())
    assert worst <= spec["tolerance"] == ns["tolerance"]
    assert spec["tolerance"] - worst < 0.005  # not much looser
    assert np.all(ns["padded"][:, 2] == 0.0)
    prompt = exercise.fill_template(spec["prompt"], ns, "lesson")
    assert "Rounding every step to two decimals is fine" in re.sub(r"\s+", " ", prompt)
    for field in ("solution", "hint"):
        bare = re.sub(r"\{\{.*?\}\}", "", spec[field])
        bare = re.sub(r"(keys?|query|row|Row|token) \d|_\d|sum to 1|is 0", "", bare)
        assert not re.search(r"\d", bare), (field, re.findall(r".{20}\d.{20}", bare))


def test_the_code_exercise_checks_the_edge_cases_the_lesson_teaches():
    spec = exercise_spec("code")
    names = [c["name"] for c in spec["checks"]]
    assert "a fully padded source gives zeros, never NaN" in names
    assert "PAD keys get weight exactly 0 from every query" in names
    assert "the pattern is rectangular, (seq_len_q, seq_len_k)" in names
    # a solution with -inf and a plain softmax fails exactly the fully padded check
    naive = """
import numpy as np
def cross_attend(x_target, x_source, W_Q, W_K, W_V, source_len):
    Q, K, V = x_target @ W_Q, x_source @ W_K, x_source @ W_V
    s = Q @ K.T / np.sqrt(Q.shape[-1])
    s = np.where(np.arange(K.shape[0]) < source_len, s, -np.inf)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
    return w @ V, w
"""
    from attention_labs import cells

    # checked as the reader's browser checks it (cells.check_code)
    result = cells.check_code(naive, spec["checks"], names=exercise.interface(spec, "lesson"))
    assert result["run"]["error"] is None, result["run"]
    failed = [case["name"] for case in result["cases"] if not case["passed"]]
    assert failed == ["a fully padded source gives zeros, never NaN"]


def test_sources_name_the_papers_the_brief_asks_for():
    sources = SOURCE.split("## Sources", 1)[1]
    assert "Vaswani" in sources and "(2017)" in sources and "NeurIPS" in sources
    assert "Rombach" in sources and "(2022)" in sources and "CVPR" in sources


def test_stable_diffusions_rectangles_and_its_fixed_77_token_prompt():
    """Issue 25: "4,096 queries reading a prompt of a few dozen tokens" holds only in the
    U-Net's outermost blocks, and the CLIP prompt is always 77 tokens."""
    sides = [64 // 2**level for level in range(4)]
    queries = [s * s for s in sides]
    assert queries == [4096, 1024, 256, 64]
    claim("a 512 × 512 image downsampled by 8 is a 64 × 64 grid")
    claim("cross-attention layers have 4,096, 1,024 and 256 queries, and 64 in the middle block")
    claim("The keys are always 77: its text encoder, CLIP's (Radford et al., 2021), pads or cuts")
    claim(
        "The rectangles run from 4,096 × 77, tall and thin, to 64 × 77, a little wider than tall."
    )
    assert "a few dozen tokens" not in TEXT


def test_devlin_is_not_cited_for_the_padding_mask():
    """Issue 25: BERT's paper does not describe the padding mask."""
    assert "Devlin" not in SOURCE
    assert "Radford, A. et al. (2021)" in SOURCE.split("## Sources", 1)[1]
