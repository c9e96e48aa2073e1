"""The site in Firefox and WebKit (Chromium is covered by the Playwright tests): Debian's
firefox-esr and WebKitGTK driven by Selenium (build_scripts/gates/engines.py), real
Pyodide and NumPy, the built site on one cross-origin isolated local server (as
`make serve` serves it).

In each engine: every page loads without a JavaScript error, a lab recomputes in Python
equal to CPython, a cell runs and Stop works (KeyboardInterrupt where the engine gives an
isolated page shared memory, else the restart path), exercises check, the explorer
draws its grid and opens a head, and its own sentence with SmolLM2-135M reads a short
prompt (97.8 MB of weights downloaded and dequantised) and predicts CPython's next token.
One browser per engine for the whole module; the lesson page (and so Python) is loaded
once per engine and shared by the tests that use it.

JavaScript errors: WebDriver has no console API common to both engines (BiDi's log
events are Firefox-only here), so the test server adds a few lines at the top of every
HTML page it serves, before any of the site's scripts: they record uncaught errors,
unhandled promise rejections and resources that failed to load in ``window.__engineErrors``,
which each test reads. The window survives Material's instant navigation, so the
collector does too.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from attention_labs.labs import run_lab
from helpers import ROOT, SITE

from build_scripts.gates import engines
from build_scripts.hooks import exercise
from build_scripts.serve import make_server

pytestmark = pytest.mark.slow  # Firefox and WebKit start and run every page

LESSON = "lessons/03-attention-pattern/"
LAB = ".attn-lab[data-lab=attention_pattern]"
CELL = ".attn-cell"
PYTHON_TIMEOUT_S = 240  # a cold Pyodide start in WebKit on a busy 2-core machine
INDEX = json.loads((ROOT / "docs/assets/attention/index.json").read_text("utf-8"))
MODEL = INDEX["models"][0]
EXERCISES = {spec["id"]: (where, spec) for where, spec in exercise.all_exercises(ROOT / "docs")}

COLLECTOR = b"""<script>(() => {
  const errors = (window.__engineErrors = []);
  addEventListener("error", (e) => {
    // Not a script error: the browser's note that a resize was left to the next frame
    // (WebKit reports it when Material's and a chart's observers resize in one frame).
    if (!e.error && /^ResizeObserver loop/.test(e.message)) return;
    const t = e.target;
    if (t && t !== window && (t.src || t.href))
      errors.push(`failed to load <${t.tagName.toLowerCase()}> ${t.src || t.href}`);
    else errors.push(`${e.message} (${e.filename}:${e.lineno})`);
  }, true);
  // The last mouse events that reached the page (capture phase, before any handler): a
  // timed-out wait after a click shows whether the click arrived, and where.
  const inputs = (window.__engineInputs = []);
  for (const type of ["pointerdown", "mousedown", "mouseup", "click"])
    addEventListener(type, (e) => {
      const t = e.target;
      const name = t && t.tagName ? `${t.tagName.toLowerCase()}${t.className && typeof t.className === "string" ? "." + t.className.split(" ")[0] : ""}` : String(t);
      inputs.push(`${type} ${name} at ${Math.round(e.clientX)},${Math.round(e.clientY)} +${Math.round(performance.now())}ms`);
      if (inputs.length > 12) inputs.shift();
    }, true);
  addEventListener("unhandledrejection", (e) => {
    const r = e.reason;
    errors.push(`unhandled rejection: ${(r && (r.stack || r.message)) || r}`);
  });
})();</script>"""


def pages() -> list[str]:
    """Every page of the built site, as a path under the site's root."""
    return sorted(
        "" if p.parent == SITE else p.parent.relative_to(SITE).as_posix() + "/"
        for p in SITE.rglob("index.html")
        if "vendor" not in p.parts and "assets" not in p.parts
    )


