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
busy machine slows both alike. A benchmark, not a test: it asserts nothing.

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


def summary(out: dict) -> dict:
    return {
        kind: {k: round(statistics.median(v)) for k, v in out[kind].items()}
        for kind in ("baseline", "site")
    }


def rows(args) -> list[Row]:
    """Per engine (``args.engines``, default all), Python ready cold and on a repeat visit,
    the baseline's and the site's, with the site's ratio to its own engine's baseline."""
    if not (ROOT / "site" / "index.html").is_file():
        sys.exit("bench_engines: site/ is not built: run `make build`")
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
    return found


def main(argv=None) -> int:
    options = parser(__doc__.splitlines()[0])
    options.add_argument("--engines", default=",".join(engines.ENGINES))
    args = options.parse_args(argv)
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    print("\n".join(table(rows(args))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
