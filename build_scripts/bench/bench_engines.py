"""`make bench`, other engines: how soon Python + NumPy are ready in Firefox and WebKit
(Selenium, build_scripts/gates/engines.py), each against its own baseline in the same run.

Baseline: the plain official loader, as a peer site would start it: a classic worker that
runs ``loadPyodide({indexURL})`` then ``loadPackage("numpy")`` and ``import numpy`` on the
official vendored files (``vendor/pyodide/``: official stdlib zip, lock and NumPy wheel),
served by the same server as the site (build_scripts/serve.py, precompressed gzip).
Site: the lesson page's own runtime (docs/javascripts/runtime/), which also installs the
labs wheel and runs the page's lab once.

Both are timed from ``new Worker`` to ready (the page's own load is left out: it is not
the same page). Cold: a new browser with an empty profile per run; repeat visit: the page
reloaded in that browser (HTTP cache warm). Baseline and site alternate run by run, so a
busy machine slows both alike.
WebKit runs without accelerated compositing (build_scripts/gates/engines.py, ``WEBKIT_ENV``):
on this GPU-less display its compositor's software OpenGL took a core from the site's worker
for seconds on every load of a lesson page, and nothing from the baseline's blank page.

SmolLM2-135M token by token (the explorer's "Your own sentence", model SmolLM2), one new
browser per engine on a cross-origin isolated server, with bench_smollm2's own JavaScript
and Python: the first Run cold (the 20-token prompt from Run to the maps drawn: download,
Python's start, load and dequantise, prefill, drawing) and again after a reload (files from
the Cache API); then, in the page's worker, prefill of those 20 tokens and decode tokens/s
at 20 and 100 tokens of context (3 repeats each), and the worker's WebAssembly memory.
Chromium's and CPython's numbers for the same code are bench_smollm2's rows.

A benchmark, not a test: it asserts nothing.

Usage: python -m build_scripts.bench.bench_engines [--runs 3] [--engines firefox,webkit]
(at most 3 runs per engine and loader: each is a browser start)
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

from build_scripts.bench import bench_smollm2  # noqa: E402
from build_scripts.bench.contract import Row, med, parser, table  # noqa: E402
from build_scripts.gates import engines  # noqa: E402
from build_scripts.serve import make_server  # noqa: E402

LESSON = "lessons/03-attention-pattern/"
HARNESS = "bench-engines/"
TIMEOUT_S = 240

HARNESS_HTML = """<!doctype html><meta charset="utf-8"><title>official loader</title>
<script>
const index = new URL("../vendor/pyodide/", location.href).href;
const t0 = performance.now();
const w = new Worker("worker.js");
w.onmessage = (e) => { window.result = { ...e.data, ms: performance.now() - t0 }; };
w.postMessage({ index });
</script>"""

HARNESS_WORKER = """self.onmessage = async (e) => {
  try {
    importScripts(e.data.index + "pyodide.js");
    const py = await loadPyodide({ indexURL: e.data.index });
    await py.loadPackage("numpy");
    py.runPython("import numpy");
    self.postMessage({ ok: true });
  } catch (err) {
    self.postMessage({ ok: false, error: String(err) });
  }
};"""

# The lesson's first lab starts Python once it is near the viewport: bring it there.
SITE_JS = """const lab = document.querySelector('.attn-lab[data-status]');
  if (!lab) return null;
  lab.scrollIntoView({block: 'center'});
  const rt = window.AttnLabs.runtime;
  if (rt.state === 'failed') return {ok: false, error: rt.error};
  if (rt.state !== 'ready') return null;
  return {ok: true, ms: rt.timings.ready - rt.timings.start};"""


def _poll(driver, script: str) -> dict:
    end = time.monotonic() + TIMEOUT_S
    while time.monotonic() < end:
        out = driver.execute_script(script)
        if out:
            if not out.get("ok"):
                raise RuntimeError(f"Python did not start: {out.get('error')}")
            return out
        time.sleep(0.05)
    raise RuntimeError(f"Python not ready after {TIMEOUT_S} s")


def _once(driver, url: str, site: bool) -> float:
    driver.get(url)
    return _poll(driver, SITE_JS if site else "return window.result || null")["ms"]


def _served(site: Path, stats: dict):
    """A folder of links to site/'s entries plus the harness, and a server for it."""
    tmp = tempfile.TemporaryDirectory(prefix="bench-engines-")
    d = Path(tmp.name)
    for entry in site.iterdir():
        (d / entry.name).symlink_to(entry.resolve(), target_is_directory=entry.is_dir())
    (d / HARNESS).mkdir()
    (d / HARNESS / "index.html").write_text(HARNESS_HTML, "utf-8")
    (d / HARNESS / "worker.js").write_text(HARNESS_WORKER, "utf-8")
    httpd = make_server(d, 0, site_url=None, stats=stats)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return tmp, httpd, f"http://127.0.0.1:{httpd.server_address[1]}/"


