"""The project's MkDocs hook, loaded through build_scripts/mkdocs_hooks.py (the one entry
under ``hooks:`` in mkdocs.yml).

One pass over each page's Markdown (``scanner.scan``, one line-number mapping) hands every
top-level fence to the module of its kind (``KINDS``): ``lab``, ``attention-map``,
``pycell``, ``exercise`` each check their fence and return its placeholder HTML;
```numbers fences define the page's ``{{ expr }}`` values (``numbers``). Around that:
``lessons`` derives the nav's Lessons and Notebooks sections from the files and renders a
lesson's prerequisites and notebook link, ``lesson_checks`` is the lesson gate,
``notebooks`` executes the companion notebooks when what they read changed (for
mkdocs-jupyter to render) and writes their downloadable .ipynb files, ``home`` lists the
lesson plan on the home page and measures what a lab downloads, ``glossary`` anchors the
glossary's rows and links each lesson's first use of a term to its row, and ``runtime``
(computed once, in on_config) says where the browser finds Pyodide and the labs wheel;
``site_url`` and ``repo_url`` take the deployment's address and repository (edit links) from
the environment.

What on_config reads once (the runtime, the map index, the lessons, the glossary, the
notebooks' settings) is one
``BuildState`` (hooks/state.py), held by the ``SiteHooks`` instance whose events MkDocs
calls (build_scripts/mkdocs_hooks.py makes it) and passed explicitly to what renders a
page (``render_page``, ``Page.build``); no module keeps build state in a global.

The package is ``build_scripts.hooks`` for MkDocs (the entry puts the repository on
sys.path) and for tests alike, so it may use the rest of build_scripts (compress.py's
rule, files.py).
"""

from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.plugins import event_priority

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
    repo_url,
    site_url,
)
from . import runtime as runtime_config
from .scanner import Page, front_matter_lines, scan
from .state import BuildState

LOG = logging.getLogger("mkdocs.hooks")

# Fence kind (the info string) -> the module that renders it: render(fence, page) -> HTML.
KINDS = {
    lab.NAME: lab,
    attention_map.NAME: attention_map,
    pycell.NAME: pycell,
    exercise.NAME: exercise,
}


def render_page(
    markdown: str,
    src_path: str,
    line_offset: int = 0,
    kinds=None,
    build: BuildState | None = None,
) -> str:
    """``markdown`` with every fence of ``kinds`` (default: all of ``KINDS``) replaced by
    its placeholder, ```numbers fences removed and ``{{ expr }}`` in the prose filled.

    ``line_offset``: lines of the file before ``markdown`` (front matter MkDocs removed).
    ``build``: what the build read in on_config (default: nothing read, ``BuildState()``).
    Raises the kind's FenceError (a PluginError) naming ``docs/<src_path>:<line>``."""
    kinds = KINDS if kinds is None else {k: KINDS[k] for k in kinds}
    page = Page(src_path, line_offset, build=build if build is not None else BuildState())
    fences = list(scan(markdown))
    namespace = None
    for fence in fences:
        if fence.info == numbers.NAME:
            if namespace is None:
                namespace = numbers.new_namespace(page.build.docs)
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


def configure(config) -> BuildState:
    """on_config's work: the deployment's site_url and the derived nav go into ``config``;
    what every page needs is read once and returned."""
    site_url.configure(config)  # SITE_URL from the deployment, before anything reads it
    repo_url.configure(config)  # REPO_URL: the edit links (none without it)
    return BuildState(
        docs=Path(config["docs_dir"]),
        runtime=runtime_config.configure(config),  # once per build, for every placeholder
        maps=attention_map.configure(config),
        lessons=lessons.configure(config),  # the nav's Lessons and Notebooks sections too
        terms=glossary.configure(config),  # for the glossary's anchors and the lessons' links
        notebooks=notebooks.configure(config),
    )


class SiteHooks:
    """The site's MkDocs events, with the build's state on the instance (``build``, read in
    on_config), as MkDocs plugins keep theirs. build_scripts/mkdocs_hooks.py makes one per
    load of mkdocs.yml; a test makes its own with the state it wants."""

    def __init__(self, build: BuildState | None = None):
        self.build = build if build is not None else BuildState()

    def on_config(self, config):
        self.build = configure(config)
        return config

    # After mkdocs-jupyter's on_files (priority 0) has made the notebooks its pages.
    @event_priority(-50)
    def on_files(self, files, config):
        if self.build.notebooks is not None:
            notebooks.prepare(files, self.build.notebooks, log=LOG)  # executed, or cached
        return files

    def on_page_markdown(self, markdown, page, config, files):
        # MkDocs has cut the front matter (and the blank lines after it) off `markdown`.
        try:
            source = page.file.content_string
        except (OSError, ValueError):
            source = None
        src_path = page.file.src_uri
        if lesson_checks.is_lesson(src_path) and source is not None:
            lesson_checks.check_page(source, src_path, self.build.lessons)
        offset = front_matter_lines(markdown, source)
        if src_path == "index.md":
            markdown = home.expand(markdown, self.build.docs)  # the lesson plan
        markdown = render_page(markdown, src_path, line_offset=offset, build=self.build)
        return lessons.on_page_markdown(markdown, page, self.build.lessons)

    def on_page_content(self, html, page, config, files):
        # lessons link each term's first use
        return glossary.on_page_content(html, page, self.build.terms)

    def on_page_context(self, context, page, config, nav):
        notebooks.on_page_context(page)  # math in a notebook's table of contents
        return context

    def on_post_page(self, output, page, config):
        output = notebooks.on_post_page(output, page, config)  # no empty MathJax <script src="">
        return preload.on_post_page(output, page, config)  # the first picture's modules, early

    def on_post_template(self, output, template_name, config):
        return preload.on_post_template(output, template_name, config)  # the search hold

    def on_post_build(self, config):
        if self.build.notebooks is not None:
            notebooks.on_post_build(config, self.build.notebooks)  # the .ipynb downloads
