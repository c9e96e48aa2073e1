"""Every number and claim of docs/lessons/12-real-heads.md, computed here from the committed
MiniLM maps and the trained induction model. The prose's numbers come from the lesson's
```numbers fence at build time; here they are recomputed and looked up, formatted, in the
lesson as the build renders it."""

import json
from pathlib import Path

import lesson_text
import numpy as np
import yaml
from attention_labs import cells, real_maps
from attention_labs.labs import run_lab
from attention_labs.models import induction
from helpers import ROOT

from build_scripts.hooks import exercise, scanner

NAME = "12-real-heads"
SOURCE, RENDERED, TEXT = lesson_text.read(f"lessons/{NAME}.md")
ASSETS = ROOT / "docs/assets/attention"


claim = lesson_text.claimer(TEXT)


def fences(kind):
    return [yaml.safe_load(b) for b in lesson_text.fence_bodies(SOURCE, kind)]


def minilm():
    index = json.loads((ASSETS / "index.json").read_text())
    return [
        json.loads((ASSETS / a["path"]).read_text())
        for a in index["assets"]
        if a["model"] == "all-minilm-l6-v2"
    ]


def test_one_previous_token_head_wins_on_every_sentence_and_the_map_shows_it():
    assets = minilm()
    winners = set()
    for a in assets:
        p = np.array(a["head_stats"]["previous_token"])
        winners.add(tuple(int(i) for i in np.unravel_index(p.argmax(), p.shape)))
    assert winners == {(0, 2)}
    low = min(a["head_stats"]["previous_token"][0][2] for a in assets)
    # Issue 25: that is the smallest per-sentence MEAN; single queries go lower
    claim(f"Averaged over a sentence's queries, it puts at least {low:.1%} of their weight")
    claim("on the previous token, on every sentence; single queries go down to")
    singles = [
        float(w[q, q - 1])
        for w in (real_maps.decode_attention(a)[0, 2] for a in assets)
        for q in range(1, len(w))
    ]
    assert 0.92 < min(singles) < 0.94 < low  # a reviewer read 92.9% from the JSON
    claim(f"single queries go down to {min(singles):.1%}.")
    shown = fences("attention-map")[0]
    assert (shown["layer"], shown["head"]) == (0, 2)
    # the shown sentence, decoded: every query after the first looks one token back
    asset = json.loads((ASSETS / "all-minilm-l6-v2" / f"{shown['sentence']}.json").read_text())
    w = real_maps.decode_attention(asset)[0, 2]
    assert all(w[q].argmax() == q - 1 for q in range(1, asset["seq_len"]))


def test_the_sink_head_weighs_cls_heavily_but_its_value_is_short():
    asset = json.loads((ASSETS / "all-minilm-l6-v2/coreference-trophy.json").read_text())
    entry = next(h for h in asset["qkv"]["heads"] if "first-token" in h["reason"])
    shown = fences("attention-map")[1]
    assert (shown["sentence"], shown["layer"], shown["head"]) == (
        "coreference-trophy",
        entry["layer"],
        entry["head"],
    )
    assert asset["tokens"]["text"][0] == "[CLS]"
    n = asset["seq_len"]
    w = real_maps.decode_attention(asset)[entry["layer"], entry["head"]]
    v = real_maps.decode_vectors(entry["v"], n, asset["qkv"]["d_head"])
    share = w[:, 0].mean()
    parts = np.linalg.norm(w[:, :, None] * v[None], axis=-1)
    norm_share = np.mean(parts[:, 0] / parts.sum(axis=-1))
    assert share > 0.7 and norm_share < 0.2  # "most of the weight", "only ... supplies"
    assert np.linalg.norm(v[0]) < 0.1 * np.median(np.linalg.norm(v[1:], axis=-1))
    claim(f"only {norm_share:.0%} of the sum of the contributions' lengths")