def run(runs: int = 3, names=engines.ENGINES) -> dict:
    """{engine: {"version", "baseline": {"cold", "repeat"}, "site": {...}}} in ms."""
    stats: dict = {}
    tmp, httpd, base = _served(ROOT / "site", stats)
    results: dict = {}
    try:
        for name in names:
            out = {"baseline": {"cold": [], "repeat": []}, "site": {"cold": [], "repeat": []}}
            for _ in range(runs):
                for kind, url in (("baseline", base + HARNESS), ("site", base + LESSON)):
                    driver = engines.launch(name)
                    try:
                        driver.set_window_size(1200, 900)
                        out["version"] = engines.version(driver)
                        out[kind]["cold"].append(_once(driver, url, kind == "site"))
                        out[kind]["repeat"].append(_once(driver, url, kind == "site"))
                    finally:
                        driver.quit()
            results[name] = out
            print(f"bench_engines: {name}: {json.dumps(summary(out))}", flush=True)
    finally:
        httpd.shutdown()
        tmp.cleanup()
    return results


# SmolLM2: bench_smollm2's JavaScript (an async arrow function of one argument) run through
# WebDriver's asynchronous script: its value, or {"error": ...} when it throws.
ASYNC = """const done = arguments[arguments.length - 1];
  Promise.resolve().then(() => (%s)(arguments[0])).then(done, (e) => done({error: String(e)}));"""
SMOLLM2_CONTEXTS = (20, 100)
SMOLLM2_REPEATS = 3
SMOLLM2_TIMEOUT_S = 600  # a cold Run in WebKit: 97.8 MB downloaded and dequantised
# bench_smollm2.CELL_JS with the page's own runtime (window.AttnLabs, main.js): a module
# imported from a WebDriver script in Firefox is a second instance, not the page's, and
# that one was never configured (its Python cannot start).
CELL_JS = """async (code) => {
  const { runtime } = window.AttnLabs;
  const streamed = [];
  const r = await runtime.runCell('explorer', code, 'bench', {
    onOutput: (items) => streamed.push(...items),
  });
  if (r.error) throw new Error(JSON.stringify(r.error));
  return [...streamed, ...r.outputs].filter((o) => o.type === 'stream').map((o) => o.text).join('');
}"""
PANEL_READY = """const m = document.querySelector('.attn-map');
  return !!(m && m.dataset.state === 'ready' && m.attnMap && m.attnMap.ownPanel)"""


def _async(driver, script: str, arg):
    out = driver.execute_async_script(ASYNC % script, arg)
    if isinstance(out, dict) and "error" in out:
        raise RuntimeError(out["error"])
    return out


def _smollm2_first_run(driver, url: str) -> dict:
    """Load the explorer, then its panel's Run on bench_smollm2's prompt, timed in the page."""
    driver.get(url)
    end = time.monotonic() + TIMEOUT_S
    while not driver.execute_script(PANEL_READY):
        if time.monotonic() > end:
            raise RuntimeError(f"the explorer not ready after {TIMEOUT_S} s")
        time.sleep(0.1)
    return _async(driver, bench_smollm2.FIRST_RUN_JS, bench_smollm2.PROMPT)