@pytest.fixture(scope="module")
def isolated(site_url):
    """site/ with COOP/COEP headers, every HTML page carrying the error collector."""
    if not (SITE / "index.html").is_file():
        pytest.fail("site/ is not built: run `make build` (make test does it first)")
    httpd = make_server(SITE, 0, site_url=site_url, isolate=True)
    base_handler = httpd.RequestHandlerClass.func

    class Collecting(base_handler):
        def do_GET(self):
            path = Path(self.translate_path(self.path))
            if path.is_dir():
                path = path / "index.html"
            if path.suffix != ".html" or not path.is_file() or not self.path.startswith("/"):
                return super().do_GET()
            html = path.read_bytes()
            at = html.lower().find(b"<head>") + len(b"<head>")
            self._send_bytes(html[:at] + COLLECTOR + html[at:], "text/html; charset=utf-8")

    httpd.RequestHandlerClass = functools.partial(Collecting, directory=str(SITE))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}/"
    yield httpd
    httpd.shutdown()


# WebKit's WebAssembly by its baseline tier (BBQ) only, as the tests' Chromium's
# (conftest.py); Firefox keeps its defaults. Measured: CONTRIBUTING.md, "Workers".
TEST_WEBKIT_ENV = {"JSC_useOMGJIT": "false"}


@pytest.fixture(scope="module", params=engines.ENGINES)
def driver(request):
    try:
        d = engines.launch(request.param, webkit_env=TEST_WEBKIT_ENV)
    except engines.EngineNotFound as err:
        pytest.fail(str(err))
    d.engine = request.param
    d.set_window_size(1200, 900)
    d.set_script_timeout(PYTHON_TIMEOUT_S)
    yield d
    d.quit()


def js(d, script, *args):
    return d.execute_script(script, *args)


PAGE_STATE = """return {href: location.href, ready: document.readyState, labs: !!window.AttnLabs,
  left: document.querySelector('article')?.dataset.left || null,
  unmounted: [...document.querySelectorAll('.attn-lab:not([data-status]), .attn-cell:not([data-state]),'
     + ' .attn-exercise:not([data-mounted]), .attn-map:not([data-state])')].map((e) => e.className),
  maps: [...document.querySelectorAll('.attn-map')].map((e) => e.dataset.state),
  cells: [...document.querySelectorAll('.attn-cell')].map((e) => [e.dataset.state, e.dataset.runs,
     e.querySelector('.attn-cell__status')?.textContent]),
  python: window.AttnLabs && [window.AttnLabs.runtime.state, String(window.AttnLabs.runtime.error)],
  errors: window.__engineErrors || null, inputs: window.__engineInputs || null,
  scroll: [scrollX, scrollY, innerWidth, innerHeight]}"""


def wait(d, script, timeout=30, *args, what=None):
    """Poll ``script`` (a JavaScript expression's body, ``return ...``) until truthy; a
    timeout says where the page stands (address, unmounted parts, errors)."""
    end = time.monotonic() + timeout
    while True:
        value = d.execute_script(script, *args)
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(
                f"{d.engine}: timed out after {timeout} s waiting for {what or script};"
                f" the page: {d.execute_script(PAGE_STATE)}"
            )
        time.sleep(0.1)


# The element's place once the layout has settled: its box is the same over two animation
# frames, and a hit test at its centre finds it (nothing above it, nothing moving it).
STILL = """const [el, done] = arguments; el.scrollIntoView({block: 'center'});
  const box = () => { const r = el.getBoundingClientRect(); return [r.x, r.y, r.width, r.height].join(); };
  const first = box();
  requestAnimationFrame(() => requestAnimationFrame(() => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
    done(box() === first && r.width > 0 && !!hit && (hit === el || el.contains(hit)));
  }));"""
ARM = """const el = arguments[0]; el.__clicks = el.__clicks || 0; const n = window.__engineInputs.length;
  el.addEventListener('click', () => { el.__clicks += 1; }, {once: true, capture: true});
  return [el.__clicks, n];"""


