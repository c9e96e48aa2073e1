"""Every number and lab claim in the prose of docs/lessons/03-attention-pattern.md, computed
here with attention_labs. The prose's numbers are ``{{ expr }}`` filled at build time from
the lesson's ```numbers fence (build_scripts/hooks/numbers.py); numeric claims are
formatted here and looked up verbatim in the lesson as the build renders it, so changing
the prose, its numbers fence or the code without the others fails a test."""

import itertools
import json
import math
import re

import lesson_text
import numpy as np
import pytest
import yaml
from attention_labs import attention_logits, entropy_bits, real_maps, softmax
from attention_labs.labs import run_lab
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts.hooks import exercise, scanner

LESSON_PATH = ROOT / "docs" / "lessons" / "03-attention-pattern.md"
SOURCE, RENDERED, TEXT = lesson_text.read("lessons/03-attention-pattern.md")
# The prose as the build renders it: numbers filled, the numbers fence gone, other fences kept.
SCORES = (2, 1, 0.1)
SEEDS = range(5)


claim = lesson_text.claimer(TEXT)


def triple(values):
    return "\\((" + ", ".join(f"{v:.3f}" for v in values) + ")\\)"


def lab_fences():
    """The lesson's lab fences by lab name: {name: parameters}."""
    fences = [yaml.safe_load(b) for b in re.findall(r"^```lab\n(.*?)^```$", SOURCE, re.S | re.M)]
    return {f.pop("lab"): f for f in fences}


def lesson_lab_params():
    """The parameters of the lesson's attention_pattern lab fence."""
    return lab_fences()["attention_pattern"]


def mean_entropy(**overrides):
    """Mean row entropy of the lesson's lab, averaged over seeds 0..4."""
    params = lesson_lab_params()
    return float(
        np.mean(
            [
                np.mean(
                    run_lab("attention_pattern", {**params, **overrides, "seed": seed})["result"][
                        "entropy_bits"
                    ]
                )
                for seed in SEEDS
            ]
        )
    )


def default_entropy(**overrides):
    """Mean row entropy of the lesson's lab as the page first shows it (its default seed)."""
    params = {**lesson_lab_params(), **overrides}
    return float(np.mean(run_lab("attention_pattern", params)["result"]["entropy_bits"]))


# ----------------------------------------------------------------------------
# softmax, entropy, temperature


def test_the_prose_numbers_are_computed_not_typed():
    prose = re.sub(r"\s+", " ", SOURCE)
    assert "```numbers" in SOURCE
    for typed, expression in [
        ("(0.659, 0.242, 0.099)", "(({{ weights:.3f }})"),
        ("1.222 bits", "{{ entropy:.3f }} bits"),
        ("(0.864, 0.117, 0.019)", "{{ softmax(scores / t_sharp):.3f }}"),
        ("(0.502, 0.304, 0.194)", "{{ softmax(scores / t_flat):.3f }}"),
        ("deviation of 8 when", "deviation of {{ math.sqrt(d_head):g }} when"),
        ("layer 0, head 2 of", "layer {{ real_layer }}, head {{ real_head }} of"),
    ]:
        assert typed not in prose and expression in prose, typed
        assert typed.strip("()") in TEXT  # ... and the page shows the same number


def test_softmax_example_weights():
    weights = softmax(np.array(SCORES, dtype=float))
    np.testing.assert_allclose(weights, [0.659, 0.242, 0.099], atol=5e-4)
    claim(f"\\(s = ({', '.join(f'{s:g}' for s in SCORES)})\\)")
    claim(f"Softmax gives the weights {triple(weights)}")
    assert abs(weights[0] - 2 / 3) < 0.01  # "about two thirds of the budget"
    claim("the best-matching key gets about two thirds of the budget")


def test_softmax_example_entropy():
    weights = softmax(np.array(SCORES, dtype=float))
    entropy = float(entropy_bits(weights))
    assert f"{entropy:.3f}" == "1.222"
    claim(f"{triple(weights)}, has an entropy of {entropy:.3f} bits")


