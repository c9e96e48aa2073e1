"""`make bench`, every lab: how long one recompute takes, at the lab's defaults and at its
largest settings, in headless Chromium and in CPython.

Every page of the built site that embeds a lab (a ```` ```lab ```` fence) is opened once in
one Chromium, against the built site on a local server; Python is started and, for the first
instance of each lab found, the bench times ``update(params)`` (what a control change calls)
until the widget has redrawn (the controller's ``lab:done`` event, after the widget's
synchronous ``render``), median over ``--lab-repeats``, with the lab scrolled into view (a
reader changing a control sees it; widgets may defer what is far from the screen), on a
quiet page: what the page
defers until Python has started (the math out of view) is waited for (bench.py:
``wait_settled``), so it does not share the CPU with the timed changes. Two parameter sets per lab:

- default: the parameters of the lab's fence on that page (what a reader first sees);
- largest: those with the lab module's ``LARGEST`` merged in (the heaviest computation its
  schema allows; every lab declares one, tested in tests/python/test_labs.py).

Beside each: the worker's own compute time (``lastComputeMs``), and the same ``compute``
in CPython in this process. A lab that no page embeds is timed in CPython only. Targets
(issue 27, "every lab within a frame"): at most 16 ms at defaults, at most 33 ms at the
largest settings. ``--labs a,b`` times those labs only (and skips lesson 8's comparison).
A benchmark, not a test: it asserts nothing. Its rows (``rows``, the contract of
bench/contract.py) go into bench-results/REPORT.md (bench_report.py). Usage:
python -m build_scripts.bench.bench_labs [--lab-repeats 15] [--labs tiled_attention]
"""

from __future__ import annotations

import html
import re
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from build_scripts.bench.bench import wait_settled  # noqa: E402
from build_scripts.bench.contract import Row, med, run_alone  # noqa: E402
from build_scripts.gates.browser import launch  # noqa: E402
from build_scripts.serve import make_server  # noqa: E402

LAB_RE = re.compile(r'<div class="attn-lab" data-lab="([^"]+)"')

TIME_JS = """async ([name, changes, repeats]) => {
  const root = [...document.querySelectorAll('.attn-lab')].find((r) => r.attnLab?.lab === name);
  const lab = root.attnLab;
  // In view, as for a reader at its controls (a lab far from the screen may defer work).
  root.scrollIntoView({ block: "start" });
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  const base = { ...lab.params, ...changes };
  const once = (params) => new Promise((resolve) => {
    root.addEventListener('lab:done', () => resolve(), { once: true });
    lab.update(params);
  });
  // A real change each time where the lab has a seed (new random vectors), else the same
  // parameters again: either way the worker computes and the widget redraws. A seed is
  // never used twice on the page (the default's seeds again at LARGEST would find what
  // the labs cache by seed, e.g. their random weights, already made).
  const used = (window.__benchSeeds ??= new Set());
  const fresh = () => {
    let seed = base.seed;
    while (used.has(seed)) seed = (seed + 1) % 1000;
    used.add(seed);
    return seed;
  };
  const vary = () => ('seed' in base ? { ...base, seed: fresh() } : base);
  await once(vary()); // the first call at these settings is not timed
  const total = [], worker = [];
  for (let i = 1; i <= repeats; i++) {
    const t0 = performance.now();
    await once(vary());
    total.push(performance.now() - t0);
    worker.push(lab.lastComputeMs);
  }
  const failed = root.dataset.status === 'error';
  await once(lab.params = { ...base }); // leave the lab as it was asked for
  return { total, worker, failed, params: base };
}"""


def lab_pages(site: Path) -> dict[str, str]:
    """{lab name: URL path of the first page that embeds it}, in the site's page order."""
    found: dict[str, str] = {}
    for page in sorted(site.rglob("index.html")):
        for name in LAB_RE.findall(page.read_text("utf-8")):
            rel = page.parent.relative_to(site).as_posix()
            found.setdefault(html.unescape(name), "" if rel == "." else rel + "/")
    return found


def cpython_ms(name: str, params: dict, repeats: int, used: set | None = None) -> list[float]:
    """Times of ``compute`` for validated ``params`` in this CPython (first call untimed).

    As in the browser (TIME_JS), a lab with a seed gets a seed not in ``used`` at each
    call (then added to it), so what a lab caches by seed is made anew, not found."""
    from attention_labs.labs import get_lab, validate_params

    lab, valid = get_lab(name), validate_params(name, params)
    used = set() if used is None else used

    def fresh() -> dict:
        if "seed" not in valid:
            return valid
        seed = valid["seed"]
        while seed in used:
            seed = (seed + 1) % 1000
        used.add(seed)
        return {**valid, "seed": seed}

    lab.compute(fresh())
    out = []
    for _ in range(repeats):
        call = fresh()
        t0 = time.perf_counter()
        lab.compute(call)
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def tiled_vs_plain(seq_len: int = 256, d_head: int = 64, block: int = 64, repeats: int = 5):
    """CPython ms (median of ``repeats``) of lesson 8's ``tiled_attention`` (online softmax,
    ``block`` x ``block`` tiles) and of plain attention on the same random Q, K, V: what the
    tiles cost in NumPy on a CPU (on a GPU, what they save is traffic to slow memory)."""
    from attention_labs import scaled_dot_product_attention
    from attention_labs.labs.tiled_attention import random_qkv, tiled_attention

    Q, K, V = random_qkv(seq_len, d_head, 0)

    def times(fn):
        fn()
        out = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t0) * 1e3)
        return out

    return {
        "tiled": times(lambda: tiled_attention(Q, K, V, block, block)),
        "plain": times(lambda: scaled_dot_product_attention(Q, K, V)),
        "what": f"seq_len {seq_len}, d_head {d_head}, {block}x{block} tiles",
    }


