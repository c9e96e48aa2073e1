"""Every number and lab claim in the prose of docs/lessons/01-why-attention.md, computed here
with attention_labs. The prose's numbers are ``{{ expr }}`` filled at build time from the
lesson's ```numbers fence (build_scripts/hooks/numbers.py); numeric claims are formatted
here and looked up verbatim in the lesson as the build renders it, so changing the prose,
its numbers fence or the lab without the others fails a test. Every claim is checked on
the lab's default view (the parameters of the lesson's fence) or on the exact settings the
prose tells the reader to choose."""

import re

import lesson_text
import numpy as np
import pytest
import yaml
from attention_labs import cells
from attention_labs.labs import run_lab
from attention_labs.labs.meaning_shift import SENTENCES
from helpers import ROOT
from mkdocs.utils import meta

from build_scripts.hooks import exercise, scanner

LAB = "meaning_shift"
LESSON_PATH = ROOT / "docs" / "lessons" / "01-why-attention.md"
SOURCE, RENDERED, TEXT = lesson_text.read("lessons/01-why-attention.md")


claim = lesson_text.claimer(TEXT)


def fence_params():
    (body,) = re.findall(r"^```lab\n(.*?)^```$", SOURCE, re.S | re.M)
    params = yaml.safe_load(body)
    assert params.pop("lab") == LAB
    return params


def lab(**changes):
    return run_lab(LAB, {**fence_params(), **changes})["result"]


def sense(res, name):
    return res["sense_names"].index(name)


def test_front_matter_and_prose_numbers_are_computed():
    assert meta.get_data(SOURCE)[1]["prerequisites"] == "none"
    assert "```numbers" in SOURCE and "{{ d_model_gpt2 }} numbers in GPT-2 small" in SOURCE
    claim("(768 numbers in GPT-2 small)")
    for typed in ("0.97", "0.71", "0.26", "0.33"):
        assert typed not in re.sub(r"```.*?```", "", SOURCE, flags=re.S), typed


def test_the_fence_is_the_labs_default_view():
    assert run_lab(LAB, fence_params()) == run_lab(LAB)


def test_the_first_vector_is_the_same_in_every_sentence_of_a_word():
    for word in ("mole", "bank"):
        vectors = {
            tuple(lab(sentence=s)["embedding"]) for s, v in SENTENCES.items() if v[1] == word
        }
        assert len(vectors) == 1
    claim("*Mole* gets the same row in all three sentences above")
    claim("The embedding is exactly the same arrow as before")
    claim("hand-built for this lesson, not learned")


def test_default_view_moves_mole_from_chemistry_to_animal():
    res = lab()
    animal, chem = sense(res, "animal"), sense(res, "chemistry unit")
    assert res["context_words"] == ["dug", "tunnel", "lawn"]
    np.testing.assert_allclose(res["weights"], 1 / 3)
    claim(f"*dug*, *tunnel* and *lawn*, each with weight {res['weights'][0]:.2f}")
    # "Out of context, the embedding of mole leans the wrong way"
    assert res["nearest_before"] == chem and res["cos_before"][chem] > res["cos_before"][animal]
    claim(
        f"its cosine with the chemistry sense is {res['cos_before'][chem]:.2f} and with the "
        f"animal sense only {res['cos_before'][animal]:.2f}"
    )
    # "After the update ... the context has moved the word to the right meaning"
    assert res["nearest_after"] == animal
    assert res["cos_after"][animal] > res["cos_before"][animal]
    assert res["cos_after"][chem] < res["cos_before"][chem]
    claim(
        f"its cosine with the animal sense is {res['cos_after'][animal]:.2f}, and the chemistry "
        f"sense has fallen to {res['cos_after'][chem]:.2f}"
    )
    # the update is ADDED: x_new = x + delta
    np.testing.assert_allclose(
        res["updated"], np.add(res["embedding"], res["delta"]), rtol=0, atol=1e-15
    )


def test_chemistry_sentence_pushes_further_towards_chemistry():
    res = lab(sentence="mole_chemistry")
    chem = sense(res, "chemistry unit")
    assert res["nearest_after"] == chem and res["cos_after"][chem] > res["cos_before"][chem]
    claim(f"pushes it further towards chemistry: a cosine of {res['cos_after'][chem]:.2f}")


