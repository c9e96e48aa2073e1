"""The real `mkdocs build --strict`, run as a subprocess: the site builds, and a broken lesson
or a missing browser runtime fails the build with a message that says where and what to do.

Needs docs/vendor (the vendored browser runtime and labs wheel): `make build` makes it, and
`make test` runs the build before pytest."""

import html
import json
import re

import pytest
from attention_labs.labs import run_lab
from helpers import LESSON, ROOT, VENDOR, broken_lesson, mkdocs_build, project_copy

pytestmark = pytest.mark.slow  # the real site and project copies, built

# a lab placeholder's JSON (an attention map's placeholder has data-config too)
DATA_RE = re.compile(r'<div class="attn-lab"[^>]*data-config="([^"]*)"')


@pytest.fixture(autouse=True, scope="module")
def vendored_runtime():
    if not (VENDOR / "manifest.json").is_file():
        pytest.fail(
            "docs/vendor/manifest.json is missing: run 'make build' first "
            "(it vendors the browser runtime and builds the labs wheel; 'make test' does it)"
        )


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


def test_lesson_page_has_one_placeholder_per_lab_fence_and_math(built_site):
    site, _ = built_site
    page = (site / LESSON / "index.html").read_text(encoding="utf-8")
    # the lesson's two labs, in page order: the pattern, then scaling
    assert page.count('<div class="attn-lab"') == 2
    labs = [json.loads(html.unescape(raw))["lab"] for raw in DATA_RE.findall(page)]
    assert labs == ["attention_pattern", "scaling"]
    assert "```lab" not in page
    assert page.count('<span class="arithmatex">') >= 10  # inline \( \) math
    assert '<div class="arithmatex">' in page  # display \[ \] math


def test_lesson_placeholder_holds_the_lessons_params_and_initial_result(built_site):
    site, _ = built_site
    page = (site / LESSON / "index.html").read_text(encoding="utf-8")
    raw = DATA_RE.findall(page)[0]  # the attention_pattern lab, first on the page
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
    # the wheel's files as the archive the worker unpacks, checked as it downloads
    labs = data["runtime"]["labs"]
    assert labs == wheel.removesuffix(".whl") + ".tar.gz" and (site / labs).is_file(), labs
    assert data["runtime"]["expect"][labs]["size"] == (site / labs).stat().st_size
    assert data["runtime"]["pyodide"] == "vendor/pyodide/"


# ----------------------------------------------------------------------------
# (b) a broken lesson fails the build with file and line


PRELOAD_RE = re.compile(r'<link rel="modulepreload" href="([^"]+)">')


def test_pages_preload_the_modules_of_their_first_picture(built_site):
    """Every page preloads main.js's own imports; a lesson with labs also the controller
    and each lab's widget with theirs (d3's one module for a chart), so they download while
    the page is parsed. Every link is in the head and names a file of the site; a page
    without labs gets no lab code and no d3."""
    site, _ = built_site
    lesson = (site / LESSON / "index.html").read_text("utf-8")
    head = lesson.split("</head>")[0]
    links = PRELOAD_RE.findall(lesson)
    assert links == PRELOAD_RE.findall(head)
    assert len(links) == len(set(links))
    names = {link.split("javascripts/", 1)[-1] for link in links}
    assert {"main.js", "runtime/lab-runtime.js", "labs/controller.js"} <= names, names
    assert {"labs/attention_pattern.js", "labs/scaling.js", "ui/dom.js"} <= names, names
    assert {"renderers/line_chart.js", "renderers/chart_frame.js"} <= names, names
    assert any(link.endswith("vendor/d3/d3.min.js") for link in links), links
    for link in links:
        assert (site / LESSON / link).resolve().is_file(), link
    glossary = PRELOAD_RE.findall((site / "glossary" / "index.html").read_text("utf-8"))
    assert any(link.endswith("javascripts/main.js") for link in glossary)
    assert not [link for link in glossary if "/labs/" in link or "/d3/" in link]


PROVIDE_RE = re.compile(r'<script type="module">(import \{ provide \}.*?)</script>')
PROVIDED_RE = re.compile(r'import \* as (m\d+) from "([^"]+)";provide\("([a-z_]+)", \1\);')
LAB_RE = re.compile(r'<div class="attn-lab" data-lab="([a-z_]+)"')


def test_every_lesson_head_provides_its_controller_and_each_of_its_widgets(built_site):
    """A lesson's head hands the controller and every widget of its labs, charts included
    (no module awaits at its top level), to page.js (hooks/preload.py), by files of the
    site: each lab is drawn before DOMContentLoaded. No labs, no script."""
    site, _ = built_site
    lessons = sorted((site / "lessons").glob("*/index.html"))
    assert len(lessons) >= 12
    for page in lessons:
        text = page.read_text("utf-8")
        labs = set(LAB_RE.findall(text))
        scripts = PROVIDE_RE.findall(text.split("</head>")[0])
        if not labs:
            assert not scripts, page
            continue
        assert len(scripts) == 1, (page, scripts)
        provided = {key: url for _, url, key in PROVIDED_RE.findall(scripts[0])}
        assert set(provided) == {"controller", *labs}, (page, provided)
        assert provided["controller"].endswith("javascripts/labs/controller.js")
        for key, url in provided.items():
            if key != "controller":
                assert url.endswith(f"javascripts/labs/{key}.js"), (page, url)
            assert (page.parent / url).resolve().is_file(), (page, url)
    assert not PROVIDE_RE.findall((site / "glossary" / "index.html").read_text("utf-8"))


