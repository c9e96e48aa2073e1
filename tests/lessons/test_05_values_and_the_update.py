"""Every number and claim of docs/lessons/05-values-and-the-update.md, computed here with
attention_labs. The prose's numbers are ``{{ expr }}`` filled at build time from the
lesson's ```numbers fence; claims are formatted here and looked up verbatim in the lesson as
the build renders it, so changing the prose, its numbers fence or the code without the others
fails a test. Lab claims hold on the lab's DEFAULT view (the parameters of its fence)."""

import re

import lesson_text
import numpy as np
import yaml
from attention_labs import scaled_dot_product_attention
from attention_labs.labs import run_lab
from attention_labs.labs import value_update as lab
from helpers import ROOT

from build_scripts.hooks import exercise, scanner

LESSON_PATH = ROOT / "docs" / "lessons" / "05-values-and-the-update.md"
SOURCE, RENDERED, TEXT = lesson_text.read("lessons/05-values-and-the-update.md")


claim = lesson_text.claimer(TEXT)


def lab_params():
    return lesson_text.lab_params(SOURCE, "value_update")


def default(**changes):
    return run_lab("value_update", {**lab_params(), **changes})["result"]


def test_front_matter_names_the_prerequisites():
    front = yaml.safe_load(SOURCE.split("---")[1])
    assert front["prerequisites"] == ["03-attention-pattern", "04-masking"]


def test_numbers_are_computed_not_typed():
    prose = re.sub(r"^```numbers\n.*?^```$", "", SOURCE, flags=re.S | re.M)
    for typed in ("768", "12,288", "12288", "98,304", "589,824", "2.92", "1.70", "4.24"):
        assert typed not in prose, f"{typed} is typed in the prose: compute it in the numbers fence"
    assert "{{ gpt2_low:,d }}" in SOURCE and "{{ top_weight:.2f }}" in SOURCE
    claim("`d_model` is 768 and `d_head` is 64")
    claim("hold 98,304 numbers instead of the 589,824 of a full matrix")
    claim("12,288 → 128 → 12,288")
    assert 2 * 768 * 64 == 98_304 and 768 * 768 == 589_824


def test_lab_fence_is_the_default_lab():
    assert run_lab("value_update", lab_params()) == run_lab("value_update")


def test_the_synthetic_head_is_said_to_be_random_where_the_lab_is_met():
    claim("and its four matrices are **random** (synthetic: no model was trained here)")
    claim("Its embeddings (a word vector plus a position vector, as in [lesson 2]")


def test_default_view_numbers_and_claims():
    res = default()
    row = np.array(res["row"])
    assert abs(row.sum() - 1) < 1e-12
    query, top = res["tokens"][res["query"]], res["tokens"][res["top_key"]]
    claim(
        f"On this view the query is *{query}*. Its largest weight, {row.max():.2f}, is on *{top}*"
    )
    assert row.max() < 0.5  # "no weight is near 1"
    claim("no weight is near 1, so its update is a blend of many values")
    x, delta = np.linalg.norm(res["x"]), np.linalg.norm(res["delta"])
    assert delta < 0.5 * x  # "a nudge, not a replacement"
    claim(f"The update has length {delta:.2f} against {x:.2f} for the embedding: a nudge")
    claim(f"`d_model` is {res['d_model']} and `d_head` is {res['d_head']}")


def test_update_is_the_weighted_sum_of_values_through_W_O_and_is_added():
    res = default()
    X = lab.embeddings(res["tokens"], res_seed := lab_params()["seed"])
    W = lab.weights(res["d_head"], res_seed)
    o, A = scaled_dot_product_attention(X @ W["W_Q"], X @ W["W_K"], X @ W["W_V"])
    i = res["query"]
    np.testing.assert_allclose(res["delta"], (A[i] @ (X @ W["W_V"])) @ W["W_O"], atol=1e-12)
    np.testing.assert_allclose(res["updated"], X[i] + res["delta"], atol=1e-12)
    # the plane: x, delta and x + delta drawn exactly; the weighted projected values = delta
    plane = res["plane"]
    np.testing.assert_allclose(np.linalg.norm(plane["delta"]), np.linalg.norm(res["delta"]))
    np.testing.assert_allclose(np.array(res["row"]) @ plane["values"], plane["delta"], atol=1e-12)
    claim("those three arrows are drawn exactly")


