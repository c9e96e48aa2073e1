"""The lesson gate (build_scripts/lesson_checks.py): front matter, required fences, a Sources
section and a nav entry, each missing part named with its file and what to add. Fixture
lessons live in tests/fixtures/lessons/; the last tests run the real `mkdocs build --strict`."""

import lesson_checks
import pytest
from helpers import FIXTURES, ROOT, mkdocs_build, project_copy
from lesson_checks import REQUIRED_FENCES, fence_kinds, lesson_problems

FIXTURES = FIXTURES / "lessons"
WITH_EXERCISE = ("lab", "exercise")


def problems(name, required=REQUIRED_FENCES):
    path = FIXTURES / name
    return lesson_problems(path.read_text("utf-8"), f"docs/lessons/{name}", required)


def test_lab_is_required_and_the_switch_is_one_constant():
    assert isinstance(REQUIRED_FENCES, tuple)
    assert "lab" in REQUIRED_FENCES
    assert set(REQUIRED_FENCES) <= set(lesson_checks.FENCE_HELP)


@pytest.mark.parametrize("path", sorted((ROOT / "docs" / "lessons").glob("*.md")), ids=str)
def test_every_real_lesson_passes(path):
    where = f"docs/lessons/{path.name}"
    assert lesson_problems(path.read_text("utf-8"), where) == []


def test_a_complete_lesson_passes_even_when_exercises_are_required():
    assert problems("complete.md", WITH_EXERCISE) == []


def test_lesson_without_exercise_fails_when_exercises_are_required():
    assert problems("no-exercise.md", ("lab",)) == []
    (message,) = problems("no-exercise.md", WITH_EXERCISE)
    assert message.startswith("docs/lessons/no-exercise.md: no ```exercise fence: add")


def test_lab_syntax_shown_inside_a_code_block_is_not_a_lab():
    (message,) = problems("no-lab.md")
    assert message.startswith("docs/lessons/no-lab.md: no ```lab fence: add at least one")
    assert "lab: attention_pattern" in message  # shows what a lab fence looks like


def test_missing_front_matter_says_which_keys_to_add():
    (message,) = problems("no-front-matter.md")
    assert message.startswith("docs/lessons/no-front-matter.md: no front matter: start")
    for key in ("title", "summary", "prerequisites"):
        assert f"'{key}: ...'" in message


def test_empty_summary_is_named():
    (message,) = problems("missing-summary.md")
    assert message.startswith(
        "docs/lessons/missing-summary.md: front matter has no 'summary': add a line 'summary: ...'"
    )


def test_missing_sources_section_says_what_to_add():
    (message,) = problems("no-sources.md")
    assert message.startswith("docs/lessons/no-sources.md: no '## Sources' section: end the")


def test_sources_heading_without_list_items_fails():
    (message,) = problems("empty-sources.md")
    assert message.startswith("docs/lessons/empty-sources.md: the '## Sources' section has no")


def test_fence_kinds_skips_nested_fences_and_reads_attribute_style():
    text = "```lab\nx\n```\n\n````md\n```exercise\n```\n````\n\n``` {.pycell}\n```\n"
    assert fence_kinds(text) == ["lab", "md", "pycell"]


# ----------------------------------------------------------------------------
# the real build


def test_build_fails_listing_every_problem_of_a_broken_lesson(tmp_path):
    text = (FIXTURES / "no-sources.md").read_text("utf-8")
    text = text.replace("summary: Everything but a Sources section.", "summary:")
    config = project_copy(tmp_path, pages={"lessons/98-broken.md": text})  # not in nav
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert "docs/lessons/98-broken.md: front matter has no 'summary'" in output, output
    assert "docs/lessons/98-broken.md: no '## Sources' section" in output, output
    assert "docs/lessons/98-broken.md: the lesson is not in the nav: add" in output, output
    assert "mkdocs.yml" in output
    assert "Traceback" not in output, output
