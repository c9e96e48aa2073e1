#!/usr/bin/env python3
"""The built site in headless Chromium, page by page: the gates a static build cannot check.

    python -m build_scripts.gates.check_site [--site site]
        [--budget build_scripts/gates/budget.json]
        [--page lessons/03-attention-pattern/ ...] [--no-lab]
        [--prefix /repo/ --site-url https://user.github.io/repo/]   # a `make publish` build

For every page of the built site (each ``index.html`` and ``404.html``), served by
build_scripts/serve.py on 127.0.0.1 with every other address unreachable:

* **offline / no external request**: the page loads with nothing requested from any other
  host, no file it asks for is missing (4xx/5xx) and no JavaScript error is thrown; on a
  page with a lab, the lab starts (Pyodide + NumPy + labs wheel, all from the site) and
  recomputes once;
* **accessibility**: axe-core (from npm, node_modules/axe-core) finds no serious or critical
  violation, in the light and the dark palette, with the labs' ``<details>`` expanded (and,
  in light, after the lab has started); every ``<canvas>`` (a heatmap) has a text
  alternative. The page is loaded once, in light, and switched live to dark with the
  palette toggle (Material's palette is CSS; the heatmaps redraw), then back;
* **performance budget** (build_scripts/gates/budget.json): the HTML+CSS+JS a page fetches before
  any lab starts, in bytes sent (gzip where the site has a ``.gz`` copy, as the server and
  most static hosts send it), and the Pyodide payload a lab fetches (uncompressed: what
  the reader's browser must hold).

Each problem is one line ``docs/<source> (page <url path>, <palette>): <what>: <what to do>``.
Exit status 1 if there is any. Needs `make build` (the site) and `npm ci` (axe-core).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

from build_scripts.gates.browser import launch  # noqa: E402
from build_scripts.serve import make_server  # noqa: E402

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
BUDGET = HERE / "budget.json"
LAB = ".attn-lab"  # a lab placeholder (build_scripts/hooks/lab.py)
FAILING_IMPACTS = ("serious", "critical")
# What a lab fetches to start: the worker, Pyodide + NumPy, the labs wheel.
PAYLOAD_PREFIXES = ("vendor/pyodide/", "vendor/labs/", "javascripts/runtime/pyodide-worker.js")
PAGE_TYPES = {".html": "html", ".css": "css", ".js": "js", ".mjs": "js"}
PYTHON_TIMEOUT_MS = 120_000  # cold Pyodide start on a busy 2-core machine
SETTLE_MS = 15_000  # most a page may keep the network busy after "load"

AXE_JS = """async (failing) => {
  const r = await axe.run(document, {resultTypes: ['violations']});
  return r.violations.filter((v) => failing.includes(v.impact)).map((v) => ({
    id: v.id, impact: v.impact, help: v.help, url: v.helpUrl,
    nodes: v.nodes.slice(0, 3).map((n) => ({target: n.target.join(' '),
      why: (n.any[0] || n.all[0] || n.none[0] || {}).message || ''})),
    count: v.nodes.length}));
}"""

# A canvas or an <svg> drawn as a picture needs a name (role="img" + aria-label/-labelledby)
# unless it is hidden from assistive technology.
CANVAS_JS = """() => Array.from(document.querySelectorAll('canvas, svg[role=img]'))
  .filter((c) => !c.closest('[aria-hidden=true]'))
  .filter((c) => c.getAttribute('role') !== 'img' || !((c.getAttribute('aria-label') || '').trim()
      || (c.getAttribute('aria-labelledby') || '').trim()))
  .map((c) => c.outerHTML.slice(0, 80))"""

OPEN_DETAILS_JS = f"""() => {{
  for (const d of document.querySelectorAll('{LAB} details')) d.open = true;
  return document.querySelectorAll('{LAB} details').length;
}}"""


@dataclass
class PageBytes:
    """Bytes one page fetched: ``initial`` by kind (html/css/js/other) before a lab starts,
    as sent and uncompressed, and ``payload`` (uncompressed) fetched to start its lab."""

    page: str
    sent: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict)
    payload: int | None = None
    # bytes sent, before a lab starts, of the site's own code by part: the folder under
    # javascripts/ ("main" for main.js), "editor" for the CodeMirror bundle
    code: dict = field(default_factory=dict)

    def heavy_code_sent(self) -> int:
        """Bytes of explorer, cells and editor code the page fetched before a lab starts
        (a page without a map, cell or exercise should fetch none)."""
        return sum(self.code.get(k, 0) for k in HEAVY_CODE)

    @property
    def initial_sent(self) -> int:
        return sum(self.sent.get(k, 0) for k in ("html", "css", "js"))

    @property
    def initial_raw(self) -> int:
        return sum(self.raw.get(k, 0) for k in ("html", "css", "js"))


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    bytes: list[PageBytes] = field(default_factory=list)
    seconds: float = 0.0


# --------------------------------------------------------------------------- pages


def site_pages(site: Path) -> list[str]:
    """URL paths of every built page: "" (home), "lessons/x/", ..., "404.html"."""
    pages = []
    for index in sorted(site.rglob("index.html")):
        rel = index.parent.relative_to(site).as_posix()
        if rel.split("/")[0] in ("vendor", "assets", "search"):
            continue
        pages.append("" if rel == "." else rel + "/")
    if (site / "404.html").is_file():
        pages.append("404.html")
    return pages


def source_of(page: str, docs: Path) -> str:
    """The Markdown (or notebook) file a page was built from, as ``docs/...``, if found."""
    stem = page.rstrip("/") or "index"
    if page.endswith(".html"):
        stem = page[: -len(".html")]
    for candidate in (f"{stem}.md", f"{stem}/index.md", f"{stem}.ipynb", f"{stem}.py"):
        if (docs / candidate).is_file():
            return f"docs/{candidate}"
    return f"site/{page or 'index.html'}"


def site_file(site: Path, url_path: str) -> Path | None:
    rel = unquote(url_path).lstrip("/")
    path = site / rel
    if rel == "" or rel.endswith("/") or path.is_dir():
        path = path / "index.html"
    return path if path.is_file() else None


HEAVY_CODE = ("explorer", "cells", "editor")


def code_part(rel: str) -> str | None:
    """The part of the site's code a site-relative path belongs to, or None."""
    if rel.startswith("vendor/codemirror/"):
        return "editor"
    if rel.startswith("javascripts/"):
        sub = rel.removeprefix("javascripts/")
        return sub.split("/", 1)[0] if "/" in sub else sub.removesuffix(".js")
    return None