def test_the_residual_stream_only_adds():
    """A layer adds its update: x + delta keeps x, and a later layer can cancel what an
    earlier one added (by adding its negative) but has no way to overwrite it."""
    res = default()
    x, delta = np.array(res["x"]), np.array(res["delta"])
    np.testing.assert_allclose(np.array(res["updated"]) - delta, x, atol=1e-12)
    np.testing.assert_allclose((x + delta) + (-delta), x, atol=1e-12)  # cancelled, by adding
    claim("so what earlier layers added stays in the sum; a later layer cannot overwrite it,")
    claim("only add something that cancels it")


def test_shape_diagram_claims():
    res = default()
    s = {x["name"]: tuple(x["shape"]) for x in res["shapes"]}
    n, d, h = len(res["tokens"]), res["d_model"], res["d_head"]
    assert s["X"] == (n, d) and s["V"] == (n, h) and s["pattern"] == (n, n)
    assert s["delta"] == s["X"]  # "back at the shape of X, so that it can be added"
    claim(f"\\(X\\) is ({n}, {d}), the values ({n}, {h}), the pattern ({n}, {n})")
    claim(f"\\(\\Delta\\) is back at ({n}, {d}), the shape of \\(X\\), so that it can be added")


def test_rank_claims():
    res = default()
    assert res["value_rank"] == res["d_head"]
    claim(f"the rank of \\(W_V W_O\\): {res['value_rank']}, equal to `d_head`")
    one = default(d_head=1)
    assert one["value_rank"] == 1 and one["update_rank"] == 1
    n = len(one["tokens"])
    claim(f"the rank is 1 and the updates of all {n} tokens are multiples of one single vector")
    claim("(their matrix has rank 1)")
    for d_head in range(1, 17):  # "rank(W_V W_O) <= d_head", whatever the sentence
        assert default(d_head=d_head)["value_rank"] <= d_head


def test_The_and_the_are_one_word_at_two_positions_weighed_by_their_keys():
    """Issue 25: equal weight comes from equal keys (keys are matched, values are moved),
    and with the convention of lesson 2 (case-folded words plus positions) *The* and *the*
    are one word at two places: different keys, different weights, different values."""
    from attention_labs.labs import value_update

    res = default()
    i, j = res["tokens"].index("The"), res["tokens"].index("the")
    np.testing.assert_array_equal(
        value_update.embeddings(["The"], 0), value_update.embeddings(["the"], 0)
    )
    assert not np.allclose(res["values"][i], res["values"][j])
    row = res["row"]
    assert row[i] != row[j]
    q = res["tokens"][res["query"]]
    claim(f"Here *{q}* gives *The* {row[i]:.3f} of its weight and *the* {row[j]:.3f}, because")
    claim("A query weighs a token by the token's *key*; what the token hands over is its *value*")
    # equal keys give equal weights whatever the values: one head on two equal embeddings
    W = value_update.weights(res["d_head"], 0)
    X = value_update.embeddings(res["tokens"], 0)
    X[j] = X[i]
    head = value_update.head_output(X, **W)
    np.testing.assert_allclose(head["pattern"][:, i], head["pattern"][:, j], atol=1e-14)
    claim("their keys would be equal, so every query would give")
    claim("them the same weight, and their values would be equal")
    assert "so they have the same value: every query gives them the same weight" not in TEXT


def test_python_cell_runs_and_shows_a_rank_of_at_most_d_head():
    from attention_labs import cells

    (cell,) = [f.body for f in scanner.find_fences(SOURCE, ("pycell",))]
    out = cells.run_cell(cell, cells.new_namespace(), "<cell>")
    assert out["error"] is None
    assert out["outputs"][0]["text"] == "updated embeddings: (4, 6)\n"
    assert int(out["value"]) <= 2


