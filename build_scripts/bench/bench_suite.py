"""`make bench-suite`, the whole suite (issue 26): ``make test`` in a clean clone of this
repository's last commit, as CI runs it, once. Two rows: the whole command (the virtual
environment, from pip's cache on a machine that has one; vendoring; the build; lint;
pytest) and pytest's own time (target 10 min).

Its output is kept in build/bench-suite.log (it scrolls there as it runs).

Not in a plain ``make bench``, which would take half an hour longer: bench_report.py carries
these rows over from the report it replaces (``OPT_IN``) until this runs again.

A benchmark, not a test: it asserts nothing (a failing suite is reported as such).

Usage: python -m build_scripts.bench.bench_suite
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from build_scripts.bench.bench_contrib import SUMMARY, as_run_by_hand, load
from build_scripts.bench.contract import Row, run_alone

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "build" / "bench-suite.log"
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
        LOG.parent.mkdir(parents=True, exist_ok=True)
        with LOG.open("w", encoding="utf-8") as log:
            t0 = time.perf_counter()
            code = subprocess.call(
                ["make", "test"],
                cwd=clone,
                env=as_run_by_hand(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            seconds = time.perf_counter() - t0
        after = load()
    tests = SUMMARY.search(LOG.read_text("utf-8", errors="replace"))
    verdict = "passed" if code == 0 else f"FAILED (exit {code}; see {LOG.relative_to(ROOT)})"
    out = [
        Row(
            BENCHMARK,
            "make test: the whole command",
            f"{seconds / 60:.1f} min",
            f"commit {head}, 1 run, {verdict}; load {before} at its start, {after} at its end",
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
