"""Every number and lab claim in the prose of docs/lessons/02-queries-and-keys.md, computed
here with attention_labs. The prose's numbers are ``{{ expr }}`` filled at build time from
the lesson's ```numbers fence (build_scripts/hooks/numbers.py); numeric claims are formatted
here and looked up verbatim in the lesson as the build renders it. Every claim is checked
on each lab's default view (the parameters of the lesson's fences) or on the exact
settings the prose tells the reader to choose."""

import math
import re

import lesson_text
import numpy as np
import pytest
import yaml
from attention_labs import attention_logits, cells
from attention_labs.labs import run_lab
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts.hooks import exercise, scanner

LESSON_PATH = ROOT / "docs" / "lessons" / "02-queries-and-keys.md"
SOURCE, RENDERED, TEXT = lesson_text.read("lessons/02-queries-and-keys.md")


claim = lesson_text.claimer(TEXT)


def fence_params(lab):
    for body in re.findall(r"^```lab\n(.*?)^```$", SOURCE, re.S | re.M):
        params = yaml.safe_load(body)
        if params.pop("lab") == lab:
            return params
    raise AssertionError(f"no {lab} fence")


def geo(**changes):
    return run_lab("qk_geometry", {**fence_params("qk_geometry"), **changes})["result"]


def pick(**changes):
    return run_lab("query_picker", {**fence_params("query_picker"), **changes})["result"]


def test_front_matter():
    assert meta.get_data(SOURCE)[1]["prerequisites"] == ["01-why-attention"]


@pytest.mark.parametrize("lab", ["qk_geometry", "query_picker"])
def test_the_fences_are_the_labs_default_views(lab):
    assert run_lab(lab, fence_params(lab)) == run_lab(lab)


# ----------------------------------------------------------------------------
# sizes


@pytest.mark.parametrize(
    "name,d_model,n_heads", [("GPT-2 small", 768, 12), ("GPT-3 (175B)", 12288, 96)]
)
def test_the_size_table(name, d_model, n_heads):
    d_head = d_model // n_heads
    assert d_head * n_heads == d_model
    row = f"| {name} | {d_model:,} | {d_head} | {d_model // d_head} | {d_model * d_head:,} |"
    claim(row)
    assert "| 768 |" not in SOURCE and "12,288" not in SOURCE.split("## Sources")[0]


