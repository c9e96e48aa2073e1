#!/usr/bin/env python3
"""`make bench`: run every benchmark of the project; write one Markdown table of the results,
with the machine they ran on, to bench-results/REPORT.md (the About page shows the copy
committed there).

A benchmark is a *section*: a function ``section(args) -> list[Row]`` listed in
``SECTIONS``. To add one, write the function (in its own module if it is big) and add a
line to ``SECTIONS``; the report writer does the rest. Sections never assert anything:
speed is measured here, not in tests.

Usage: python -m build_scripts.bench.bench_report [--runs 5] [--only build,budget,lab,precompute]
                                             [--out bench-results/REPORT.md]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from build_scripts.bench import bench_engines
from build_scripts.gates.browser import launch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "bench-results" / "REPORT.md"


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


def lab_section(args) -> list[Row]:
    """The live lab (build_scripts/bench/bench.py): cold start, recompute latency, second visit."""
    from build_scripts.bench import bench

    bench.main(["--runs", str(args.runs), "--repeats", str(args.repeats)])
    r = bench.RESULTS
    rows = []
    note = f"from navigation start; {r['runs']} cold runs, a new browser each"
    for mode, runs in r["cold"].items():
        name = f"lab, cold start ({mode})"

        def col(key, runs=runs):
            return [run[key] for run in runs]

        rows += [
            Row(name, "first picture (build's result)", med(col("initial")), note),
            Row(name, "Python ready", med(col("ready"), "s", 1e-3, 2), note),
            Row(name, "first recompute shown", med(col("firstRecompute"), "s", 1e-3, 2), note),
            Row(name, "bytes sent", med(col("bytes"), "MB", 1e-6, 2), "whole run, server side"),
        ]
    rows.append(
        Row(
            "lab, second visit",
            "Python ready",
            med(r["warm"], "s", 1e-3, 2),
            "page reloaded, HTTP cache warm",
        )
    )
    for n, lat in r["latency"].items():
        rows += [
            Row(
                "lab, one recompute",
                f"seq_len {n}: control change to redrawn",
                med(lat["total"]),
                f"{r['repeats']} repeats",
            ),
            Row("lab, one recompute", f"seq_len {n}: in the worker", med(lat["worker"]), ""),
        ]
    cells = r.get("cells")
    if cells:
        note = "lesson 3, cross-origin isolated page, Python ready"
        rows += [
            Row("code cell", "run `1 + 1`: Run to output shown", med(cells["trivial"]), note),
            Row(
                "code cell",
                "Stop `while True: pass` (KeyboardInterrupt)",
                med(cells["interrupt"]),
                note,
            ),
            Row(
                "code cell",
                "restart the worker after a Stop: Python ready",
                med(cells["restart_ready"], "s", 1e-3, 2),
                "what every Stop costs where the page is not isolated",
            ),
            Row(
                "code cell",
                "restart, then the next `1 + 1` shown",
                med(cells["restart_next"], "s", 1e-3, 2),
                "",
            ),
        ]
    return rows


def budget_section(args) -> list[Row]:
    """Bytes per page (build_scripts/gates/check_site.py), next to the budget in budget.json."""
    import yaml
    from playwright.sync_api import sync_playwright

    from build_scripts.gates.check_site import budget_for, check_site, load_budget

    site_url = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8")).get("site_url")
    budget = load_budget()
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            report = check_site(ROOT / "site", browser, schemes=("light",), site_url=site_url)
        finally:
            browser.close()
    rows = []
    for r in report.bytes:
        limits = budget_for(budget, r.page)
        rows.append(
            Row(
                f"page /{r.page}",
                "HTML+CSS+JS before a lab starts",
                f"{r.initial_sent / 1000:.0f} kB sent, {r.initial_raw / 1000:.0f} kB uncompressed",
                f"budget {limits['initial_kb']} kB sent",
            )
        )
        heavy = r.heavy_code_sent()
        rows.append(
            Row(
                f"page /{r.page}",
                "explorer, cells and editor code before a lab starts",
                f"{heavy / 1000:.0f} kB sent" if heavy else "none",
                "site code fetched: " + ", ".join(sorted(r.code)),
            )
        )
        if r.payload is not None:
            rows.append(
                Row(
                    f"page /{r.page}",
                    "lab payload (Pyodide, NumPy, labs wheel)",
                    f"{r.payload / 1e6:.1f} MB uncompressed",
                    f"budget {limits['lab_payload_mb']} MB",
                )
            )
    return rows


def build_section(args) -> list[Row]:
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


def rows_from_table(markdown: str, benchmark: str) -> list[Row]:
    """Rows of a two-column ``| measure | value |`` Markdown table (the header skipped): for
    a benchmark script that writes its own report."""
    rows = []
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 2 or set(cells[1]) <= set("-: "):
            continue
        if cells == ["measure", "value"]:
            continue
        rows.append(Row(benchmark, cells[0], cells[1]))
    return rows


def precompute_section(args) -> list[Row]:
    """Real attention maps (build_scripts/bench/bench_precompute.py): CPU time and asset bytes."""
    from build_scripts.bench import bench_precompute

    out = ROOT / "bench-results" / "precompute.md"
    bench_precompute.main(["--runs", str(args.runs), "--out", str(out)])
    return rows_from_table(out.read_text("utf-8"), "precompute (real maps)")


def induction_section(args) -> list[Row]:
    """The induction-head model's training (build_scripts/induction/train_induction.py):
    one full run on this machine's CPU, one thread, as `make train-induction` does."""
    import tempfile

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