def test_minilm_has_no_induction_head_on_the_repeated_random_words():
    asset = json.loads((ASSETS / "all-minilm-l6-v2/induction-random.json").read_text())
    words = asset["sentence"]["text"].split()
    assert words[:10] == words[10:] and len(set(words[:10])) == 10  # ten words, twice
    best = float(np.max(asset["head_stats"]["induction"]))
    assert best < induction.training_story()["story"]["threshold"] / 4
    claim(f"any of its 72 heads is {best:.2f}")


def smol(sentence):
    return json.loads((ASSETS / "smollm2-135m" / f"{sentence}.json").read_text())


def test_the_decoder_sinks_over_half_its_weight_and_has_induction_heads():
    index = json.loads((ASSETS / "index.json").read_text())
    paths = [a["path"] for a in index["assets"] if a["model"] == "smollm2-135m"]
    late = [np.mean(np.array(smol(Path(p).stem)["head_stats"]["first_token"])[2:]) for p in paths]
    assert np.mean(late) > 0.5 and min(late) > 0.4  # "far more", "over half"
    shown = [f for f in fences("attention-map") if f["model"] == "smollm2-135m"]
    sink, ind = shown
    ft = np.array(smol(sink["sentence"])["head_stats"]["first_token"])
    assert (sink["layer"], sink["head"]) == np.unravel_index(ft.argmax(), ft.shape)
    asset = smol(ind["sentence"])
    scores = np.array(asset["head_stats"]["induction"])
    assert (ind["layer"], ind["head"]) == np.unravel_index(scores.argmax(), scores.shape)
    assert sorted({int(layer) for layer, _ in np.argwhere(scores > 0.5)}) == [17, 18]
    # every query of the second half: top key is the token after the word's first time
    w = real_maps.decode_attention(asset)[ind["layer"], ind["head"]]
    text = asset["tokens"]["text"]
    words = [t.strip() for t in text]
    for q in range(12, len(text)):
        top = int(w[q].argmax())
        assert 0 < top < q and words[top] == words[q - 9], (q, text[q], text[top])


def test_the_training_story_told_in_the_prose():
    story = induction.training_story()
    points = story["checkpoints"]
    formed = story["story"]["formed_at_step"]
    at = {c["step"]: c for c in points}
    before, after = at[formed - 100], at[formed + 50]
    # "creeps down slowly" then "drops": most of the fall happens in those 150 steps
    start, end = points[0]["loss_repeated"], points[-1]["loss_repeated"]
    assert (before["loss_repeated"] - after["loss_repeated"]) > 0.5 * (start - end)
    assert max(before["induction"][1]) < 0.5 < max(after["induction"][1])
    pl, ph = story["story"]["previous_token_head"]
    assert (pl, ph) == (0, 0)
    assert after["previous_token"][0][0] > 2 * before["previous_token"][0][0]
    claim(f"at step {formed - 100} it is still {before['loss_repeated']:.2f}")
    assert points[-1]["loss_random"] > np.log(26)  # "ends above ln 26"
    claim(f"jumps from {max(before['induction'][1]):.2f} to {max(after['induction'][1]):.2f}")


def test_things_to_try_on_the_training_lab():
    lab0 = run_lab("induction_training", {"checkpoint": 0})["result"]
    w = np.asarray(lab0["weights"])
    n = w.shape[0]
    # step 0: every row close to uniform over the keys it can see
    uniform = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    assert np.abs(w - uniform).max() < 0.05
    steps = lab0["map_steps"]
    assert {350, 400, 450} <= set(steps)
    i350, i450 = steps.index(350), steps.index(450)
    s350 = run_lab("induction_training", {"checkpoint": i350})["result"]
    s450 = run_lab("induction_training", {"checkpoint": i450})["result"]
    ind350 = s350["induction"][s350["steps"].index(350)]
    assert ind350 < 0.5 < s450["induction"][s450["steps"].index(450)]
    # layer 0, head 0 at the default step: its top key is the previous token for most queries
    prev = run_lab("induction_training", {"layer": 0, "head": 0})["result"]
    top = np.asarray(prev["top_key"])
    assert np.mean(top[1:] == np.arange(n - 1)) > 0.5


