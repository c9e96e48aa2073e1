"""The lesson gate: every lesson has the parts a reader relies on, or the build says what
to add.

A lesson is a page under ``docs/lessons/``. It needs

* front matter with a non-empty ``title``, ``summary`` and ``prerequisites``, whose lesson
  names are lessons of the site (hooks/lessons.py);
* at least one fence of each kind in ``REQUIRED_FENCES`` (```` ```lab ````, ...);
* a ``## Sources`` section with at least one list item.

Its nav entry needs nothing: the nav's Lessons section is derived from the files.

Each problem is logged as a warning ``docs/lessons/<file>: <what is wrong>: <what to do>``,
so ``mkdocs build --strict`` lists every problem of every lesson, then fails. The checks
read the file as written (``page.file.content_string``), so they do not depend on whether
the fence hooks ran first.
"""

from __future__ import annotations

import logging
import re

from mkdocs.utils.meta import get_data

from . import lessons
from .scanner import outside_fences, scan

log = logging.getLogger("mkdocs.hooks.lesson_checks")

LESSONS_DIR = "lessons/"
REQUIRED_META = {
    "title": "the lesson's title, as in the nav",
    "summary": "one sentence: what a reader can do after the lesson",
    "prerequisites": "what a reader should know first: lesson names such as "
    "[01-why-attention], or 'none'",
}
# Fence kinds every lesson holds at least one of (CURRICULUM: a live lab and an exercise the
# page checks).
REQUIRED_FENCES = ("lab", "exercise")
FENCE_HELP = {
    "lab": "a live lab, e.g. ```lab / lab: attention_pattern / ```",
    "exercise": "an auto-checked exercise (```exercise with kind: numeric or kind: code)",
}

SOURCES_HEADING = re.compile(r"^##[ \t]+Sources[ \t]*#*[ \t]*$", re.IGNORECASE)
HEADING = re.compile(r"^#{1,2}[ \t]+\S")
LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\S")


def fence_kinds(markdown: str) -> list[str]:
    """The kind (first word of the info string) of every top-level fence, in order.

    Fences inside other fences (a lesson showing fence syntax) are not counted; an
    unclosed fence runs to the end of the text."""
    return [fence.kind for fence in scan(markdown)]


def _has_sources(markdown: str) -> tuple[bool, bool]:
    """(a '## Sources' heading exists, it is followed by at least one list item)."""
    lines = outside_fences(markdown)
    for k, line in enumerate(lines):
        if SOURCES_HEADING.match(line):
            for rest in lines[k + 1 :]:
                if HEADING.match(rest):
                    break
                if LIST_ITEM.match(rest):
                    return True, True
            return True, False
    return False, False


def lesson_problems(
    source: str,
    where: str,
    required_fences: tuple[str, ...] = REQUIRED_FENCES,
    known_lessons=None,
) -> list[str]:
    """What is missing from one lesson, as messages ``<where>: <problem>: <what to do>``.

    ``source`` is the whole file (front matter included); ``where`` names it, e.g.
    ``docs/lessons/03-attention-pattern.md``. ``known_lessons``: the lesson names its
    prerequisites may name (the build passes those of docs/lessons/ it found; default: none
    checked). An empty list means the lesson passes."""
    markdown, meta = get_data(source)
    problems = []
    if not source.startswith("---"):
        problems.append(
            f"{where}: no front matter: start the file with a '---' line, then "
            + ", ".join(f"'{key}: ...'" for key in REQUIRED_META)
            + " (one per line), then '---'"
        )
    else:
        for key, what in REQUIRED_META.items():
            value = meta.get(key)
            empty = value is None or (isinstance(value, str | list) and not value)
            if empty:
                problems.append(
                    f"{where}: front matter has no '{key}': add a line '{key}: ...' "
                    f"({what}) between the '---' lines at the top"
                )
        if meta.get("prerequisites") and known_lessons is not None:
            problems += lessons.prerequisite_problems(source, meta, where, known_lessons)
    kinds = fence_kinds(markdown)
    for kind in required_fences:
        if kind not in kinds:
            help_ = FENCE_HELP.get(kind, f"a ```{kind} fence")
            problems.append(
                f"{where}: no ```{kind} fence: add at least one, {help_} "
                f"(CONTRIBUTING.md, 'Add a lesson')"
            )
    heading, items = _has_sources(markdown)
    if not heading:
        problems.append(
            f"{where}: no '## Sources' section: end the lesson with a '## Sources' heading "
            "and a list of the papers, books or posts it draws on"
        )
    elif not items:
        problems.append(
            f"{where}: the '## Sources' section has no list items: list each source as "
            "'- Author (year). Title. Venue.'"
        )
    return problems


def is_lesson(src_uri: str) -> bool:
    return src_uri.startswith(LESSONS_DIR) and src_uri.endswith(".md")


def check_page(source: str, src_uri: str, known_lessons=None) -> None:
    """Log every problem of one lesson as a warning (``mkdocs build --strict`` fails);
    ``known_lessons``: the build's lessons (``BuildState.lessons``)."""
    for problem in lesson_problems(source, f"docs/{src_uri}", known_lessons=known_lessons):
        log.warning(problem)