def click(d, element, what: str) -> None:
    """A WebDriver click (the engine's own input events, as a reader's) on ``element`` that
    is known to have reached it. First the element is scrolled to the centre and the test
    waits until it stands still there and is not covered: a click aimed at a box that moves
    (a status line above it wrapping onto a new line, an editor mounting) lands on whatever
    is there by then. Then the click must arrive within 15 s. When WebKitGTK's driver drops
    it (seen under load: no pointer event reached the document at all, so the page cannot
    have acted on it) it is sent once more; any other missed click fails with the events
    the page did receive."""
    end = time.monotonic() + 30
    while not d.execute_async_script(STILL, element):
        if time.monotonic() > end:
            raise AssertionError(f"{d.engine}: {what} never stood still, uncovered, in view")
    for attempt in (1, 2):
        clicks, inputs = js(d, ARM, element)
        element.click()
        arrived = "return arguments[0].__clicks > arguments[1]"
        end = time.monotonic() + 15
        while not js(d, arrived, element, clicks) and time.monotonic() < end:
            time.sleep(0.05)
        if js(d, arrived, element, clicks):
            return
        received = js(d, "return window.__engineInputs.slice(arguments[0])", inputs)
        if received or attempt == 2:
            raise AssertionError(
                f"{d.engine}: the click on {what} did not reach it; the page received"
                f" {received or 'no mouse event'}; the page: {js(d, PAGE_STATE)}"
            )


def errors(d) -> list[str]:
    return js(d, "return window.__engineErrors || ['no error collector on this page']")


def settle(d):
    """Two animation frames and a short pause: late errors of the page have been raised."""
    d.execute_async_script(
        "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 300)));"
    )


MOUNTED = """return document.readyState === 'complete' && !!window.AttnLabs
  && !document.querySelector('.attn-lab:not([data-status]), .attn-cell:not([data-state]),'
     + ' .attn-exercise:not([data-mounted]), .attn-map:not([data-state])')"""


@pytest.fixture
def lesson(driver, isolated):
    """Lesson 3 (a lab, cells, exercises), loaded once per engine and kept for the next test."""
    kept = "return window.__lessonKept === true && location.pathname === arguments[0]"
    if not js(driver, kept, "/" + LESSON):
        driver.get(isolated.base + LESSON)
        wait(driver, MOUNTED, what="the lesson's components mounted")
        js(driver, "window.__lessonKept = true;")
    return driver


def python_ready(d):
    wait(
        d,
        "return ['ready', 'failed'].includes(window.AttnLabs.runtime.state)",
        PYTHON_TIMEOUT_S,
        what="Python to start",
    )
    assert js(d, "return [window.AttnLabs.runtime.state, window.AttnLabs.runtime.error]") == [
        "ready",
        None,
    ]
    # katex-init.js renders the math out of view once Python's start-up is over, a few
    # formulas per idle moment: the page's layout moves until it is done, and a click aimed
    # at a lab control meanwhile can land on what moved there (seen in WebKit: an h2).
    wait(
        d,
        "return !document.querySelector('.arithmatex:not(:has(.katex))')",
        PYTHON_TIMEOUT_S,
        what="the page's math to be rendered",
    )


# ----------------------------------------------------------------------------- lab


LAB_STATE = """const c = document.querySelector(arguments[0]).attnLab;
  const plain = (v) => ArrayBuffer.isView(v) ? Array.from(v, (x) => Number.isFinite(x) ? x : null)
    : Array.isArray(v) ? v.map(plain)
    : (v && typeof v === 'object') ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]))
    : v;
  return {params: c.params, result: plain(c.result), runs: c.runs};"""


