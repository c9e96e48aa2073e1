"""Every number and claim of docs/lessons/10-position.md, computed here with attention_labs
(the permutation, sinusoidal and rope labs and the position math). The prose's numbers come
from the lesson's ```numbers fence at build time; here they are recomputed and looked up,
formatted, in the lesson as the build renders it."""

import itertools
import math

import lesson_text
import numpy as np
import yaml
from attention_labs import apply_rope, rope_frequencies, sinusoidal_positions
from attention_labs.labs import run_lab

from build_scripts.hooks import exercise, scanner

NAME = "10-position"
SOURCE, RENDERED, TEXT = lesson_text.read(f"lessons/{NAME}.md")


claim = lesson_text.claimer(TEXT)


def fences(lab):
    return lesson_text.lab_params(SOURCE, lab)


def lab(name, **changes):
    return run_lab(name, fences(name) | changes)["result"]


def test_front_matter_and_links():
    front = yaml.safe_load(SOURCE.split("---")[1])
    assert front["prerequisites"] == ["02-queries-and-keys", "03-attention-pattern", "04-masking"]
    for link in ("02-queries-and-keys.md", "03-attention-pattern.md", "04-masking.md"):
        assert f"]({link}" in SOURCE, link


def test_equivariant_not_invariant():
    claim("This is called **permutation equivariance**")
    assert "permutation-invariant" not in SOURCE
    claim("The outputs are not unchanged as a list (that would be *invariance*)")


def test_the_default_swap_is_the_man_bit_the_dog():
    res = lab("permutation")
    assert res["shuffled_tokens"] == ["the", "man", "bit", "the", "dog"]
    assert res["tokens"] == ["the", "dog", "bit", "the", "man"]
    assert fences("permutation")["positions"] is False
    # "zero but for float rounding", and the numbers as the page prints them
    assert 0 <= res["pattern_diff"] < 1e-14 and 0 <= res["output_diff"] < 1e-14
    claim(f"the un-permuted difference is {res['pattern_diff']:.1e} for the pattern")
    # the lower pattern is the upper with dog's and man's rows and columns swapped
    A, As = np.array(res["weights"]), np.array(res["shuffled_weights"])
    swap = [0, 4, 2, 3, 1]
    np.testing.assert_allclose(As, A[swap][:, swap], atol=1e-15)
    # dog's output is the same in both sentences
    assert np.abs(np.array(res["output"])[1] - np.array(res["shuffled_output"])[4]).max() < 1e-14


def test_the_two_the_rows_are_identical_without_positions_and_differ_with():
    A = np.array(lab("permutation")["weights"])
    assert np.array_equal(A[0], A[3])
    claim("(their largest difference is 0)")
    A_pos = np.array(lab("permutation", positions=True)["weights"])
    d = np.abs(A_pos[0] - A_pos[3]).max()
    assert d > 0.05
    claim(f"rows now differ by up to {d:.2f}")


def test_shuffles_and_moves_stay_at_float_rounding_and_positions_change_it():
    for seed in range(1, 30):
        res = lab("permutation", shuffle=seed, order=[])
        assert res["pattern_diff"] < 1e-14 and res["output_diff"] < 1e-13
    pos = lab("permutation", positions=True)
    assert pos["pattern_diff"] > 0.1
    claim(f"the un-permuted difference jumps to {pos['pattern_diff']:.2f}")
    # The number holds for the default swap and head only: the prose names that setting,
    # and the first press of Shuffle (seed 2, order cleared) gives another.
    fence = fences("permutation")
    assert fence["seed"] == 0 and fence["d_head"] == 16
    claim("for the default swap and head (seed 0, `d_head` 16)")
    first = lab("permutation", positions=True, shuffle=2, order=[])
    order = ", ".join(str(i + 1) for i in first["order"])
    assert abs(first["pattern_diff"] - pos["pattern_diff"]) > 0.01
    claim(f"*Shuffle* (order {order}) gives {first['pattern_diff']:.2f}")
    # "With Order as written there is nothing to compare": the identity, difference 0.
    same = lab("permutation", positions=True, shuffle=0, order=[])
    assert list(same["order"]) == list(range(5))
    assert same["pattern_diff"] == 0 and same["output_diff"] == 0