START_RE = re.compile(
    r'<meta charset="utf-8"><script type="application/json" id="attn-start">(\{.*?\})</script>'
    r"<script>(.*?)</script>(?:<link rel=\"modulepreload\" href=\"[^\"]+\">)+"
    r'<script type="module" async>import \{ runtime \} from "([^"]+)";'
    r"runtime\.configure\((\{.*?\}), \"([a-z_]+)\"\);runtime\.preload\(\);"
    r'</script><script data-hold="search">(.*?)</script>',
    re.S,
)
CONFIG_RE = re.compile(r'<div class="attn-lab" data-lab="[a-z_]+"[^>]*? data-config="([^"]*)"')


def inlined(name: str) -> str:
    """runtime/``name``'s text as a page's head carries it: less its comment-only lines."""
    lines = (ROOT / "docs/javascripts/runtime" / name).read_text("utf-8").splitlines(True)
    return "".join(x for x in lines if not x.lstrip().startswith("//"))


def test_a_page_with_labs_starts_python_from_the_top_of_its_head(built_site):
    """A lesson with labs starts the runtime first thing in its head (hooks/preload.py),
    configured as its first lab's controller would be: the placeholder's runtime and
    lab name. A page without labs starts nothing. Every page, 404.html too, holds
    Material's search index (search-hold.js, inline) until the reader opens search."""
    site, _ = built_site
    for page in sorted((site / "lessons").glob("*/index.html")):
        text = page.read_text("utf-8")
        found = START_RE.findall(text)
        if not LAB_RE.search(text):
            assert not found, page
            continue
        assert len(found) == 1 and text.index(found[0][0]) < text.index("stylesheet"), page
        start, early, url, config, lab, hold = found[0]
        # the two classic scripts are the files' text, inline, less their comment lines;
        # the page's data is JSON
        for inline, name in ((early, "start-worker.js"), (hold, "search-hold.js")):
            assert inline == inlined(name), page
        start = json.loads(start)
        assert (page.parent / start["worker"]).resolve() == (
            site / "javascripts" / "runtime" / "pyodide-worker.js"
        ), page
        assert start["message"]["type"] == "init", page
        assert url.endswith("javascripts/runtime/lab-runtime.js")
        assert (page.parent / url).resolve().is_file(), (page, url)
        first = json.loads(html.unescape(CONFIG_RE.search(text).group(1)))
        assert (json.loads(config), lab) == (first["runtime"], first["lab"]), page
        assert start["message"]["warmLab"] == lab, page
    # inlined, not published as files
    assert not (site / "javascripts" / "runtime" / "start-worker.js").exists()
    assert not (site / "javascripts" / "runtime" / "search-hold.js").exists()
    hold = inlined("search-hold.js")
    for other in ("index.html", "glossary/index.html", "explorer/index.html", "404.html"):
        text = (site / other).read_text("utf-8")
        assert "runtime.preload" not in text, other
        # every page holds Material's search index until the reader opens search
        top = f'<meta charset="utf-8"><script data-hold="search">{hold}</script>'
        assert text.count('data-hold="search"') == 1 and top in text, other


# Each kind of error is tested where it is raised, without a build: lab fences in
# test_lab_fences.py (render_page), exercises in tests/python/test_cells.py, on_config in
# test_lab_fences.py. A build here shows each path's wiring once: a fence's error (from
# on_page_markdown), the missing runtime (from on_config), a notebook's (mkdocs-jupyter)
# each fail the real `mkdocs build --strict` with their message and no traceback.


def test_bad_parameter_fails_the_build_with_file_line_and_parameter(tmp_path):
    text, line = broken_lesson("lab: attention_pattern", "causal: true", "temperature: -1")
    config = project_copy(
        tmp_path,
        pages={"lessons/99-broken.md": text},
    )
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert f"docs/lessons/99-broken.md:{line}: temperature" in output, output
    assert "Traceback" not in output, output


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
    assert '<script src="">' not in page  # mkdocs-jupyter's empty MathJax tag: an error event
    notebook = json.loads((site / f"{NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4
    assert any("softmax" in "".join(c["source"]) for c in notebook["cells"])


def test_a_notebook_that_raises_fails_the_build(tmp_path):
    text = (
        "# %% [markdown]\n# # Broken notebook\n\n"
        "# %%\nx = 1\n\n# %%\nraise ValueError('this notebook is broken on purpose')\n"
    )
    config = project_copy(
        tmp_path, pages={"notebooks/99-broken.py": text}, execute=["notebooks/99-broken.py"]
    )
    proc, output = mkdocs_build(tmp_path / "site", config)
    assert proc.returncode != 0, output
    assert "this notebook is broken on purpose" in output, output
    assert "99-broken" in output, output