def test_a_lab_recomputes_in_python_equal_to_cpython(lesson):
    d = lesson
    lab = d.find_element("css selector", LAB)
    js(d, "arguments[0].scrollIntoView({block: 'center'})", lab)  # near: Python starts
    assert lab.get_attribute("data-status") in ("initial", "live")
    runs = js(d, LAB_STATE, LAB)["runs"]
    python_ready(d)
    box = lab.find_element("css selector", "input[id$='-causal']")
    before = box.is_selected()
    click(d, box, "the lab's causal checkbox")
    wait(
        d,
        "const r = document.querySelector(arguments[0]); return Number(r.dataset.runs || 0) > arguments[1]"
        " && !r.attnLab.inFlight && !r.attnLab.latest",
        PYTHON_TIMEOUT_S,
        LAB,
        runs,
        what="the lab's recompute",
    )
    state = js(d, LAB_STATE, LAB)
    assert state["params"]["causal"] is (not before)
    expected = run_lab("attention_pattern", state["params"])["result"]
    np.testing.assert_allclose(state["result"]["weights"], expected["weights"], rtol=0, atol=1e-6)
    assert state["result"]["tokens"] == expected["tokens"]
    assert lab.get_attribute("data-status") == "live"
    assert errors(d) == []


# ----------------------------------------------------------------------------- exercises


def test_a_numeric_and_a_code_exercise_check(lesson):
    d = lesson
    where, spec = EXERCISES["attention-by-hand"]
    answers = exercise.numeric_answers(spec, exercise.run_setup(spec, where), where)
    sel = "#exercise-attention-by-hand"
    root = d.find_element("css selector", sel)
    typed = {}
    for a in answers:
        rows, cols = a["shape"]
        for i in range(rows):
            for j in range(cols):
                name = f"{a['name']}-{i}-{j}"
                typed[name] = f"{a['values'][i * cols + j]:.4f}"
                box = root.find_element("css selector", f"input[name='{name}']")
                box.clear()
                box.send_keys(typed[name])
    # Every value is in its box before the click (WebKit's key events can lag behind).
    wait(
        d,
        "const f = document.querySelector(arguments[0] + ' form');"
        " return Object.entries(arguments[1]).every(([n, v]) => f.elements[n].value === v)",
        30,
        sel,
        typed,
        what="the typed answers in their boxes",
    )
    click(d, root.find_element("css selector", "button.attn-exercise__check"), "Check")
    # A WebDriver click can return before the page has handled it: wait for the verdict
    # (the result attribute and the sentence that says it), never a fixed sleep.
    wait(
        d,
        "const r = document.querySelector(arguments[0]);"
        " return r.dataset.result && r.querySelector('.attn-exercise__result').textContent",
        30,
        sel,
        what="the numeric exercise's verdict",
    )
    assert root.get_attribute("data-result") == "right"
    assert root.find_element("css selector", ".attn-exercise__result").text.startswith("Right")

    _, spec = EXERCISES["masked-softmax"]
    sel = "#exercise-masked-softmax"
    js(d, "document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", sel)
    wait(
        d,
        f"return !!document.querySelector('{sel} .cm-editor')",
        PYTHON_TIMEOUT_S,  # the editor's bundle loads with everything else on a busy machine
        what="the exercise's editor",
    )

    def check(code: str) -> str:
        n = int(js(d, "return document.querySelector(arguments[0]).dataset.checks", sel))
        js(
            d,
            "document.querySelector(arguments[0]).attnExercise.editor.code = arguments[1]",
            sel,
            code,
        )
        click(d, d.find_element("css selector", f"{sel} button.attn-exercise__check"), "Check")
        wait(
            d,
            "return Number(document.querySelector(arguments[0]).dataset.checks) > arguments[1]",
            PYTHON_TIMEOUT_S,
            sel,
            n,
            what="the hidden checks",
        )
        return js(d, "return document.querySelector(arguments[0]).dataset.result", sel)

    assert check(spec["starter"]) == "failed"
    assert check(spec["solution"]) == "passed"
    assert js(d, "return document.querySelector(arguments[0]).dataset.solved", sel) == "true"
    assert errors(d) == []