def test_learned_positions_counts():
    claim("GPT-2 (Radford et al., 2019) learns one for each of its 1,024 positions, 786,432")
    claim("GPT-3 (Brown et al., 2020) learns 2,048 of width 12,288, 25,165,824 numbers")


def test_sinusoid_claims_on_the_default_view():
    res = lab("sinusoidal")
    wl = np.array(res["wavelengths"])
    assert np.all(np.diff(wl) > 0)  # the columns slow down from left to right
    assert abs(wl[0] - 2 * math.pi) < 1e-12
    n = len(res["encodings"])
    assert wl[-1] > 100 * n  # far more than the rows drawn: the right-hand columns look flat
    enc = np.array(res["encodings"])
    assert np.ptp(enc[:, -2:], axis=0).max() < 0.05
    claim(f"the first pair repeats every {wl[0]:.2f} positions")
    # largest at offset 0 (= d_model / 2) and symmetric
    dots, offsets, p = np.array(res["dots"]), np.array(res["offsets"]), res["position"]
    assert dots.argmax() == list(offsets).index(0)
    assert dots[p] == len(enc[0]) / 2
    for k in range(1, p + 1):
        assert abs(dots[p - k] - dots[p + k]) < 1e-12
    # "Change Compare position and the curve keeps its shape"
    other = lab("sinusoidal", position=5)
    o = dict(zip(other["offsets"], other["dots"], strict=True))
    for off, d in zip(offsets, dots, strict=True):
        if off in o:
            assert abs(o[off] - d) < 1e-12
    # "vaswani: wavelengths from 2 pi to 10000 * 2 pi"
    w = 2 * np.pi / rope_frequencies(512)
    assert w[0] == 2 * np.pi and w[-1] < 10000 * 2 * np.pi
    claim("\\(\\sum_i \\cos\\big((m - n)\\,\\omega_i\\big)\\)")
    # The last pair's wavelength is 2 pi * 10000^((d_model - 2) / d_model): it depends on
    # d_model, a share of 2 pi * 10000 that grows towards all of it.
    d = len(enc[0])
    assert abs(wl[-1] - 2 * np.pi * 10000 ** ((d - 2) / d)) < 1e-9
    claim(f"it is {wl[-1]:,.0f} positions, about {100 * wl[-1] / (2 * np.pi * 1e4):.0f}%")
    shares = [2 * np.pi / rope_frequencies(w)[-1] / (2 * np.pi * 1e4) for w in (16, 64, 256, 1024)]
    assert shares == sorted(shares) and shares[-1] < 1
    # "It falls slowly and stays far from 0": still above half its peak over the offsets
    # drawn; at offset p most pairs are under a quarter turn apart (cos > 0), while the
    # other (fast) pairs' cosines take both signs.
    assert dots.min() > dots.max() / 2
    assert abs(dots[0] - dots[2 * p]) < 1e-12
    claim(f"it is still {dots[0]:.2f} at offsets")
    claim(f"no lower than {dots.min():.2f} over the offsets drawn")
    angles = p * 2 * np.pi / wl
    quarter = int(np.sum(angles < np.pi / 2))
    assert quarter > d // 4  # most of the pairs
    fast = np.cos(angles[angles >= np.pi / 2])
    assert fast.min() < 0 < fast.max()
    near_one = int(np.sum(np.cos(angles) > 0.9))
    claim(f"{quarter} of the {d // 2} pairs are less than a quarter turn apart")
    claim(f"({near_one} of them more than 0.9)")
    pe = sinusoidal_positions(np.arange(40), 16)
    direct = np.sum(np.cos((30 - 4) * rope_frequencies(16)))
    assert abs(pe[30] @ pe[4] - direct) < 1e-12


