"""`make check-lesson NAME=04-masking`: what one lesson touches, in a few minutes.

``make`` first builds the site (``make build``: strict, so the lesson gate, its fences, its
numbers, links and notebook are checked); then this runs, and reports each step's time:

1. **its page**: ``site/lessons/<NAME>/index.html`` is there and newer than the lesson;
2. **its tests**, in one pytest run: the claims test ``tests/lessons/test_<NN_topic>.py``,
   the CPython tests of the labs its ```lab fences use (``tests/python/*.py`` that name the
   lab), and its Chromium tests (``tests/browser/test_browser_lesson_<NN>.py`` and the
   ``tests/browser/test_browser_*.py`` that name one of its labs), less the tests marked
   ``engines`` (Firefox and WebKit) or ``runtime`` (Python's start-up on any page);
3. **the browser gates on its page** (build_scripts/gates/check_site.py ``--page``:
   accessibility in both palettes, offline, its labs start, the budget).

``make test`` is still the whole suite (and what CI runs); this is the quick loop while
writing one lesson. ``--list`` prints the steps without running them.

Usage: python -m build_scripts.check_lesson NAME [--list]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
NAME_RE = re.compile(r"^(?P<number>\d{2})-[a-z0-9]+(?:-[a-z0-9]+)*$")
FENCE = re.compile(r"^```lab[ \t]*\n(.*?)^```", re.M | re.S)
DESELECT = "not engines and not runtime"  # pytest markers (pyproject.toml) left to make test


def lesson_labs(source: str) -> list[str]:
    """The labs the lesson's ```lab fences use, in page order, each once."""
    labs = []
    for body in FENCE.findall(source):
        try:
            lab = (yaml.safe_load(body) or {}).get("lab")
        except yaml.YAMLError:
            continue
        if isinstance(lab, str) and lab not in labs:
            labs.append(lab)
    return labs


def names_a_lab(path: Path, labs: list[str]) -> bool:
    """True when the test module names one of ``labs``: as a string ('masking'), a module
    (labs.masking) or an import from attention_labs.labs."""
    text = path.read_text("utf-8")
    for lab in labs:
        pattern = rf"[\"']{lab}[\"']|labs\.{lab}\b|labs import [^\n]*\b{lab}\b"
        if re.search(pattern, text):
            return True
    return False


def test_files(name: str, root: Path = ROOT) -> list[Path]:
    """The test modules lesson ``name`` touches (see the module's docstring), in order:
    claims, CPython, Chromium."""
    number = name[:2]
    tests = root / "tests"
    source = (root / "docs" / "lessons" / f"{name}.md").read_text("utf-8")
    labs = lesson_labs(source)
    files = [tests / "lessons" / f"test_{name.replace('-', '_')}.py"]
    files += [p for p in sorted((tests / "python").glob("test_*.py")) if names_a_lab(p, labs)]
    own = tests / "browser" / f"test_browser_lesson_{number}.py"
    files += [own] if own.is_file() else []
    files += [
        p
        for p in sorted((tests / "browser").glob("test_browser_*.py"))
        if p != own and names_a_lab(p, labs)
    ]
    return [p for p in files if p.is_file()]


def steps(name: str, root: Path = ROOT) -> list[tuple[str, list[str]]]:
    """(what, command) of each step after the build."""
    python = sys.executable
    rel = [p.relative_to(root).as_posix() for p in test_files(name, root)]
    return [
        (
            "claims, labs (CPython) and Chromium tests",
            # engines: Firefox and WebKit are make test's (and CI's), not this quick loop's;
            # runtime: Python's start-up on any page (test_browser_startup.py uses lesson
            # 3's lab to test the worker, not the lab)
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", DESELECT, *rel],
        ),
        (
            "browser gates on the page",
            [python, "-m", "build_scripts.gates.check_site", "--page", f"lessons/{name}/"],
        ),
    ]


def check_page(name: str, root: Path = ROOT) -> str | None:
    """None if the built page is there and as new as the lesson; else what to do."""
    source = root / "docs" / "lessons" / f"{name}.md"
    page = root / "site" / "lessons" / name / "index.html"
    if not page.is_file():
        return f"site/lessons/{name}/index.html is missing: run `make build`"
    if page.stat().st_mtime < source.stat().st_mtime:
        return f"site/lessons/{name}/ is older than docs/lessons/{name}.md: run `make build`"
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", nargs="?", default="", help="the lesson, e.g. 04-masking")
    parser.add_argument("--list", action="store_true", help="print the steps, run nothing")
    parser.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root = Path(args.root)
    name = args.name.strip().removesuffix(".md").removeprefix("docs/lessons/")
    if not NAME_RE.match(name) or not (root / "docs" / "lessons" / f"{name}.md").is_file():
        known = sorted(p.stem for p in (root / "docs" / "lessons").glob("*.md"))
        print(
            f"check-lesson: {name!r} is not a lesson of docs/lessons/: "
            f"use e.g. make check-lesson NAME={known[0] if known else '04-masking'}",
            file=sys.stderr,
        )
        return 2
    plan = steps(name, root)
    if args.list:
        for what, cmd in plan:
            print(f"{what}: {' '.join(cmd)}")
        return 0
    results = []
    t0 = time.perf_counter()
    problem = check_page(name, root)
    results.append(("page built (make build, strict)", problem is None, 0.0))
    if problem:
        print(f"check-lesson: {problem}", file=sys.stderr)
    for what, cmd in plan:
        shown = " ".join([Path(cmd[0]).name, *cmd[1:]])
        print(f"check-lesson: {what}: {shown}", flush=True)
        start = time.perf_counter()
        ok = subprocess.run(cmd, cwd=root).returncode == 0
        results.append((what, ok, time.perf_counter() - start))
    print(f"\ncheck-lesson {name}:")
    for what, ok, seconds in results:
        print(f"  {'ok  ' if ok else 'FAIL'} {what}" + (f" ({seconds:.0f} s)" if seconds else ""))
    print(f"  {time.perf_counter() - t0:.0f} s after the build; `make test` runs everything")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
