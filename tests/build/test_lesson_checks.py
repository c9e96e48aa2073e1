"""The lesson gate (build_scripts/hooks/lesson_checks.py): front matter, prerequisites that
are lessons, required fences and a Sources section, each missing part named with its file
and what to add; the nav entry is derived (build_scripts/hooks/lessons.py). Fixture lessons
live in tests/fixtures/lessons/; the last tests run the real `mkdocs build --strict`."""

import pytest
from helpers import FIXTURES, ROOT, mkdocs_build, project_copy

from build_scripts.hooks import lesson_checks, lessons
from build_scripts.hooks.lesson_checks import REQUIRED_FENCES, fence_kinds, lesson_problems

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
    known = lessons.discover(ROOT / "docs")
    assert lesson_problems(path.read_text("utf-8"), where, known_lessons=known) == []


def prerequisites_of(value):
    text = (FIXTURES / "complete.md").read_text("utf-8")
    text = text.replace("prerequisites: none", f"prerequisites: {value}", 1)
    assert f"prerequisites: {value}" in text
    return text


def test_a_prerequisite_that_is_not_a_lesson_is_named_with_its_line():
    text = prerequisites_of("[03-attention-pattern, 01-nope, some free text]")
    line = text.split("\n").index("prerequisites: [03-attention-pattern, 01-nope, some free text]")
    known = {"03-attention-pattern": None}
    (message,) = lesson_problems(text, "docs/lessons/x.md", known_lessons=known)
    assert message.startswith(f"docs/lessons/x.md:{line + 1}: prerequisite '01-nope' is not a")
    assert "03-attention-pattern" in message  # the lessons it could name


@pytest.mark.parametrize("value", ["none", "03-attention-pattern", "Queries and keys."])
def test_prerequisites_none_a_lesson_or_free_text_pass(value):
    text = prerequisites_of(value)
    known = {"03-attention-pattern": None}
    assert lesson_problems(text, "docs/lessons/x.md", known_lessons=known) == []


def test_prerequisites_are_shown_as_links_to_those_lessons():
    known = lessons.discover(ROOT / "docs")
    line = lessons.prerequisites_line(["03-attention-pattern", "Some algebra"], known)
    assert line == (
        "**Before this lesson:** [The attention pattern](03-attention-pattern.md); Some algebra."
    )
    assert lessons.prerequisites_line([], known).startswith("**Before this lesson:** nothing")


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
    config = project_copy(tmp_path, pages={"lessons/98-broken.md": text})  # no nav edit
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert "docs/lessons/98-broken.md: front matter has no 'summary'" in output, output
    assert "docs/lessons/98-broken.md: no '## Sources' section" in output, output
    # the nav is derived from the files: a lesson is never missing from it
    assert "is not in the nav" not in output, output
    assert "are not included in the" not in output, output  # MkDocs' list of pages off the nav
    assert "Traceback" not in output, output
