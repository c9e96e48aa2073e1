"""`make bench`, start-up: how soon Python + NumPy are ready in headless Chromium, against
a baseline measured in the same run.

Baseline: what a peer site does with the official files, a worker that runs
``loadPyodide({indexURL})`` then ``loadPackage("numpy")`` (official python_stdlib.zip,
official NumPy wheel, official lock), served by the same server (build_scripts/serve.py,
precompressed Brotli or gzip, as the browser asks). Between it and the site, one step at a
time (same harness page):

- ``+ precompiled stdlib``: ``stdLibURL`` = the stdlib zip compiled at vendor time;
- ``+ precompiled NumPy``: and the lock file naming the compiled NumPy wheel;
- site: the real lesson page's runtime (docs/javascripts/runtime/), which installs NumPy
  from its .tar.gz itself (no loadPackage: its extension modules load on first import),
  also installs the labs wheel, imports it and runs the page's lab once;
- site, no compression: the same with the server's gzip off.

For the site, also each step of its worker's start-up (the worker's marks: loader script,
loadPyodide, NumPy's archive, ``import numpy``, the labs wheel, ``import attention_labs.labs``,
then the idle warm-up after "ready") and when each download ended.

Each of those is timed from ``new Worker`` to "ready" (page load not included: it is the
same for every row), cold (a fresh browser context, so an empty HTTP and code cache, per run) and on
a repeat visit (the same context, page reloaded). Bytes are counted by the server for one
cold run.

Then both from navigation start, on a cross-origin isolated server as bench.py's lab rows:

- baseline: the built lesson-3 page without the site's scripts (main.js, the head's start
  script, its module preloads), plus a script that at DOMContentLoaded starts the
  baseline's worker above (official loader, ``loadPackage("numpy")``);
- site: the lesson-3 page as built, opened by an eager reader (bench.py's reader_visit:
  scroll to the lab, change a control at once): Python ready and the first recompute shown.

(The lab's first picture against the page's DOMContentLoaded, on every lesson:
bench_pictures.py.) A benchmark, not a test: it asserts nothing.

Its rows (``rows``, the contract of bench/contract.py) go into bench-results/REPORT.md
(bench_report.py).

Usage: python -m build_scripts.bench.bench_startup [--runs 5]
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from build_scripts.bench.bench import reader_visit  # noqa: E402
from build_scripts.bench.contract import Row, med, run_alone  # noqa: E402
from build_scripts.gates.browser import launch  # noqa: E402
from build_scripts.serve import make_server  # noqa: E402

LESSON = "lessons/03-attention-pattern/"
# The variants every ratio is taken against, and whose worker steps are reported.
BASELINE = "baseline: official loadPyodide + loadPackage(numpy)"
SITE = "site (lesson 3 runtime)"
# Timed from navigation start, not from new Worker (and the baseline each is taken against).
NAV_BASELINE = "from navigation, baseline: lesson 3 page + official loader at DOMContentLoaded"
NAV_SITE = "from navigation, site: lesson 3 page"
# Where the baseline's copy of the lesson page goes: as deep as lessons/NN/, so its
# relative links (../../assets/...) reach the site's files.
NAV_PAGE = "baseline/03-attention-pattern/"
# The site's scripts, taken out of the baseline's page: main.js, the head's start scripts,
# search hold and provide script (hooks/preload.py), the module preloads.
SITE_SCRIPTS = re.compile(
    r'<script src="[^"]*javascripts/main\.js" type="module"></script>'
    r'|<script type="module"(?: async)?>import \{ (?:runtime|provide) \}.*?</script>'
    r'|<link rel="modulepreload" href="[^"]*">'
    # hooks/preload.py's head scripts: the worker's data block, then start-worker.js and
    # search-hold.js inlined
    r'|<script type="application/json" id="attn-start">.*?</script>'
    r"|<script>(?:(?!</script>).)*?self\.attnStarted(?:(?!</script>).)*</script>"
    r'|<script data-hold="search">.*?</script>',
    re.S,
)
NAV_START = """<script>
document.addEventListener("DOMContentLoaded", () => {
  const w = new Worker("../../harness-worker.js");
  w.onmessage = (e) => { window.result = { ...e.data, ms: performance.now() }; };
  w.postMessage({ index: new URL("../../vendor/pyodide/", location.href).href });
});
</script>"""

HARNESS_HTML = """<!doctype html><meta charset="utf-8"><title>start-up bench</title>
<script>
const q = new URLSearchParams(location.search);
const index = new URL("vendor/pyodide/", location.href).href;
const t0 = performance.now();
const w = new Worker("harness-worker.js");
w.onmessage = (e) => { window.result = { ...e.data, ms: performance.now() - t0 }; };
w.postMessage({ index, stdlib: q.get("stdlib"), lock: q.get("lock") });
</script>"""

HARNESS_WORKER = """self.onmessage = async (e) => {
  const { index, stdlib, lock } = e.data;
  try {
    importScripts(index + "pyodide.js");
    const options = { indexURL: index };
    if (stdlib) options.stdLibURL = index + stdlib;
    if (lock) options.lockFileURL = index + lock;
    const py = await loadPyodide(options);
    await py.loadPackage("numpy");
    py.runPython("import numpy");
    self.postMessage({ ok: true });
  } catch (err) {
    self.postMessage({ ok: false, error: String(err) });
  }
};"""

SITE_JS = """() => new Promise((resolve) => {
  const rt = window.AttnLabs.runtime;
  rt.start();
  const done = () => resolve(rt.state === 'ready'
    ? { ok: true, ms: rt.timings.ready - rt.timings.start }
    : { ok: false, error: rt.error });
  if (rt.state === 'ready' || rt.state === 'failed') return done();
  rt.addEventListener('change', () => (rt.state === 'ready' || rt.state === 'failed') && done());
})"""

# The worker's steps (ms from the runtime's start), once its idle warm-up is done too.
PROFILE_JS = """async () => {
  const rt = window.AttnLabs.runtime;
  for (let i = 0; i < 600 && rt.timings.warm === undefined; i++)
    await new Promise((r) => setTimeout(r, 50));
  const t = rt.timings, rel = (list) => (list || []).map(([n, at]) => [n, at - t.start]);
  return { steps: rel(t.profile), after: rel(t.warmProfile),
           downloads: rel(t.downloads), warm: t.warm === undefined ? null : t.warm - t.start };
}"""


def harness_dir(site: Path) -> tempfile.TemporaryDirectory:
    """A folder with the harness page, the baseline's copy of the lesson page (NAV_PAGE)
    and the rest of the site (links: same files)."""
    tmp = tempfile.TemporaryDirectory(prefix="bench-startup-")
    d = Path(tmp.name)
    (d / "index.html").write_text(HARNESS_HTML, "utf-8")
    (d / "harness-worker.js").write_text(HARNESS_WORKER, "utf-8")
    for entry in site.iterdir():
        if not (d / entry.name).exists():
            (d / entry.name).symlink_to(entry.resolve(), target_is_directory=entry.is_dir())
    lesson = (site / LESSON / "index.html").read_text("utf-8")
    page = SITE_SCRIPTS.sub("", lesson).replace("</head>", NAV_START + "</head>", 1)
    marks = ("javascripts/main.js", "import {", "modulepreload", "new Worker(at(", "window.Worker")
    left = [m for m in marks if m in page]
    if left:
        raise RuntimeError(f"bench: the baseline's lesson page still has the site's {left}")
    (d / NAV_PAGE).mkdir(parents=True)
    (d / NAV_PAGE / "index.html").write_text(page, "utf-8")
    return tmp


def harness_once(page, url: str) -> dict:
    page.goto(url)
    page.wait_for_function("() => window.result", timeout=180_000)
    return page.evaluate("() => window.result")


def site_once(page, url: str) -> dict:
    page.goto(url)
    page.wait_for_selector(".attn-lab[data-status=initial]", timeout=60_000)  # configured
    out = page.evaluate(SITE_JS)
    if out.get("ok"):
        out["profile"] = page.evaluate(PROFILE_JS)
    return out


def site_nav_once(page, url: str) -> dict:
    """The lesson page opened by an eager reader (bench.py): Python ready (``ms``), the
    first recompute shown, the first picture and DOMContentLoaded, from navigation."""
    marks = reader_visit(page, url)
    return {
        "ok": marks.get("ready") is not None,
        "ms": marks.get("ready"),
        "first": marks.get("firstRecompute"),
        "initial": marks.get("initial"),
        "dcl": marks.get("dcl"),
        "start": marks.get("start"),
        "error": "no ready mark",
    }


def steps(profile: dict) -> list[tuple[str, float]]:
    """(step, ms) of one start-up: each mark's time since the one before it (the first
    since the runtime's start), then the idle work after ready."""
    out, at = [], 0.0
    for name, t in profile["steps"] + profile["after"]:
        out.append((name, t - at))
        at = t
    return out


