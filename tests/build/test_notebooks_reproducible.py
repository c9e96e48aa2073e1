"""Same inputs, same bytes (issue 24): two real builds of the site, one whose companion
notebooks are all executed afresh, give the same files, byte for byte: the notebooks' pages
and .ipynb downloads, the search index, everything. On the first of them: the search finds
a heading by a word in brackets, and a notebook's table of contents carries its math for
KaTeX.

Build A is the real mkdocs.yml with the notebook cache the last build left (executed by
that build, or now); build B is a copy of the project with an empty cache of its own, so
every notebook of B is executed here. Needs docs/vendor (``make build``) and Node.js."""

import json
import re
import shutil
import subprocess

import pytest
from helpers import mkdocs_build, project_copy

# Both builds date the sitemap's pages alike (the Makefile sets it from the last commit).
ENV = {"SOURCE_DATE_EPOCH": "1767225600"}


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("twice")
    proc, output = mkdocs_build(tmp / "a", env=ENV)
    assert proc.returncode == 0, output
    config = project_copy(tmp / "copy", execute=True)
    proc, output = mkdocs_build(tmp / "b", config, env=ENV)
    assert proc.returncode == 0, output
    return tmp / "a", tmp / "b", output


def files(site):
    return {p.relative_to(site).as_posix(): p for p in sorted(site.rglob("*")) if p.is_file()}


def test_two_builds_are_the_same_bytes_though_one_executed_every_notebook(builds):
    a, b, output_b = builds
    executed = re.search(r"executing (\d+) notebook\(s\)", output_b)
    notebooks = sorted(p.stem for p in (a / "notebooks").glob("*.ipynb"))
    assert executed and int(executed.group(1)) == len(notebooks) > 10, output_b
    files_a, files_b = files(a), files(b)
    assert files_a.keys() == files_b.keys()
    differ = [name for name in files_a if files_a[name].read_bytes() != files_b[name].read_bytes()]
    assert differ == []
    # what issue 24 found different: each notebook's page and download, the search index
    compared = {"search/search_index.json"}
    for name in notebooks:
        compared |= {f"notebooks/{name}.ipynb", f"notebooks/{name}/index.html"}
    assert compared <= files_a.keys()


def test_searching_rope_finds_the_rope_heading(builds):
    """Material's search splits words with the index's separator (a JavaScript RegExp):
    "(RoPE)" must give the word "rope", which a search for RoPE looks up."""
    a, _, _ = builds
    index = json.loads((a / "search" / "search_index.json").read_text("utf-8"))
    (doc,) = [d for d in index["docs"] if d["title"] == "Rotary position embeddings (RoPE)"]
    assert doc["location"] == "lessons/10-position/#rotary-position-embeddings-rope"
    node = shutil.which("node")
    assert node, "Node.js is needed (the project's JavaScript tools need it too)"
    script = (
        "const [sep, ...texts] = JSON.parse(process.argv[1]);"
        "console.log(JSON.stringify(texts.map(t => t.split(new RegExp(sep))"
        ".filter(Boolean).map(w => w.toLowerCase()))));"
    )

    def words(separator, *texts):
        args = json.dumps([separator, *texts])
        out = subprocess.run([node, "-e", script, args], capture_output=True, text=True)
        return json.loads(out.stdout)

    title, query = words(index["config"]["separator"], doc["title"], "RoPE")
    assert query == ["rope"] and "rope" in title
    # Material's default separator kept the brackets: the search missed it (issue 24)
    assert "rope" not in words(r"[\s\-]+", doc["title"])[0]


def test_a_notebooks_table_of_contents_writes_its_math_for_katex(builds):
    a, _, _ = builds
    page = (a / "notebooks" / "03-attention-pattern" / "index.html").read_text("utf-8")
    nav = page[page.index('<nav class="md-nav md-nav--secondary"') :]
    nav = nav[: nav.index("</nav>")]
    assert r"Without the \(\sqrt{d_{\text{head}}}\) scale" in nav
    assert "$" not in nav