def test_skin_sentence_reads_better_without_the_neutral_word():
    equal, sharp = lab(sentence="mole_skin"), lab(sentence="mole_skin", w2=0)
    skin = sense(equal, "skin mark")
    assert equal["context_words"][1] == "looked"
    np.testing.assert_allclose(equal["weights"][1], 1 / 3)  # "takes a third of the weight"
    assert equal["nearest_after"] == sharp["nearest_after"] == skin
    assert sharp["cos_after"][skin] > equal["cos_after"][skin]
    claim("*looked*, which says nothing about moles, takes a third of the weight")
    claim(
        f"reaches {equal['cos_after'][skin]:.2f}. Put the *looked* slider at 0 and it rises to "
        f"{sharp['cos_after'][skin]:.2f}"
    )


def test_mixed_sentence_is_decided_by_the_weights():
    equal = lab(sentence="mole_mixed")
    animal, chem = sense(equal, "animal"), sense(equal, "chemistry unit")
    assert equal["context_words"] == ["chemist", "found", "garden"]
    # "undecided": the two senses within 0.05 of each other, far from the rest
    assert abs(equal["cos_after"][animal] - equal["cos_after"][chem]) < 0.05
    claim(
        f"(cosine {equal['cos_after'][animal]:.2f} with the animal, "
        f"{equal['cos_after'][chem]:.2f} with the chemistry unit)"
    )
    to_chem = lab(sentence="mole_mixed", w3=0.2)  # raise chemist (already 1), lower garden
    to_animal = lab(sentence="mole_mixed", w1=0.2)  # the opposite
    assert to_chem["nearest_after"] == chem and to_animal["nearest_after"] == animal
    claim(
        "Lower *garden* to 0.2, keeping *chemist* at 1, and the word reads as the chemistry "
        f"unit ({to_chem['cos_after'][chem]:.2f}); swap those two and it is the animal "
        f"({to_animal['cos_after'][animal]:.2f})"
    )


def test_all_sliders_at_zero_leave_the_embedding():
    res = lab(w1=0, w2=0, w3=0)
    assert res["delta"] == [0.0, 0.0] and res["updated"] == res["embedding"]
    claim("**Put every slider at 0.** The word reads nothing")


def test_bank_leans_to_money_and_the_river_sentence_moves_it():
    res = lab(sentence="bank_river")
    river, money = sense(res, "river side"), sense(res, "money")
    assert res["nearest_before"] == money and res["nearest_after"] == river
    claim(f"(cosine {res['cos_before'][money]:.2f} with the money sense)")
    claim(f"moves it to the river side ({res['cos_after'][river]:.2f})")
    assert lab(sentence="bank_money")["nearest_after"] == money


def test_the_plane_labels_the_context_vectors_by_number():
    widget = (ROOT / "docs/javascripts/labs/meaning_shift.js").read_text("utf-8")
    assert "label: `c${j + 1}`" in widget
    claim("(the arrows c1, c2 and c3, numbered as in the sentence above the plane)")


def test_things_to_try_reproduce_their_numbers_when_followed_in_order():
    """The widget (docs/javascripts/labs/meaning_shift.js) puts every slider back at its
    schema default when the sentence changes; follow the steps as a reader would, one
    state carried from step to step, and read each number the prose gives."""
    from attention_labs.labs.meaning_shift import SCHEMA

    defaults = {p.name: p.default for p in SCHEMA if p.name in ("w1", "w2", "w3")}
    assert set(defaults.values()) == {1.0}
    claim("picking a sentence puts every slider back at 1, so each step starts from equal")
    state = fence_params()

    def pick(sentence):  # what the widget does on a sentence change
        state.update(sentence=sentence, **defaults)
        return run_lab(LAB, state)["result"]

    def slide(**weights):
        state.update(weights)
        return run_lab(LAB, state)["result"]

    res = slide(w3=0.2)  # whatever the reader did before the list
    res = pick("mole_chemistry")
    claim(f"a cosine of {res['cos_after'][sense(res, 'chemistry unit')]:.2f}")
    res = pick("mole_skin")
    claim(f"the skin sense reaches {res['cos_after'][sense(res, 'skin mark')]:.2f}")
    res = slide(w2=0)
    claim(f"rises to {res['cos_after'][sense(res, 'skin mark')]:.2f}: reading the right words")
    res = pick("mole_mixed")
    animal, chem = sense(res, "animal"), sense(res, "chemistry unit")
    claim(f"(cosine {res['cos_after'][animal]:.2f} with the animal, {res['cos_after'][chem]:.2f}")
    res = slide(w3=0.2)  # lower garden, chemist stays at 1
    claim(f"reads as the chemistry unit ({res['cos_after'][chem]:.2f})")
    res = slide(w1=0.2, w3=1.0)  # swap those two
    claim(f"it is the animal ({res['cos_after'][animal]:.2f})")
    res = slide(w1=0, w2=0, w3=0)
    assert res["reads_nothing"] and res["updated"] == res["embedding"]
    res = pick("bank_river")
    claim(f"cosine {res['cos_before'][sense(res, 'money')]:.2f} with the money sense)")
    claim(f"moves it to the river side ({res['cos_after'][sense(res, 'river side')]:.2f})")