@pytest.mark.parametrize(
    "temperature,phrase",
    [
        (0.5, "With \\(T = 0.5\\) the same scores become {}: sharper."),
        (2, "With \\(T = 2\\) they become {}: flatter."),
    ],
)
def test_temperature_examples(temperature, phrase):
    scores = np.array(SCORES, dtype=float)
    weights = softmax(scores / temperature)
    # the same through the lab's own logits: a 1-d "key" per score, no sqrt(d) scale
    logits = attention_logits(
        np.ones((1, 1)), scores[:, None], scale=False, temperature=temperature
    )
    np.testing.assert_allclose(softmax(logits)[0], weights, rtol=0, atol=1e-15)
    claim(phrase.format(triple(weights)))
    base = softmax(scores)
    if temperature < 1:
        assert weights[0] > base[0]  # sharper
    else:
        assert weights[0] < base[0]  # flatter
    assert list(np.argsort(weights)) == list(np.argsort(base))  # order kept


def test_temperature_limits():
    scores = np.array(SCORES, dtype=float)
    assert np.allclose(softmax(scores / 1000), 1 / 3, atol=1e-3)  # approaches uniform
    assert softmax(scores / 0.01)[0] > 1 - 1e-12  # approaches all-or-nothing
    claim(
        "As \\(T\\) grows the row approaches uniform; as it shrinks towards 0 the row "
        "approaches all-or-nothing on the top key."
    )


def test_entropy_is_zero_on_one_key_and_log2_n_when_uniform():
    n = 8
    assert entropy_bits(np.eye(n)[3]) == 0.0
    assert entropy_bits(np.full(n, 1 / n)) == pytest.approx(math.log2(n), abs=1e-12)
    assert f"{math.log2(n):g}" == "3"
    claim(f"{math.log2(n):g} bits for a sentence of {n} tokens")
    claim("It is 0 bits when all the weight sits on one key")


# ----------------------------------------------------------------------------
# the sqrt(d_head) scale


def test_dot_product_of_unit_variance_vectors_has_std_sqrt_d_head():
    d_head = 64
    rng = np.random.default_rng(0)
    q = rng.standard_normal((20000, d_head))
    k = rng.standard_normal((20000, d_head))
    dots = np.einsum("nd,nd->n", q, k)
    std = math.sqrt(d_head)
    assert f"{std:g}" == "8"
    assert abs(dots.std() / std - 1) < 0.03
    claim(f"a standard deviation of {std:g} when \\(d_{{\\text{{head}}}} = {d_head}\\)")
    # "Dividing by sqrt(d_head) brings the spread back to about 1"
    assert abs((dots / std).std() - 1) < 0.03
    claim("brings the spread back to about 1")


# ----------------------------------------------------------------------------
# the lab and "Things to try"


def test_lesson_lab_fence_is_the_default_lab():
    params = lesson_lab_params()
    assert run_lab("attention_pattern", params) == run_lab("attention_pattern")


def test_scale_off_collapses_rows():
    on, off = mean_entropy(scale=True), mean_entropy(scale=False)
    assert off < on / 3
    params = lesson_lab_params()
    collapsed = [
        np.max(
            run_lab("attention_pattern", {**params, "scale": False, "seed": seed})["result"][
                "weights"
            ],
            axis=-1,
        )
        > 0.9
        for seed in SEEDS
    ]
    assert np.mean(collapsed) > 0.5  # over seeds, most rows put over 90% on one key
    # ...and on the page as the reader first sees it (the lab's default seed):
    on, off = default_entropy(scale=True), default_entropy(scale=False)
    assert off < on / 3
    weights = np.array(
        run_lab("attention_pattern", {**params, "scale": False})["result"]["weights"]
    )
    peaked = int((weights.max(axis=-1) > 0.9).sum())
    assert 0 < peaked < len(weights)
    claim(
        "Turn off the \\(\\sqrt{d_{\\text{head}}}\\) scale.** The rows sharpen: their mean "
        f"entropy falls from {on:.2f} to {off:.2f} bits, and {peaked} of the {len(weights)} rows "
        "now put over 90% of their weight on one key."
    )


def test_with_scale_entropy_changes_little_with_d_head():
    narrow, wide = mean_entropy(scale=True, d_head=16), mean_entropy(scale=True, d_head=256)
    assert abs(wide - narrow) < 0.1 * narrow
    narrow, wide = default_entropy(d_head=16), default_entropy(d_head=256)
    assert abs(wide - narrow) < 0.15 * narrow  # "changes little" on the default view
    # ...little next to what the scale does at either width:
    for d in (16, 64, 256):
        assert default_entropy(scale=False, d_head=d) < default_entropy(d_head=d) / 2
    claim(
        "With it, the spread changes little with the size (a mean entropy of "
        f"{narrow:.2f} bits at `d_head` 16, {wide:.2f} at 256)"
    )


