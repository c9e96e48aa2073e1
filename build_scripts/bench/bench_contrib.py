"""`make bench`, a contributor's loop (issue 26): ``make check-lesson NAME=04-masking`` as a
contributor runs it, once: make's warm build of the site, the lesson's claims, labs and
Chromium tests, the browser gates on its page (target 3 min). The whole suite's time is
bench_suite.py's.

A benchmark, not a test: it asserts nothing (a failing check is reported as such).

Usage: python -m build_scripts.bench.bench_contrib
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from build_scripts.bench.contract import Row, run_alone

ROOT = Path(__file__).resolve().parents[2]
LESSON = "04-masking"
# pytest's last line: "==== 120 passed, 1 warning in 95.31s (0:01:35) ====", or with -q
# "120 passed in 95.31s (0:01:35)"
SUMMARY = re.compile(
    r"^(?:=+ )?(?P<counts>\d+ (?:passed|failed|errors?)[^=\n]*?) in (?P<seconds>[\d.]+)s", re.M
)


def load() -> str:
    """The load average now (1 / 5 / 15 min)."""
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def as_run_by_hand() -> dict[str, str]:
    """The environment without the one BLAS thread that `make bench` sets."""
    drop = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
    return {k: v for k, v in os.environ.items() if k not in drop}


def timed(cmd: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    """Seconds ``cmd`` took in ``cwd`` and its finished process (output captured)."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=cwd, env=as_run_by_hand(), capture_output=True, text=True, check=False
    )
    return time.perf_counter() - t0, proc


def verdict(proc: subprocess.CompletedProcess) -> str:
    return "passed" if proc.returncode == 0 else f"FAILED (exit {proc.returncode})"


def rows(args) -> list[Row]:
    """``make check-lesson NAME=04-masking``, timed once."""
    before = load()
    seconds, proc = timed(["make", "check-lesson", f"NAME={LESSON}"], ROOT)
    tests = SUMMARY.search(proc.stdout)
    counted = f"pytest {tests.group('counts').strip()}" if tests else "no pytest summary"
    return [
        Row(
            "make check-lesson",
            f"NAME={LESSON}: the command, start to end",
            f"{seconds:.0f} s",
            f"1 run, {verdict(proc)} ({counted}); warm build, its tests, the gates on its "
            f"page; target 3 min (issue 26); load {before} at its start",
        )
    ]


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