# ----------------------------------------------------------------------------- cells


def run_cell(d, n: int, code: str) -> str:
    """Run cell n with ``code``; wait until the run has ended (its ``cell:done`` event, which
    a run that could not start fires too); its state."""
    js(
        d,
        "const r = document.querySelectorAll('.attn-cell')[arguments[0]];"
        " r.attnCell.editor.code = arguments[1]; r.__ended = false;"
        " r.addEventListener('cell:done', () => { r.__ended = true; }, {once: true});",
        n,
        code,
    )
    click(d, d.find_elements("css selector", f"{CELL} .attn-cell__run")[n], f"cell {n}'s Run")
    wait(
        d,
        "return document.querySelectorAll('.attn-cell')[arguments[0]].__ended === true",
        PYTHON_TIMEOUT_S,
        n,
        what=f"cell {n} to run",
    )
    state = js(d, "return document.querySelectorAll('.attn-cell')[arguments[0]].dataset.state", n)
    status = cell_text(d, n, ".attn-cell__status")
    assert not status.startswith("Could not run"), f"{d.engine}: cell {n}: {status}"
    return state


def cell_text(d, n: int, part: str) -> str:
    return d.find_elements("css selector", CELL)[n].find_element("css selector", part).text


def test_a_cell_runs_and_stop_works(lesson):
    d = lesson
    js(d, "document.querySelector('.attn-cell').scrollIntoView({block: 'center'})")
    wait(d, "return !!document.querySelector('.attn-cell .cm-editor')", what="the cell's editor")
    interrupts = js(
        d,
        "return crossOriginIsolated && typeof SharedArrayBuffer === 'function'"
        " && window.AttnLabs.runtime.interruptBuffer !== null",
    )
    if d.engine == "firefox":
        # Firefox gives isolated pages shared memory: Stop must take the interrupt path.
        # (WebKitGTK reports crossOriginIsolated but has no SharedArrayBuffer: restart path.)
        assert interrupts
    js(d, "window.AttnLabs.runtime.interruptGraceMs = 30000;")  # a stalled box: still interrupt
    assert run_cell(d, 0, "x = 41\nprint('x is', x)\nx + 1") == "done"
    assert "x is 41" in cell_text(d, 0, ".attn-cell__output")
    assert "42" in cell_text(d, 0, ".attn-cell__output")

    # Stop a loop once Python is in it.
    js(
        d,
        "document.querySelectorAll('.attn-cell')[1].attnCell.editor.code = 'while True:\\n    pass'",
    )
    click(d, d.find_elements("css selector", f"{CELL} .attn-cell__run")[1], "cell 1's Run")
    wait(
        d,
        "return window.AttnLabs.runtime.running !== null"
        " && !document.querySelectorAll('.attn-cell')[1].querySelector('.attn-cell__stop').disabled",
        PYTHON_TIMEOUT_S,
        what="the loop to start",
    )
    time.sleep(0.3)
    click(d, d.find_elements("css selector", f"{CELL} .attn-cell__stop")[1], "cell 1's Stop")
    wait(
        d,
        "return document.querySelectorAll('.attn-cell')[1].dataset.state === 'stopped'",
        60,
        what="the cell to stop",
    )
    status = cell_text(d, 1, ".attn-cell__status")
    if interrupts:
        assert "KeyboardInterrupt" in cell_text(d, 1, ".attn-cell__output")
        assert "kept" in status
        assert run_cell(d, 1, "x + 1") == "done"  # same worker, same namespace
        assert "42" in cell_text(d, 1, ".attn-cell__output")
    else:
        assert "variable" in status and "Nothing was re-run" in status
        assert "restarted" in cell_text(d, 0, ".attn-cell__status")
        assert run_cell(d, 1, "x") == "error"  # a new Python: x is gone
        assert "NameError" in cell_text(d, 1, ".attn-cell__output")
        assert run_cell(d, 1, "x = 1\nx + 1") == "done"
        assert "2" in cell_text(d, 1, ".attn-cell__output")
    assert errors(d) == []