def test_the_python_cell_prints_the_labs_first_picture():
    (cell,) = [f.body for f in scanner.find_fences(SOURCE, ("pycell",))]
    out = cells.run_cell(cell, cells.new_namespace(), "<cell 1>")
    assert out["error"] is None
    res = lab()
    printed = "".join(o["text"] for o in out["outputs"])
    assert str(np.round(res["cos_before"], 2)) in printed
    assert str(np.round(res["cos_after"], 2)) in printed
    claim("computes the lab's first picture with NumPy")


def exercises():
    specs = [
        exercise.parse_exercise(f.body, "lesson")
        for f in scanner.find_fences(SOURCE, ("exercise",))
    ]
    return {s["kind"]: s for s in specs}


def test_the_by_hand_exercise_accepts_a_reader_who_rounds_every_step_to_two_decimals():
    spec = exercises()["numeric"]
    ns = exercise.run_setup(spec, "lesson")
    r2 = lambda v: np.round(v, 2)  # noqa: E731
    w = r2(ns["raw"] / ns["raw"].sum())
    delta = r2(w @ ns["C"])
    y = r2(ns["x"] + delta)
    cos_y = r2(y[1] / r2(np.linalg.norm(y)))
    cos_x = r2(ns["x"][1] / r2(np.linalg.norm(ns["x"])))
    worst = max(
        np.max(np.abs(w - ns["w"])),
        np.max(np.abs(delta - ns["delta"])),
        np.max(np.abs(y - ns["y"])),
        abs(cos_y - ns["cos_y"]),
        abs(cos_x - ns["cos_x"]),
    )
    assert worst <= spec["tolerance"], worst
    assert ns["cos_y"] > ns["cos_x"]  # "the context moved the word a long way"
    assert "Two decimals are enough" in spec["prompt"]


def test_the_code_exercise_checks_the_edge_case_the_lesson_teaches():
    spec = exercises()["code"]
    names = [c["name"] for c in spec["checks"]]
    assert any("all raw weights 0" in n for n in names)
    assert any("lab's first picture" in n for n in names)


@pytest.mark.parametrize("target", ["02-queries-and-keys.md", "03-attention-pattern.md"])
def test_it_points_forward(target):
    assert f"]({target})" in SOURCE


def test_the_embedding_is_one_compromise_not_the_commonest_sense():
    """Issue 25: nothing in the lab supports "leaning towards the commonest one": its
    *mole* points almost opposite the skin sense."""
    res = lab()
    skin = sense(res, "skin mark")
    assert res["cos_before"][skin] < -0.9
    claim(f"points almost opposite the skin sense (a cosine of {res['cos_before'][skin]:.2f})")
    claim("nothing makes it an even mix of them")
    assert "commonest" not in TEXT


def test_a_token_reads_itself_too():
    """Issue 25: the update comes from the tokens of the sentence, the token's own included;
    the lab leaves the word itself out and says so."""
    claim("update from the tokens of its text (itself among them)")
    claim("from the vectors of the tokens in its sentence, its own included")
    claim("a real head gives its own vector a weight too")
    claim("The lab below leaves the word itself out")
    claim("for each token from the tokens of its sentence (itself included)")
    for wrong in ("from the other tokens", "from the other words", "read the other tokens"):
        assert wrong not in SOURCE, wrong
