#!/usr/bin/env python3
"""`make bench`: run every benchmark of the project; write one Markdown table of the results,
with the machine they ran on, to bench-results/REPORT.md (the About page shows the copy
committed there).

A benchmark is a *section*: a module of build_scripts/bench/ with ``rows(args) ->
list[Row]`` (bench/contract.py), listed in ``SECTIONS``. To add one, write the
module and add a line to ``SECTIONS``; this file renders every row. Sections never assert
anything: speed is measured here, not in tests.

Usage: python -m build_scripts.bench.bench_report [--runs 5] [--only build,budget,lab,precompute]
                                             [--out bench-results/REPORT.md] [--merge]

``--merge`` keeps the report's other rows and replaces those of the benchmarks measured
again (e.g. one section rerun after a change); ``make bench-suite`` is ``--only suite
--merge``.
"""

from __future__ import annotations

import datetime as dt
import importlib
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path

from build_scripts.bench import bench_suite
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
    "check-lesson": "bench_contrib",  # make check-lesson NAME=04-masking (issue 26)
    "suite": "bench_suite",  # make test in a clean clone (make bench-suite)
}
# Sections a plain `make bench` leaves out (half an hour each): their rows are carried over
# from the report being replaced, found by their benchmark name, until they are run again.
OPT_IN: dict[str, str] = {"suite": bench_suite.BENCHMARK}


def section(name: str) -> Callable[..., list[Row]]:
    """The ``rows`` function of section ``name`` (a key of ``SECTIONS``)."""
    return importlib.import_module(f"build_scripts.bench.{SECTIONS[name]}").rows


def table_lines(report: str) -> list[str]:
    """The row lines of a report's table (as written: cells already escaped)."""
    return [
        line
        for line in report.splitlines()[2:]
        if line.startswith("| ") and not line.startswith(("| benchmark |", "| --- |"))
    ]


def benchmark_of(line: str) -> str:
    """The first cell of a table line ("| site build | ..." -> "site build")."""
    return line[2:].split(" | ", 1)[0]


# --------------------------------------------------------------------------- report


def machine_parts(info: dict[str, str]) -> list[str]:
    """The machine as the heading writes it, one "key value" per entry of ``info``."""
    return [f"{k} {cell(v)}" for k, v in info.items()]


def render(rows: list[Row], info: dict[str, str], when: str, carried=(), header=None) -> str:
    """The report: a heading, the machine, and one table with every row, then the
    ``carried`` lines (rows of an earlier report, as written). ``header``: the heading and
    machine lines to use instead (``--merge`` keeps the earlier report's)."""
    lines = header or [
        "## Benchmark report",
        "",
        f"Written by `make bench` on {when}. Machine: "
        + "; ".join(machine_parts(info))
        + ". Timings are median (min–max).",
    ]
    return "\n".join([*lines, "", *table(rows), *carried]) + "\n"


def write_report(
    rows: list[Row], info: dict[str, str], out: Path = OUT, when=None, merge=False, ran=()
) -> Path:
    """Write the report of ``rows`` to ``out``. Rows of the earlier report at ``out`` are
    kept: with ``merge``, every row whose benchmark is not measured again (in place, the
    earlier heading kept and a line saying what was rerun added); otherwise the rows of the
    ``OPT_IN`` sections not in ``ran``."""
    when = when or dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    earlier = out.read_text("utf-8") if out.is_file() else ""
    old = table_lines(earlier)
    if merge and old:
        new = {r.benchmark for r in rows}
        fresh = dict.fromkeys(new)
        lines, placed = [], set()
        for line in old:  # each rerun benchmark's new rows where its old ones were
            name = benchmark_of(line)
            if name in new:
                if name not in placed:
                    placed.add(name)
                    lines += table([r for r in rows if r.benchmark == name])[2:]
                continue
            lines.append(line)
        lines += table([r for r in rows if r.benchmark in fresh and r.benchmark not in placed])[2:]
        head = earlier.split("\n| benchmark |", 1)[0].rstrip("\n").splitlines()
        # Numbers from another machine (another CPU, browser...) say which, where they ran.
        written = next((line for line in head if line.startswith("Written by")), "")
        heading = set(written.split("Machine: ", 1)[-1].split(". Timings", 1)[0].split("; "))
        other = [
            part
            for part in machine_parts({k: v for k, v in info.items() if k != "load average"})
            if part not in heading
        ]
        where = f"on another machine: {'; '.join(other)}; " if other else ""
        head.append(
            f"Rerun on {when} with `--merge` ({where}load average {cell(info['load average'])}): "
            + ", ".join(f"`{name}`" for name in ran)
            + "."
        )
        write_atomic(out, "\n".join([*head, "", *table([])[:2], *lines]) + "\n")
        return out
    carried = [
        line
        for section_name, benchmark in OPT_IN.items()
        if section_name not in ran
        for line in old
        if benchmark_of(line) == benchmark
    ]
    write_atomic(out, render(rows, info, when, carried))
    return out


def main(argv=None) -> int:
    options = parser(__doc__.splitlines()[0])
    default = ",".join(name for name in SECTIONS if name not in OPT_IN)
    options.add_argument("--only", default=default, help="sections, comma-separated")
    options.add_argument("--out", default=str(OUT))
    options.add_argument(
        "--merge",
        action="store_true",
        help="keep the report's other rows; replace those of the benchmarks measured again",
    )
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
    out = write_report(rows, info, Path(args.out), merge=args.merge, ran=wanted)
    print(out.read_text("utf-8"))
    print(f"bench: written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
