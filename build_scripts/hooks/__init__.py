"""The project's MkDocs hook, loaded through build_scripts/mkdocs_hooks.py (the one entry
under ``hooks:`` in mkdocs.yml).

One pass over each page's Markdown (``scanner.scan``, one line-number mapping) hands every
top-level fence to the module of its kind (``KINDS``): ``lab``, ``attention-map``,
``pycell``, ``exercise`` each check their fence and return its placeholder HTML;
```numbers fences define the page's ``{{ expr }}`` values (``numbers``). Around that:
``lessons`` derives the nav's Lessons and Notebooks sections from the files and renders a
lesson's prerequisites and notebook link, ``lesson_checks`` is the lesson gate,
``notebooks`` writes the downloadable .ipynb files, ``home`` lists the lesson plan on the
home page and measures what a lab downloads, ``glossary`` anchors the glossary's rows and
links each lesson's first use of a term to its row, and ``runtime`` (computed once, in
on_config) says where the browser finds Pyodide and the labs wheel.

Modules here import each other relatively only: MkDocs imports this package as ``hooks``
(build_scripts/ on sys.path while it loads the entry), tests as ``build_scripts.hooks``.
"""

from __future__ import annotations

from pathlib import Path

from . import (
    attention_map,
    exercise,
    glossary,
    home,
    lab,
    lesson_checks,
    lessons,
    notebooks,
    numbers,
    preload,
    pycell,
    site_url,
)
from . import runtime as runtime_config
from .scanner import Page, front_matter_lines, scan

# Fence kind (the info string) -> the module that renders it: render(fence, page) -> HTML.
KINDS = {
    lab.NAME: lab,
    attention_map.NAME: attention_map,
    pycell.NAME: pycell,
    exercise.NAME: exercise,
}


def render_page(markdown: str, src_path: str, line_offset: int = 0, kinds=None) -> str:
    """``markdown`` with every fence of ``kinds`` (default: all of ``KINDS``) replaced by
    its placeholder, ```numbers fences removed and ``{{ expr }}`` in the prose filled.

    ``line_offset``: lines of the file before ``markdown`` (front matter MkDocs removed).
    Raises the kind's FenceError (a PluginError) naming ``docs/<src_path>:<line>``."""
    kinds = KINDS if kinds is None else {k: KINDS[k] for k in kinds}
    page = Page(src_path, line_offset)
    fences = list(scan(markdown))
    namespace = None
    for fence in fences:
        if fence.info == numbers.NAME:
            namespace = namespace if namespace is not None else numbers.new_namespace()
            numbers.run(fence, page, namespace)
    lines = markdown.split("\n")
    out: list[str] = []
    at = 0
    for fence in fences:
        prose = lines[at : fence.start]
        if namespace is not None:
            prose = [
                numbers.fill_line(line, namespace, f"docs/{src_path}:{at + k + 1 + line_offset}")
                for k, line in enumerate(prose)
            ]
        out += prose
        stop = len(lines) if fence.end is None else fence.end
        if fence.info in kinds:
            out += ["", kinds[fence.info].render(fence, page), ""]
        elif fence.info == numbers.NAME:
            pass  # a numbers fence is not shown
        else:
            out += lines[fence.start : stop]
        at = stop
    prose = lines[at:]
    if namespace is not None:
        prose = [
            numbers.fill_line(line, namespace, f"docs/{src_path}:{at + k + 1 + line_offset}")
            for k, line in enumerate(prose)
        ]
    out += prose
    return "\n".join(out)


# --- MkDocs events -------------------------------------------------------------------


def on_config(config):
    site_url.configure(config)  # SITE_URL from the deployment, before anything reads it
    runtime_config.on_config(config)  # once per build, for every placeholder
    attention_map.configure(config)
    lessons.configure(config)  # the nav's Lessons and Notebooks sections, from the files
    numbers.DOCS["dir"] = Path(config["docs_dir"])
    glossary.configure(config)  # the glossary's entries, for its anchors and the lessons' links
    return config


def on_page_markdown(markdown, page, config, files):
    # MkDocs has cut the front matter (and the blank lines after it) off `markdown`.
    try:
        source = page.file.content_string
    except (OSError, ValueError):
        source = None
    src_path = page.file.src_uri
    if lesson_checks.is_lesson(src_path) and source is not None:
        lesson_checks.check_page(source, src_path)
    offset = front_matter_lines(markdown, source)
    if src_path == "index.md":
        markdown = home.expand(markdown, config["docs_dir"])  # the lesson plan
    markdown = render_page(markdown, src_path, line_offset=offset)
    return lessons.on_page_markdown(markdown, page, config, files)


def on_page_content(html, page, config, files):
    return glossary.on_page_content(html, page)  # lessons link each term's first use


def on_post_page(output, page, config):
    output = notebooks.on_post_page(output, page, config)  # no empty MathJax <script src="">
    return preload.on_post_page(output, page, config)  # the first picture's modules, early


def on_post_build(config):
    notebooks.on_post_build(config)
