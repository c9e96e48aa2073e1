"""MkDocs hook: a downloadable ``.ipynb`` for every companion notebook.

The source kept in git is ``docs/notebooks/<name>.py`` (jupytext percent format);
mkdocs-jupyter executes and renders it as a page (a notebook that raises fails the
build). This hook writes ``<site>/notebooks/<name>.ipynb`` next to that page, which the
notebook's first cell links to. The file is the notebook without outputs: readers run it.

``on_post_page`` drops the empty ``<script src="">`` that mkdocs-jupyter's template writes
where MathJax would load (no ``custom_mathjax_url``: the site renders math with KaTeX).
Browsers fire an error event for it on every notebook page.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import jupytext

log = logging.getLogger("mkdocs.hooks.notebooks")
FOLDER = "notebooks"
EMPTY_SCRIPT = re.compile(r'<script src="">\s*</script>\n?')


def on_post_page(output: str, page, config) -> str:
    """A notebook page's HTML without mkdocs-jupyter's empty MathJax ``<script src="">``."""
    if page.file.src_uri.startswith(FOLDER + "/"):
        return EMPTY_SCRIPT.sub("", output)
    return output


def on_post_build(config):
    source = Path(config["docs_dir"]) / FOLDER
    target = Path(config["site_dir"]) / FOLDER
    for path in sorted(source.glob("*.py")):
        notebook = jupytext.read(path)
        target.mkdir(parents=True, exist_ok=True)
        jupytext.write(notebook, target / f"{path.stem}.ipynb")