def test_model_lab_claims_and_the_ablations():
    default = run_lab("induction_model", {})["result"]
    assert default["tokens"][:10] == default["tokens"][10:]  # "repeat a stretch of ten"
    claim(f"Layer 1, head 0 scores {default['induction']:.2f} on them")
    misses = [q for q in range(10, 19) if default["predicted"][q] != default["tokens"][q + 1]]
    assert misses == [10, 11]  # "the misses are the first 2 letters of the repeat"
    plain = run_lab("induction_model", {"tokens": list("QWERTYUIOPASDFGHJKLZ")})["result"]
    assert plain["induction"] is None and plain["copy_accuracy"] is None
    off_prev = run_lab("induction_model", {"layer": 0, "head": 0, "ablate": True})["result"]
    assert off_prev["heads"][0]["induction"] < 0.1  # "a head whose pattern shows no induction"


def removal(**off):
    return run_lab("head_removal", {f"off_l{k[1]}h{k[3]}": v for k, v in off.items()})["result"]


def test_the_removal_lab_fence_is_the_labs_default_and_matches_the_model_lab():
    (fence,) = lesson_text.lab_fences(SOURCE, "head_removal")
    assert fence == {}  # every head on, the default letters
    intact = removal()
    model = run_lab("induction_model", {})["result"]
    assert intact["tokens"] == model["tokens"]
    assert intact["intact"]["copy_accuracy"] == model["copy_accuracy"]
    # switching one head off here is the model lab's switch
    for layer in (0, 1):
        for head in (0, 1):
            one = run_lab("induction_model", {"layer": layer, "head": head, "ablate": True})
            assert (
                removal(**{f"l{layer}h{head}": True})["copy_accuracy"]
                == one["result"]["copy_accuracy"]
            )
    claim(
        f"With every head on, the model continues the repeat right "
        f"{intact['intact']['copy_accuracy']:.0%} of the time, with a loss of "
        f"{intact['intact']['loss']:.2f} nats on those letters (a uniform guess over 26 letters "
        f"has {np.log(26):.2f})."
    )


def test_removing_the_previous_token_head_moves_the_layer_1_maps_and_breaks_the_copy():
    intact, off = removal(), removal(l0h0=True)
    changed = {(h["layer"], h["head"]): h["changed"] for h in off["heads"]}
    assert changed[(0, 0)] == 0 and changed[(0, 1)] == 0  # its own map and its layer's
    moved = max(changed[(1, 0)], changed[(1, 1)])
    assert moved > 0.5
    # "their stripes fade"
    for h in (0, 1):
        assert off["heads"][2 + h]["induction"] < 0.5 * intact["heads"][2 + h]["induction"]
    assert off["loss"] > np.log(26) > intact["intact"]["loss"]  # "worse than a uniform guess"
    claim(f"by up to {moved:.2f} in a single weight: their stripes fade")
    claim(
        f"The model now continues the repeat right only {off['copy_accuracy']:.0%} of the "
        f"time, and its loss, {off['loss']:.2f} nats, is worse than a uniform guess."
    )
    assert off["heads"][0]["induction"] < 0.1  # "shows no induction stripe at all"
    claim("the one whose map shows no induction stripe at all")