def test_without_scale_entropy_falls_as_d_head_grows():
    entropies = [mean_entropy(scale=False, d_head=d) for d in (16, 64, 256)]
    assert entropies[0] > entropies[1] > entropies[2]  # on average over seeds
    # ...and on the default view, at the three widths the prose names:
    soft, mid, sharp = (default_entropy(scale=False, d_head=d) for d in (16, 64, 256))
    assert soft > mid > sharp
    assert soft < 0.5 * default_entropy(d_head=16)  # "sharper already at 16"
    claim(
        f"without it, the rows are sharper already at 16 ({soft:.2f} bits) and sharpen as the "
        f"head widens ({mid:.2f} at 64, {sharp:.2f} at 256)"
    )


def test_causal_first_row_has_weight_one_and_zero_entropy():
    params = lesson_lab_params()
    for seed in SEEDS:
        res = run_lab("attention_pattern", {**params, "causal": True, "seed": seed})["result"]
        assert res["weights"][0][0] == 1.0
        assert res["entropy_bits"][0] == 0.0
        assert all(w == 0.0 for w in res["weights"][0][1:])
    claim("The first row can only see itself, so its single weight is 1 and its entropy is 0 bits.")


@pytest.mark.parametrize(
    "preset,target",
    [
        ("previous_token", lambda i: max(i - 1, 0)),
        ("first_token", lambda i: 0),
        ("self", lambda i: i),
    ],
)
def test_head_styles_look_for_one_position(preset, target):
    params = {**lesson_lab_params(), "preset": preset}
    top = run_lab("attention_pattern", params)["result"]["top_key"]
    assert top == [target(i) for i in range(len(top))]
    claim(
        "*Previous token*, *first token* and *self* imitate heads found in real models: "
        "each query looks for one particular position."
    )


# ----------------------------------------------------------------------------
# Python cells and exercises (build_scripts/hooks/pycell.py, exercise.py)


def lesson_fences(kind):
    return [fence.body for fence in scanner.find_fences(SOURCE, (kind,))]


def test_python_cells_show_the_example_row_and_a_pattern_whose_rows_sum_to_1():
    from attention_labs import cells

    first, second = lesson_fences("pycell")
    ns = cells.new_namespace()
    out = cells.run_cell(first, ns, "<cell 1>")
    weights = softmax(np.array(SCORES, dtype=float))
    assert out["outputs"][0]["text"] == f"weights: {weights.round(3)}\n"
    assert out["value"] == repr(float(entropy_bits(weights)))  # "the entropy of the example row"
    claim("The last line's value is shown under the cell: the entropy of the example row above")
    out = cells.run_cell(second, ns, "<cell 2>")
    assert out["error"] is None and out["value"] == "array([1., 1., 1., 1.])"
    assert [o["type"] for o in out["outputs"]] == ["heatmap"]
    claim("draws it with `show_heatmap`")
    claim("run the first one before the second")


def by_hand_exercise():
    """The numeric exercise's spec and its setup's namespace."""
    specs = [exercise.parse_exercise(b, "lesson") for b in lesson_fences("exercise")]
    spec = next(s for s in specs if s["kind"] == "numeric")
    return spec, exercise.run_setup(spec, "lesson")


def filled(spec, ns, field):
    return re.sub(r"\s+", " ", exercise.fill_template(spec[field], ns, "lesson"))


def test_exercise_sizes_match_the_prose():
    by_hand, ns = by_hand_exercise()
    seq_len, d_head = ns["Q"].shape
    assert (seq_len, d_head) == (3, 2) and ns["K"].shape == (3, 2)
    prompt = filled(by_hand, ns, "prompt")
    assert "Three tokens have 2-dimensional queries and keys" in prompt
    # Issue 25: no O = AV before the values are taught (lesson 5)
    assert "V" not in ns and "O" not in ns
    assert [a["name"] for a in by_hand["answers"]] == ["scores", "weights"]
    assert "AV" not in prompt and "output" not in prompt
    assert "\\(d_{\\text{head}} = 2\\)" in prompt
    assert "\\(S = QK^{\\top} / \\sqrt{ 2 }\\)" in prompt
    np.testing.assert_allclose(ns["S"], attention_logits(ns["Q"], ns["K"]))
    specs = [exercise.parse_exercise(b, "lesson") for b in lesson_fences("exercise")]
    masked = next(s for s in specs if s["kind"] == "code")
    assert any("5 tokens" in c["name"] for c in masked["checks"])


