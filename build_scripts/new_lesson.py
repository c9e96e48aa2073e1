#!/usr/bin/env python3
"""Scaffold a lesson: ``make new-lesson NAME=04-multi-head-attention [TITLE="..."]``.

A lesson is three files, all written here from build_scripts/templates/ (kept outside
docs/ so they are never built as pages):

* ``docs/lessons/<NAME>.md``, the lesson (front matter, a lab, an exercise, Sources);
* ``docs/notebooks/<NAME>.py``, its companion notebook (jupytext, run at build time);
* ``tests/lessons/test_<NN_topic>.py``, its claims test (a stub that passes).

Nothing else changes: the nav's Lessons and Notebooks sections and the lesson's link to
its notebook are derived from the files by the build (build_scripts/hooks/lessons.py).
The new lesson builds as it is, so `make serve` shows it at once.

Usage: python -m build_scripts.new_lesson NAME [--title TITLE] [--root DIR]
Exit status 1, with a message saying what to do, for a bad or existing NAME.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from string import Template

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
TEMPLATE = TEMPLATES / "lesson.md"
NOTEBOOK_TEMPLATE = TEMPLATES / "notebook.py"
TEST_TEMPLATE = TEMPLATES / "test_lesson.py"
NAME_RE = re.compile(r"^(?P<number>\d{2})-[a-z0-9]+(?:-[a-z0-9]+)*$")
NAME_HELP = (
    "two digits, a hyphen, then lowercase words joined by hyphens, "
    "e.g. NAME=04-multi-head-attention"
)


class ScaffoldError(Exception):
    """A bad request: reported as one line, exit status 1."""


def title_from(name: str) -> str:
    """``04-multi-head-attention`` -> ``Multi head attention``."""
    words = name.split("-")[1:]
    return " ".join(words).capitalize()


def paths(name: str, root: Path) -> dict[str, Path]:
    """The three files of lesson ``name`` under ``root``."""
    return {
        "lesson": root / "docs" / "lessons" / f"{name}.md",
        "notebook": root / "docs" / "notebooks" / f"{name}.py",
        "test": root / "tests" / "lessons" / f"test_{name.replace('-', '_')}.py",
    }


def check_name(name: str, root: Path) -> None:
    if not name:
        raise ScaffoldError(f"give the lesson a NAME: {NAME_HELP}")
    m = NAME_RE.match(name)
    if not m:
        raise ScaffoldError(f"{name!r} is not a lesson name: use {NAME_HELP}")
    lessons = root / "docs" / "lessons"
    for path in paths(name, root).values():
        if path.exists():
            rel = path.relative_to(root).as_posix()
            raise ScaffoldError(f"{rel} already exists: edit it, or choose another NAME")
    taken = sorted(p.name for p in lessons.glob(f"{m['number']}-*.md"))
    if taken:
        raise ScaffoldError(
            f"lesson number {m['number']} is taken by docs/lessons/{taken[0]}: "
            "choose another number"
        )


def scaffold(name: str, title: str | None, root: Path) -> list[str]:
    """Create the lesson, its notebook and its claims test under ``root``; returns lines
    to print."""
    check_name(name, root)
    title = title or title_from(name)
    values = {"title": title, "name": name}
    out = []
    for (_, target), template in zip(
        paths(name, root).items(), (TEMPLATE, NOTEBOOK_TEMPLATE, TEST_TEMPLATE), strict=True
    ):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(Template(template.read_text("utf-8")).safe_substitute(values), "utf-8")
        rel = target.relative_to(root).as_posix()
        out.append(f"new-lesson: wrote {rel} from {template.relative_to(HERE.parent).as_posix()}")
    out.append(
        "new-lesson: the nav and the link to the notebook come from the files: "
        "mkdocs.yml is unchanged"
    )
    out.append(
        "Next: write the lesson, set its lab fence and exercise, its notebook and the claims "
        "of its prose in its test (CONTRIBUTING.md, 'Add a lesson'), then `make serve` and "
        "`make test`."
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", nargs="?", default="", help="e.g. 04-multi-head-attention")
    parser.add_argument("--title", default=None, help="the title (default: from NAME)")
    parser.add_argument("--root", default=str(HERE.parent), help="the project (default: .)")
    args = parser.parse_args(argv)
    try:
        lines = scaffold(args.name.strip(), args.title, Path(args.root))
    except ScaffoldError as err:
        print(f"new-lesson: {err}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
