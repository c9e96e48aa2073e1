#!/usr/bin/env python3
"""`make bench`: run every benchmark of the project; write one Markdown table of the results,
with the machine they ran on, to bench-results/REPORT.md (the About page shows the copy
committed there).

A benchmark is a *section*: a module of build_scripts/bench/ with ``rows(args) ->
list[Row]`` (bench/contract.py), listed in ``SECTIONS``. To add one, write the
module and add a line to ``SECTIONS``; this file renders every row. Sections never assert
anything: speed is measured here, not in tests.

Usage: python -m build_scripts.bench.bench_report [--runs 5] [--only build,budget,lab,precompute]
                                             [--out bench-results/REPORT.md]
"""

from __future__ import annotations

import datetime as dt
import importlib
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path

from build_scripts.bench.contract import Row, cell, med, parser, table
from build_scripts.files import write_atomic
from build_scripts.gates.browser import launch

__all__ = ["Row", "med", "SECTIONS", "section", "machine", "render", "write_report", "main"]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "bench-results" / "REPORT.md"


# --------------------------------------------------------------------------- machine


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return f"{line.split('=', 1)[1].strip(chr(34))}, {platform.system()} " + (
                    platform.release()
                )
    except OSError:
        pass
    return platform.platform()


def _browser_version() -> str:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            return f"headless Chromium {browser.version}"
        finally:
            browser.close()


def machine(browser: str | None = None) -> dict[str, str]:
    """What the numbers were measured on."""
    return {
        "CPU": _cpu_model(),
        "cores": str(os.cpu_count()),
        "OS": _os_name(),
        "browser": browser if browser is not None else _browser_version(),
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        # Other work on a shared machine slows every timing; say how busy it was.
        "load average": " / ".join(f"{x:.1f}" for x in os.getloadavg()) + " (1/5/15 min)",
    }


# --------------------------------------------------------------------------- sections

# Every benchmark of the project, in report order: section -> its module here (imported when
# it runs: some bring PyTorch or a browser). Add a line for a new one.
SECTIONS: dict[str, str] = {
    "build": "bench_build",  # mkdocs build --strict
    "budget": "bench_budget",  # bytes per page against budget.json
    "lab": "bench",  # the live lab: cold start, recompute, code cells
    "startup": "bench_startup",  # Python + NumPy ready against the official loader
    "pictures": "bench_pictures",  # every lesson's first lab against its DOMContentLoaded
    "labs": "bench_labs",  # every lab's recompute
    "precompute": "bench_precompute",  # real attention maps
    "induction": "bench_induction",  # the induction-head model's training
    "explorer": "bench_explorer",  # the explorer on each model's largest asset
    "long-tasks": "bench_long_tasks",  # the explorer's longest tasks at 4x CPU throttling
    "minilm": "bench_minilm",  # your own sentence, Chromium against CPython
    "smollm2": "bench_smollm2",  # SmolLM2 token by token, Chromium against CPython
    "engines": "bench_engines",  # start-up in Firefox and WebKit
    "live": "bench_live",  # make serve: an edit saved to the page reloaded with it
}


def section(name: str) -> Callable[..., list[Row]]:
    """The ``rows`` function of section ``name`` (a key of ``SECTIONS``)."""
    return importlib.import_module(f"build_scripts.bench.{SECTIONS[name]}").rows


# --------------------------------------------------------------------------- report


def render(rows: list[Row], info: dict[str, str], when: str) -> str:
    """The report: a heading, the machine, and one table with every row."""
    lines = [
        "## Benchmark report",
        "",
        f"Written by `make bench` on {when}. Machine: "
        + "; ".join(f"{k} {cell(v)}" for k, v in info.items())
        + ". Timings are median (min–max).",
        "",
        *table(rows),
    ]
    return "\n".join(lines) + "\n"


def write_report(rows: list[Row], info: dict[str, str], out: Path = OUT, when=None) -> Path:
    when = when or dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    write_atomic(out, render(rows, info, when))
    return out


def main(argv=None) -> int:
    options = parser(__doc__.splitlines()[0])
    options.add_argument("--only", default=",".join(SECTIONS), help="sections, comma-separated")
    options.add_argument("--out", default=str(OUT))
    args = options.parse_args(argv)
    if not (ROOT / "site" / "index.html").is_file():
        print("bench: site/ is not built: run `make build`", file=sys.stderr)
        return 1
    wanted = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in SECTIONS]
    if unknown:
        print(f"bench: unknown section(s) {unknown}; known: {list(SECTIONS)}", file=sys.stderr)
        return 1
    info = machine()  # before the runs: the load average says how busy the machine was
    rows: list[Row] = []
    for name in wanted:
        print(f"bench: {name} …", flush=True)
        rows += section(name)(args)
    out = write_report(rows, info, Path(args.out))
    print(out.read_text("utf-8"))
    print(f"bench: written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