def measure_once(browser, url: str, once, stats: dict) -> dict:
    """One cold visit in a fresh context (empty HTTP and code cache), then a repeat visit
    (the page reloaded in it): {cold, repeat (ms), bytes (cold, server side), extra}."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        page = context.new_page()
        stats.clear()
        first = once(page, url)
        if not first.get("ok"):
            raise RuntimeError(f"start-up failed at {url}: {first.get('error')}")
        sent = stats.get("bytes", 0)
        again = once(page, url)
        return {"cold": first["ms"], "repeat": again["ms"], "bytes": sent, "extra": first}
    finally:
        context.close()


def serve(directory: Path, stats: dict, gzip: bool = True, isolate: bool = False):
    httpd = make_server(directory, 0, site_url=None, isolate=isolate, gzip=gzip, stats=stats)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


def run(runs: int = 5) -> dict:
    """Every variant, interleaved (run 1 of each, then run 2 of each...) so that a busy
    machine slows them alike. Returns {variant: {cold: [ms], repeat: [ms], bytes, extra}}."""
    import json

    from playwright.sync_api import sync_playwright

    site = ROOT / "site"
    pre = json.loads((site / "vendor" / "manifest.json").read_text("utf-8"))["precompiled"]
    stdlib, lock = Path(pre["stdlib"]).name, Path(pre["lock_file"]).name
    tmp = harness_dir(site)
    servers, variants = [], {}
    try:
        for directory, gzip, isolate in (
            (Path(tmp.name), True, False),
            (site, True, False),
            (site, False, False),
            (Path(tmp.name), True, True),
        ):
            stats: dict = {}
            httpd, base = serve(directory, stats, gzip, isolate)
            servers.append((httpd, base, stats))
        (_, harness, h_stats), (_, lesson, l_stats), (_, plain, p_stats) = servers[:3]
        _, isolated, i_stats = servers[3]
        variants = {
            BASELINE: (harness, harness_once, h_stats),
            "+ precompiled stdlib": (f"{harness}?stdlib={stdlib}", harness_once, h_stats),
            "+ precompiled stdlib and NumPy": (
                f"{harness}?stdlib={stdlib}&lock={lock}",
                harness_once,
                h_stats,
            ),
            SITE: (lesson + LESSON, site_once, l_stats),
            "site, no compression": (plain + LESSON, site_once, p_stats),
            NAV_BASELINE: (isolated + NAV_PAGE, harness_once, i_stats),
            NAV_SITE: (isolated + LESSON, site_nav_once, i_stats),
        }
        results = {
            name: {"cold": [], "repeat": [], "bytes": None, "extra": []} for name in variants
        }
        with sync_playwright() as pw:
            browser = launch(pw)
            try:
                for _ in range(runs):
                    for name, (url, once, stats) in variants.items():
                        got = measure_once(browser, url, once, stats)
                        r = results[name]
                        r["cold"].append(got["cold"])
                        r["repeat"].append(got["repeat"])
                        r["extra"].append(got["extra"])
                        r["bytes"] = r["bytes"] if r["bytes"] is not None else got["bytes"]
            finally:
                browser.close()
    finally:
        for httpd, _, _ in servers:
            httpd.shutdown()
        tmp.cleanup()
    for name, r in results.items():
        print(name, summary(r), flush=True)
    return results


def summary(r: dict) -> str:
    return (
        f"cold {statistics.median(r['cold']) / 1e3:.2f} s, "
        f"repeat {statistics.median(r['repeat']) / 1e3:.2f} s, {r['bytes'] / 1e6:.2f} MB"
    )


def rows(args) -> list[Row]:
    """Python + NumPy ready, each variant against the official loader in the same run
    (``args.runs`` runs); the site's worker step by step."""
    results = run(args.runs)
    names = list(results)
    out = []
    for name in names:
        r = results[name]
        nav = name in (NAV_BASELINE, NAV_SITE)
        base = results[NAV_BASELINE if nav else BASELINE]
        b_cold, b_repeat = statistics.median(base["cold"]), statistics.median(base["repeat"])
        note = (
            "navigation start to ready, cross-origin isolated" if nav else "new Worker to ready"
        ) + f"; {args.runs} runs, fresh browser context each; Chromium"
        cold, repeat = statistics.median(r["cold"]), statistics.median(r["repeat"])
        ratio = "" if r is base else f"; {cold / b_cold:.2f}× baseline (target ≤ 0.5× for the site)"
        out.append(
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
        out.append(
            Row(
                f"start-up, {name}",
                "Python ready, repeat visit",
                med(r["repeat"], "s", 1e-3, 2),
                "page reloaded in the same context" + ratio,
            )
        )
        out.append(
            Row(
                f"start-up, {name}",
                "bytes on the wire (one cold run)",
                f"{r['bytes'] / 1e6:.2f} MB",
                "server side; the site's row includes the page itself (target < 8 MB)",
            )
        )
    out += nav_rows(results[NAV_SITE]["extra"], results[NAV_BASELINE]["cold"])
    site = results[SITE]
    out += startup_steps(site["extra"])
    return out


def nav_rows(extra: list[dict], baseline_ready: list[float]) -> list[Row]:
    """The site from navigation (cold runs): when its worker started, its first recompute
    shown against the baseline's Python ready (which has no lab to recompute: its lower
    bound), and its first picture against its DOMContentLoaded."""
    name = f"start-up, {NAV_SITE}"
    first = [e["first"] for e in extra]
    b_ready = statistics.median(baseline_ready)
    ratios = [e["initial"] / e["dcl"] for e in extra if e.get("initial") and e.get("dcl")]
    return [
        Row(
            name,
            "worker started (new Worker), cold",
            med([e["start"] for e in extra]),
            "navigation start to the runtime's start (hooks/preload.py: the head's script)",
        ),
        Row(
            name,
            "first recompute shown, cold",
            med(first, "s", 1e-3, 2),
            "navigation start to the reader's change drawn; "
            f"{statistics.median(first) / b_ready:.2f}× the baseline's Python ready",
        ),
        Row(
            name,
            "first picture (build's result), cold",
            med([e["initial"] for e in extra]),
            f"{statistics.median(ratios):.2f}× its DOMContentLoaded "
            f"({statistics.median([e['dcl'] for e in extra]):.0f} ms; target ≤ 1.0×)"
            if ratios
            else "",
        ),
    ]


def startup_steps(extra: list[dict]) -> list[Row]:
    """One row per step of the site's worker start-up (cold runs; marks in
    docs/javascripts/runtime/pyodide-worker.js), then when each download ended."""
    profiles = [e["profile"] for e in extra if e.get("profile")]
    if not profiles:
        return []
    per_step: dict[str, list[float]] = {}
    for profile in profiles:
        for name, ms in steps(profile):
            per_step.setdefault(name.split(" of the lab ")[0], []).append(ms)
    out = [
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
    out += [
        Row(
            "start-up, the site's worker, downloads",
            f"{name} downloaded",
            med(values, digits=0),
            "cold; from new Worker (Resource Timing responseEnd)",
        )
        for name, values in sorted(ends.items(), key=lambda kv: statistics.median(kv[1]))
    ]
    return out


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
