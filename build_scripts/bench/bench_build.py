"""`make bench`, the site build: `mkdocs build --strict` of the whole site, three times (the
hooks compute every lab's first result and run every ```numbers fence; the companion
notebooks come from their cache, build/cache/notebooks/, once the first build has executed
what changed). A benchmark, not a test: it asserts nothing.

Usage: python -m build_scripts.bench.bench_build
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from build_scripts.bench.contract import Row, med, run_alone

ROOT = Path(__file__).resolve().parents[2]


def rows(args) -> list[Row]:
    """`mkdocs build --strict` of the whole site (hooks compute every lab's first result)."""
    seconds = []
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    out = ROOT / "build" / "bench-site"
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run(
            [str(mkdocs), "build", "--strict", "--quiet", "-d", str(out)],
            cwd=ROOT,
            env=env,
            check=True,
        )
        seconds.append(time.perf_counter() - t0)
    return [Row("site build", "mkdocs build --strict", med(seconds, "s", 1, 2), "3 runs")]


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
