"""`make new-lesson NAME=...` (build_scripts/new_lesson.py): the scaffolded lesson is in the
nav, passes the lesson gate and builds; bad and existing names fail saying what to do."""

import shutil
import subprocess

import pytest
from helpers import ROOT, mkdocs_build, project_copy
from lesson_checks import REQUIRED_FENCES, lesson_problems
from new_lesson import TEMPLATE, add_to_nav, main


@pytest.fixture
def project(tmp_path):
    project_copy(tmp_path)
    return tmp_path


def test_scaffolded_lesson_is_in_the_nav_and_builds(project, capsys):
    assert main(["04-multi-head-attention", "--root", str(project)]) == 0
    out = capsys.readouterr().out
    assert "wrote docs/lessons/04-multi-head-attention.md" in out
    assert "added '- Multi head attention: lessons/04-multi-head-attention.md'" in out
    lesson = project / "docs" / "lessons" / "04-multi-head-attention.md"
    text = lesson.read_text("utf-8")
    assert text.startswith("---\ntitle: Multi head attention\n")
    assert "$title" not in text
    assert not TEMPLATE.is_relative_to(ROOT / "docs")  # the template is never built as a page

    problems = lesson_problems(text, "docs/lessons/04-multi-head-attention.md")
    proc, output = mkdocs_build(project / "site", project / "mkdocs.yml")
    assert set(REQUIRED_FENCES) <= {"lab", "exercise"}  # the template holds one of each
    assert problems == []
    assert proc.returncode == 0, output
    page = project / "site" / "lessons" / "04-multi-head-attention" / "index.html"
    assert 'class="attn-lab"' in page.read_text("utf-8")
    home = (project / "site" / "index.html").read_text("utf-8")
    assert "lessons/04-multi-head-attention/" in home  # in the nav of every page


def test_nav_entry_goes_in_number_order_and_keeps_the_file_as_it_was(tmp_path):
    yml = tmp_path / "mkdocs.yml"
    shutil.copy(ROOT / "mkdocs.yml", yml)
    before = yml.read_text("utf-8").split("\n")
    assert add_to_nav(yml, "Scores", "lessons/02-scores.md")
    assert add_to_nav(yml, "Multi-head attention", "lessons/07-multi-head.md")
    after = yml.read_text("utf-8").split("\n")
    added = [line for line in after if line not in before]
    assert added == [
        "      - Scores: lessons/02-scores.md",
        "      - Multi-head attention: lessons/07-multi-head.md",
    ]
    i = after.index("      - The attention pattern: lessons/03-attention-pattern.md")
    assert after[i - 1] == added[0] and after[i + 1] == added[1]
    assert [line for line in after if line not in added] == before


def test_without_a_lessons_section_the_line_to_add_is_printed(project, capsys):
    (project / "mkdocs.yml").write_text("site_name: x\nnav:\n  - Home: index.md\n", "utf-8")
    assert main(["05-x", "--title", "X", "--root", str(project)]) == 0
    assert "add this line to the nav yourself:\n    - X: lessons/05-x.md" in capsys.readouterr().out


@pytest.mark.parametrize(
    "name, expected",
    [
        ("", "give the lesson a NAME: two digits, a hyphen"),
        ("Multi Head", "'Multi Head' is not a lesson name: use two digits"),
        ("4-multi-head", "'4-multi-head' is not a lesson name"),
        ("04-multi-head.md", "'04-multi-head.md' is not a lesson name"),
        ("03-attention-pattern", "docs/lessons/03-attention-pattern.md already exists: edit it"),
        ("03-other-topic", "lesson number 03 is taken by docs/lessons/03-attention-pattern.md"),
    ],
)
def test_bad_or_existing_name_fails_saying_what_to_do(project, capsys, name, expected):
    before = sorted((project / "docs" / "lessons").iterdir())
    nav = (project / "mkdocs.yml").read_text("utf-8")
    assert main([name, "--root", str(project)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("new-lesson: ") and expected in err, err
    assert sorted((project / "docs" / "lessons").iterdir()) == before
    assert (project / "mkdocs.yml").read_text("utf-8") == nav


def test_make_new_lesson_reports_a_bad_name():
    proc = subprocess.run(
        ["make", "-s", "new-lesson", "NAME=Bad Name"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    assert "new-lesson: 'Bad Name' is not a lesson name" in proc.stderr
