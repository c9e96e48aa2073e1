"""The real `mkdocs build --strict`, run as a subprocess: the site builds, and a broken lesson
or a missing browser runtime fails the build with a message that says where and what to do.

Needs docs/vendor (the vendored browser runtime and labs wheel): `make build` makes it, and
`make test` runs the build before pytest."""

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from attention_labs.labs import run_lab

ROOT = Path(__file__).resolve().parents[1]
MKDOCS = Path(sys.executable).with_name("mkdocs")
if not MKDOCS.exists():
    MKDOCS = ROOT / ".venv" / "bin" / "mkdocs"
VENDOR = ROOT / "docs" / "vendor"
LESSON = "lessons/03-attention-pattern"
# a lab placeholder's JSON (an attention map's placeholder has data-config too)
DATA_RE = re.compile(r'<div class="attn-lab"[^>]*data-config="([^"]*)"')


@pytest.fixture(autouse=True, scope="module")
def vendored_runtime():
    if not (VENDOR / "manifest.json").is_file():
        pytest.fail(
            "docs/vendor/manifest.json is missing: run 'make build' first "
            "(it vendors the browser runtime and builds the labs wheel; 'make test' does it)"
        )


def mkdocs_build(site_dir, config_file=None):
    cmd = [str(MKDOCS), "build", "--strict", "-d", str(site_dir)]
    if config_file is not None:
        cmd += ["-f", str(config_file)]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    return proc, proc.stdout + proc.stderr


def project_copy(tmp_path, pages=None, nav=(), vendor=True):
    """A copy of the project's mkdocs.yml and docs/ under tmp_path.

    ``pages`` maps extra docs-relative paths to their text, ``nav`` lists (title, path)
    entries added to the Lessons section, and ``vendor=False`` leaves docs/vendor out
    (otherwise it is a symlink to the real one). Returns the config file's path."""
    docs = tmp_path / "docs"
    shutil.copytree(
        ROOT / "docs", docs, ignore=lambda d, names: ["vendor"] if Path(d) == ROOT / "docs" else []
    )
    if vendor:
        (docs / "vendor").symlink_to(VENDOR, target_is_directory=True)
    for rel, text in (pages or {}).items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = str(docs)
    config["site_dir"] = str(tmp_path / "site")
    config["hooks"] = [str((ROOT / hook).resolve()) for hook in config["hooks"]]
    for title, rel in nav:
        lessons = next(item for item in config["nav"] if "Lessons" in item)["Lessons"]
        lessons.append({title: rel})
    config_file = tmp_path / "mkdocs.yml"
    config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return config_file


def broken_lesson(*fence_body):
    """A lesson with front matter whose lab fence holds ``fence_body``; returns the text
    and the 1-based line of the fence's opening ```lab."""
    lines = [
        "---",
        "title: Broken",
        "summary: A lesson with a bad lab fence.",
        "prerequisites: none",
        "---",
        "",
        "# Broken",
        "",
        "Some text with math, \\(x^2\\).",
        "",
        "```lab",
        *fence_body,
        "```",
        "",
        "After.",
        "",
        # the lesson gate (build_scripts/lesson_checks.py) wants an exercise and sources
        "```exercise",
        "kind: code",
        "id: twice",
        "title: Twice",
        "prompt: Return twice x.",
        "starter: |",
        "  def twice(x):",
        "      return x",
        "solution: |",
        "  def twice(x):",
        "      return 2 * x",
        "checks:",
        "  - name: doubles",
        "    code: assert twice(3) == 6",
        "```",
        "",
        "## Sources",
        "",
        "- None.",
        "",
    ]
    return "\n".join(lines), lines.index("```lab") + 1


# ----------------------------------------------------------------------------
# (a) the real site


@pytest.fixture(scope="module")
def built_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    proc, output = mkdocs_build(site)
    assert proc.returncode == 0, output
    return site, output


def test_real_site_builds_strict_without_warnings(built_site):
    site, output = built_site
    assert "WARNING" not in output and "ERROR" not in output, output
    assert (site / "index.html").is_file()
    assert (site / "vendor" / "manifest.json").is_file()


def test_lesson_page_has_one_lab_placeholder_and_math(built_site):
    site, _ = built_site
    page = (site / LESSON / "index.html").read_text(encoding="utf-8")
    assert page.count('<div class="attn-lab"') == 1
    assert len(DATA_RE.findall(page)) == 1
    assert "```lab" not in page
    assert page.count('<span class="arithmatex">') >= 10  # inline \( \) math
    assert '<div class="arithmatex">' in page  # display \[ \] math


