"""What a build reads once (MkDocs' on_config) and every page's rendering uses.

One `BuildState` per build, made by ``hooks.configure(config)`` and held by the
``SiteHooks`` instance that build_scripts/mkdocs_hooks.py hands to MkDocs (as a plugin
holds its state on itself); it reaches the fence kinds through ``Page.build``. Nothing
here is a module global, so two builds in one process (tests, ``mkdocs serve``'s
rebuilds) never see each other's state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: those modules import this one's users
    from .attention_map import Maps
    from .glossary import Entry
    from .lessons import Lesson
    from .notebooks import Settings as NotebookSettings

DOCS = Path(__file__).resolve().parents[2] / "docs"


@dataclass(frozen=True)
class BuildState:
    """The defaults are a build that has read nothing (a test rendering one page): the
    repository's docs/, no runtime, no map index, no lessons found, no glossary."""

    # The docs folder: numbers fences' ``docs``, the home page's lab download.
    docs: Path = DOCS
    # runtime.configure: where the browser finds Pyodide and the labs wheel (every placeholder
    # that may start Python carries it).
    runtime: dict = field(default_factory=dict)
    # attention_map.configure: the committed index of real maps, its folder, the explorer's
    # own-sentence files; None: no index read (an attention-map fence then fails).
    maps: Maps | None = None
    # lessons.configure: the site's lessons by name; None: not looked for (the lesson gate
    # then checks no prerequisite names).
    lessons: dict[str, Lesson] | None = None
    # glossary.configure: the glossary's entries, for its anchors and the lessons' links.
    terms: tuple[Entry, ...] = ()
    # notebooks.configure: whether and where the companion notebooks are executed and
    # cached, the labs wheel their download installs; None: no notebook build.
    notebooks: NotebookSettings | None = None
