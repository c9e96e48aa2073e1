#!/usr/bin/env python3
"""Scaffold a lesson: ``make new-lesson NAME=04-multi-head-attention [TITLE="..."]``.

A lesson is three files, all written here from build_scripts/templates/ (kept outside
docs/ so they are never built as pages), and one entry of the course plan:

* ``docs/lessons/<NAME>.md``, the lesson (front matter, a numbers fence and the claim the
  prose makes of it, a lab, an exercise, Sources);
* ``docs/notebooks/<NAME>.py``, its companion notebook (jupytext, run at build time);
* ``tests/lessons/test_<NN_topic>.py``, its claims test: it checks the template's claim
  against the lesson's own numbers fence, so it fails when prose and numbers disagree;
* its entry in ``docs/data/lessons.yaml`` (the plan the home page lists), inserted in number
  order, unless the plan already lists the name (a lesson marked "coming").

Nothing else changes: the nav's Lessons and Notebooks sections and the lesson's link to
its notebook are derived from the files by the build (build_scripts/hooks/lessons.py).
The new lesson builds and `make test` passes as it is, so `make serve` shows it at once.

Usage: python -m build_scripts.new_lesson NAME [--title TITLE] [--root DIR]
Exit status 1, with a message saying what to do, for a bad or existing NAME.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from string import Template

import yaml

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
TEMPLATE = TEMPLATES / "lesson.md"
NOTEBOOK_TEMPLATE = TEMPLATES / "notebook.py"
TEST_TEMPLATE = TEMPLATES / "test_lesson.py"
PLAN = Path("docs") / "data" / "lessons.yaml"
PLAN_ENTRY = re.compile(r"^  - name: *(?P<name>\S+) *$")
PLAN_LEARNS = "One sentence - what a reader learns in this lesson."
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
    planned = [n for n in plan_names(root) if n[:2] == m["number"] and n != name]
    if planned:
        raise ScaffoldError(
            f"lesson number {m['number']} is planned as {planned[0]} in {PLAN.as_posix()}: "
            f"use NAME={planned[0]}, or choose another number"
        )


def plan_names(root: Path) -> list[str]:
    """The lesson names of the course plan (docs/data/lessons.yaml), in its order."""
    path = root / PLAN
    if not path.is_file():
        return []
    return [
        m["name"] for line in path.read_text("utf-8").splitlines() if (m := PLAN_ENTRY.match(line))
    ]


def add_to_plan(name: str, title: str, root: Path) -> str | None:
    """Insert lesson ``name`` into docs/data/lessons.yaml before the first entry with a
    higher number (or at the end), keeping every other line; returns the line to print, or
    None when the plan already lists it. The result must still be the plan the build reads
    (checked with YAML before it is written)."""
    path = root / PLAN
    if not path.is_file() or name in plan_names(root):
        return None
    lines = path.read_text("utf-8").splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    at = len(lines)
    for k, line in enumerate(lines):
        m = PLAN_ENTRY.match(line.rstrip("\n"))
        if m and m["name"][:2] > name[:2]:
            at = k
            break
    entry = [
        f"  - name: {name}\n",
        f"    title: {json.dumps(title, ensure_ascii=False)}\n",
        "    learns: >-\n",
        f"      {PLAN_LEARNS}\n",
    ]
    text = "".join(lines[:at] + entry + lines[at:])
    listed = [item.get("name") for item in yaml.safe_load(text)["lessons"]]
    if listed.count(name) != 1:  # the plan is not laid out as this expects: say so
        raise ScaffoldError(f"cannot add {name} to {PLAN.as_posix()}: add its entry by hand")
    path.write_text(text, "utf-8")
    return f"new-lesson: added {name} to {PLAN.as_posix()} (the home page's plan): edit its learns"


def scaffold(name: str, title: str | None, root: Path) -> list[str]:
    """Create the lesson, its notebook and its claims test under ``root``; returns lines
    to print."""
    check_name(name, root)
    title = title or title_from(name)
    values = {"title": title, "name": name}
    out = []
    planned = add_to_plan(name, title, root)  # first: it is the step that can refuse
    for (_, target), template in zip(
        paths(name, root).items(), (TEMPLATE, NOTEBOOK_TEMPLATE, TEST_TEMPLATE), strict=True
    ):
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(Template(template.read_text("utf-8")).safe_substitute(values), "utf-8")
        rel = target.relative_to(root).as_posix()
        out.append(f"new-lesson: wrote {rel} from {template.relative_to(HERE.parent).as_posix()}")
    out.append(planned or f"new-lesson: {PLAN.as_posix()} already lists {name}")
    out.append(
        "new-lesson: the nav and the link to the notebook come from the files: "
        "mkdocs.yml is unchanged"
    )
    out.append(
        "Next: `make serve` (the page reloads as you save), write the lesson, its lab fence, "
        "exercise and notebook and the claims of its prose in its test (CONTRIBUTING.md, "
        f"'Your first lesson'), then `make check-lesson NAME={name}` and `make test`."
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
