"""`make bench-suite`, the whole suite (issue 26): ``make test`` in a clean clone of this
repository's last commit, as CI runs it, once. Two rows: the whole command (the virtual
environment, from pip's cache on a machine that has one; vendoring; the build; lint;
pytest) and pytest's own time (target 10 min).

Not in a plain ``make bench``, which would take half an hour longer: bench_report.py carries
these rows over from the report it replaces (``OPT_IN``) until this runs again.

A benchmark, not a test: it asserts nothing (a failing suite is reported as such).

Usage: python -m build_scripts.bench.bench_suite
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from build_scripts.bench.bench_contrib import SUMMARY, load, timed, verdict
from build_scripts.bench.contract import Row, run_alone

ROOT = Path(__file__).resolve().parents[2]
BENCHMARK = "make test, clean clone"  # bench_report.OPT_IN finds the rows by this name


def rows(args) -> list[Row]:
    """``make test`` in a clean clone of HEAD, timed once."""
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        before = load()
        seconds, proc = timed(["make", "test"], clone)
        after = load()
    tests = SUMMARY.search(proc.stdout)
    out = [
        Row(
            BENCHMARK,
            "make test: the whole command",
            f"{seconds / 60:.1f} min",
            f"commit {head}, 1 run, {verdict(proc)}; load {before} at its start, "
            f"{after} at its end",
        )
    ]
    if tests:
        out.append(
            Row(
                BENCHMARK,
                "pytest: every test",
                f"{float(tests.group('seconds')) / 60:.1f} min",
                f"{tests.group('counts').strip()}; target 10 min (issue 26)",
            )
        )
    return out


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