def site_path(base: str, url: str) -> str:
    """The site-relative path of ``url``, a URL under ``base`` (which may end in a prefix)."""
    return urlsplit(url).path[len(urlsplit(base).path) :].lstrip("/")


def count_bytes(site: Path, base: str, urls: list[str], record: PageBytes) -> None:
    """Fill ``record`` from the local URLs a page requested (each file counted once)."""
    payload = 0
    for url in dict.fromkeys(urls):
        if not url.startswith(base):
            continue
        rel = site_path(base, url)
        path = site_file(site, rel)
        if path is None:
            continue
        raw = path.stat().st_size
        gz = path.with_name(path.name + ".gz")
        sent = gz.stat().st_size if gz.is_file() else raw
        if rel.startswith(PAYLOAD_PREFIXES):
            payload += raw
            continue
        kind = PAGE_TYPES.get(path.suffix, "other")
        record.sent[kind] = record.sent.get(kind, 0) + sent
        if part := code_part(rel):
            record.code[part] = record.code.get(part, 0) + sent
        record.raw[kind] = record.raw.get(kind, 0) + raw
    if payload:
        record.payload = payload


# --------------------------------------------------------------------------- static scan

# Elements and attributes that make a browser fetch (an <a href> is only a link).
FETCHING = {
    "script": ("src",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "source": ("src", "srcset"),
    "video": ("src", "poster"),
    "audio": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "track": ("src",),
    "input": ("src",),
}
LINK_RELS = {"stylesheet", "preload", "prefetch", "preconnect", "dns-prefetch", "modulepreload",
             "icon", "manifest"}  # fmt: skip
REMOTE = re.compile(r"^(?:https?:)?//", re.IGNORECASE)
CSS_REMOTE = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])((?:https?:)?//[^'")\s]+)""", re.I)


class _Fetches(HTMLParser):
    """The remote URLs a page's HTML would make a browser fetch, found without running it
    (so a lazy image below the fold counts too)."""

    def __init__(self):
        super().__init__()
        self.remote: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        names = FETCHING.get(tag, ())
        if tag == "link" and LINK_RELS & set((a.get("rel") or "").lower().split()):
            names = ("href",)
        for name in names:
            for url in re.split(r",\s*", a.get(name) or ""):
                url = url.strip().split(" ")[0]
                if REMOTE.match(url):
                    self.remote.append(url)


def static_remote_fetches(site: Path, page_path: str, css_urls: list[str]) -> list[str]:
    """Remote URLs in the page's HTML and in the local stylesheets it loaded."""
    found: list[str] = []
    html = site_file(site, page_path)
    if html is not None:
        parser = _Fetches()
        parser.feed(html.read_text("utf-8", errors="replace"))
        found += parser.remote
    for rel in css_urls:
        css = site_file(site, rel)
        if css is not None:
            found += CSS_REMOTE.findall(css.read_text("utf-8", errors="replace"))
    return found


# --------------------------------------------------------------------------- budget


def load_budget(path: Path = BUDGET) -> dict:
    return json.loads(Path(path).read_text("utf-8"))


def budget_for(budget: dict, page: str) -> dict:
    return {**budget["default"], **budget.get("pages", {}).get(page, {})}


def budget_problems(records: list[PageBytes], budget: dict, where) -> list[str]:
    """A message with the numbers for every page over its budget; ``where(page)`` names it."""
    out = []
    for r in records:
        limits = budget_for(budget, r.page)
        initial_max = limits["initial_kb"] * 1000
        if r.initial_sent > initial_max:
            parts = ", ".join(
                f"{k} {r.sent.get(k, 0) / 1000:.0f} kB" for k in ("html", "css", "js")
            )
            out.append(
                f"{where(r.page)}: {r.initial_sent / 1000:.0f} kB of HTML+CSS+JS before any lab "
                f"starts ({parts}), over the budget of {limits['initial_kb']} kB: make the page "
                "or what it loads smaller, or raise its entry in build_scripts/gates/budget.json "
                "(with the reason) if the bytes are worth it"
            )
        payload_max = limits["lab_payload_mb"] * 1e6
        if r.payload is not None and r.payload > payload_max:
            out.append(
                f"{where(r.page)}: its lab fetches {r.payload / 1e6:.1f} MB of Pyodide, packages "
                f"and labs wheel, over the budget of {limits['lab_payload_mb']} MB: load fewer "
                "packages, or raise lab_payload_mb in build_scripts/gates/budget.json with the "
                "reason"
            )
    return out


def budget_table(records: list[PageBytes], budget: dict) -> str:
    lines = [
        "| page | HTML+CSS+JS sent | (uncompressed) | other files | budget | lab payload "
        "| budget |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in records:
        limits = budget_for(budget, r.page)
        payload = "–" if r.payload is None else f"{r.payload / 1e6:.1f} MB"
        lines.append(
            f"| /{r.page} | {r.initial_sent / 1000:.0f} kB | {r.initial_raw / 1000:.0f} kB | "
            f"{r.sent.get('other', 0) / 1000:.0f} kB | {limits['initial_kb']} kB | {payload} | "
            f"{limits['lab_payload_mb']} MB |"
        )
    return "\n".join(lines)


# --------------------------------------------------------------------------- browser


# Two frames (a scroll's or a click's effects have started their CSS transitions), then
# every transition or animation with an end has ended, then two more frames. axe reads the
# colours as they are: mid-fade, Material's header title (faded in when the page scrolls
# to a lab) fails the contrast rule.
STILL_JS = """async () => {
  const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  await frames();
  const ending = document.getAnimations().filter(
    (a) => a.playState === 'running' && Number.isFinite(a.effect?.getComputedTiming().endTime));
  await Promise.all(ending.map((a) => a.finished.catch(() => null)));
  await frames();
}"""


def _axe_problems(page, where: str) -> list[str]:
    page.evaluate(STILL_JS)
    if not page.evaluate("() => typeof window.axe === 'object'"):  # once per document
        page.add_script_tag(path=str(AXE))
    out = []
    for v in page.evaluate(AXE_JS, list(FAILING_IMPACTS)):
        nodes = "; ".join(
            f"{n['target']}" + (f" ({n['why']})" if n["why"] else "") for n in v["nodes"]
        )
        more = f" and {v['count'] - 3} more" if v["count"] > 3 else ""
        out.append(
            f"{where}: axe {v['impact']} '{v['id']}': {v['help']}, at {nodes}{more}: "
            f"fix the markup or CSS, see {v['url']}"
        )
    for html in page.evaluate(CANVAS_JS):
        out.append(
            f'{where}: {html}... has no text alternative: give it role="img" and an '
            "aria-label that says what it shows, and put its numbers in text (e.g. a table)"
        )
    return out


# Python's start-up has failed: the runtime ended its worker, and the requests that worker
# had open (the wasm it was compiling, a file whose error it had read) are never reported
# finished, so the network never looks idle.
FAILED_JS = "() => window.AttnLabs?.runtime?.state === 'failed'"
SETTLE_STEP_MS = 250


def _settle(page) -> None:
    """Wait until the network is idle (500 ms without a request), at most ``SETTLE_MS``, or
    until the page's Python has failed to start (``FAILED_JS``)."""
    deadline = time.monotonic() + SETTLE_MS / 1000
    while time.monotonic() < deadline:
        try:
            page.wait_for_load_state("networkidle", timeout=SETTLE_STEP_MS)
            return
        except Exception:  # a page that keeps polling is not an error here
            pass
        if page.evaluate(FAILED_JS):
            return


SCHEME_OF = {"light": "default", "dark": "slate"}  # prefers-color-scheme -> data-md-color-scheme
# Material 9 does not follow a change of prefers-color-scheme with the page open (it keeps
# the palette chosen at load), but its toggle switches live: pick the palette whose media
# query now matches, as it does on a first visit, and switch to it as the toggle does.
PICK_PALETTE_JS = """() => {
  const input = Array.from(document.querySelectorAll('input[data-md-color-media]'))
    .find((i) => matchMedia(i.dataset.mdColorMedia).matches);
  if (input && !input.checked) input.click();
}"""
# The palette's switch is done (Material drops this attribute a frame after), then one more
# frame so that observers (the heatmap's redraw) have run.
SWITCHED_JS = """(scheme) => document.body.dataset.mdColorScheme === scheme
  && !document.body.hasAttribute('data-md-color-switching')"""
NEXT_FRAME_JS = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"
SWITCH_TIMEOUT_MS = 30_000  # only a site whose palette does not follow the media query waits


def _switch_palette(page, scheme: str) -> None:
    """Switch the open page to ``scheme`` as a reader would: the system's preference and the
    palette toggle (Material's palette is CSS on ``body[data-md-color-scheme]``; the heatmaps
    redraw on its change), to the state a fresh load in ``scheme`` has."""
    page.emulate_media(color_scheme=scheme)
    page.evaluate(PICK_PALETTE_JS)
    try:
        page.wait_for_function(SWITCHED_JS, arg=SCHEME_OF[scheme], timeout=SWITCH_TIMEOUT_MS)
    except Exception:  # the palette check that follows says what is wrong
        pass
    page.evaluate(NEXT_FRAME_JS)


def _first_palette(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each item once, in order, with the palette it first came in."""
    first: dict[str, str] = {}
    for item, scheme in items:
        first.setdefault(item, scheme)
    return list(first.items())


def check_page(
    browser,
    base: str,
    site: Path,
    page_path: str,
    where,
    schemes: tuple[str, ...] = ("light", "dark"),
    start_lab: bool = True,
) -> tuple[list[str], PageBytes | None]:
    """Load one page in a fresh context in the first palette of ``schemes``, run axe in it,
    switch live to each other palette and run axe there; then, in light, start its lab and
    run axe again. Returns its problems and, when light is first, its bytes."""
    problems: list[str] = []

    def name_with(scheme: str, *notes: str) -> str:
        return where(page_path, scheme, *notes)

    context = browser.new_context(viewport={"width": 1200, "height": 900}, color_scheme=schemes[0])
    requests: list[str] = []
    external: list[str] = []

    def on_request(request):
        url = request.url
        requests.append(url)
        if not url.startswith((base, "data:", "blob:")):
            external.append(url)

    def route(route):
        url = route.request.url
        if url.startswith((base, "data:", "blob:")):
            route.continue_()
        else:
            route.abort("blockedbyclient")

    context.on("request", on_request)
    context.route("**/*", route)
    # a missing file or an error is named with the palette the page was in when it came
    scheme_now = [schemes[0]]
    failed: list[tuple[str, str]] = []
    context.on(
        "response",
        lambda r: (
            failed.append((f"{r.status} {r.url}", scheme_now[0]))
            if r.status >= 400 and r.url.startswith(base)
            else None
        ),
    )
    errors: list[tuple[str, str]] = []
    record = None
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append((str(e).splitlines()[0], scheme_now[0])))
        page.goto(base + page_path, wait_until="load")
        _settle(page)
        record = PageBytes(page_path) if schemes[0] == "light" else None
        if record is not None:
            count_bytes(site, base, requests, record)
            record.payload = None  # only what the started lab fetches counts (below)
        expanded = page.evaluate(OPEN_DETAILS_JS)
        for i, scheme in enumerate(schemes):
            if i:
                _switch_palette(page, scheme)
                scheme_now[0] = scheme
            name = name_with(scheme)
            palette = page.evaluate("() => document.body.dataset.mdColorScheme || ''")
            if palette != SCHEME_OF[scheme]:
                problems.append(
                    f"{name}: the {scheme} palette did not apply (data-md-color-scheme is "
                    f"{palette!r}): keep both palettes with their media queries in mkdocs.yml"
                )
            problems += _axe_problems(
                page, name_with(scheme, "labs expanded") if expanded else name
            )
        if start_lab and "light" in schemes and page.locator(LAB).count():
            if scheme_now[0] != "light":
                _switch_palette(page, "light")
                scheme_now[0] = "light"
            problems += _start_lab(page, name_with("light"))
            page.evaluate(OPEN_DETAILS_JS)
            problems += _axe_problems(page, name_with("light", "lab started"))
            if record is not None:
                count_bytes(site, base, requests, scratch := PageBytes(page_path))
                record.payload = scratch.payload or 0
    finally:
        context.close()
    name = name_with(schemes[0])  # the palette the page was loaded in
    css = [site_path(base, u) for u in requests if u.startswith(base) and u.endswith(".css")]
    for url in static_remote_fetches(site, page_path, css):
        if url not in external:
            external.append(url)
    for url in dict.fromkeys(external):
        problems.append(
            f"{name}: asks for {url}: a page may load nothing from another host (it must work "
            "offline and send nothing anywhere): vendor the file "
            "(build_scripts/vendor/vendor.py) or make it a plain link"
        )
    for item, scheme in _first_palette(failed):
        problems.append(
            f"{name_with(scheme)}: {item}: a file the page asks for is missing from the built "
            "site: fix the path, or the build step that should make it"
        )
    for err, scheme in _first_palette(errors):
        problems.append(
            f"{name_with(scheme)}: JavaScript error: {err}: fix the script (see the browser "
            "console)"
        )
    return problems, record


def _start_lab(page, name: str) -> list[str]:
    """Scroll to the first lab, wait for Python, recompute once; problems if it fails."""
    lab = page.locator(LAB).first
    lab.scroll_into_view_if_needed()
    try:
        page.wait_for_selector(
            f"{LAB}[data-runtime=ready], {LAB}[data-runtime=failed]", timeout=PYTHON_TIMEOUT_MS
        )
        if lab.get_attribute("data-runtime") == "failed":
            raise RuntimeError("Python failed to start")
        page.evaluate(f"() => document.querySelector('{LAB}').attnLab.update({{}})")
        page.wait_for_function(
            f"() => Number(document.querySelector('{LAB}').dataset.runs || 0) >= 1",
            timeout=PYTHON_TIMEOUT_MS,
        )
    except Exception:
        status = page.evaluate(
            f"() => document.querySelector('{LAB} .attn-lab__status')?.innerText || ''"
        )
        status = " ".join(status.split())
        return [
            f"{name}: the lab did not start from the local site with the network blocked "
            f"(the lab says: {status!r}): check docs/vendor (make vendor) and the worker"
        ]
    return []


def check_site(
    site: Path,
    browser,
    pages: list[str] | None = None,
    schemes: tuple[str, ...] = ("light", "dark"),
    start_labs: bool = True,
    budget: dict | None = None,
    docs: Path = ROOT / "docs",
    site_url: str | None = None,
    prefix: str = "/",
) -> Report:
    """Run every browser gate on ``pages`` (default: all) of the built ``site``, served
    under the URL path ``prefix`` ("/repo/": as a project site on GitHub Pages is)."""
    if not AXE.is_file():
        raise SystemExit(f"check_site: {AXE} is missing: run `npm ci` (make test does it)")
    started = time.monotonic()
    budget = budget if budget is not None else load_budget()
    pages = site_pages(site) if pages is None else pages
    httpd = make_server(site, 0, site_url=site_url, prefix=prefix)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}{prefix}"
    report = Report()

    def where(page, *notes):
        return f"{source_of(page, docs)} (page /{page}" + "".join(f", {n}" for n in notes) + ")"

    try:
        for page_path in pages:
            problems, record = check_page(
                browser, base, site, page_path, where, schemes, start_labs
            )
            report.problems += problems
            if record is not None:
                report.bytes.append(record)
    finally:
        httpd.shutdown()
    report.problems += budget_problems(report.bytes, budget, where)
    report.seconds = time.monotonic() - started
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default=str(ROOT / "site"), help="the built site")
    parser.add_argument("--budget", default=str(BUDGET), help="the budget file")
    parser.add_argument("--page", action="append", help="only this page (URL path); repeatable")
    parser.add_argument("--no-lab", action="store_true", help="do not start the labs")
    parser.add_argument(
        "--prefix", default="/", help="serve the site under this path, e.g. /repo/ (make publish)"
    )
    parser.add_argument(
        "--site-url", default=None, help="the build's site_url (default: mkdocs.yml's)"
    )
    args = parser.parse_args(argv)
    site = Path(args.site)
    if not (site / "index.html").is_file():
        print(f"check_site: {site}/index.html not found: run `make build`", file=sys.stderr)
        return 1
    import yaml
    from playwright.sync_api import sync_playwright

    site_url = args.site_url or yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8")).get(
        "site_url"
    )
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            report = check_site(
                site,
                browser,
                args.page,
                start_labs=not args.no_lab,
                budget=load_budget(Path(args.budget)),
                site_url=site_url,
                prefix=args.prefix,
            )
        finally:
            browser.close()
    print(budget_table(report.bytes, load_budget(Path(args.budget))))
    for problem in report.problems:
        print(problem, file=sys.stderr)
    n = len(report.problems)
    print(f"check_site: {len(report.bytes)} pages, {n} problem(s), {report.seconds:.0f} s")
    return 1 if n else 0


if __name__ == "__main__":
    sys.exit(main())
