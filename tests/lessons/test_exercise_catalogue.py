"""Every code exercise of the site against a catalogue of readers' answers
(exercise_catalogue.yaml): plausible wrong answers that its hidden checks must reject, and
right answers written differently from the reference (loops, float32, einsum, their own
softmax) that they must accept.

Each answer runs through the page's own checker, as the reader's browser runs it:
``cells.check_code`` with the exercise's checks and the starter's names
(``exercise.interface``). A wrong answer must be rejected by a check's verdict on the
reader's result (fault "yours"), named in ``fails``, never by a check crashing on its own;
a right one must pass every check, with the note the catalogue expects, if any.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import yaml
from attention_labs import cells
from helpers import ROOT

from build_scripts.hooks import exercise

HERE = ROOT / "tests" / "lessons"
CATALOGUE = yaml.safe_load((HERE / "exercise_catalogue.yaml").read_text(encoding="utf-8"))
SPECS = {
    spec["id"]: (where, spec)
    for where, spec in exercise.all_exercises(ROOT / "docs")
    if spec["kind"] == "code"
}
MIN_WRONG, MIN_RIGHT = 3, 2


def answer_code(ex_id: str, answer: dict) -> str:
    """An answer's code: its own, or the reference solution with ``replace`` applied."""
    if "code" in answer:
        return answer["code"]
    code = SPECS[ex_id][1]["solution"]
    for old, new in answer["replace"]:
        assert old in code, f"{ex_id}: {old!r} is not in the reference solution"
        code = code.replace(old, new)
    return code


def judge(ex_id: str, code: str) -> dict:
    where, spec = SPECS[ex_id]
    with np.errstate(all="ignore"):  # a wrong answer may overflow on purpose
        return cells.check_code(code, spec["checks"], "<exercise>", exercise.interface(spec, where))


def answers(kind: str) -> list:
    return [
        pytest.param(ex_id, label, id=f"{ex_id}: {label}")
        for ex_id, entry in CATALOGUE.items()
        for label in entry[kind]
    ]


def normalised(code: str) -> str:
    code = re.sub(r"#.*", "", code)
    return re.sub(r"\s+", "", code)


# ----------------------------------------------------------------------------
# the catalogue itself


def test_every_code_exercise_has_its_catalogue_of_wrong_and_right_answers():
    assert set(CATALOGUE) == set(SPECS), "every code exercise, and only those"
    for ex_id, entry in CATALOGUE.items():
        assert set(entry) == {"wrong", "right"}, ex_id
        assert len(entry["wrong"]) >= MIN_WRONG, f"{ex_id}: at least {MIN_WRONG} wrong answers"
        assert len(entry["right"]) >= MIN_RIGHT, f"{ex_id}: at least {MIN_RIGHT} right answers"
        # right answers are written differently: from the reference and from each other
        shapes = {normalised(SPECS[ex_id][1]["solution"])}
        for label, right in entry["right"].items():
            assert "code" in right, f"{ex_id}: {label}: a right answer is written in full"
            shapes.add(normalised(right["code"]))
        assert len(shapes) == len(entry["right"]) + 1, f"{ex_id}: two right answers are the same"
        for label, wrong in entry["wrong"].items():
            assert ("code" in wrong) != ("replace" in wrong), f"{ex_id}: {label}"
            names = [c["name"] for c in SPECS[ex_id][1]["checks"]]
            assert wrong["fails"] in names, f"{ex_id}: {label}: no check named {wrong['fails']!r}"


def test_the_catalogue_holds_the_answers_the_review_found_accepted_or_rejected():
    """The answers of issue 25's review: each is in the catalogue, on the right side."""
    wrong = {ex_id: set(entry["wrong"]) for ex_id, entry in CATALOGUE.items()}
    right = {ex_id: set(entry["right"]) for ex_id, entry in CATALOGUE.items()}
    assert {"last occurrence only", "first occurrence only", "mean over occurrences"} <= wrong[
        "induction-score"
    ]
    for ex_id in ("decode-step", "cross-attention-padded"):
        assert "softmax without the max" in wrong[ex_id]
    assert {"own softmax, no attention_labs", "float32"} <= right["head-output"]
    assert "float32" in right["score-grid"]
    assert "Hugging Face's rotate_half" in right["rope-code"]


# ----------------------------------------------------------------------------
# through the page's checker


@pytest.mark.parametrize("ex_id, label", answers("right"))
def test_a_right_answer_passes_every_check(ex_id, label):
    right = CATALOGUE[ex_id]["right"][label]
    result = judge(ex_id, answer_code(ex_id, right))
    assert result["run"]["error"] is None, result["run"]["error"]
    failed = {c["name"]: c["message"] for c in result["cases"] if not c["passed"]}
    assert result["passed"] and not failed, failed
    notes = [c["note"] for c in result["cases"] if c["note"]]
    if "note" in right:
        assert len(notes) == 1 and right["note"] in notes[0], notes
    else:
        assert notes == [], notes


@pytest.mark.parametrize("ex_id, label", answers("wrong"))
def test_a_wrong_answer_is_rejected_by_the_check_that_looks_for_it(ex_id, label):
    wrong = CATALOGUE[ex_id]["wrong"][label]
    result = judge(ex_id, answer_code(ex_id, wrong))
    assert result["run"]["error"] is None, result["run"]["error"]  # it runs: a check rejects it
    assert not result["passed"]
    cases = {c["name"]: c for c in result["cases"]}
    case = cases[wrong["fails"]]
    assert not case["passed"] and case["fault"] == "yours", case
    if "says" in wrong:
        assert wrong["says"] in case["message"], case["message"]
    crashed = [c["name"] for c in result["cases"] if c["fault"] == "check"]
    assert crashed == [], f"checks that failed on their own instead of judging: {crashed}"


# ----------------------------------------------------------------------------
# the tolerances have room both ways


def float32_answers():
    return [p for p in answers("right") if "float32" in p.values[1]]


def test_there_is_a_float32_answer_for_every_exercise_with_real_numbers():
    exact = {"layer-params", "split-and-merge-heads"}  # integers; reshapes that copy exactly
    with_float32 = {p.values[0] for p in float32_answers()}
    assert with_float32 == set(SPECS) - exact


@pytest.mark.parametrize("ex_id, label", float32_answers())
def test_float32_answers_pass_with_a_tenth_of_the_tolerance(ex_id, label, monkeypatch):
    """cells.RTOL leaves ten times the error a correct float32 answer makes."""
    monkeypatch.setattr(cells, "RTOL", cells.RTOL / 10)
    result = judge(ex_id, answer_code(ex_id, CATALOGUE[ex_id]["right"][label]))
    assert result["passed"], [c for c in result["cases"] if not c["passed"]]


@pytest.mark.parametrize("ex_id, label", answers("wrong"))
def test_wrong_answers_fail_with_a_hundred_times_the_tolerance(ex_id, label, monkeypatch):
    """No mistake the catalogue knows is within a hundred times cells.RTOL of right."""
    monkeypatch.setattr(cells, "RTOL", cells.RTOL * 100)
    wrong = CATALOGUE[ex_id]["wrong"][label]
    result = judge(ex_id, answer_code(ex_id, wrong))
    cases = {c["name"]: c for c in result["cases"]}
    assert not result["passed"] and not cases[wrong["fails"]]["passed"]