def explorer_section(args) -> list[Row]:
    """The explorer on each model's largest committed asset (bench_explorer.py)."""
    from build_scripts.bench import bench_explorer

    rows = []
    for out in bench_explorer.main(["--runs", str(args.runs)]):
        runs, entry = out["runs"], out["asset"]
        name = f"explorer, {entry['model']}"
        what = f"{entry['path']}, seq_len {entry['seq_len']}, {len(runs)} cold runs"
        switches = [t for r in runs for t in r["switch"]]
        rows += [
            Row(
                name,
                "grid of every head drawn",
                med([r["grid"] for r in runs]),
                f"{what}; target < 200 ms",
            ),
            Row(
                name,
                "explorer script started -> grid drawn",
                med([r["startToGrid"] for r in runs]),
                "index and asset downloaded in parallel, schema checks, draw",
            ),
            Row(
                name,
                "page opened -> grid drawn",
                med([r["pageToGrid"] for r in runs]),
                "local server",
            ),
            Row(
                name,
                "switch to another head (heatmap, lines, table)",
                med(switches, digits=2),
                f"every head once, {len(switches)} switches; target < 16 ms",
            ),
        ]
    return rows


def labs_section(args) -> list[Row]:
    """Every lab's recompute, defaults and largest settings (build_scripts/bench/bench_labs.py)."""
    from build_scripts.bench import bench_labs

    results = bench_labs.main(["--repeats", str(args.lab_repeats)])
    rows = []
    for name, entry in sorted(results.items()):
        where = f"/{entry['page']}" if entry["page"] is not None else "no page embeds it"
        for setting, target in (("default", 16), ("largest", 50)):
            timed = entry.get(setting)
            cpython = med(entry["cpython"][setting], digits=2)
            if not timed:
                rows.append(Row(f"lab {name}", f"{setting}: CPython compute", cpython, where))
                continue
            note = f"{where}; target < {target} ms; CPython compute {cpython}"
            if timed["failed"]:
                note += "; THE LAB REPORTED AN ERROR at these settings"
            rows += [
                Row(
                    f"lab {name}",
                    f"{setting}: control change to redrawn",
                    med(timed["total"]),
                    note,
                ),
                Row(f"lab {name}", f"{setting}: in the worker", med(timed["worker"]), ""),
            ]
    tiled = bench_labs.tiled_vs_plain()
    for kind in ("tiled", "plain"):
        rows.append(
            Row(
                "lesson 8, tiled vs plain attention (CPython)",
                f"{kind}: {tiled['what']}",
                med(tiled[kind], digits=2),
                "NumPy on this CPU; float64",
            )
        )
    return rows


