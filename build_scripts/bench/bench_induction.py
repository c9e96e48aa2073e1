"""`make bench`, the induction-head model: one full training run
(build_scripts/induction/train_induction.py) on this machine's CPU, one thread, as
`make train-induction` does, and the size of the assets it writes (into a temporary folder:
the committed ones are left alone). A benchmark, not a test: it asserts nothing.

Usage: python -m build_scripts.bench.bench_induction
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from build_scripts.bench.contract import Row, run_alone


def rows(args) -> list[Row]:
    """Training wall time, the step the induction head formed, each asset's size."""
    from build_scripts.induction import train_induction as ti

    cfg = ti.Config()
    model, checkpoints, wall = ti.train(cfg, log=lambda *a: None, device="cpu")
    with tempfile.TemporaryDirectory() as tmp:
        paths = ti.write_assets(cfg, model, checkpoints, Path(tmp), wall)
        sizes = {p.name: p.stat().st_size for p in paths}
    story = ti.story(checkpoints)
    what = f"{cfg.steps} steps, batch {cfg.batch_size}, seq_len {cfg.seq_len}, 1 thread"
    return [
        Row("induction model", "training wall time (CPU)", f"{wall:.1f} s", what),
        Row(
            "induction model",
            "induction head formed (first step above 0.5)",
            f"step {story['formed_at_step']}",
            f"heads {story['induction_heads']}; best score {story['final_best']}",
        ),
        *(
            Row("induction model", f"asset {name}", f"{size / 1024:.1f} kB", "raw JSON")
            for name, size in sizes.items()
        ),
    ]


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