def test_rope_claims_on_the_default_view():
    res = lab("rope")
    assert res["curve_diff"] < 1e-12
    claim(f"they differ by at most {res['curve_diff']:.1e}")
    s = np.array(res["score_a"])
    assert s[1:].max() < s[0]  # offset 0 scores highest
    half = len(s) // 2
    assert s[half:].mean() < s[:half].mean()  # drifts lower
    assert np.sum(np.diff(s) > 0) > 10  # "swings up and down"
    claim(f"the score is {s[0]:.2f}, more than at any other offset shown")
    claim(f"its mean is {s[:half].mean():.2f} over the first {half} offsets")
    d_head = fences("rope")["d_head"]
    # key = query at offset 0: the rotations cancel, the score is |q|^2 / sqrt(d_head)
    assert abs(res["unrotated"] - s[0]) < 1e-12
    # moving either key keeps the curves together; an unrelated key too
    for changes in ({"key_a": 1234}, {"key_b": 4000}, {"same_vector": False}):
        assert lab("rope", **changes)["curve_diff"] < 1e-11
    unrelated = np.array(lab("rope", same_vector=False)["score_a"])
    assert np.abs(unrelated - s).max() > 1  # the curve changes shape
    # a larger base: higher mean score over the offsets shown
    means = [np.mean(lab("rope", base=b)["score_a"]) for b in (1e3, 1e4, 1e5, 1e6)]
    assert means == sorted(means)
    claim(f"its mean over them is {means[0]:.2f} with base 1,000")
    slowest = 2 * np.pi / rope_frequencies(d_head)[-1]
    claim(f"the slowest comes round only every {slowest:,.0f} positions")


def test_rope_identity_from_the_prose():
    # One sign convention: m is the query's position, n the key's, the offset m - n.
    claim("\\(m\\) is always the query's position and \\(n\\) the key's")
    claim("the **offset** is \\(m - n\\)")
    rng = np.random.default_rng(5)
    q, k = rng.normal(size=16), rng.normal(size=16)
    for m, n in [(3, 1), (100, 7), (0, 50)]:
        lhs = apply_rope(q, m) @ apply_rope(k, n)
        assert abs(lhs - q @ apply_rope(k, n - m)) < 1e-12
    claim("(R_m q) \\cdot (R_n k) = q^{\\top} R_m^{\\top} R_n\\, k = q^{\\top} R_{n-m}\\, k")


def rounded_both_ways(x):
    """Both two-decimal roundings (down and up) of a number."""
    return {math.floor(x * 100) / 100, math.ceil(x * 100) / 100}


def test_exercises():
    specs = [
        exercise.parse_exercise(f.body, "lesson")
        for f in scanner.find_fences(SOURCE, ("exercise",))
    ]
    numeric = next(s for s in specs if s["kind"] == "numeric")
    ns = exercise.run_setup(numeric, "lesson")
    tol = numeric["tolerance"]
    assert ns["tolerance"] == tol
    q, k, m, n = ns["q"], ns["k"], ns["m"], ns["n"]
    # a reader who rounds cos and sin, then each rotated component, then the score
    worst = 0.0
    trig = [rounded_both_ways(f(a)) for a in (m, n) for f in (math.cos, math.sin)]
    for cm, sm, cn, sn in itertools.product(*trig):
        for q0 in rounded_both_ways(q[0] * cm - q[1] * sm):
            for q1 in rounded_both_ways(q[0] * sm + q[1] * cm):
                for k0 in rounded_both_ways(k[0] * cn - k[1] * sn):
                    for k1 in rounded_both_ways(k[0] * sn + k[1] * cn):
                        worst = max(
                            worst,
                            abs(q0 - ns["q_rot"][0]),
                            abs(q1 - ns["q_rot"][1]),
                            abs(k0 - ns["k_rot"][0]),
                            abs(k1 - ns["k_rot"][1]),
                            max(abs(r - ns["score"]) for r in rounded_both_ways(q0 * k0 + q1 * k1)),
                        )
    assert worst < tol, worst
    assert abs(ns["score"] - q @ ns["rel"]) < 1e-12  # the solution's offset-only check
    code = next(s for s in specs if s["kind"] == "code")
    names = " ".join(c["name"] for c in code["checks"])
    for edge in ("position 0", "length", "offset", "d = 2", "own frequency"):
        assert edge in names, edge


