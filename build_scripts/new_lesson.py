#!/usr/bin/env python3
"""Scaffold a lesson: ``make new-lesson NAME=04-multi-head-attention [TITLE="..."]``.

Writes ``docs/lessons/<NAME>.md`` from build_scripts/templates/lesson.md (kept outside
docs/ so it is never built as a page) and adds ``- <title>: lessons/<NAME>.md`` to the
Lessons section of mkdocs.yml, in number order. Where that section cannot be found the
line to add is printed instead. The new lesson builds as it is (it has a lab fence, front
matter and Sources), so `make serve` shows it at once.

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
TEMPLATE = HERE / "templates" / "lesson.md"
NAME_RE = re.compile(r"^(?P<number>\d{2})-[a-z0-9]+(?:-[a-z0-9]+)*$")
NAME_HELP = (
    "two digits, a hyphen, then lowercase words joined by hyphens, "
    "e.g. NAME=04-multi-head-attention"
)
LESSONS_ITEM = re.compile(r"^(?P<indent>[ \t]*)- Lessons:[ \t]*$")
NAV_ENTRY = re.compile(r"^(?P<indent>[ \t]*)- (?P<title>.+?): (?P<path>lessons/\S+\.md)[ \t]*$")


class ScaffoldError(Exception):
    """A bad request: reported as one line, exit status 1."""


def title_from(name: str) -> str:
    """``04-multi-head-attention`` -> ``Multi head attention``."""
    words = name.split("-")[1:]
    return " ".join(words).capitalize()


def check_name(name: str, lessons: Path) -> None:
    if not name:
        raise ScaffoldError(f"give the lesson a NAME: {NAME_HELP}")
    m = NAME_RE.match(name)
    if not m:
        raise ScaffoldError(f"{name!r} is not a lesson name: use {NAME_HELP}")
    target = lessons / f"{name}.md"
    if target.exists():
        raise ScaffoldError(
            f"docs/lessons/{name}.md already exists: edit it, or choose another NAME"
        )
    taken = sorted(p.name for p in lessons.glob(f"{m['number']}-*.md"))
    if taken:
        raise ScaffoldError(
            f"lesson number {m['number']} is taken by docs/lessons/{taken[0]}: "
            "choose another number"
        )


def add_to_nav(mkdocs_yml: Path, title: str, rel: str) -> bool:
    """Insert ``- title: rel`` into the Lessons section, keeping number order; False if
    there is no such section (the caller prints the line instead). Edits text, not YAML,
    so comments and layout stay as they are."""
    lines = mkdocs_yml.read_text("utf-8").split("\n")
    start = next((i for i, line in enumerate(lines) if LESSONS_ITEM.match(line)), None)
    if start is None:
        return False
    outer = len(LESSONS_ITEM.match(lines[start])["indent"])
    entries = []  # (line index, path) of the section's entries
    i = start + 1
    while i < len(lines):
        line = lines[i]
        if line.strip() and len(line) - len(line.lstrip()) <= outer:
            break
        m = NAV_ENTRY.match(line)
        if m:
            entries.append((i, m["path"]))
        i += 1
    indent = NAV_ENTRY.match(lines[entries[0][0]])["indent"] if entries else " " * (outer + 4)
    at = next((k for k, path in entries if path > rel), None)
    if at is None:
        at = entries[-1][0] + 1 if entries else start + 1
    title_yaml = title if re.fullmatch(r"[\w ,.()'-]+", title) else '"' + title + '"'
    lines.insert(at, f"{indent}- {title_yaml}: {rel}")
    mkdocs_yml.write_text("\n".join(lines), "utf-8")
    return True


def scaffold(name: str, title: str | None, root: Path) -> list[str]:
    """Create the lesson and its nav entry under ``root``; returns lines to print."""
    lessons = root / "docs" / "lessons"
    check_name(name, lessons)
    title = title or title_from(name)
    rel = f"lessons/{name}.md"
    text = Template(TEMPLATE.read_text("utf-8")).safe_substitute(title=title)
    (lessons / f"{name}.md").write_text(text, "utf-8")
    out = [f"new-lesson: wrote docs/{rel} from {TEMPLATE.relative_to(HERE.parent)}"]
    if add_to_nav(root / "mkdocs.yml", title, rel):
        out.append(f"new-lesson: added '- {title}: {rel}' under Lessons in mkdocs.yml")
    else:
        out.append(
            f"new-lesson: no 'Lessons:' section found in mkdocs.yml: add this line to the "
            f"nav yourself:\n    - {title}: {rel}"
        )
    out.append(
        "Next: write the lesson, set its lab fence, add an exercise and a notebook "
        "(CONTRIBUTING.md, 'Add a lesson'), then `make serve` and `make test`."
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