def startup_section(args) -> list[Row]:
    """Python + NumPy ready, against the official loader in the same run
    (build_scripts/bench/bench_startup.py); first picture against DOMContentLoaded."""
    from build_scripts.bench import bench_startup

    results = bench_startup.main(["--runs", str(args.runs)])
    names = list(results)
    base = results[names[0]]
    b_cold, b_repeat = statistics.median(base["cold"]), statistics.median(base["repeat"])
    note = f"new Worker to ready; {args.runs} runs, fresh browser context each; Chromium"
    rows = []
    for name in names:
        r = results[name]
        cold, repeat = statistics.median(r["cold"]), statistics.median(r["repeat"])
        ratio = "" if r is base else f"; {cold / b_cold:.2f}× baseline (target ≤ 0.5× for the site)"
        rows.append(
            Row(
                f"start-up, {name}",
                "Python ready, cold",
                med(r["cold"], "s", 1e-3, 2),
                note + ratio,
            )
        )
        ratio = (
            ""
            if r is base
            else f"; {repeat / b_repeat:.2f}× baseline (target ≤ 0.35× for the site)"
        )
        rows.append(
            Row(
                f"start-up, {name}",
                "Python ready, repeat visit",
                med(r["repeat"], "s", 1e-3, 2),
                "page reloaded in the same context" + ratio,
            )
        )
        rows.append(
            Row(
                f"start-up, {name}",
                "bytes on the wire (one cold run)",
                f"{r['bytes'] / 1e6:.2f} MB",
                "server side; the site's row includes the page itself (target < 8 MB)",
            )
        )
    site = results[names[3]]
    rows += startup_steps(site["extra"])
    pictures = [e["picture"] / e["dcl"] for e in site["extra"] if e.get("picture")]
    rows.append(
        Row(
            "start-up, lesson 3",
            "lab's first picture / page's DOMContentLoaded",
            f"{statistics.median(pictures):.2f}× ({min(pictures):.2f}–{max(pictures):.2f})",
            "precomputed result drawn (lab:initial mark) over domContentLoadedEventEnd; "
            "target ≤ 1.1×; "
            + "first picture "
            + med([e["picture"] for e in site["extra"]])
            + ", DOMContentLoaded "
            + med([e["dcl"] for e in site["extra"]]),
        )
    )
    return rows


def startup_steps(extra: list[dict]) -> list[Row]:
    """One row per step of the site's worker start-up (cold runs; marks in
    docs/javascripts/runtime/pyodide-worker.js), then when each download ended."""
    from build_scripts.bench import bench_startup

    profiles = [e["profile"] for e in extra if e.get("profile")]
    if not profiles:
        return []
    per_step: dict[str, list[float]] = {}
    for profile in profiles:
        for name, ms in bench_startup.steps(profile):
            per_step.setdefault(name.split(" of the lab ")[0], []).append(ms)
    rows = [
        Row(
            "start-up, the site's worker, step by step",
            name,
            med(values, digits=0),
            "cold; from the step before (the first from new Worker); "
            + (
                "after ready, while idle"
                if name.startswith(("warm-up", "import attention_labs.cells"))
                else "before ready"
            ),
        )
        for name, values in per_step.items()
    ]
    ends: dict[str, list[float]] = {}
    for profile in profiles:
        for name, at in profile["downloads"]:
            ends.setdefault(name, []).append(at)
    rows += [
        Row(
            "start-up, the site's worker, downloads",
            f"{name} downloaded",
            med(values, digits=0),
            "cold; from new Worker (Resource Timing responseEnd)",
        )
        for name, values in sorted(ends.items(), key=lambda kv: statistics.median(kv[1]))
    ]
    return rows