def smollm2(names=engines.ENGINES, repeats: int = SMOLLM2_REPEATS) -> dict:
    """{engine: {"version", "first", "cached", "prompt_tokens", "prefill_ms", "decode_ms",
    "memory_bytes"}} (ms, bytes), or {engine: {"version", "error"}} where it failed."""
    server = make_server(ROOT / "site", 0, isolate=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/explorer/"
    code = bench_smollm2.worker_code(repeats, SMOLLM2_CONTEXTS)
    results: dict = {}
    try:
        for name in names:
            driver = engines.launch(name)
            out = {"version": engines.version(driver)}
            try:
                driver.set_window_size(1200, 900)
                driver.set_script_timeout(SMOLLM2_TIMEOUT_S)
                out["first"] = _smollm2_first_run(driver, url)
                out.update(json.loads(_async(driver, CELL_JS, code).strip()))
                out["cached"] = _smollm2_first_run(driver, url)
            except Exception as err:  # a benchmark reports, it does not stop the others
                out["error"] = f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"
            finally:
                driver.quit()
            results[name] = out
            print(f"bench_engines: SmolLM2 in {name}: {json.dumps(out)[:400]}", flush=True)
    finally:
        server.shutdown()
    return results


def smollm2_rows(results: dict) -> list[Row]:
    found = []
    for out in results.values():
        name = f"SmolLM2-135M (token by token) in {out['version']}"
        if "first" not in out or "prefill_ms" not in out:
            found.append(Row(name, "first Run", "–", f"did not run: {out.get('error')}"))
            continue
        first, cached = out["first"], out.get("cached")
        again = f"{cached['wall_ms'] / 1000:.1f} s" if cached else f"– ({out.get('error')})"
        found += [
            Row(name, "first Run, cold (download, Python, load, prefill, maps)",
                f"{first['wall_ms'] / 1000:.1f} s",
                f"new browser, empty profile, local server, {first['seq_len']} tokens; load and "
                f"dequantise {first['load_ms'] / 1000:.1f} s (worker's clock); after a reload, "
                f"files from the Cache API: {again}"),
            Row(name, f"prefill, {out['prompt_tokens']} tokens", med(out["prefill_ms"], digits=0),
                f"the page's worker, {len(out['prefill_ms'])} repeats (bench_smollm2's code)"),
        ]  # fmt: skip
        for n in SMOLLM2_CONTEXTS:
            ms = out["decode_ms"][str(n)]
            found.append(
                Row(name, f"decode at {n} tokens of context",
                    f"{1000 / statistics.median(ms):.1f} tokens/s ({med(ms, digits=0)} a token)",
                    "one token through 30 layers and the tied head, with the KV cache")
            )  # fmt: skip
        found.append(
            Row(name, "worker memory (WebAssembly heap, peak)",
                f"{out['memory_bytes'] / 1e9:.2f} GB", "Pyodide's memory after all of the above")
        )  # fmt: skip
    return found


def summary(out: dict) -> dict:
    return {
        kind: {k: round(statistics.median(v)) for k, v in out[kind].items()}
        for kind in ("baseline", "site")
    }


def rows(args) -> list[Row]:
    """Per engine (``args.engines``, default all), Python ready cold and on a repeat visit,
    the baseline's and the site's, with the site's ratio to its own engine's baseline; then
    SmolLM2 token by token in each engine."""
    if not (ROOT / "site" / "index.html").is_file():
        sys.exit("bench_engines: site/ is not built: run `make build`")
    if not (ROOT / "site" / "vendor" / "smollm2" / "smollm2.json").is_file():
        sys.exit("bench_engines: site/vendor/smollm2/ is missing: run `make build`")
    names = getattr(args, "engines", None) or engines.ENGINES
    results = run(min(args.runs, 3), names)
    found = []
    for out in results.values():
        name = f"start-up in {out['version']}"
        n = len(out["site"]["cold"])
        for when, how in (
            ("cold", f"new browser, empty profile, {n} run{'s' if n != 1 else ''}"),
            ("repeat", "page reloaded, HTTP cache warm"),
        ):
            base = statistics.median(out["baseline"][when])
            site = statistics.median(out["site"][when])
            label = "cold" if when == "cold" else "repeat visit"
            found += [
                Row(
                    name,
                    f"Python ready, {label}: official loader (baseline)",
                    med(out["baseline"][when], "s", 1e-3, 2),
                    f"new Worker to NumPy imported; {how}",
                ),
                Row(
                    name,
                    f"Python ready, {label}: the site",
                    med(out["site"][when], "s", 1e-3, 2),
                    f"{site / base:.2f}× its baseline (same run); new Worker to ready",
                ),
            ]
    return found + smollm2_rows(smollm2(names))


def main(argv=None) -> int:
    options = parser(__doc__.splitlines()[0])
    options.add_argument("--engines", default=",".join(engines.ENGINES))
    args = options.parse_args(argv)
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    print("\n".join(table(rows(args))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