def test_lesson_placeholder_holds_the_lessons_params_and_initial_result(built_site):
    site, _ = built_site
    page = (site / LESSON / "index.html").read_text(encoding="utf-8")
    (raw,) = DATA_RE.findall(page)
    assert "&lt;" not in raw and "&amp;" not in raw  # not touched by Markdown
    data = json.loads(html.unescape(raw))
    params = {
        "tokens": ["The", "fluffy", "blue", "creature", "roamed", "the", "verdant", "forest"],
        "preset": "content",
        "temperature": 1.0,
        "causal": False,
        "scale": True,
        "d_head": 64,
    }
    assert data["initial"] == run_lab("attention_pattern", params)
    wheel = data["runtime"]["wheel"]
    assert (site / wheel).is_file(), wheel  # relative to the site root
    assert data["runtime"]["pyodide"] == "vendor/pyodide/"


# ----------------------------------------------------------------------------
# (b) a broken lesson fails the build with file and line


def test_bad_parameter_fails_the_build_with_file_line_and_parameter(tmp_path):
    text, line = broken_lesson("lab: attention_pattern", "causal: true", "temperature: -1")
    config = project_copy(
        tmp_path,
        pages={"lessons/99-broken.md": text},
        nav=[("Broken", "lessons/99-broken.md")],
    )
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert f"docs/lessons/99-broken.md:{line}: temperature" in output, output
    assert "Traceback" not in output, output


def test_unknown_lab_fails_the_build_with_file_and_line(tmp_path):
    text, line = broken_lesson("lab: attention_patern")
    config = project_copy(tmp_path, pages={"lessons/99-broken.md": text})  # not in nav
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert f"docs/lessons/99-broken.md:{line}: unknown lab 'attention_patern'" in output, output
    assert "attention_pattern" in output  # the known labs are listed
    assert "Traceback" not in output, output


def test_the_project_copy_builds_when_nothing_is_broken(tmp_path):
    # The harness itself is sound: the same copy with a good fence builds.
    text, _ = broken_lesson("lab: attention_pattern", "temperature: 2")
    config = project_copy(
        tmp_path,
        pages={"lessons/99-broken.md": text},
        nav=[("Broken", "lessons/99-broken.md")],
    )
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode == 0, output
    page = (tmp_path / "site" / "lessons" / "99-broken" / "index.html").read_text()
    (raw,) = DATA_RE.findall(page)
    assert json.loads(html.unescape(raw))["params"]["temperature"] == 2.0


# ----------------------------------------------------------------------------
# (c) no vendored runtime


def test_missing_vendor_fails_the_build_and_says_make_vendor(tmp_path):
    config = project_copy(tmp_path, vendor=False)
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert "manifest.json is missing" in output, output
    assert "make vendor" in output, output


# ----------------------------------------------------------------------------
# (d) companion notebooks and exercises

NOTEBOOK = "notebooks/03-attention-pattern"


def test_notebook_page_shows_executed_outputs_and_links_its_ipynb(built_site):
    site, _ = built_site
    page = (site / NOTEBOOK / "index.html").read_text(encoding="utf-8")
    assert "weights: [0.659 0.242 0.099]" in page  # printed by the build's kernel
    assert "entropy: 1.222 bits" in page
    assert 'src="data:image/png' in page  # the Matplotlib figure
    assert 'href="../03-attention-pattern.ipynb"' in page
    notebook = json.loads((site / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4
    assert any("softmax" in "".join(c["source"]) for c in notebook["cells"])


def test_a_notebook_that_raises_fails_the_build(tmp_path):
    text = (
        "# %% [markdown]\n# # Broken notebook\n\n"
        "# %%\nx = 1\n\n# %%\nraise ValueError('this notebook is broken on purpose')\n"
    )
    config = project_copy(tmp_path, pages={"notebooks/99-broken.py": text})
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert "this notebook is broken on purpose" in output, output
    assert "99-broken" in output, output


def test_an_exercise_whose_solution_fails_its_checks_fails_the_build(tmp_path):
    lines = [
        "# Broken exercise",
        "",
        "```exercise",
        "kind: code",
        "id: broken",
        "title: Broken",
        "prompt: Write f.",
        "starter: 'def f(x): return x'",
        "solution: 'def f(x): return x * 3'",
        "checks: [{name: doubles, code: 'assert f(2) == 4, \"f(2) is not 4\"'}]",
        "```",
        "",
    ]
    config = project_copy(tmp_path, pages={"lessons/99-broken.md": "\n".join(lines)})
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert "docs/lessons/99-broken.md:3: exercise solution fails its checks: doubles" in output
    assert "Traceback" not in output, output