def test_the_real_head_is_the_models_strongest_previous_token_head():
    """The lesson's embedded map (an ```attention-map fence) and what the prose says of it."""
    (body,) = re.findall(r"^```attention-map\n(.*?)^```$", SOURCE, re.S | re.M)
    fence = yaml.safe_load(body)
    asset = json.loads(
        (
            ROOT / "docs" / "assets" / "attention" / fence["model"] / f"{fence['sentence']}.json"
        ).read_text("utf-8")
    )
    layer, head = fence["layer"], fence["head"]
    claim(f"layer {layer}, head {head} of all-MiniLM-L6-v2")
    assert asset["model"]["id"].endswith("/all-MiniLM-L6-v2")
    scores = np.array(asset["head_stats"]["previous_token"])
    # "the strongest of its kind in this model"
    assert scores[layer, head] == scores.max()
    claim("the strongest of its kind in this model")
    # "Every query after the first puts nearly all of its weight on the token just before it"
    weights = real_maps.decode_attention(asset)[layer, head]
    assert all(weights[q, q - 1] > 0.95 for q in range(1, asset["seq_len"]))
    claim("Every query after the first puts nearly all of its weight on the token just before it")
    claim("*verdant* is `ve`, `rdan` and `t`, three tokens")
    i = asset["tokens"]["text"].index("ve")
    assert asset["tokens"]["text"][i : i + 3] == ["ve", "rdan", "t"]


# ----------------------------------------------------------------------------
# the exercise's tolerance: a reader who rounds every step to two decimals


def rounded_both_ways(x):
    """Every two-decimal rounding of the entries of 1-D `x`, each down or up."""
    lo, hi = np.floor(x * 100 + 1e-9) / 100, np.ceil(x * 100 - 1e-9) / 100
    for bits in itertools.product((False, True), repeat=len(x)):
        yield np.where(bits, hi, lo)


def two_decimal_worst_case(Q, K):
    """The largest error, per answer (scores, weights), of a reader who keeps two decimals
    at every step: 1/sqrt(d_head) taken as anything from 1/1.42 to 0.71, every score,
    exponential, row sum and weight rounded down or up (all combinations)."""
    S = attention_logits(Q, K)
    A = softmax(S)
    dots = Q @ K.T
    worst = np.zeros(2)
    for i in range(len(Q)):
        for inv_root in (1 / 1.41, 0.71, 1 / 1.42, 0.70, 1 / math.sqrt(2)):
            for s in rounded_both_ways(dots[i] * inv_root):
                for e in rounded_both_ways(np.exp(s)):
                    for total in rounded_both_ways(np.array([e.sum()])):
                        for w in rounded_both_ways(e / total):
                            errors = [abs(s - S[i]), abs(w - A[i])]
                            worst = np.maximum(worst, [e.max() for e in errors])
    return worst


def test_the_tolerance_accepts_every_two_decimal_reader():
    spec, ns = by_hand_exercise()
    worst = two_decimal_worst_case(ns["Q"], ns["K"])
    assert worst.max() <= spec["tolerance"]  # each of the two answers
    assert spec["tolerance"] - worst.max() < 0.005  # ...and not much looser than needed
    assert ns["tolerance"] == spec["tolerance"]  # the prompt's number is the fence's
    assert "Rounding every step to two decimals is fine" in filled(spec, ns, "prompt")
    # a reader rounding to nearest (the usual way) is well inside it
    r2 = lambda x: np.round(x, 2)  # noqa: E731
    S = r2(ns["dots"] * r2(1 / math.sqrt(2)))
    e = r2(np.exp(S))
    w = r2(e / r2(e.sum(axis=1, keepdims=True)))
    assert np.abs(w - ns["A"]).max() <= spec["tolerance"] / 2


