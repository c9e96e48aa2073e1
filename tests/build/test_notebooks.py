"""The companion notebooks' build (build_scripts/hooks/notebooks.py): stable cell ids, the
download's install cell, math in a notebook's table of contents, and the cache of executed
notebooks both ways: a build with nothing changed executes nothing, a change to a lab
function the notebook prints executes it again (and a change to a module it never imported
does not).

The cache tests build a copy of the project (helpers.project_copy) whose kernel imports a
copy of labs_py/ (PYTHONPATH), which the test edits; only their own notebook is executed."""

import json
import os
import re
import shutil
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from helpers import ROOT, VENDOR, mkdocs_build, project_copy
from mkdocs.exceptions import PluginError

from build_scripts.bench.bench_live import LiveProject
from build_scripts.hooks import notebooks

NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.py"))


def settings(site_url="https://example.org/book/") -> notebooks.Settings:
    (wheel,) = (VENDOR / "labs" / "py3").glob("*.whl")
    return notebooks.Settings(
        execute=True,
        cache=Path("unused"),
        wheel=f"{site_url}vendor/labs/py3/{wheel.name}",
        docs=ROOT / "docs",
        roots=(ROOT,),
    )


# ----------------------------------------------------------------------------
# the notebook files


def test_cell_ids_come_from_position_and_content_so_two_reads_are_the_same_bytes():
    for path in NOTEBOOKS:
        first, second = notebooks.read(path), notebooks.read(path)
        assert nbformat.writes(first) == nbformat.writes(second), path.name
        ids = [cell.id for cell in first.cells]
        assert len(set(ids)) == len(ids)
        nbformat.validate(first)  # ids of the allowed characters and length
    cells = notebooks.read(NOTEBOOKS[0]).cells
    edited = nbformat.from_dict(dict(cells[1], source=cells[1].source + "\n"))
    assert notebooks.cell_id(1, edited) != cells[1].id  # another content, another id
    assert notebooks.cell_id(1, cells[1]) == cells[1].id


def test_every_download_starts_with_the_same_install_cell_for_the_sites_wheel():
    config = settings()
    for path in NOTEBOOKS:
        notebook = nbformat.reads(notebooks.download(path, config), as_version=4)
        first = notebook.cells[0]
        assert first.cell_type == "code"
        assert first.source == notebooks.INSTALL.format(wheel=config.wheel), path.name
        assert first.source.splitlines()[-1] == (
            "%pip install matplotlib https://example.org/book/vendor/labs/py3/"
            "attention_labs-0.1.0-py3-none-any.whl"
        )
        assert all(not c.get("outputs") for c in notebook.cells)  # the reader runs it
        assert "jupytext" not in notebook.metadata  # no pairing with a .py they lack
        intro = " ".join(notebook.cells[1].source.split())
        assert "its first cell installs" in intro and "pip install -e" not in intro, path.name


def test_configure_needs_the_pure_wheel_from_make_wheel(tmp_path):
    values = {"docs_dir": str(tmp_path), "extra": {}, "site_url": "http://127.0.0.1:8000/"}
    with pytest.raises(PluginError, match="run 'make wheel'"):
        notebooks.configure(_Config(values, tmp_path / "mkdocs.yml"))
    wheels = tmp_path / "vendor" / "labs" / "py3"
    wheels.mkdir(parents=True)
    (wheels / "attention_labs-0.1.0-py3-none-any.whl").write_bytes(b"")
    got = notebooks.configure(_Config(values, tmp_path / "mkdocs.yml"))
    assert (
        got.wheel == "http://127.0.0.1:8000/vendor/labs/py3/attention_labs-0.1.0-py3-none-any.whl"
    )
    assert got.cache == tmp_path / "build" / "cache" / "notebooks"
    assert got.execute is True


class _Config(dict):
    """MkDocs' config as the hook reads it: items, and the file it came from."""

    def __init__(self, values, path):
        super().__init__(values)
        self.config_file_path = str(path)


def test_math_in_a_notebooks_table_of_contents_is_written_for_katex():
    link = SimpleNamespace(title=r"Without the $\sqrt{d}$ scale", children=[])
    top = SimpleNamespace(title="A $x$ and $$y$$", children=[link])
    page = SimpleNamespace(file=SimpleNamespace(src_uri="notebooks/03-x.py"), toc=[top])
    notebooks.on_page_context(page)
    assert link.title == r"Without the \(\sqrt{d}\) scale"
    assert top.title == r"A \(x\) and $$y$$"
    lesson = SimpleNamespace(file=SimpleNamespace(src_uri="lessons/03-x.md"), toc=[top])
    top.title = "$x$"
    notebooks.on_page_context(lesson)
    assert top.title == "$x$"  # a lesson's math is arithmatex's


# ----------------------------------------------------------------------------
# the cache, in a copy of the project whose labs the test edits

