"""`make bench`, the site build: `mkdocs build --strict` of the whole site.

* **warm**, three times: what a contributor's next build costs. The hooks compute every lab's
  first result and run every ```numbers fence; the companion notebooks come from their cache,
  build/cache/notebooks/, which the first build filled (target: 15 s, issue 26).
* **cold**, once: the same build with empty notebook caches of its own (a temporary folder),
  so every companion notebook is executed, as in a clean clone's first `make build`
  (target: 60 s). The vendored runtime, the labs wheel and the page-size cache
  (build/cache/brotli-sizes.json) are those of this checkout.

A benchmark, not a test: it asserts nothing.

Usage: python -m build_scripts.bench.bench_build
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from build_scripts.bench.contract import Row, med, run_alone

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = Path(sys.executable).with_name("mkdocs")


def build(out: Path, config: Path | None = None) -> tuple[float, str]:
    """Seconds and output of `mkdocs build --strict` into ``out`` (``config``: another
    mkdocs.yml; MkDocs runs from the repository's root either way)."""
    cmd = [str(MKDOCS), "build", "--strict", "-d", str(out)]
    if config is not None:
        cmd += ["-f", str(config)]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"bench_build: {' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")
    return seconds, proc.stdout + proc.stderr


def cold_config(tmp: Path) -> Path:
    """mkdocs.yml with both notebook caches (the hook's executed notebooks, mkdocs-jupyter's
    rendered pages) in the empty folder ``tmp``; every other path as in the real one."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    config["docs_dir"] = str(ROOT / config.get("docs_dir", "docs"))
    config["hooks"] = [str(ROOT / hook) for hook in config["hooks"]]
    if config["theme"].get("custom_dir"):
        config["theme"]["custom_dir"] = str(ROOT / config["theme"]["custom_dir"])
    config["extra"]["notebooks"]["cache"] = str(tmp / "notebooks")
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocs-jupyter" in plugin:
            plugin["mkdocs-jupyter"]["cache_dir"] = str(tmp / "notebooks" / "pages")
    path = tmp / "mkdocs.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def rows(args) -> list[Row]:
    """Warm builds (three) and one cold build of the whole site."""
    out = ROOT / "build" / "bench-site"
    warm = [build(out)[0] for _ in range(3)]
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
        cold, output = build(out, cold_config(Path(tmp)))
    executed = re.search(r"executing (\d+) notebook\(s\)", output)
    notebooks = f"{executed.group(1)} notebooks executed" if executed else "notebooks executed"
    return [
        Row(
            "site build",
            "warm: mkdocs build --strict",
            med(warm, "s", 1, 2),
            "3 runs; notebooks from their cache; target 15 s (issue 26)",
        ),
        Row(
            "site build",
            "cold: mkdocs build --strict, empty notebook caches",
            f"{cold:.1f} s",
            f"1 run; {notebooks}, as in a clean clone's first build; target 60 s (issue 26)",
        ),
    ]


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