# ----------------------------------------------------------------------------- every page


GO = """const a = document.createElement('a'); a.href = arguments[0]; a.textContent = 'go';
  document.querySelector('article').dataset.left = 'true';
  document.querySelector('.md-content').prepend(a); a.click();"""
# The address without its query: the explorer writes its view into the query
# (?model=…&view=…) as soon as it draws, so its whole address matches the link's only
# until then. (Comparing the whole address hung the walk on /explorer/ whenever a poll
# came after that first drawing: under load, or with the asset already fetched.)
ARRIVED = (
    """const article = document.querySelector('article');
  return location.origin + location.pathname === arguments[0] && article
    && !article.dataset.left && ("""
    + MOUNTED.removeprefix("return ")
    + ")"
)


def test_every_page_loads_without_a_javascript_error(lesson, isolated):
    """From the lesson, every page by Material's instant navigation, as a reader goes: the
    window, and so Python, stays (a full load of every page would start Python on every
    page with a lab near its top, and double this test's time)."""
    d = lesson
    found = {}
    js(d, "window.__walk = true;")
    seen = len(errors(d))
    for path in pages():
        url = isolated.base + path
        if js(d, "return location.origin + location.pathname") != url:
            js(d, GO, url)
            # generous: a busy machine can take long on the explorer (72-270 thumbnails)
            wait(d, ARRIVED, 120, url, what=f"/{path} to load and mount its components")
        js(d, "window.scrollTo(0, document.body.scrollHeight)")  # what waits below the fold
        settle(d)
        failed = js(
            d, "return [...document.querySelectorAll('[data-failed]')].map((e) => e.className)"
        )
        new = errors(d)[seen:]
        seen += len(new)
        if new or failed:
            found[path] = new + [f"failed to mount: {f}" for f in failed]
    assert js(d, "return window.__walk === true"), "a page was reloaded: no instant navigation"
    assert found == {}, f"{d.engine}: {found}"


# ----------------------------------------------------------------------------- explorer


def test_the_explorer_draws_a_grid_and_opens_a_head(driver, isolated):
    d = driver
    d.get(f"{isolated.base}explorer/?model={MODEL['slug']}&sentence=bank-river&view=model")
    wait(d, "return document.querySelector('.attn-map')?.dataset.state === 'ready'", 60)
    thumbs = d.find_elements("css selector", ".attn-map .attn-map__thumb")
    assert len(thumbs) == MODEL["n_layers"] * MODEL["n_heads"]
    # every thumbnail is drawn: a canvas with pixels that are not all blank
    assert js(
        d,
        "const c = document.querySelector('.attn-map__thumb canvas');"
        " const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        " return px.some((v, i) => i % 4 !== 3 && v !== 0 && v !== 255);",
    )
    thumb = d.find_element("css selector", '.attn-map__thumb[data-layer="2"][data-head="5"]')
    click(d, thumb, "the thumbnail of layer 2, head 5")
    wait(d, "return document.querySelector('.attn-map').attnMap.state.view === 'head'", 10)
    state = js(d, "return document.querySelector('.attn-map').attnMap.state")
    assert (state["layer"], state["head"]) == (2, 5)
    label = js(
        d,
        "const c = document.querySelector('.attn-map canvas.attn-heatmap');"
        " return c && c.offsetWidth > 0 ? c.getAttribute('aria-label') : null",
    )
    assert label and label.startswith(
        f"Attention weights of {MODEL['id'].split('/')[-1]}, layer 2, head 5"
    )
    assert errors(d) == []


# ----------------------------------------------------------------------------- decoder


