"""The one contract of `make bench`: a benchmark is a module with ``rows(args) -> list[Row]``.

``args`` holds the options every benchmark shares (``parser``: ``--runs``, ``--repeats``,
``--lab-repeats``, ``--labs``); each module reads those it uses. bench_report.py lists the
modules in ``SECTIONS`` and renders every row into bench-results/REPORT.md; a module run
alone (``python -m build_scripts.bench.bench_startup --runs 1``) prints its own rows,
rendered by the same ``table``. A benchmark measures and returns numbers: it writes no report of its
own and asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass


@dataclass
class Row:
    """One measured number: ``benchmark`` (which), ``measure`` (what), ``value`` (with its
    unit, e.g. "5.5 s (5.1–6.0)"), ``notes`` (how, if it is not obvious)."""

    benchmark: str
    measure: str
    value: str
    notes: str = ""


def med(values, unit="ms", scale=1.0, digits=1) -> str:
    """Median (min–max) of ``values`` times ``scale``, with ``unit``."""
    v = [x * scale for x in values if x is not None]
    if not v:
        return "–"
    return f"{statistics.median(v):.{digits}f} {unit} ({min(v):.{digits}f}–{max(v):.{digits}f})"


def cell(text) -> str:
    """``text`` for a table cell: ``|`` escaped, newlines made spaces."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(rows: list[Row]) -> list[str]:
    """The Markdown table of ``rows``: a header line, a rule, one line per row (``|`` in a
    cell escaped, a newline made a space)."""
    lines = ["| benchmark | measure | value | notes |", "| --- | --- | --- | --- |"]
    lines += [
        f"| {cell(r.benchmark)} | {cell(r.measure)} | {cell(r.value)} | {cell(r.notes)} |"
        for r in rows
    ]
    return lines


def parser(description: str) -> argparse.ArgumentParser:
    """The options of every benchmark (bench_report.py adds its own to these)."""
    out = argparse.ArgumentParser(description=description)
    out.add_argument("--runs", type=int, default=5, help="cold runs (lab, start-up, explorer...)")
    out.add_argument("--repeats", type=int, default=30, help="recomputes per seq_len (lab)")
    out.add_argument("--lab-repeats", type=int, default=15, help="recomputes per lab setting")
    out.add_argument(
        "--labs", default="", help="only these labs, comma-separated (section labs; default all)"
    )
    return out


def run_alone(rows, doc: str, argv=None) -> int:
    """A benchmark module's ``main``: its rows for the shared options in ``argv``, printed
    as the report's table."""
    args = parser((doc or "").strip().splitlines()[0]).parse_args(argv)
    print("\n".join(table(rows(args))))
    return 0