def test_the_ratios_in_words():
    claim(
        "in a space 12 times narrower than the vectors it reads, and a GPT-3 head in one 96 times"
    )
    assert (768 // 64, 12288 // 128) == (12, 96)


# ----------------------------------------------------------------------------
# the geometry lab


def test_score_is_lengths_times_cosine_on_the_default_view():
    res = geo()
    for j in range(4):
        product = (
            res["query_length"]
            * res["key_lengths"][j]
            * math.cos(math.radians(res["angles_deg"][j]))
        )
        assert res["scores"][j] == pytest.approx(product, abs=1e-9)


def test_default_view_aligned_angled_orthogonal_opposite():
    res = geo()
    s, a, w = res["scores"], res["angles_deg"], res["weights"]
    assert a[0] == pytest.approx(0, abs=1e-9) and 0 < a[1] < 90
    assert a[2] == pytest.approx(90) and s[2] == 0
    assert a[3] == pytest.approx(180) and s[3] < 0
    assert s[0] > s[1] > s[2] > s[3]
    claim(
        f"key 1 points exactly the query's way (it is longer than the query) and scores "
        f"{s[0]:g}; key 2, at {a[1]:.0f}°, "
        f"scores {s[1]:g}; key 3 is at a right angle and scores {s[2]:g}; key 4 points the "
        f"opposite way and scores {s[3]:g}"
    )
    assert w[3] < 1e-3  # "almost none"
    claim(f"The softmax gives key 1 {w[0]:.2f} of the weight and key 4 almost none ({w[3]:.5f})")


def test_shortening_key_1_keeps_its_direction_and_key_2_wins():
    before, after = geo(), geo(k1x=1.0, k1y=0.5)
    assert after["angles_deg"][0] == pytest.approx(before["angles_deg"][0], abs=1e-6)
    assert after["scores"][0] < before["scores"][0]
    assert after["top_key"] == 1 and after["key_lengths"][1] > after["key_lengths"][0]
    assert after["angles_deg"][1] > after["angles_deg"][0]  # "further off but now longer"
    claim(f"\\(({after['keys'][0][0]:g}, {after['keys'][0][1]:g})\\). Its direction is the same")
    claim(
        f"its score falls to {after['scores'][0]:g}, and key 2, further off but now longer, "
        f"wins ({after['scores'][1]:g})"
    )


def test_turning_a_key_follows_the_cosine():
    q = np.array(geo()["query"])
    length = math.hypot(*geo()["keys"][1])
    scores = []
    for deg in range(0, 181, 15):
        t = math.atan2(q[1], q[0]) + math.radians(deg)
        k = np.round([length * math.cos(t), length * math.sin(t)], 6)
        scores.append(geo(k2x=float(k[0]), k2y=float(k[1]))["scores"][1])
    assert scores == sorted(scores, reverse=True)  # largest aligned, falling to opposite
    assert scores[6] == pytest.approx(0, abs=1e-5) and scores[-1] < 0


def test_lengthening_the_query_sharpens_the_weights():
    base = geo()
    longer = geo(qx=2 * base["query"][0] * 0.75, qy=2 * base["query"][1] * 0.75)
    np.testing.assert_allclose(longer["scores"], 1.5 * np.array(base["scores"]))
    assert longer["keys"] == base["keys"]
    assert longer["weights"][0] > base["weights"][0]
    entropy = lambda p: -sum(x * math.log2(x) for x in p if x > 0)  # noqa: E731
    assert entropy(longer["weights"]) < entropy(base["weights"])
    claim(
        "Every score grows in proportion, so the differences between keys grow too and the "
        "weights sharpen"
    )


def test_dividing_by_sqrt_d_head_lowers_key_1s_weight():
    plain, scaled = geo(), geo(scale=True)
    np.testing.assert_allclose(scaled["logits"], np.array(plain["scores"]) / math.sqrt(2))
    assert scaled["weights"][0] < plain["weights"][0]
    claim(f"key 1's weight falls from {plain['weights'][0]:.2f} to {scaled['weights'][0]:.2f}")


# ----------------------------------------------------------------------------
# the query picker


def test_the_shapes_listed_are_the_labs():
    res = pick()
    sh = res["shapes"]
    claim(f"\\(X\\): ({sh['X'][0]}, {sh['X'][1]}), one row per token, `d_model` = {res['d_model']}")
    claim(f"`W_Q` and `W_K`: ({sh['W_Q'][0]}, {sh['W_Q'][1]}), `d_head` = {res['d_head']}")
    claim(f"\\(Q\\) and \\(K\\): ({sh['Q'][0]}, {sh['Q'][1]})")
    claim(f"\\(S = QK^\\top\\): ({sh['S'][0]}, {sh['S'][1]})")
    assert sh["S"] == [len(res["tokens"])] * 2
    claim(f"the first {res['shown_dims']} of its {res['d_head']} query numbers")
    claim("**synthetic: its `W_Q` and `W_K` are random**")


def test_the_default_winner_and_that_a_new_seed_changes_it():
    res, other = pick(), pick(seed=fence_params("query_picker")["seed"] + 1)
    t, k = res["tokens"], res["top_key"]
    assert (t[res["query"]], t[k]) == ("mole", "under")
    assert other["tokens"][other["top_key"]] != t[k]
    claim(
        f"the query of *mole* happens to score highest with the key of *under* "
        f"({res['scores'][k]:.2f}), which gets {res['weights'][k]:.2f} of the weight"
    )
    claim(f"the next seed makes it *{other['tokens'][other['top_key']]}*")


def test_the_grid_is_not_symmetric_and_keys_score_differently_per_query():
    S = np.array(pick()["S"])
    mole, dug = 1, 2
    assert S[mole, dug] != pytest.approx(S[dug, mole], abs=0.1)
    assert not np.allclose(S, S.T)
    assert len(set(np.round(S[:, dug], 6))) == len(S)  # one key, a different score per query
    claim("the score of *mole* looking for *dug* is not that of *dug* looking for *mole*")
    claim("the same key scores differently against different queries")
    claim("the grid is not symmetric")


@pytest.mark.parametrize("d_head", [2, 8, 64])
def test_changing_d_head_keeps_the_grid_seq_len_square(d_head):
    sh = pick(d_head=d_head)["shapes"]
    assert sh["S"] == [8, 8] and sh["Q"] == [8, d_head] and sh["W_Q"] == [64, d_head]
    claim("\\(S\\) stays `seq_len` × `seq_len`, whatever the width")


def test_the_python_cell_prints_a_grid_that_is_not_symmetric():
    (cell,) = [f.body for f in scanner.find_fences(SOURCE, ("pycell",))]
    out = cells.run_cell(cell, cells.new_namespace(), "<cell 1>")
    assert out["error"] is None
    assert "symmetric: False" in "".join(o["text"] for o in out["outputs"])
    # its matrices are not the exercise's (which would print the exercise's answer)
    ns = cells.new_namespace()
    cells.run_cell(cell, ns, "<cell 1>")
    ex = exercise.run_setup(exercises()["numeric"], "lesson")
    for name in ("X", "W_Q", "W_K"):
        a, b = np.asarray(ns[name]), np.asarray(ex[name])
        assert a.shape != b.shape or not np.array_equal(a, b), name
        assert not np.array_equal(a[: len(b)], b), name  # nor its first rows
    assert not np.array_equal(ns["S"][:2, :2], ex["S"])
    claim("(not the exercise's: work that one by hand)")


def test_each_lab_says_which_rule_it_uses_where_the_reader_meets_it():
    # the geometry lab: unscaled by default, the weights a softmax of the plain scores
    plain = geo()
    assert fence_params("qk_geometry")["scale"] is False
    np.testing.assert_allclose(plain["logits"], plain["scores"])
    claim("**This lab starts unscaled**: the softmax takes the plain scores")
    claim('the switch "Divide by √d_head" applies the rule real attention uses')
    # the query picker: weights from the scores divided by sqrt(d_head)
    from attention_labs import softmax

    res = pick()
    np.testing.assert_allclose(
        res["weights"], softmax(np.array(res["scores"]) / math.sqrt(res["d_head"])), atol=1e-12
    )
    claim("**Unlike the geometry lab above, this one is scaled**")
    claim(f"divided by \\(\\sqrt{{d_{{\\text{{head}}}}}} = {math.sqrt(res['d_head']):g}\\)")
    k = res["top_key"]
    unscaled = softmax(np.array(res["scores"]))
    assert unscaled.argmax() == k and unscaled[k] > res["weights"][k]
    claim(
        f"the top key would take {unscaled[k]:.2f} of the weight instead of "
        f"{res['weights'][k]:.2f}."
    )


# ----------------------------------------------------------------------------
# exercises


def exercises():
    specs = [
        exercise.parse_exercise(f.body, "lesson")
        for f in scanner.find_fences(SOURCE, ("exercise",))
    ]
    return {s["kind"]: s for s in specs}


def test_the_by_hand_exercise_has_whole_numbers_and_an_asymmetric_grid():
    ns = exercise.run_setup(exercises()["numeric"], "lesson")
    for name in ("Q", "K", "S"):
        assert np.all(ns[name] == np.round(ns[name])), name  # "Every entry is a whole number"
    np.testing.assert_array_equal(ns["S"], attention_logits(ns["Q"], ns["K"], scale=False))
    assert ns["S"][0, 1] != ns["S"][1, 0]
    assert ns["W_Q"].shape == ns["W_K"].shape == (3, 2)  # d_model 3 -> d_head 2
    prompt = re.sub(r"\s+", " ", exercises()["numeric"]["prompt"])  # filled from setup
    assert "`d_model` = {{ X.shape[1] }}" in prompt and "`d_head` = {{ W_Q.shape[1] }}" in prompt
    assert "Every entry is a whole number" in prompt


def test_the_code_exercise_checks_shape_a_known_case_and_non_square_w():
    names = [c["name"] for c in exercises()["code"]["checks"]]
    assert any("not square" in n for n in names)
    assert any("exercise above" in n for n in names)
    assert any("rows are queries" in n for n in names)


@pytest.mark.parametrize(
    "target", ["01-why-attention.md", "03-attention-pattern.md", "05-values-and-the-update.md"]
)
def test_it_links_back_and_forward(target):
    assert f"]({target})" in SOURCE


def test_the_token_convention_of_lessons_2_to_6_is_stated_once_here():
    """Issue 25: one convention for the synthetic labs' tokens (case-folded words plus a
    position vector), said once, here, where the reader first meets such a lab."""
    from attention_labs.labs import attention_pattern, eight_heads, query_picker, value_update

    claim('!!! note "How the labs of lessons 2 to 6 turn words into vectors"')
    claim("A token is a word with its case ignored: *The* and *the* are one word")
    claim("Its embedding is a fixed random vector for that word plus a vector for its position")
    claim("So the same word at two places gets two related but different vectors")
    # and the labs do it: the same word vector for "The" and "the", a different position
    np.testing.assert_array_equal(
        query_picker.token_embeddings(["The"], 0), query_picker.token_embeddings(["the"], 0)
    )
    np.testing.assert_array_equal(
        eight_heads._word_vector("The", 0), eight_heads._word_vector("the", 0)
    )
    np.testing.assert_array_equal(
        value_update.embeddings(["The", "x"], 0), value_update.embeddings(["the", "x"], 0)
    )
    np.testing.assert_array_equal(
        attention_pattern.queries_and_keys(["The", "x"], "content", 8, 0)[1],
        attention_pattern.queries_and_keys(["the", "x"], "content", 8, 0)[1],
    )
    X = value_update.embeddings(["the", "the"], 0)
    assert not np.allclose(X[0], X[1])  # positions tell them apart
    X = eight_heads.embeddings(["the", "the"], 0)
    assert not np.allclose(X[0], X[1])


def test_the_unscaled_comparison_does_not_contradict_the_geometry_lab():
    """Issue 25: "the plain scores are larger than in two dimensions" pointed the wrong way
    (the 2-D lab's top key took more of the weight unscaled). The lesson now says that the
    lengths matter as much as the width."""
    from attention_labs import softmax

    g, res = geo(), pick()
    unscaled = softmax(np.array(res["scores"])).max()
    assert g["weights"][0] > unscaled  # why the old sentence misled
    assert "larger than in two dimensions" not in TEXT
    claim(f"the geometry lab's key 1 took {g['weights'][0]:.2f} in two dimensions because its")
    claim("arrows are long")
    claim("each score adds up `d_head` products; the division undoes that growth")


# ----------------------------------------------------------------------------
# the note on normalisation


def test_the_normalisation_note_says_where_the_norm_sits_and_its_numbers_are_torchs():
    """LayerNorm and RMSNorm of the note's vector, against PyTorch's (the learned weights
    left at 1 and 0); GPT-2 and Llama normalise a layer's input, before W_Q, W_K, W_V."""
    import torch
    import torch.nn.functional as F
    from attention_labs.examples import layer_norm, rms_norm

    x = np.array([2.0, 4.0, 6.0, 8.0])
    ln, rms = layer_norm(x), rms_norm(x)
    t = torch.tensor(x)
    np.testing.assert_allclose(ln, F.layer_norm(t, (4,), eps=1e-5).numpy(), atol=1e-12)
    np.testing.assert_allclose(rms, F.rms_norm(t, (4,), eps=1e-6).numpy(), atol=1e-12)
    assert abs(ln.mean()) < 1e-12 and abs(ln.std() - 1) < 1e-5  # mean 0, spread 1
    assert abs(np.sqrt((rms**2).mean()) - 1) < 1e-6  # root mean square 1
    fmt = lambda v: ", ".join(f"{a:.3f}" for a in v)  # noqa: E731
    claim(
        f"the vector \\((2, 4, 6, 8)\\) becomes \\(({fmt(ln)})\\) under LayerNorm and "
        f"\\(({fmt(rms)})\\) under RMSNorm."
    )
    claim("In GPT-2 and in Llama, \\(x_i\\) is not the raw residual stream")
    claim("\\(Q = X W_Q\\), \\(K = X W_K\\) (and the values")
    claim("This placement, before the attention, is called *pre-LN*")
    claim("normalise *after* adding each layer's update instead (*post-LN*)")
    # MiniLM is the post-LN BERT architecture (its forward pass says so)
    from attention_labs.models import minilm

    assert "post-LN" in minilm.__doc__
    assert "(07-counting-parameters.md)" in SOURCE
    for source in ("Layer Normalization", "Root Mean Square Layer Normalization", "LLaMA"):
        assert source in SOURCE[SOURCE.index("## Sources") :]


# ----------------------------------------------------------------------------
# a trained head's scores (the real_scores lab)


def trained(**changes):
    from attention_labs.labs import real_scores

    fence = fence_params("real_scores")
    return run_lab("real_scores", real_scores.fence_params({**fence, **changes}, ROOT / "docs"))[
        "result"
    ]


def test_the_trained_head_lab_opens_on_the_previous_token_head_and_dug():
    fence = fence_params("real_scores")
    assert fence == {"model": "all-minilm-l6-v2", "sentence": "mole-animal", "query": 3}
    res = trained()
    t, q, top = res["tokens"], res["query"], res["top_key"]
    assert res["labels"][res["pick"]] == "layer 0, head 2: highest previous-token score"
    assert (t[q], t[top], top) == ("dug", "mole", q - 1)
    second = int(np.argsort(res["scores"])[-2])
    claim(
        f"The query of *dug* scores {res['scores'][top]:.1f} with the key of *mole*, the token "
        f"just before it, and the runner-up, *{t[second]}*, scores {res['scores'][second]:.1f}: "
        f"*mole* gets {res['weights'][top]:.3f} of the weight."
    )
    claim("The lab opens on the head listed first, layer 0, head 2, and on the query *dug*.")
    claim("(6 layers of 12 heads, `d_head` = 32)")


def test_every_token_after_cls_scores_the_one_before_it_highest():
    n = len(trained()["tokens"])
    tops = [trained(query=q)["top_key"] for q in range(1, n)]
    assert tops == list(range(n - 1))
    claim(f"for {n - 1} of the {n - 1} tokens after `[CLS]`, the top key is the token just before.")


def test_trained_scores_are_far_larger_than_the_random_heads():
    res = trained()
    lo, hi = res["score_range"]
    S = np.array(run_lab("query_picker", fence_params("query_picker"))["result"]["S"])
    assert hi - lo > 10 * (S.max() - S.min())
    m = lambda x: f"{x:.0f}".replace("-", "\u2212")  # noqa: E731
    claim(
        f"Over the whole grid they run from {m(lo)} to {m(hi)}, against {m(S.min())} to "
        f"{m(S.max())} for the random head above."
    )


def test_the_first_token_head_tops_on_cls_for_every_query():
    res = trained()
    pick = next(i for i, label in enumerate(res["labels"]) if "first-token" in label)
    assert res["labels"][pick].startswith("layer 4, head 5:")
    n = len(res["tokens"])
    on_cls = [trained(pick=pick, query=q)["top_key"] == 0 for q in range(n)]
    assert all(on_cls)
    claim(
        f"Pick another trained head, *layer 4, head 5*: for {n} of the {n} queries its top key "
        "is `[CLS]`, whatever the query."
    )
