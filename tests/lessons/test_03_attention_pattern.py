"""Every number and lab claim in the prose of docs/lessons/03-attention-pattern.md, computed
here with attention_labs. The prose's numbers are ``{{ expr }}`` filled at build time from
the lesson's ```numbers fence (build_scripts/hooks/numbers.py); numeric claims are
formatted here and looked up verbatim in the lesson as the build renders it, so changing
the prose, its numbers fence or the code without the others fails a test."""

import json
import math
import re

import numpy as np
import pytest
import yaml
from attention_labs import attention_logits, entropy_bits, real_maps, softmax
from attention_labs.labs import run_lab
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts import hooks
from build_scripts.hooks import exercise, scanner

LESSON_PATH = ROOT / "docs" / "lessons" / "03-attention-pattern.md"
SOURCE = LESSON_PATH.read_text(encoding="utf-8")
# The prose as the build renders it: numbers filled, the numbers fence gone, other fences kept.
RENDERED = hooks.render_page(meta.get_data(SOURCE)[0], "lessons/03-attention-pattern.md", kinds=())
TEXT = re.sub(r"\s+", " ", RENDERED)  # prose wraps lines anywhere: compare with single spaces
SCORES = (2, 1, 0.1)
SEEDS = range(5)


def claim(phrase):
    """Assert `phrase` (whitespace-normalised) is in the lesson."""
    phrase = re.sub(r"\s+", " ", phrase)
    assert phrase in TEXT, f"the lesson no longer says: {phrase!r}"


def triple(values):
    return "\\((" + ", ".join(f"{v:.3f}" for v in values) + ")\\)"


def lesson_lab_params():
    """The parameters of the lesson's lab fence."""
    (body,) = re.findall(r"^```lab\n(.*?)^```$", SOURCE, re.S | re.M)
    params = yaml.safe_load(body)
    assert params.pop("lab") == "attention_pattern"
    return params


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


def test_with_scale_entropy_barely_depends_on_d_head():
    narrow, wide = mean_entropy(scale=True, d_head=16), mean_entropy(scale=True, d_head=256)
    assert abs(wide - narrow) < 0.1 * narrow
    narrow, wide = default_entropy(d_head=16), default_entropy(d_head=256)
    assert abs(wide - narrow) < 0.1 * narrow  # also on the default view
    claim(
        "With it, the rows stay about as spread out at any size (a mean entropy of "
        f"{narrow:.2f} bits at `d_head` 16, {wide:.2f} at 256)"
    )


def test_without_scale_entropy_falls_as_d_head_grows():
    entropies = [mean_entropy(scale=False, d_head=d) for d in (16, 64, 256)]
    assert entropies[0] > entropies[1] > entropies[2]  # on average over seeds
    # The default view says only what holds there: 16 is much softer than 64 (at 256 the
    # rows are already near one key, and entropy need not fall further on this seed).
    soft, sharp = default_entropy(scale=False, d_head=16), default_entropy(scale=False)
    assert soft > 2 * sharp
    claim(f"without it, the spread depends on the size ({soft:.2f} bits at 16, {sharp:.2f} at 64)")


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


def test_exercise_sizes_match_the_prose():
    specs = [exercise.parse_exercise(b, "lesson") for b in lesson_fences("exercise")]
    by_hand = next(s for s in specs if s["kind"] == "numeric")
    ns = exercise.run_setup(by_hand, "lesson")
    seq_len, d_head = ns["Q"].shape
    assert (seq_len, d_head) == (3, 2) and ns["K"].shape == ns["V"].shape == (3, 2)
    claim("Three tokens have 2-dimensional queries, keys and values")
    claim("\\(d_{\\text{head}} = 2\\)")
    claim("\\(S = QK^{\\top} / \\sqrt{2}\\)")
    np.testing.assert_allclose(ns["S"], attention_logits(ns["Q"], ns["K"]))
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