def test_the_layer_1_heads_stand_in_for_each_other():
    intact = removal()
    single = {(s["layer"], s["head"]): s for s in intact["single"]}
    for h in (0, 1):
        off = removal(**{f"l1h{h}": True})
        assert all(x["changed"] == 0 for x in off["heads"])  # "No map moves"
        assert off["copy_accuracy"] == single[(1, h)]["copy_accuracy"] > 0.5  # "still copies"
        assert off["loss"] > intact["intact"]["loss"]  # "less sure"
    both = removal(l1h0=True, l1h1=True)
    assert both["copy_accuracy"] < 0.1
    claim(
        f"it continues the repeat right {single[(1, 0)]['copy_accuracy']:.0%} of the time "
        f"without head 0 and {single[(1, 1)]['copy_accuracy']:.0%} without head 1, though it "
        f"is less sure (a loss of {single[(1, 0)]['loss']:.2f} and {single[(1, 1)]['loss']:.2f} "
        f"nats). Now **switch off both**: {both['copy_accuracy']:.0%}."
    )


def test_without_layer_0_head_1_the_model_does_better_on_these_letters():
    intact = removal()
    off = removal(l0h1=True)
    assert off["copy_accuracy"] > intact["intact"]["copy_accuracy"]
    assert off["loss"] < intact["intact"]["loss"]
    claim(f"{off['copy_accuracy']:.0%} right and a loss of {off['loss']:.2f} nats.")


def test_the_pruning_papers_are_cited_with_their_numbers():
    claim("removing 38 of its 48 encoder heads cost only 0.15 BLEU")
    claim("Michel, Levy and Neubig (2019)")
    sources = SOURCE[SOURCE.index("## Sources") :]
    assert "Are Sixteen Heads Really Better than One?" in sources
    assert "Specialized Heads Do the Heavy Lifting" in sources


def exercises():
    return [
        exercise.parse_exercise(f.body, "lesson")
        for f in scanner.find_fences(SOURCE, ("exercise",))
    ]


def test_numeric_exercise_answers_are_one_past_the_earlier_copy():
    numeric = next(e for e in exercises() if e["kind"] == "numeric")
    ns = exercise.run_setup(numeric, "lesson")
    tokens = ns["tokens"]
    for q, key in zip(ns["queries"], ns["keys"], strict=True):
        assert tokens[int(key) - 1] == tokens[q] and int(key) - 1 < q


def test_code_exercise_rejects_the_usual_mistakes():
    code = next(e for e in exercises() if e["kind"] == "code")
    names = exercise.interface(code, "lesson")
    assert cells.check_code(code["solution"], code["checks"], "<solution>", names)["passed"]
    # a score that looks at the earlier copy itself, not the token after it
    wrong = code["solution"].replace("weights[q, k + 1]", "weights[q, k]")
    assert not cells.check_code(wrong, code["checks"], "<wrong>", names)["passed"]
    # zero instead of None when nothing repeats
    wrong = code["solution"].replace("if sums else None", "if sums else 0.0")
    assert not cells.check_code(wrong, code["checks"], "<wrong>", names)["passed"]


def test_induction_needs_two_layers_not_two_heads_per_layer():
    """Issue 25: the circuit needs a previous-token head in an earlier layer, so two layers
    is the minimum; nothing requires two heads per layer."""
    cfg = induction.training_story()["config"]
    assert cfg["n_layers"] == 2
    claim("The circuit needs two layers, since")
    claim("so two layers is the fewest in which induction heads can")
    claim("form; the number of heads in a layer is not what limits it")
    claim(f"Ours has {cfg['n_layers']} layers of {cfg['n_heads']} heads each, no MLP")
    assert "It is the smallest one in which induction heads form" not in TEXT


def test_smollm2_figures_say_they_show_the_dequantised_instruct_weights():
    """Issue 25: the maps come from the 4-bit GGUF of SmolLM2-135M-Instruct, dequantised."""
    smol = [f for f in fences("attention-map") if f["model"] == "smollm2-135m"]
    assert smol
    for fence in smol:
        assert fence["caption"].startswith("SmolLM2-135M-Instruct (dequantised from 4 bits)")
    index = json.loads((ASSETS / "index.json").read_text())
    (model,) = [m for m in index["models"] if m["slug"] == "smollm2-135m"]
    assert "Instruct" in json.dumps(model)