def test_the_worked_solution_and_hint_have_no_typed_numbers():
    spec, ns = by_hand_exercise()
    for field in ("solution", "hint", "prompt"):
        text = spec[field]
        # outside {{ }}, KaTeX commands and "query 1"-style names, no digit is typed
        bare = re.sub(r"\{\{.*?\}\}", "", text)
        bare = re.sub(r"(query|key|token|dim|row) \d", "", bare)
        bare = re.sub(r"\\[a-zA-Z]+", "", bare)
        bare = re.sub(r"\(\d\d-[a-z-]+\.md\)", "", bare)  # links to lessons
        assert not re.search(r"\d", bare), (field, re.findall(r".{20}\d.{20}", bare))
    # "(twice)": query 2's first two scores are equal
    assert ns["S"][1, 0] == ns["S"][1, 1]
    assert "(twice)" in spec["solution"]


# ----------------------------------------------------------------------------
# keys are matched, values are averaged; the content preset; prerequisites


def test_keys_are_matched_and_values_are_averaged():
    claim("Be careful about what gets averaged: **not the keys**.")
    claim("Keys are only matched against the query, to produce the scores.")
    claim("the update is the weighted average of the values")
    claim("[Values and the update](05-values-and-the-update.md)")
    assert "what the other tokens offer" not in TEXT and "what it offers" not in TEXT


def test_the_content_head_is_random_and_gives_different_tokens_different_keys():
    from attention_labs.labs.attention_pattern import queries_and_keys

    params = lesson_lab_params()
    tokens = params["tokens"]
    assert params["preset"] == "content"
    _, K = queries_and_keys(tokens, "content", params["d_head"], 0)
    assert len({tuple(k) for k in K.round(12)}) == len(tokens)
    claim("The head is **synthetic and random**, not trained")
    # Issue 25: the convention of lesson 2 (case-folded words plus positions), not a new one
    claim("its tokens are made as in every lab of these lessons")
    claim("like *The* and *the* here (one word, its case ignored), gets a related but")
    claim("different key, and two different words never share one")
    assert "two different tokens, even *The* and *the*, never share a key" not in TEXT
    _, K_the = queries_and_keys(["the", "x"], "content", 256, 0)
    _, K_The = queries_and_keys(["The", "x"], "content", 256, 0)
    np.testing.assert_array_equal(K_the, K_The)  # case is ignored
    the, The = tokens.index("the"), tokens.index("The")
    _, K = queries_and_keys(tokens, "content", 256, 0)
    assert 0.3 < np.corrcoef(K[the], K[The])[0, 1] < 0.95  # related, not equal
    # "a word repeated at another position gets a related but different key"
    _, K = queries_and_keys(["x", "y", "x"], "content", 256, 0)
    corr = np.corrcoef(K)
    assert 0.3 < corr[0, 2] < 0.95 and abs(corr[0, 1]) < 0.3
    claim("So a word repeated at another")


def test_prerequisites_are_lessons_1_and_2():
    front = meta.get_data(SOURCE)[1]
    assert front["prerequisites"] == ["01-why-attention", "02-queries-and-keys"]


# ----------------------------------------------------------------------------
# the scaling lab (its fence is the lab's default view)


def scaling_default():
    params = lab_fences()["scaling"]
    out = run_lab("scaling", params)
    assert out == run_lab("scaling")  # the fence is the lab's default
    return out["result"]


def test_scaled_rows_keep_their_spread_at_every_width():
    res = scaling_default()
    sc = res["scaled"]
    assert min(sc["entropy_bits"]) > 0.75 * res["max_entropy_bits"]  # near uniform's
    assert max(sc["entropy_bits"]) - min(sc["entropy_bits"]) < 0.1 * res["max_entropy_bits"]
    assert max(sc["gradient"]) < 1.1 * min(sc["gradient"])  # flat
    claim(
        f"the mean entropy stays between {min(sc['entropy_bits']):.2f} and "
        f"{max(sc['entropy_bits']):.2f} bits (a uniform row would have "
        f"{res['max_entropy_bits']:g}), and the median row's \\(\\lVert J \\rVert_F\\) stays "
        f"between {min(sc['gradient']):.4f} and {max(sc['gradient']):.4f} (the lab prints it "
        'to the same four decimals, as the "Jacobian norm").'
    )
    claim(f"What the default view shows, with {res['seq_len']} rows:")