CACHED = """\
# %% [markdown]
# # Cached: companion notebook
#
# Prints a lab function's result, in three flushes.

# %%
import time

import numpy as np
from attention_labs import softmax
from attention_labs.test_lab import label

for step in range(3):
    print("step", step, flush=True)
    time.sleep(0.3)
print(label(softmax(np.array([0.0, 0.0]))))
"""
LAB = 'def label(weights):\n    return f"{word} {{weights}}"\n'
NAME = "notebooks/99-cached.py"
EXECUTING = re.compile(r"executing (\d+) notebook\(s\): (.*)")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cached")
    config = project_copy(tmp, pages={NAME: CACHED}, execute=[NAME])
    shutil.copytree(ROOT / "labs_py", tmp / "labs_py", ignore=shutil.ignore_patterns("__pycache__"))
    labs = tmp / "labs_py" / "attention_labs"
    # a lab function of the copy's own, which the rest of the site does not use
    (labs / "test_lab.py").write_text(LAB.format(word="weights"), "utf-8")
    return SimpleNamespace(root=tmp, config=config, labs=labs)


def build(project):
    """Build the copy; returns (names of the notebooks executed, the notebook's page)."""
    proc, output = mkdocs_build(
        project.root / "site", project.config, env={"PYTHONPATH": str(project.root / "labs_py")}
    )
    assert proc.returncode == 0, output
    executed = [m.group(2) for m in EXECUTING.finditer(output)]
    page = (project.root / "site" / "notebooks" / "99-cached" / "index.html").read_text("utf-8")
    return executed, page


def test_cache_executes_again_only_when_what_the_notebook_read_changed(project):
    executed, page = build(project)
    assert executed == ["99-cached"]
    assert "weights [0.5 0.5]" in page
    cache = project.root / "build" / "cache" / "notebooks"
    entry = json.loads((cache / "99-cached.json").read_text("utf-8"))
    assert str(project.labs / "test_lab.py") in entry["inputs"]
    assert str(project.labs / "attention.py") in entry["inputs"]  # softmax's module
    assert str(project.labs / "labs" / "kv_cache.py") not in entry["inputs"]  # never imported
    # three flushes, one output: streams are merged
    (cell,) = [c for c in nbformat.read(cache / "99-cached.ipynb", 4).cells if c.get("outputs")]
    assert [o.output_type for o in cell.outputs] == ["stream"]
    assert cell.outputs[0].text.startswith("step 0\nstep 1\nstep 2\nweights")

    # nothing changed: nothing executed, the same page
    assert build(project) == ([], page)

    # a lab module the notebook never imported: still nothing
    with (project.labs / "labs" / "kv_cache.py").open("a") as fh:
        fh.write("\n# edited by test_notebooks\n")
    assert build(project) == ([], page)

    # the lab function it prints: executed again, with the new result
    (project.labs / "test_lab.py").write_text(LAB.format(word="WEIGHTS"), "utf-8")
    executed, page = build(project)
    assert executed == ["99-cached"]
    assert "WEIGHTS [0.5 0.5]" in page


def test_a_notebook_not_to_execute_is_a_page_without_outputs(project):
    build(project)
    page = project.root / "site" / "notebooks" / "03-attention-pattern" / "index.html"
    html = page.read_text("utf-8")
    assert "The attention pattern: companion notebook" in html
    assert 'class="jp-OutputArea' not in html  # (the stylesheet names the class)


# ----------------------------------------------------------------------------
# a project copy's cache (build_scripts/bench/bench_live.py's LiveProject: the walkthrough
# tests and make serve's bench): the repository's executed notebooks, hit by its first build


def test_the_labs_found_again_on_the_path_leave_the_environment_as_it_was(tmp_path, monkeypatch):
    """A project copy's labs_py/ on PYTHONPATH holds the egg-info that `pip wheel` writes:
    the labs a second time. The environment, part of every cache key, names each
    distribution once, so the copy's keys are the repository's."""
    before = notebooks.environment()
    assert len(set(before.splitlines())) == len(before.splitlines())
    egg = tmp_path / "attention_labs.egg-info"
    egg.mkdir()
    version = metadata.version("attention-labs")
    (egg / "PKG-INFO").write_text(
        f"Metadata-Version: 2.1\nName: attention-labs\nVersion: {version}\n", "utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert sum(d.metadata["Name"] == "attention-labs" for d in metadata.distributions()) >= 2
    assert notebooks.environment() == before


def test_a_project_copys_cache_names_its_own_files_which_are_the_repositorys(tmp_path):
    cache = ROOT / "build" / "cache" / "notebooks"
    if not any(cache.glob("*.json")):
        pytest.fail("no executed notebooks in build/cache/notebooks: run `make build`")
    top = LiveProject(tmp_path / "copy").make(probe=False).top
    copied = sorted((top / "build" / "cache" / "notebooks").glob("*.json"))
    assert [e.name for e in copied] == sorted(e.name for e in cache.glob("*.json"))
    for entry in copied:
        inputs = json.loads(entry.read_text("utf-8"))["inputs"]
        original = json.loads((cache / entry.name).read_text("utf-8"))["inputs"]
        assert list(inputs.values()) == list(original.values()), entry.name
        # an edit in the copy executes the notebooks that read the edited file ...
        assert all(path.startswith(f"{top}{os.sep}") for path in inputs), entry.name
        # ... and the copy's first build executes none: its files have the same bytes
        for path, sha in inputs.items():
            assert notebooks._sha256(Path(path)) == sha, path
