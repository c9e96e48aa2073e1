"""A contributor's first lesson, as CONTRIBUTING.md's "Your first lesson" walks it, in a copy
of the project: scaffold it (`make new-lesson`), change its numbers fence and its prose,
check it with the per-lesson verb (`make check-lesson`: its page, claims, labs and Chromium
tests, the gates on its page), and see the page with the new number in Chromium. The
scaffolded claims test fails when the prose and the numbers disagree, and passes again when
they agree."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from helpers import start_server

from build_scripts.bench.bench_live import LiveProject

pytestmark = pytest.mark.slow

NAME = "13-sharper-scores"
LESSON = f"docs/lessons/{NAME}.md"
CLAIMS = f"tests/lessons/test_{NAME.replace('-', '_')}.py"
SCORES = "scores = np.array([2.0, 1.0, 0.1])"
NEW_SCORES = "scores = np.array([3.0, 1.0, 0.1])"
PROSE = "Start from what the reader already knows"
NEW_PROSE = "A wider gap between the scores gives a sharper pattern. Start from what the reader already knows"


def softmax_max(scores):
    e = np.exp(np.array(scores) - max(scores))
    return float((e / e.sum()).max())


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return LiveProject(tmp_path_factory.mktemp("first-lesson")).make(probe=False)


def claims(project) -> subprocess.CompletedProcess:
    return project.run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", CLAIMS)


def test_scaffold_edit_check_and_see_the_new_number(project, browser):
    # 1. scaffold: the three files and the plan's entry
    made = project.run(sys.executable, "-m", "build_scripts.new_lesson", NAME)
    assert made.returncode == 0, made.stderr
    assert f"added {NAME} to docs/data/lessons.yaml" in made.stdout
    plan = (project.top / "docs" / "data" / "lessons.yaml").read_text("utf-8")
    assert plan.index("name: 12-real-heads") < plan.index(f"name: {NAME}")

    # 2. edit the numbers fence and the prose
    project.edit(LESSON, SCORES, NEW_SCORES)
    project.edit(LESSON, PROSE, NEW_PROSE)
    largest = softmax_max([3.0, 1.0, 0.1])

    # 3. build as make build does, then the per-lesson verb
    built = project.build(release=True)
    assert built.returncode == 0, built.stdout + built.stderr
    check = project.run(sys.executable, "-m", "build_scripts.check_lesson", NAME, timeout=900)
    assert check.returncode == 0, check.stdout[-4000:] + check.stderr[-4000:]
    assert f"check-lesson {NAME}:" in check.stdout and "FAIL" not in check.stdout
    assert f"test_{NAME.replace('-', '_')}.py" in check.stdout  # its claims test ran

    # 4. the page, in Chromium, with the new number and the new sentence
    httpd = start_server(project.top / "site")
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(httpd.base + f"lessons/{NAME}/")
        text = page.locator("article").inner_text()
        assert f"the largest score takes {largest:.3f}, more than half" in " ".join(text.split())
        assert "A wider gap between the scores gives a sharper pattern." in text
        page.wait_for_selector(".attn-lab[data-status=initial]")  # the lab is drawn
    finally:
        context.close()
        httpd.shutdown()


def test_the_claims_test_fails_when_the_prose_and_the_numbers_disagree(project):
    if not (project.top / LESSON).is_file():
        pytest.fail("the first test scaffolds the lesson")
    assert claims(project).returncode == 0
    project.edit(LESSON, NEW_SCORES, "scores = np.array([1.0, 1.0, 1.0])")  # now a third
    failed = claims(project)
    assert failed.returncode == 1
    assert "the prose says more than half" in failed.stdout
    project.edit(LESSON, "scores = np.array([1.0, 1.0, 1.0])", NEW_SCORES)
    assert claims(project).returncode == 0