def test_unscaled_entropy_collapses_and_the_gradient_vanishes():
    res = scaling_default()
    un, sc = res["unscaled"], res["scaled"]
    widths = res["d_heads"]
    h, g = np.array(un["entropy_bits"]), np.array(un["gradient"])
    assert h[0] > 5 * h[-1]  # "collapses"
    assert np.all(np.diff(h) < 0.05)  # never rises by more than noise as d_head grows
    assert g[-1] < sc["gradient"][-1] / 100  # "vanishes": over 100 times smaller
    assert np.all(h[1:] < np.array(sc["entropy_bits"])[1:])
    ratio = sc["gradient"][-1] / g[-1]
    claim(
        f"from {h[0]:.2f} bits at {widths[0]} to {h[-1]:.2f} at {widths[-1]}, and **the "
        f"Jacobian vanishes, and with it the gradient**: at {widths[-1]} the median row's "
        f"\\(\\lVert J \\rVert_F\\) is {g[-1]:.4f}, {ratio:,.0f} times smaller than with the "
        "scale."
    )
    # over seeds too, not only on the default view
    for seed in range(1, 5):
        other = run_lab("scaling", {"seed": seed})["result"]
        assert other["unscaled"]["gradient"][-1] < other["scaled"]["gradient"][-1] / 20
        assert other["unscaled"]["entropy_bits"][-1] < other["scaled"]["entropy_bits"][-1] / 5


def test_a_little_spread_helps_at_the_smallest_width():
    res = scaling_default()
    un, sc = res["unscaled"]["gradient"][0], res["scaled"]["gradient"][0]
    assert un > sc
    # "the Jacobian is largest for a row that is neither uniform nor one-hot"
    from attention_labs.labs.scaling import jacobian_norm

    n = res["seq_len"]
    sharpness = np.linspace(0, 30, 301)  # scores (0, 1, ..., 0) * sharpness: uniform -> one-hot
    norms = [jacobian_norm(softmax(np.eye(n)[0] * a)) for a in sharpness]
    best = int(np.argmax(norms))
    assert 0 < best < len(sharpness) - 1 and norms[-1] < 1e-6
    claim("the Jacobian is largest for a row that is neither uniform nor one-hot")
    claim(
        f"the unscaled \\(\\lVert J \\rVert_F\\) ({un:.2f}) is even a little larger than the "
        f"scaled one ({sc:.2f})"
    )


def test_the_jacobian_formula_is_the_softmax_jacobian():
    import torch
    from attention_labs.labs.scaling import softmax_jacobian

    z = torch.tensor([2.0, 1.0, 0.1], dtype=torch.float64)
    J = torch.func.jacrev(lambda x: torch.softmax(x, dim=-1))(z).numpy()
    np.testing.assert_allclose(softmax_jacobian(softmax(z.numpy())), J, atol=1e-15)
    one_hot = np.eye(4)[1]
    assert np.all(softmax_jacobian(one_hot) == 0)  # "every entry of J is 0"
    claim("every \\(a_j\\) is 0 or 1, so every entry of \\(J\\) is 0")


def test_one_name_per_thing_and_the_jacobian_is_not_called_the_gradient():
    """Issue 25: "length" is kept for the norm (lessons 2 and 5), ‖J‖_F is softmax's
    Jacobian, not "the gradient", the symbols stay s (scores) and a / A (weights), and the
    number of keys is `seq_len`, not n."""
    claim("A query and a key each have \\(d_{\\text{head}}\\) components")
    assert "vectors of length \\(d_{\\text{head}}\\)" not in TEXT
    claim("call its scores \\(s\\)")
    claim("its weights \\(a = \\operatorname{softmax}(s)\\), which is row \\(i\\) of \\(A\\)")
    claim("J = \\operatorname{diag}(a) - a\\,a^{\\top}")
    claim("\\(J\\) is not itself the gradient, but every gradient that flows back")
    for gone in (
        "softmax}(z)",
        "\\partial z_k",
        "diag}(p)",
        "the gradient stays",
        "unscaled gradient",
    ):
        assert gone not in TEXT, gone
    claim(
        "\\(\\log_2 \\text{seq\\_len}\\) bits, when the weight is spread evenly over all `seq_len`"
    )
    assert "\\log_2 n" not in TEXT


def test_the_real_head_is_not_called_important_and_lesson_12_is_named():
    claim("A weight this large says where the query *looks*. It does not say that the token")
    claim("for instance by removing the head and measuring what is lost.")
    assert "(12-real-heads.md#a-high-weight-is-not-the-same-as-importance)" in SOURCE
    sources = SOURCE[SOURCE.index("## Sources") :]
    assert "Attention is not Explanation" in sources
    assert "Attention is not not Explanation" in sources