def test_sources():
    sources = SOURCE.split("## Sources")[1]
    for cite in (
        "Vaswani, A. et al. (2017)",
        "NeurIPS",
        "Su, J., Lu, Y., Pan, S., Murtadha, A., Wen, B. & Liu, Y. (2021)",
        "arXiv:2104.09864",
        "Radford, A. et al. (2019)",
        "Brown, T. et al. (2020)",
        "Haviv, A.",
    ):
        assert cite in sources, cite


def test_vaswanis_reason_pe_at_p_plus_k_is_a_rotation_of_pe_at_p():
    """Issue 25: Vaswani et al. (2017, section 3.5) chose sinusoids because PE_{p+k} is a
    linear function of PE_p for any fixed k: pair by pair, a rotation by k omega_i, the
    bridge to RoPE."""
    d, n, k = 64, 48, 5
    PE = sinusoidal_positions(np.arange(n + k), d)
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    M = np.zeros((d, d))
    for i, w in enumerate(omega):
        c, s = np.cos(k * w), np.sin(k * w)
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[c, -s], [s, c]]
    err = np.abs(PE[k:] - PE[:n] @ M).max()
    assert err < 1e-12
    np.testing.assert_allclose(M @ M.T, np.eye(d), atol=1e-12)  # a rotation
    claim("is a *linear function* of the encoding of \\(p\\), the same function")
    claim("So one block-diagonal **rotation** that depends on \\(k\\) alone takes every position's")
    claim(f"for the lab's encodings and \\(k = {k}\\), the largest difference is {err:.0e}")
    claim("rotary embeddings, at the end of this lesson, are built from it")


def test_one_sign_for_the_offset_on_the_whole_page():
    """Issue 25: the sinusoid section said other - this, the RoPE section query - key. Now
    the compared position is read as the key, so the chart's other - compared is query - key
    too, and the sinusoid lab's offsets are exactly that."""
    res = run_lab("sinusoidal")["result"]
    p = res["position"]
    np.testing.assert_array_equal(res["offsets"], np.arange(len(res["dots"])) - p)
    claim("Read the compared position as a key's and each other position as a query's")
    claim("the query's position minus the key's (on the chart, the other position minus the")
    claim("This sign is the one the whole lesson uses.")
    assert "(the other position minus this one)" not in TEXT


def test_the_pairing_convention_and_hugging_faces_rotate_half():
    """Issue 25: the lesson pairs neighbours (2i, 2i+1); Hugging Face's Llama (and so
    SmolLM2) pairs j with j + d/2 (rotate_half). The two are the same rotation with the
    dimensions reordered, checked against transformers' own apply_rotary_pos_emb."""
    import pytest

    torch = pytest.importorskip("torch")
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    d, m = 16, 7
    rng = np.random.default_rng(0)
    x = rng.normal(size=d)
    inv_freq = rope_frequencies(d)
    emb = np.concatenate([m * inv_freq, m * inv_freq])
    cos, sin = (torch.from_numpy(f(emb))[None, None] for f in (np.cos, np.sin))
    t = torch.from_numpy(x)[None, None]
    hf, _ = llama.apply_rotary_pos_emb(t, t, cos, sin)
    hf = hf.numpy().reshape(d)
    order = np.ravel([[j, j + d // 2] for j in range(d // 2)])  # HF's pairs as neighbours
    np.testing.assert_allclose(hf[order], apply_rope(x[order], m), atol=1e-12)
    assert not np.allclose(hf, apply_rope(x, m))  # the orders do differ
    claim("This lesson, like Su et al., pairs")
    claim("neighbours, \\((2i, 2i+1)\\)")
    claim("pairs dimension \\(j\\) with \\(j + d_{\\text{head}}/2\\) instead")
    claim("(its function `rotate_half` swaps the two halves of the vector and negates one)")
    claim("It is the same rotation with the dimensions listed in")