def browser_times(pw, base: str, pages: dict[str, str], repeats: int) -> dict:
    """{lab: {"default": {...}, "largest": {...}}} timed in one Chromium page per site page."""
    from attention_labs.labs import get_lab

    out: dict = {}
    browser = launch(pw)
    try:
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        for path in dict.fromkeys(pages.values()):
            page.goto(base + path)
            page.wait_for_selector(".attn-lab[data-status]", timeout=60_000)
            page.evaluate("() => window.AttnLabs.runtime.start()")
            page.wait_for_selector(".attn-lab[data-runtime=ready]", timeout=180_000)
            wait_settled(page)
            for name in [n for n, p in pages.items() if p == path]:
                largest = getattr(get_lab(name), "LARGEST", {})
                out[name] = {
                    "page": path,
                    "default": page.evaluate(TIME_JS, [name, {}, repeats]),
                    "largest": page.evaluate(TIME_JS, [name, largest, repeats]),
                }
    finally:
        browser.close()
    return out


def measure(repeats: int = 15, only: list[str] | None = None) -> dict:
    """Time every lab (or those named in ``only``), ``repeats`` recomputes per setting;
    returns {lab: {"page", "default", "largest", "cpython": {...}}} (times in ms). Raises
    ValueError for a name in ``only`` that is no lab."""
    from attention_labs.labs import get_lab, lab_names
    from playwright.sync_api import sync_playwright

    names = list(lab_names())
    unknown = sorted(set(only or ()) - set(names))
    if unknown:
        raise ValueError(f"no such lab: {', '.join(unknown)}; labs: {', '.join(names)}")
    if only:
        names = [n for n in names if n in only]
    site = ROOT / "site"
    pages = {n: p for n, p in lab_pages(site).items() if n in names}
    server = make_server(site, isolate=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        with sync_playwright() as pw:
            results = browser_times(pw, base, pages, repeats)
    finally:
        server.shutdown()
    seeds_of_page: dict[str, set] = {}
    for name in names:
        largest = getattr(get_lab(name), "LARGEST", {})
        entry = results.setdefault(name, {"page": None})
        # The page's parameters where a page embeds the lab, else the schema's defaults.
        defaults = entry["default"]["params"] if entry["page"] is not None else {}
        # the seeds of the lab's page, across both settings and every lab on it (as in the
        # browser: concat_wo and eight_heads share one module's caches, and one page)
        page = entry["page"] if entry["page"] is not None else f"no page: {name}"
        used = seeds_of_page.setdefault(page, set())
        entry["cpython"] = {
            "default": cpython_ms(name, defaults, repeats, used),
            "largest": cpython_ms(name, {**defaults, **largest}, repeats, used),
        }
    for name, entry in sorted(results.items()):
        where = f"/{entry['page']}" if entry["page"] is not None else "no page"
        parts = []
        for setting in ("default", "largest"):
            browser_ms = entry.get(setting, {}).get("total")
            shown = f"{statistics.median(browser_ms):.1f} ms" if browser_ms else "–"
            parts.append(
                f"{setting} {shown} (CPython {statistics.median(entry['cpython'][setting]):.2f} ms)"
            )
        print(f"{name} ({where}): " + "; ".join(parts))
    return results


def rows(args) -> list[Row]:
    """Every lab's recompute, defaults and largest settings (``args.lab_repeats`` each),
    then lesson 8's tiled against plain attention in CPython; only the labs in
    ``args.labs`` (comma-separated) when it names any."""
    only = [n.strip() for n in getattr(args, "labs", "").split(",") if n.strip()]
    results = measure(args.lab_repeats, only)
    out = []
    for name, entry in sorted(results.items()):
        where = f"/{entry['page']}" if entry["page"] is not None else "no page embeds it"
        for setting, target in (("default", 16), ("largest", 33)):
            timed = entry.get(setting)
            cpython = med(entry["cpython"][setting], digits=2)
            if not timed:
                out.append(Row(f"lab {name}", f"{setting}: CPython compute", cpython, where))
                continue
            note = f"{where}; target ≤ {target} ms; CPython compute {cpython}"
            if timed["failed"]:
                note += "; THE LAB REPORTED AN ERROR at these settings"
            out += [
                Row(
                    f"lab {name}",
                    f"{setting}: control change to redrawn",
                    med(timed["total"]),
                    note,
                ),
                Row(f"lab {name}", f"{setting}: in the worker", med(timed["worker"]), ""),
            ]
    if only:
        return out
    tiled = tiled_vs_plain()
    for kind in ("tiled", "plain"):
        out.append(
            Row(
                "lesson 8, tiled vs plain attention (CPython)",
                f"{kind}: {tiled['what']}",
                med(tiled[kind], digits=2),
                "NumPy on this CPU; float64",
            )
        )
    return out


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
