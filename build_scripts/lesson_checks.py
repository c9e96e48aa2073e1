"""MkDocs hook: every lesson has the parts a reader relies on, or the build says what to add.

A lesson is a page under ``docs/lessons/``. It needs

* front matter with a non-empty ``title``, ``summary`` and ``prerequisites``;
* at least one fence of each kind in ``REQUIRED_FENCES`` (```` ```lab ````, ...);
* a ``## Sources`` section with at least one list item;
* an entry in the nav of mkdocs.yml (``make new-lesson`` adds it).

Each problem is logged as a warning ``docs/lessons/<file>: <what is wrong>: <what to do>``,
so ``mkdocs build --strict`` lists every problem of every lesson, then fails. The checks
read the file as written (``page.file.content_string``), so they do not depend on whether
the fence hooks ran first.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from mkdocs.utils.meta import get_data

log = logging.getLogger("mkdocs.hooks.lesson_checks")

LESSONS_DIR = "lessons/"
REQUIRED_META = {
    "title": "the lesson's title, as in the nav",
    "summary": "one sentence: what a reader can do after the lesson",
    "prerequisites": "what a reader should know first (a lesson, or 'none')",
}
# Fence kinds every lesson holds at least one of (CURRICULUM: a live lab and an exercise the
# page checks).
REQUIRED_FENCES = ("lab", "exercise")
FENCE_HELP = {
    "lab": "a live lab, e.g. ```lab / lab: attention_pattern / ```",
    "exercise": "an auto-checked exercise (```exercise with kind: numeric or kind: code)",
}

# A fence opener: 3+ backticks or tildes, then the info string (its first word is the kind).
FENCE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}(?!.*`)|~{3,})[ \t]*\{?\.?(?P<kind>[\w-]*)")
SOURCES_HEADING = re.compile(r"^##[ \t]+Sources[ \t]*#*[ \t]*$", re.IGNORECASE)
HEADING = re.compile(r"^#{1,2}[ \t]+\S")
LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+\S")


def fence_kinds(markdown: str) -> list[str]:
    """The kind (first word of the info string) of every top-level fence, in order.

    Fences inside other fences (a lesson showing fence syntax) are not counted; an
    unclosed fence runs to the end of the text."""
    return [kind for _start, _end, kind in _fences(markdown.split("\n"))]


def _fences(lines: list[str]):
    """Yield (first line, closing line, kind) of each top-level fence in ``lines``; an
    unclosed fence closes at len(lines)."""
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence = m["fence"]
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        yield i, j, m["kind"]
        i = j + 1


def _outside_fences(markdown: str) -> list[str]:
    """The lines of ``markdown`` that are not inside a fence (fence lines blanked)."""
    lines = markdown.split("\n")
    out = list(lines)
    for start, end, _kind in _fences(lines):
        out[start : end + 1] = [""] * (min(end, len(out) - 1) - start + 1)
    return out


def _has_sources(markdown: str) -> tuple[bool, bool]:
    """(a '## Sources' heading exists, it is followed by at least one list item)."""
    lines = _outside_fences(markdown)
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
    source: str, where: str, required_fences: tuple[str, ...] = REQUIRED_FENCES
) -> list[str]:
    """What is missing from one lesson, as messages ``<where>: <problem>: <what to do>``.

    ``source`` is the whole file (front matter included); ``where`` names it, e.g.
    ``docs/lessons/03-attention-pattern.md``. An empty list means the lesson passes."""
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


# --- MkDocs events -------------------------------------------------------------------


def on_page_markdown(markdown, page, config, files):
    if is_lesson(page.file.src_uri):
        where = f"docs/{page.file.src_uri}"
        for problem in lesson_problems(page.file.content_string, where):
            log.warning(problem)
    return markdown


def on_nav(nav, config, files):
    in_nav = {page.file.src_uri for page in nav.pages}
    for file in files.documentation_pages():
        if is_lesson(file.src_uri) and file.src_uri not in in_nav:
            title = Path(file.src_uri).stem
            log.warning(
                f"docs/{file.src_uri}: the lesson is not in the nav: add "
                f"'- <title>: {file.src_uri}' under 'Lessons:' in mkdocs.yml "
                f"(make new-lesson NAME={title} does it for a new lesson)"
            )
    return nav
