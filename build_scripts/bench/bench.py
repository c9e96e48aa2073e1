"""`make bench`: how fast the live lab is for a reader, in headless Chromium.

Each cold run starts a new Chromium with an empty profile against the built site on a
local server (build_scripts/serve.py), opens the lesson, scrolls to the lab and changes a
control as soon as the lab appears, as an eager reader would. Reported per server mode
(precompressed gzip on / off), median and range over the runs:

- initial result: navigation start -> the build's precomputed result drawn;
- Python ready: navigation start -> Pyodide + NumPy + labs wheel loaded in the worker;
- first recompute: navigation start -> the first result computed in the browser drawn;
- bytes: response bodies the server sent for the whole run.

Then, in one warm page: the latency of one recompute (control change -> heatmap redrawn,
including the worker round trip) at seq_len 8, 32 and 128, and the worker's share of it.
Code cells: a trivial cell's Run -> output once Python is ready, and Stop (KeyboardInterrupt;
and restarting the worker, as on hosts without COOP/COEP). The server sends COOP/COEP
headers so the page's timers are not coarsened to 0.1 ms.
This is a benchmark, not a test: it asserts nothing. Its rows (``rows``, the contract of
bench/contract.py) go into bench-results/REPORT.md (bench_report.py). Usage:
python -m build_scripts.bench.bench [--runs 5] [--repeats 30]
"""

from __future__ import annotations

import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from build_scripts.bench.contract import Row, med, run_alone  # noqa: E402
from build_scripts.gates.browser import launch  # noqa: E402
from build_scripts.serve import make_server  # noqa: E402

LESSON = "lessons/03-attention-pattern/"
LAB = ".attn-lab[data-lab=attention_pattern]"  # the page's first lab; lesson 3 has two

MARKS_JS = """() => {
  const at = (name) => { const m = performance.getEntriesByName(name); return m.length ? m[0].startTime : null; };
  const nav = performance.getEntriesByType('navigation')[0];
  return { initial: at('lab:initial'), firstRecompute: at('lab:first-recompute'),
           dcl: nav ? nav.domContentLoadedEventStart : null,
           ready: window.AttnLabs.runtime.timings.ready ?? null,
           ...Object.fromEntries(['start', 'step2', 'step3', 'step4', 'step5'].map(
             (k) => [k, window.AttnLabs.runtime.timings[k] ?? null])) };
}"""

LATENCY_JS = """async ([seqLen, repeats]) => {
  const root = document.querySelector('.attn-lab[data-lab=attention_pattern]');
  const lab = root.attnLab;
  const tokens = Array.from({length: seqLen}, (_, i) => 'tok' + i);
  const once = (params) => new Promise((resolve) => {
    root.addEventListener('lab:done', () => resolve(), {once: true});
    lab.update(params);
  });
  await once({tokens, seed: 0});  // first call at this size: not timed
  const total = [], worker = [];
  for (let i = 1; i <= repeats; i++) {
    const t0 = performance.now();
    await once({tokens, seed: i});
    total.push(performance.now() - t0);
    worker.push(lab.lastComputeMs);
  }
  return {total, worker};
}"""


def summary(values: list[float], unit: str = "ms", scale: float = 1.0) -> str:
    v = [x * scale for x in values]
    return f"{statistics.median(v):.1f} {unit} ({min(v):.1f}–{max(v):.1f})"


def wait_settled(page) -> None:
    """Wait until Python's start-up is over (``runtime.whenSettled``) and the page's math is
    all rendered (katex-init.js renders what is out of view after it): the recompute timings
    are then a change's own cost, not shared with the page's deferred work."""
    page.evaluate("() => window.AttnLabs.runtime.whenSettled()")
    page.wait_for_function(
        "() => !document.querySelector('.arithmatex:not(:has(.katex))')", timeout=60_000
    )


def reader_visit(page, url: str) -> dict:
    """Open lesson 3 at ``url`` as an eager reader: scroll to the lab and change a control
    as soon as the lab appears, then wait for the recompute drawn. Returns the page's marks
    (MARKS_JS: ms from navigation start)."""
    page.goto(url, wait_until="commit")
    page.wait_for_selector(f"{LAB}[data-status=initial]", timeout=60_000)
    page.locator(LAB).scroll_into_view_if_needed()
    page.locator("input[id$='-causal']").check()
    page.wait_for_function(
        f"() => document.querySelector('{LAB}').dataset.runs >= 1", timeout=120_000
    )
    return page.evaluate(MARKS_JS)


def cold_run(pw, base: str, stats: dict) -> dict:

    browser = launch(pw)
    try:
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        stats.clear()
        marks = reader_visit(page, base + LESSON)
        marks["bytes"] = stats.get("bytes", 0)
        marks["requests"] = stats.get("requests", 0)
        return marks
    finally:
        browser.close()


def latency(pw, base: str, repeats: int) -> dict:

    browser = launch(pw)
    try:
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        page.goto(base + LESSON)
        page.locator(LAB).scroll_into_view_if_needed()
        page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=120_000)
        wait_settled(page)
        out = {n: page.evaluate(LATENCY_JS, [n, repeats]) for n in (8, 32, 128)}
        # A second visit: the browser's HTTP cache (and compiled-wasm cache) is warm.
        warm = []
        for _ in range(3):
            page.reload(wait_until="commit")
            page.wait_for_selector(f"{LAB}[data-status=initial]", timeout=60_000)
            page.locator(LAB).scroll_into_view_if_needed()
            page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=120_000)
            warm.append(page.evaluate("() => window.AttnLabs.runtime.timings.ready"))
        return out, warm
    finally:
        browser.close()


