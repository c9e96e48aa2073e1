"""`make bench`, explorer part: how fast the attention-map explorer draws, in Chromium.

For the largest committed asset of each model (most bytes in
docs/assets/attention/index.json: for SmolLM2, 270 heads of its longest sentence), each run
opens a fresh Chromium on the explorer page with that sentence in the grid view, against
the built site on a local server (build_scripts/serve.py), and reads:

- grid draw: every layer x head thumbnail decoded and drawn (explorer/ timings.grid; the
  thumbnails are drawn in slices with the page free between them, so this is wall time
  until the last one);
- start to grid: the explorer's script starts -> grid drawn (index and asset downloads,
  schema checks, draw);
- page to grid: navigation start -> grid drawn (the `explorer:grid` performance mark);
- head switch: showing one head large (its heatmap; the token lines follow in the next task
  and the text table when it is opened), once per head of the model, first visit to each
  head (so its weights are decoded too); the synchronous time.

Targets from issue 6: grid under 200 ms, a head switch under 16 ms (one frame at 60 Hz).
A benchmark, not a test: it asserts nothing. Usage: python -m build_scripts.bench.bench_explorer
[--runs 5]
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from build_scripts.bench.contract import Row, med, run_alone  # noqa: E402
from build_scripts.gates.browser import launch  # noqa: E402
from build_scripts.serve import make_server  # noqa: E402

MAP = ".attn-map"

SWITCH_JS = """() => {
  const map = document.querySelector('.attn-map').attnMap;
  const { n_layers, n_heads } = map.cache.asset.model;
  const times = [];
  for (let l = 0; l < n_layers; l++)
    for (let h = 0; h < n_heads; h++) {
      const t0 = performance.now();
      map.showHead(l, h);
      times.push(performance.now() - t0);
    }
  return times;
}"""


def largest_assets() -> list[dict]:
    """The index entry of each model's committed asset with the most bytes, in index order."""
    index = json.loads((ROOT / "docs/assets/attention/index.json").read_text("utf-8"))
    return [
        max((a for a in index["assets"] if a["model"] == m["slug"]), key=lambda a: a["bytes"])
        for m in index["models"]
        if any(a["model"] == m["slug"] for a in index["assets"])
    ]


def run_once(pw, base: str, entry: dict) -> dict:

    browser = launch(pw)
    try:
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        query = f"?model={entry['model']}&sentence={entry['sentence']}&view=model"
        page.goto(f"{base}explorer/{query}", wait_until="commit")
        page.wait_for_selector(f"{MAP}[data-state=ready]", timeout=60_000)
        page.wait_for_selector(f"{MAP} .attn-map__grid[data-drawn=true]", timeout=60_000)
        out = page.evaluate(
            """() => { const t = document.querySelector('.attn-map').attnMap.timings;
               const m = performance.getEntriesByName('explorer:grid');
               return { grid: t.grid, startToGrid: t.firstGrid,
                        pageToGrid: m.length ? m[0].startTime : null }; }"""
        )
        out["switch"] = page.evaluate(SWITCH_JS)
        return out
    finally:
        browser.close()


def measure(runs: int = 5) -> list[dict]:
    """``runs`` cold runs per model; returns [{"asset": entry, "runs": [...]}, ...] (ms)."""
    from playwright.sync_api import sync_playwright

    server = make_server(ROOT / "site", isolate=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    results = []
    try:
        with sync_playwright() as pw:
            for entry in largest_assets():
                timed = [run_once(pw, base, entry) for _ in range(runs)]
                results.append({"asset": entry, "runs": timed})
    finally:
        server.shutdown()
    for result in results:
        entry, timed = result["asset"], result["runs"]
        switches = [t for r in timed for t in r["switch"]]
        print(
            f"{entry['path']} (seq_len {entry['seq_len']}): grid draw "
            f"{statistics.median(r['grid'] for r in timed):.1f} ms, start to grid "
            f"{statistics.median(r['startToGrid'] for r in timed):.1f} ms, head switch median "
            f"{statistics.median(switches):.2f} ms over {len(switches)}"
        )
    return results


def rows(args) -> list[Row]:
    """The explorer on each model's largest committed asset, ``args.runs`` cold runs."""
    out = []
    for result in measure(args.runs):
        runs, entry = result["runs"], result["asset"]
        name = f"explorer, {entry['model']}"
        what = f"{entry['path']}, seq_len {entry['seq_len']}, {len(runs)} cold runs"
        switches = [t for r in runs for t in r["switch"]]
        out += [
            Row(
                name,
                "grid of every head drawn (in slices)",
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
                "switch to another head (its heatmap; the lines follow)",
                med(switches, digits=2),
                f"every head once, {len(switches)} switches; target < 16 ms",
            ),
        ]
    return out


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
