"""`make bench`, MiniLM part: the explorer's "Your own sentence" in Chromium and the same NumPy
code in CPython, in one run.

- weights on the wire: the bytes of docs/vendor/minilm/ that Run downloads (int8 weights and
  vocabulary; the server sends them as they are);
- load and dequantise: in the worker (read from blob: URLs, dequantise, tokenizer built) on
  the first Run, and `minilm.load_weights` in CPython on the same file;
- forward pass for 20, 50 and 128 tokens: the worker's own clock (labs/own_sentence.py
  `run.forward_ms`) on Runs after the first, and CPython (one BLAS thread, as make bench
  sets) on the same token ids;
- Run to grid: the click to the grid drawn, weights already loaded, and where that time goes
  (own-sentence.js `lastRun`: tokenize, forward, asset building in the worker; the rest of
  the round trip to the worker; drawing the views, the 72 thumbnails included).

The page is served cross-origin isolated, so the browser's timers are not rounded to 0.1 ms.
A benchmark, not a test: it asserts nothing.
Usage: python -m build_scripts.bench.bench_minilm [--runs 5] (repeats per length)
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from build_scripts.bench.contract import Row, med, run_alone  # noqa: E402
from build_scripts.gates.browser import launch  # noqa: E402
from build_scripts.serve import make_server  # noqa: E402

MINILM = ROOT / "site" / "vendor" / "minilm"
LENGTHS = (20, 50, 128)
RUN_JS = """async (text) => {
  const p = document.querySelector('.attn-map').attnMap.ownPanel;
  const runs = p.runs;
  p.text.value = text;
  await p.run();
  if (p.runs === runs) throw new Error(p.errorText.textContent);
  return p.lastRun;
}"""


def text_of(n_tokens: int) -> str:
    """A text of exactly n_tokens tokens with [CLS] and [SEP] (one piece per word)."""
    words = "the cat sat on a mat and then it ran to see one more dog".split()
    return " ".join(words[i % len(words)] for i in range(n_tokens - 2))


def browser_times(pw, base: str, repeats: int) -> dict:
    browser = launch(pw)
    try:
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        page.goto(base + "explorer/")
        page.wait_for_selector(".attn-map[data-state=ready]", timeout=60_000)
        t0 = time.perf_counter()
        first = page.evaluate(RUN_JS, text_of(20))  # downloads, starts Python, loads
        out = {"first_run_s": time.perf_counter() - t0, "load_ms": first["load_ms"]}
        for n in LENGTHS:
            runs = [page.evaluate(RUN_JS, text_of(n)) for _ in range(repeats)]
            out[n] = {
                "forward": [r["forward_ms"] for r in runs],
                "total": [r["total_ms"] for r in runs],
                "parts": {
                    "tokenize": [r["tokenize_ms"] for r in runs],
                    "asset": [r["asset_ms"] for r in runs],
                    "transfer": [
                        r["python_ms"] - r["tokenize_ms"] - r["forward_ms"] - r["asset_ms"]
                        for r in runs
                    ],
                    "draw": [r["draw_ms"] for r in runs],
                },
            }
        return out
    finally:
        browser.close()


def cpython_times(repeats: int) -> dict:
    from attention_labs.models import minilm
    from attention_labs.models.wordpiece import WordPiece

    data = (MINILM / "all-minilm-l6-v2.int8.safetensors").read_bytes()
    loads = []
    for _ in range(3):
        t0 = time.perf_counter()
        weights = minilm.load_weights(data)
        loads.append((time.perf_counter() - t0) * 1000)
    wp = WordPiece((MINILM / "vocab.txt").read_text("utf-8"))
    out = {"load_ms": loads}
    for n in LENGTHS:
        ids = wp.encode(text_of(n)).ids
        assert len(ids) == n, (n, len(ids))
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            minilm.forward(ids, weights)
            times.append((time.perf_counter() - t0) * 1000)
        out[n] = times
    return out


def measure(repeats: int = 5) -> dict:
    """``repeats`` runs per length; returns {"wire_bytes", "browser": {...}, "cpython":
    {...}} (times in ms)."""
    from playwright.sync_api import sync_playwright

    manifest = json.loads((MINILM / "minilm.json").read_text("utf-8"))
    wire = sum(f["bytes"] for n, f in manifest["files"].items() if n != "LICENSE")
    server = make_server(ROOT / "site", 0, isolate=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as pw:
            browser = browser_times(pw, base, repeats)
    finally:
        server.shutdown()
    cpython = cpython_times(repeats)
    out = {"wire_bytes": wire, "browser": browser, "cpython": cpython}
    median = statistics.median
    print(f"weights on the wire: {wire / 1e6:.1f} MB")
    load_b, load_c = browser["load_ms"], median(cpython["load_ms"])
    print(f"load and dequantise: browser {load_b:.0f} ms, CPython {load_c:.0f} ms")
    for n in LENGTHS:
        b, c = median(browser[n]["forward"]), median(cpython[n])
        grid = median(browser[n]["total"])
        print(f"forward {n} tokens: browser {b:.0f} ms, CPython {c:.0f} ms ({b / c:.1f}x)")
        parts = ", ".join(f"{k} {median(v):.0f} ms" for k, v in browser[n]["parts"].items())
        print(f"  Run to grid {grid:.0f} ms ({parts})")
    return out


def rows(args) -> list[Row]:
    """Your own sentence: MiniLM in Chromium and CPython, ``args.runs`` repeats each."""
    out = measure(args.runs)
    b, c = out["browser"], out["cpython"]
    found = [
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
    for n in LENGTHS:
        ratio = statistics.median(b[n]["forward"]) / statistics.median(c[n])
        found.append(
            Row(
                "MiniLM (your own sentence)",
                f"forward pass, {n} tokens (Chromium)",
                med(b[n]["forward"]),
                f"CPython {med(c[n])} (one BLAS thread); ratio {ratio:.1f}x"
                + ("; target <= 6x" if n == 50 else ""),
            )
        )
        found.append(
            Row(
                "MiniLM (your own sentence)",
                f"Run to grid, {n} tokens",
                med(b[n]["total"]),
                "weights loaded; besides the forward pass: "
                + ", ".join(f"{k} {med(v, digits=0)}" for k, v in b[n]["parts"].items())
                + ("; target < 500 ms" if n == 20 else ""),
            )
        )
    return found


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