CELL_JS = """async ([repeats]) => {
  const cell = document.querySelector('.attn-cell').attnCell;
  cell.editor.code = '1 + 1';
  await cell.run();  // first run: not timed
  const out = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    await cell.run();
    out.push(performance.now() - t0);
  }
  return out;
}"""

STOP_JS = """async ([restart]) => {
  const rt = window.AttnLabs.runtime;
  const cell = document.querySelectorAll('.attn-cell')[1].attnCell;
  const until = async (ok) => { while (!ok()) await new Promise((r) => setTimeout(r, 5)); };
  cell.editor.code = 'while True:\\n    pass';
  const done = cell.run();
  await until(() => rt.running !== null);
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  const how = restart ? (rt.restart('stopped'), 'restarted') : await rt.stop();
  await done;
  const stopped = performance.now() - t0;
  await until(() => rt.state === 'ready');
  const ready = performance.now() - t0;
  cell.editor.code = '1 + 1';
  await cell.run();
  return {how, stopped, ready, next: performance.now() - t0};
}"""


def cells_bench(pw, repeats: int) -> dict:
    """Code cells (issue 4): a trivial cell once Python is ready, and Stop. Self-contained:
    its own isolated server and browser; returns the times (ms)."""

    httpd = make_server(ROOT / "site", 0, site_url=None, isolate=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}/"
    browser = launch(pw)
    try:
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        page.goto(base + LESSON)
        page.wait_for_selector(".attn-cell[data-state]", state="attached")  # cells mounted
        page.locator(".attn-cell").first.scroll_into_view_if_needed()
        page.wait_for_function("() => window.AttnLabs.runtime.state === 'ready'", timeout=120_000)
        trivial = page.evaluate(CELL_JS, [repeats])
        interrupts = [page.evaluate(STOP_JS, [False]) for _ in range(3)]
        restarts = [page.evaluate(STOP_JS, [True]) for _ in range(3)]
    finally:
        browser.close()
        httpd.shutdown()

    def col(runs, key):
        return [r[key] for r in runs]

    assert all(r["how"] == "interrupted" for r in interrupts), interrupts
    return {
        "trivial": trivial,
        "interrupt": col(interrupts, "stopped"),
        "restart_ready": col(restarts, "ready"),
        "restart_next": col(restarts, "next"),
    }


def measure(runs: int = 5, repeats: int = 30) -> dict:
    """Every measurement of this module: {"cold": {server mode: [marks per run]},
    "latency": {seq_len: {"total", "worker"}}, "warm": [ms], "cells": {...}, "runs",
    "repeats"}; times in ms, from navigation start (marks) or of one action."""
    if not (ROOT / "site" / "index.html").is_file():
        sys.exit("bench: site/ is not built: run `make build`")
    from playwright.sync_api import sync_playwright

    cold: dict = {}
    with sync_playwright() as pw:
        for mode, gzip in (("precompressed gzip", True), ("no compression", False)):
            stats: dict = {}
            httpd = make_server(
                ROOT / "site", 0, site_url=None, isolate=True, gzip=gzip, stats=stats
            )
            threading.Thread(target=httpd.serve_forever, daemon=True).start()
            base = f"http://127.0.0.1:{httpd.server_address[1]}/"
            cold[mode] = [cold_run(pw, base, stats) for _ in range(runs)]
            ready = [r["ready"] for r in cold[mode]]
            print(f"bench: lab, {mode}: Python ready {summary(ready, 's', 1e-3)}", flush=True)
            if gzip:
                lat, warm = latency(pw, base, repeats)
            httpd.shutdown()
    with sync_playwright() as pw:
        cells = cells_bench(pw, repeats)
    return {
        "cold": cold,
        "latency": lat,
        "warm": warm,
        "cells": cells,
        "runs": runs,
        "repeats": repeats,
    }


def rows(args) -> list[Row]:
    """The live lab: cold start (``args.runs`` per server mode), recompute latency
    (``args.repeats`` per seq_len), second visit, code cells."""
    r = measure(args.runs, args.repeats)
    out = []
    note = f"from navigation start; {r['runs']} cold runs, a new browser each"
    for mode, runs in r["cold"].items():
        name = f"lab, cold start ({mode})"

        def col(key, runs=runs):
            return [run[key] for run in runs]

        out += [
            Row(name, "first picture (build's result)", med(col("initial")), note),
            Row(name, "Python ready", med(col("ready"), "s", 1e-3, 2), note),
            Row(name, "first recompute shown", med(col("firstRecompute"), "s", 1e-3, 2), note),
            Row(name, "bytes sent", med(col("bytes"), "MB", 1e-6, 2), "whole run, server side"),
        ]
    out.append(
        Row(
            "lab, second visit",
            "Python ready",
            med(r["warm"], "s", 1e-3, 2),
            "page reloaded, HTTP cache warm",
        )
    )
    for n, lat in r["latency"].items():
        out += [
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
        out += [
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
    return out


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
