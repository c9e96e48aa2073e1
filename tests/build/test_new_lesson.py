"""`make new-lesson NAME=...` (build_scripts/new_lesson.py): the lesson, its notebook and its
claims test are scaffolded; the lesson passes the lesson gate and builds, in the derived nav,
linked to its notebook; bad and existing names fail saying what to do."""

import shutil
import subprocess
import sys

import pytest
import yaml
from helpers import ROOT, mkdocs_build, project_copy

from build_scripts.hooks import lessons
from build_scripts.hooks.lesson_checks import REQUIRED_FENCES, lesson_problems
from build_scripts.new_lesson import NOTEBOOK_TEMPLATE, TEMPLATE, TEST_TEMPLATE, main


@pytest.fixture
def project(tmp_path):
    project_copy(tmp_path)
    return tmp_path


@pytest.mark.slow  # a project copy's build
def test_scaffolded_lesson_is_in_the_nav_and_builds(project, capsys):
    nav_before = (project / "mkdocs.yml").read_text("utf-8")
    assert main(["90-multi-head-attention", "--root", str(project)]) == 0
    out = capsys.readouterr().out
    assert "wrote docs/lessons/90-multi-head-attention.md" in out
    assert "wrote docs/notebooks/90-multi-head-attention.py" in out
    assert "wrote tests/lessons/test_90_multi_head_attention.py" in out
    assert (project / "mkdocs.yml").read_text("utf-8") == nav_before  # no nav edit
    lesson = project / "docs" / "lessons" / "90-multi-head-attention.md"
    text = lesson.read_text("utf-8")
    assert text.startswith("---\ntitle: Multi head attention\n")
    assert "$title" not in text
    for template in (TEMPLATE, NOTEBOOK_TEMPLATE, TEST_TEMPLATE):
        assert not template.is_relative_to(ROOT / "docs")  # never built as a page

    known = lessons.discover(project / "docs")
    problems = lesson_problems(text, "docs/lessons/90-multi-head-attention.md", known_lessons=known)
    proc, output = mkdocs_build(project / "site", project / "mkdocs.yml")
    assert set(REQUIRED_FENCES) <= {"lab", "exercise"}  # the template holds one of each
    assert problems == []
    assert proc.returncode == 0, output
    page = (project / "site" / "lessons" / "90-multi-head-attention" / "index.html").read_text()
    assert 'class="attn-lab"' in page
    assert "../../notebooks/90-multi-head-attention/" in page  # the build links the notebook
    assert 'href="../03-attention-pattern/"' in page  # its prerequisite, as a link
    assert "(0.659, 0.242, 0.099)" in page and "{{ weights" not in page  # numbers computed
    home = (project / "site" / "index.html").read_text("utf-8")
    assert "lessons/90-multi-head-attention/" in home  # in the nav of every page
    assert "notebooks/90-multi-head-attention/" in home
    notebook = project / "site" / "notebooks" / "90-multi-head-attention.ipynb"
    assert notebook.is_file()


def run_claims(project, test):
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_scaffolded_claims_test_checks_the_prose_against_its_numbers(project):
    # what the claims test needs of the project besides docs/: its helpers and the tools
    for rel in ("pyproject.toml", "tests/helpers.py", "tests/conftest.py"):
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, project / rel)
    (project / "tests" / "lessons").mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "lessons" / "lesson_text.py", project / "tests" / "lessons")
    (project / "build_scripts").symlink_to(ROOT / "build_scripts", target_is_directory=True)
    assert main(["91-scores", "--root", str(project)]) == 0
    test = project / "tests" / "lessons" / "test_91_scores.py"
    proc = run_claims(project, test)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout
    # numbers that make the prose's words false fail it, naming what to change
    lesson = project / "docs" / "lessons" / "91-scores.md"
    text = lesson.read_text("utf-8")
    lesson.write_text(text.replace("np.array([2.0, 1.0, 0.1])", "np.array([1.0, 1.0, 1.0])"))
    proc = run_claims(project, test)
    assert proc.returncode == 1 and "1 failed, 1 passed" in proc.stdout, proc.stdout
    assert "the prose says more than half: change the words or the scores" in proc.stdout