def minilm_section(args) -> list[Row]:
    """Your own sentence: MiniLM in Chromium and CPython (build_scripts/bench/bench_minilm.py)."""
    from build_scripts.bench import bench_minilm

    out = bench_minilm.main(["--repeats", str(args.runs)])
    b, c = out["browser"], out["cpython"]
    rows = [
        Row(
            "MiniLM (your own sentence)",
            "weights on the wire",
            f"{out['wire_bytes'] / 1e6:.1f} MB",
            "int8 weights + vocab.txt, downloaded on the first Run, then from the Cache API",
        ),
        Row(
            "MiniLM (your own sentence)",
            "load and dequantise (Chromium worker)",
            f"{b['load_ms']:.0f} ms",
            f"first Run; CPython {med(c['load_ms'], digits=0)}",
        ),
        Row(
            "MiniLM (your own sentence)",
            "first Run, cold (download, Python, load, forward)",
            f"{b['first_run_s']:.1f} s",
            "local server, 20 tokens",
        ),
    ]
    for n in bench_minilm.LENGTHS:
        ratio = statistics.median(b[n]["forward"]) / statistics.median(c[n])
        rows.append(
            Row(
                "MiniLM (your own sentence)",
                f"forward pass, {n} tokens (Chromium)",
                med(b[n]["forward"]),
                f"CPython {med(c[n])} (one BLAS thread); ratio {ratio:.1f}x"
                + ("; target <= 6x" if n == 50 else ""),
            )
        )
        rows.append(
            Row(
                "MiniLM (your own sentence)",
                f"Run to grid, {n} tokens",
                med(b[n]["total"]),
                "weights loaded; besides the forward pass: "
                + ", ".join(f"{k} {med(v, digits=0)}" for k, v in b[n]["parts"].items())
                + ("; target < 500 ms" if n == 20 else ""),
            )
        )
    return rows


# Every benchmark of the project, in report order. Add a line for a new one.
SECTIONS: dict[str, Callable[[argparse.Namespace], list[Row]]] = {
    "build": build_section,
    "budget": budget_section,
    "lab": lab_section,
    "startup": startup_section,
    "labs": labs_section,
    "precompute": precompute_section,
    "induction": induction_section,
    "explorer": explorer_section,
    "minilm": minilm_section,
    "engines": bench_engines.section,
}


# --------------------------------------------------------------------------- report


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(rows: list[Row], info: dict[str, str], when: str) -> str:
    """The report: a heading, the machine, and one table with every row."""
    lines = [
        "## Benchmark report",
        "",
        f"Written by `make bench` on {when}. Machine: "
        + "; ".join(f"{k} {_cell(v)}" for k, v in info.items())
        + ". Timings are median (min–max).",
        "",
        "| benchmark | measure | value | notes |",
        "| --- | --- | --- | --- |",
    ]
    lines += [
        f"| {_cell(r.benchmark)} | {_cell(r.measure)} | {_cell(r.value)} | {_cell(r.notes)} |"
        for r in rows
    ]
    return "\n".join(lines) + "\n"


def write_report(rows: list[Row], info: dict[str, str], out: Path = OUT, when=None) -> Path:
    when = when or dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(rows, info, when), "utf-8")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="cold runs (lab)")
    parser.add_argument("--repeats", type=int, default=30, help="recomputes per seq_len (lab)")
    parser.add_argument("--lab-repeats", type=int, default=15, help="recomputes per lab setting")
    parser.add_argument("--only", default=",".join(SECTIONS), help="sections, comma-separated")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args(argv)
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
        rows += SECTIONS[name](args)
    out = write_report(rows, info, Path(args.out))
    print(out.read_text("utf-8"))
    print(f"bench: written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