DECODER_PROMPT = "The capital of France is"  # 5 tokens, 6 with <|endoftext|>
DECODER_TIMEOUT_S = 600  # cold Python, 97.8 MB of weights and their dequantising, in WebKit
DECODER_STATE = """const m = document.querySelector('.attn-map'); const p = m.attnMap.ownPanel;
  const r = p.decoderResult && p.decoderResult.result;
  return {state: p.root.dataset.state, runs: p.runs, own: m.dataset.own || null,
    mapState: m.dataset.state, status: p.status.textContent,
    error: p.error.hidden ? null : p.errorText.textContent,
    model: m.attnMap.cache.asset.model.slug, ids: r ? r.ids : null,
    next: [...p.decoder.nextList.querySelectorAll('button.attn-own__token')].map(
      (b) => [Number(b.dataset.id), b.textContent]),
    listShown: !p.decoder.root.hidden && p.decoder.nextList.offsetHeight > 0,
    heads: m.querySelectorAll('.attn-map__thumb canvas').length, lastRun: p.lastRun || null};"""


def test_smollm2_runs_a_prompt_and_predicts_cpythons_next_token(driver, isolated):
    """The explorer's own sentence, model SmolLM2-135M: the reader's prompt typed, Run (the
    weights downloaded, Python started, the model loaded and the prompt read), every head's
    map drawn and the 10 most likely next tokens listed, the first one CPython's."""
    from attention_labs.models import own_decoder
    from attention_labs.params import validate
    from selenium.webdriver.support.select import Select

    d = driver
    d.get(isolated.base + "explorer/")
    wait(d, "return document.querySelector('.attn-map')?.dataset.state === 'ready'", 60)
    wait(d, "return !!document.querySelector('.attn-own .attn-own__model select')", 30)
    Select(d.find_element("css selector", ".attn-own .attn-own__model select")).select_by_value(
        "decoder"
    )
    wait(
        d,
        "return document.querySelector('.attn-own').dataset.mode === 'decoder'",
        30,
        what="the panel in SmolLM2 mode",
    )
    box = d.find_element("css selector", ".attn-own textarea")
    box.clear()
    box.send_keys(DECODER_PROMPT)
    wait(
        d,
        "return document.querySelector('.attn-own textarea').value === arguments[0]",
        30,
        DECODER_PROMPT,
        what="the typed prompt in its box",
    )
    before = js(d, DECODER_STATE)["runs"]
    click(d, d.find_element("css selector", ".attn-own .attn-own__run"), "Run")
    wait(
        d,
        "const p = document.querySelector('.attn-map').attnMap.ownPanel;"
        " return (p.runs > arguments[0] && !p.busy) || p.root.dataset.state === 'error'",
        DECODER_TIMEOUT_S,
        before,
        what="SmolLM2 to read the prompt",
    )
    # the map shows the prompt's own asset (map.showOwn, right after the count): waited on
    wait(
        d,
        "const m = document.querySelector('.attn-map');"
        " return m.dataset.state === 'ready' && m.dataset.own === 'true'"
        " || m.attnMap.ownPanel.root.dataset.state === 'error'",
        60,
        what="the prompt's maps drawn",
    )
    got = js(d, DECODER_STATE)
    assert got["state"] == "ready" and got["error"] is None, f"{d.engine}: {got}"
    assert got["model"] == "smollm2-135m" and got["own"] == "true"
    want = own_decoder.compute(validate(own_decoder.SCHEMA, {"text": DECODER_PROMPT}))
    assert got["ids"] == want["ids"] and len(got["ids"]) == 6
    assert got["heads"] == 30 * 9  # every layer's and head's map
    assert got["listShown"] and len(got["next"]) == 10
    assert got["next"][0][0] == want["next"][0]["id"], f"{d.engine}: {got['next']}"
    # this engine ran the Linear layers in the WebAssembly SIMD kernel (wasm_kernels.py)
    assert got["lastRun"]["products"] == "wasm-simd", f"{d.engine}: {got['lastRun']}"
    assert errors(d) == []