def test_the_scaffold_adds_the_lesson_to_the_plan_in_number_order(project, capsys):
    plan = project / "docs" / "data" / "lessons.yaml"
    before = plan.read_text("utf-8")
    assert main(["05-an-early-topic", "--root", str(project)]) != 0  # 05 is taken
    assert main(["13-a-new-topic", "--root", str(project), "--title", "A: new"]) == 0
    assert "added 13-a-new-topic to docs/data/lessons.yaml" in capsys.readouterr().out
    after = plan.read_text("utf-8")
    assert after.startswith(before.rstrip("\n") + "\n")  # the rest is as it was, comments too
    items = yaml.safe_load(after)["lessons"]
    assert items[-1] == {
        "name": "13-a-new-topic",
        "title": "A: new",
        "learns": "One sentence - what a reader learns in this lesson.",
    }
    # a number between two planned lessons goes between them
    plan.write_text(after.replace("name: 12-real-heads", "name: 14-real-heads"))
    (project / "docs" / "lessons" / "12-real-heads.md").rename(
        project / "docs" / "lessons" / "14-real-heads.md"
    )
    assert main(["12-in-between", "--root", str(project)]) == 0
    names = [item["name"] for item in yaml.safe_load(plan.read_text("utf-8"))["lessons"]]
    assert names[-3:] == ["12-in-between", "14-real-heads", "13-a-new-topic"]
    # a number the plan gives to another name is refused, the plan unchanged
    planned = plan.read_text("utf-8")
    (project / "docs" / "lessons" / "12-in-between.md").unlink()
    assert main(["12-other-name", "--root", str(project)]) == 1
    assert "lesson number 12 is planned as 12-in-between" in capsys.readouterr().err
    assert plan.read_text("utf-8") == planned


def test_derived_nav_lists_lessons_in_number_order_and_keeps_the_rest(tmp_path):
    docs = tmp_path / "docs"
    (docs / "lessons").mkdir(parents=True)
    (docs / "notebooks").mkdir()
    for name, title in [("07-multi-head", "Multi-head attention"), ("02-scores", "Scores")]:
        (docs / "lessons" / f"{name}.md").write_text(f"---\ntitle: {title}\n---\n# {title}\n")
    shutil.copy(ROOT / "docs" / "lessons" / "03-attention-pattern.md", docs / "lessons")
    (docs / "notebooks" / "03-attention-pattern.py").write_text("# %%\n")
    before = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))["nav"]
    nav = lessons.derive_nav(before, lessons.discover(docs), lessons.notebook_names(docs))
    assert nav[1] == {
        "Lessons": [
            {"Scores": "lessons/02-scores.md"},
            {"The attention pattern": "lessons/03-attention-pattern.md"},
            {"Multi-head attention": "lessons/07-multi-head.md"},
        ]
    }
    assert {"Notebooks": [{"The attention pattern": "notebooks/03-attention-pattern.py"}]} in nav
    explorer = next(i for i, item in enumerate(nav) if "Explorer" in item)
    assert "Notebooks" in nav[explorer + 1]
    assert [item for item in nav if not {"Lessons", "Notebooks"} & set(item)] == before


def test_without_a_lessons_section_the_lessons_still_get_one(tmp_path):
    docs = tmp_path / "docs"
    (docs / "lessons").mkdir(parents=True)
    (docs / "lessons" / "05-x.md").write_text("---\ntitle: X\n---\n")
    nav = lessons.derive_nav([{"Home": "index.md"}], lessons.discover(docs), [])
    assert nav == [{"Home": "index.md"}, {"Lessons": [{"X": "lessons/05-x.md"}]}]


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
    def files():
        return sorted(
            [*(project / "docs" / "lessons").iterdir(), *(project / "docs" / "notebooks").iterdir()]
        )

    before = files()
    nav = (project / "mkdocs.yml").read_text("utf-8")
    assert main([name, "--root", str(project)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("new-lesson: ") and expected in err, err
    assert files() == before
    assert not (project / "tests").exists()
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
