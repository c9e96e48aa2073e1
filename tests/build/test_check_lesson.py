"""`make check-lesson NAME=...` (build_scripts/check_lesson.py): which tests it picks for a
lesson, what it leaves to `make test`, and a name that is no lesson."""

from __future__ import annotations

import subprocess
import sys

from helpers import ROOT

from build_scripts import check_lesson


def names(lesson: str) -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in check_lesson.test_files(lesson)]


def test_a_lesson_gets_its_claims_its_labs_cpython_tests_and_its_page_in_that_order():
    assert names("04-masking") == [
        "tests/lessons/test_04_masking.py",
        "tests/python/test_lab_masking.py",
        "tests/browser/test_browser_lesson_04.py",
    ]
    three = names("03-attention-pattern")
    assert three[0] == "tests/lessons/test_03_attention_pattern.py"
    assert "tests/browser/test_browser_lab.py" in three  # names the lesson's lab


def test_engines_and_runtime_tests_are_left_to_make_test():
    (what, command), (gates, _) = check_lesson.steps("03-attention-pattern")
    assert "Chromium" in what and "gates" in gates
    assert ("-m", "not engines and not runtime") in zip(command, command[1:], strict=False)
    # test_browser_startup.py names lesson 3's lab but tests Python's start-up: every test
    # in it is marked runtime, so the per-lesson verb selects none of them
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + ["-m", check_lesson.DESELECT, "tests/browser/test_browser_startup.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert "no tests collected" in collected.stdout and "deselected" in collected.stdout, (
        collected.stdout[-2000:]
    )


def test_a_name_that_is_no_lesson_is_refused_naming_one_that_is(capsys):
    assert check_lesson.main(["4-masking"]) == 2
    err = capsys.readouterr().err
    assert "'4-masking' is not a lesson of docs/lessons/" in err
    assert "make check-lesson NAME=01-why-attention" in err
