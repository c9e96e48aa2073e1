"""MkDocs hook: a downloadable ``.ipynb`` for every companion notebook.

The source kept in git is ``docs/notebooks/<name>.py`` (jupytext percent format);
mkdocs-jupyter executes and renders it as a page (a notebook that raises fails the
build). This hook writes ``<site>/notebooks/<name>.ipynb`` next to that page, which the
notebook's first cell links to. The file is the notebook without outputs: readers run it.
"""

from __future__ import annotations

import logging
from pathlib import Path

import jupytext

log = logging.getLogger("mkdocs.hooks.notebooks")
FOLDER = "notebooks"


def on_post_build(config):
    source = Path(config["docs_dir"]) / FOLDER
    target = Path(config["site_dir"]) / FOLDER
    for path in sorted(source.glob("*.py")):
        notebook = jupytext.read(path)
        target.mkdir(parents=True, exist_ok=True)
        jupytext.write(notebook, target / f"{path.stem}.ipynb")