def test_exercises_tolerances_and_edge_cases():
    specs = [
        exercise.parse_exercise(f.body, "lesson")
        for f in scanner.find_fences(SOURCE, ("exercise",))
    ]
    by_hand = next(s for s in specs if s["kind"] == "numeric")
    ns = exercise.run_setup(by_hand, "lesson")
    # Every answer is exact to two decimals, so a reader who rounds each step loses nothing.
    for name in ("o", "delta", "updated"):
        v = np.asarray(ns[name])
        np.testing.assert_allclose(v, np.round(v, 2), atol=1e-12)
    assert by_hand["tolerance"] == 0.01
    np.testing.assert_allclose(ns["delta"], ns["a"] @ ns["V"] @ ns["W_O"])
    code = next(s for s in specs if s["kind"] == "code")
    names = " ".join(c["name"] for c in code["checks"])
    for edge in ("one token", "d_head = 1", "not the keys", "sqrt(d_head)"):
        assert edge in names


def test_values_do_not_depend_on_the_query_but_delta_does():
    a, b = default(), default(query=5)
    np.testing.assert_array_equal(a["values"], b["values"])
    assert not np.allclose(a["delta"], b["delta"])
    assert not np.allclose(default(seed=1)["values"], a["values"])
    claim("The values do not depend on the query; only its weights do")
    claim("*New random weights* draws new matrices, and everything changes.")


# ----------------------------------------------------------------------------
# what trained value maps do (the induction model of lesson 12)


def torch_weights():
    """The trained model's matrices straight from its file with PyTorch, in torch's own
    layout (nn.Linear: (out, in), y = x W^T): an independent reading of the same weights."""
    import json
    from importlib import resources

    import torch
    from attention_labs import maps

    raw = json.loads((resources.files("attention_labs") / "data/induction/model.json").read_text())
    return {
        name: torch.from_numpy(
            maps.decode_vectors(e["data"], 1, int(np.prod(e["shape"]))).reshape(e["shape"])
        )
        for name, e in raw["weights"].items()
    }


def test_trained_value_maps_copy_and_move_as_the_prose_says():
    import torch
    from attention_labs.examples import value_map_roles

    w = torch_weights()
    d, dh = 32, 16
    E, U = w["W_E.weight"], w["W_U.weight"]  # (26, d), (26, d)

    def block(layer, head):
        qkv, o = w[f"layers.{layer}.W_QKV.weight"], w[f"layers.{layer}.W_O.weight"]
        rows = slice(head * dh, (head + 1) * dh)
        q, k, v = qkv[:d][rows], qkv[d : 2 * d][rows], qkv[2 * d :][rows]  # (dh, d) each
        return q, k, v, o[:, rows]  # o: (d, dh)

    letters = torch.arange(26)
    roles = value_map_roles()
    for entry in roles["heads"]:
        _, _, v, o = block(entry["layer"], entry["head"])
        moved = E @ v.T @ o.T  # (26, d): each letter through W_V then W_O
        copies = int(((moved @ U.T).argmax(-1) == letters).sum())
        cos = torch.nn.functional.cosine_similarity(moved, E, dim=-1).mean().item()
        assert entry["copies"] == copies and abs(entry["cosine"] - cos) < 1e-9
    copier, mover = roles["heads"][2], roles["heads"][0]
    assert (copier["layer"], copier["head"], mover["layer"], mover["head"]) == (1, 0, 0, 0)
    assert copier["copies"] >= 20 and mover["copies"] == 0 and abs(mover["cosine"]) < 0.05
    _, _, v0, o0 = block(0, 0)
    q1, k1, _, _ = block(1, 0)
    written = E @ v0.T @ o0.T  # "the letter before me was b"
    reads = int(((E @ q1.T) @ (written @ k1.T).T).argmax(-1).eq(letters).sum())
    plain = int(((E @ q1.T) @ (E @ k1.T).T).argmax(-1).eq(letters).sum())
    assert (roles["reads"][0], roles["reads_plain"][0]) == (reads, plain) == (26, 0)
    claim(
        f"for {copier['copies']} of the 26 letters, the letter whose score rises most is the "
        "letter itself."
    )
    claim(f"(the mean cosine of the angle is {mover['cosine']:.3f})".replace("-", "\u2212"))
    claim(f"it favours its own letter for {mover['copies']} of the 26)")
    claim(
        f"for {reads} of the 26 letters, the query's best match is the key that says "
        f'"the letter before me was this same letter". With keys made from the plain '
        f"embeddings instead, the best match is the letter itself for {plain} of 26"
    )
    claim("(Elhage et al., 2021)")
