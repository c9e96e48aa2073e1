"""Python's start-up on hosts that serve it wrong, in a real headless Chromium: a server
that misbehaves on purpose (a wrong type for the wasm, a missing or cut-off file) and the
lab, which must start anyway or say within seconds which file failed, how, and what to do.
Also the standard library's second zip, downloaded on a reader's first import from it."""

from __future__ import annotations

import ast
import functools
import json
import socket
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from helpers import LESSON, SITE, RecordedPage

from build_scripts.serve import SiteHandler

# The runtime's tests, not the lab's: make check-lesson NAME=03-attention-pattern (whose lab
# this page uses) leaves them to make test.
pytestmark = pytest.mark.runtime

LAB = ".attn-lab[data-lab=attention_pattern]"


@functools.cache
def built() -> dict[str, str]:
    """The built site's file names, read when a test runs (collecting needs no site/):
    {stdlib}, {stdlib_more}, {numpy} and {labs} (the archives the worker unpacks)."""
    pre = json.loads((SITE / "vendor" / "manifest.json").read_text("utf-8"))["precompiled"]
    return {
        "stdlib": Path(pre["stdlib"]).name,
        "stdlib_more": Path(pre["stdlib_more"]).name,
        "numpy": Path(pre["archives"]["numpy"]).name,
        "labs": next((SITE / "vendor" / "labs").glob("attention_labs-*.tar.gz")).name,
    }


# Far below the runtime's 120-s watchdog: a failure must be reported, not timed out.
FAIL_WITHIN_MS = 60_000
READY_MS = 120_000


class MisbehavingHandler(SiteHandler):
    """The site's server, except for paths ending with a key of ``rules``: "missing" (404),
    "truncated" (the first half, with a Content-Length that says so), "dropped" (the first
    half of what the Content-Length promised, then the connection closes), "octet-stream"
    (the whole file, with that type and no compression)."""

    rules: dict[str, str] = {}
    quiet = True

    def do_GET(self):
        path = self.path.split("?")[0]
        how = next((h for end, h in self.rules.items() if path.endswith(end)), None)
        if how is None:
            return super().do_GET()
        if how == "missing":
            return self.send_error(404, "Not Found")
        data = Path(self.translate_path(self.path)).read_bytes()
        if how == "truncated":
            return self._send_bytes(data[: len(data) // 2], self.guess_type(path))
        if how == "dropped":  # the connection breaks mid-file: the whole length was promised
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(path))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return None
        return self._send_bytes(data, "application/octet-stream")


@pytest.fixture(scope="module")
def host(site_url):
    handler = type("Handler", (MisbehavingHandler,), {"rules": {}, "site_url": site_url})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(SITE)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.rules = handler.rules
    yield httpd
    httpd.shutdown()


@pytest.fixture
def recorded(browser, host):
    rec = RecordedPage(browser, host.base)
    yield rec
    rec.context.close()
    host.rules.clear()


@pytest.fixture
def page(recorded):
    return recorded.page


def start(page, base: str, timeout: int) -> dict:
    """Open lesson 3, start Python, wait until it is ready or has failed."""
    page.goto(base + LESSON + "/")
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    page.locator(LAB).scroll_into_view_if_needed()  # the page's cells come near view too
    page.evaluate("() => window.AttnLabs.runtime.start()")
    page.wait_for_function(
        "() => ['ready', 'failed'].includes(window.AttnLabs.runtime.state)", timeout=timeout
    )
    return page.evaluate(
        "() => ({state: window.AttnLabs.runtime.state, message: window.AttnLabs.runtime.progress.message})"
    )


def test_wasm_served_as_octet_stream_still_starts(page, host):
    host.rules[".wasm"] = "octet-stream"
    got = start(page, host.base, READY_MS)
    assert got["state"] == "ready", got
    page.locator("input[id$='-causal']").check()
    page.wait_for_function(f"() => document.querySelector('{LAB}').dataset.runs >= 1")


def test_without_the_labs_archive_the_wheel_is_installed(page, host):
    """A runtime configured without the labs' archive (a site built before make wheel wrote
    one) installs the labs wheel through Pyodide instead, and the lab recomputes."""
    assert start(page, host.base, READY_MS)["state"] == "ready"
    steps = "() => window.AttnLabs.runtime.timings.profile.map(([name]) => name)"
    assert "labs installed (their archive unpacked)" in page.evaluate(steps)
    page.evaluate(
        "() => { const rt = window.AttnLabs.runtime; delete rt.config.labs; rt.restart(); }"
    )
    page.wait_for_function("() => window.AttnLabs.runtime.state === 'ready'", timeout=READY_MS)
    assert "labs wheel installed" in page.evaluate(steps)
    page.locator("input[id$='-causal']").check()
    page.wait_for_function(f"() => document.querySelector('{LAB}').dataset.runs >= 1")


@pytest.mark.parametrize(
    ("file", "how", "names", "says"),
    [
        ("pyodide.asm.wasm", "missing", "Python's WebAssembly core (pyodide.asm.wasm)", "HTTP 404"),
        (
            "pyodide.asm.wasm",
            "truncated",
            "Python's WebAssembly core (pyodide.asm.wasm)",
            "could not be compiled",
        ),
        ("pyodide.asm.js", "missing", "Python's loader (pyodide.asm.js)", "HTTP 404"),
        ("pyodide-worker.js", "missing", "Python's worker (pyodide-worker.js)", "did not load"),
        ("{stdlib}", "missing", "Python's standard library ({stdlib})", "HTTP 404"),
        ("{stdlib}", "truncated", "Python's standard library ({stdlib})", "damaged"),
        ("{numpy}", "missing", "NumPy ({numpy})", "HTTP 404"),
        ("{numpy}", "truncated", "NumPy ({numpy})", "damaged"),
        ("{labs}", "missing", "the labs package ({labs})", "HTTP 404"),
        ("{labs}", "truncated", "the labs package ({labs})", "damaged"),
        # a connection that breaks is the reader's network, not the host's copy
        ("{stdlib}", "dropped", "Python's standard library ({stdlib})", "Check your connection"),
        ("{numpy}", "dropped", "NumPy ({numpy})", "Check your connection"),
        ("pyodide.asm.wasm", "dropped", "Python's WebAssembly core", "Check your connection"),
    ],
)
def test_a_missing_or_cut_off_file_is_named_with_its_status(
    recorded, page, host, file, how, names, says
):
    file, names = file.format(**built()), names.format(**built())
    host.rules[file] = how
    got = start(page, host.base, FAIL_WITHIN_MS)
    assert got["state"] == "failed", got
    message = got["message"]
    assert message.startswith("Python could not start: "), message
    assert names in message and says in message, message
    assert "no answer after" not in message  # reported, not timed out
    status = page.locator(f"{LAB} .attn-lab__status-text").inner_text()
    assert names in status and "press Retry" in status, status
    assert "Failed to fetch" not in status and "exit(1)" not in status, status
    if how != "dropped":  # a file the host lacks is the host's fault, not the connection's
        assert "Check your connection" not in status and "maintainer" in status, status
    else:
        assert "maintainer" not in status, status
    assert recorded.errors == []  # said once, in the lab: no uncaught error besides
    # The host is fixed: Retry starts Python.
    host.rules.clear()
    page.click(f"{LAB} button.attn-lab__retry")
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=READY_MS)


CELL_JS = """async (code) => {
  const out = await window.AttnLabs.runtime.runCell('startup-test', code, '<cell>');
  return JSON.stringify(out);
}"""


def test_rest_of_the_stdlib_loads_on_first_import_or_says_why_not(page, host):
    stdlib_more = built()["stdlib_more"]
    host.rules[stdlib_more] = "missing"
    assert start(page, host.base, READY_MS)["state"] == "ready"
    failed = page.evaluate(CELL_JS, "import xml.dom.minidom")
    assert "ModuleNotFoundError" in failed and stdlib_more in failed and "404" in failed, failed
    host.rules.clear()
    page.evaluate("() => window.AttnLabs.runtime.restart()")
    page.wait_for_function("() => window.AttnLabs.runtime.state === 'ready'", timeout=READY_MS)
    ok = json.loads(
        page.evaluate(
            CELL_JS,
            "import xml.dom.minidom, encodings.cp1252, json\n"
            "xml.dom.minidom.parseString('<a>hi</a>').documentElement.tagName",
        )
    )
    assert ok["error"] is None, ok
    assert "'a'" in json.dumps(ok["value"]), ok


def test_numpys_deferred_subpackages_load_on_first_use_from_the_second_zip(page, host):
    """numpy.ma, numpy.polynomial and numpy.testing are not in NumPy's start-up archive
    (``defer`` in vendor-lock.json) but in the stdlib's second zip: Python starts and the
    lab runs without that zip, and a reader's first use of one of them downloads it."""
    stdlib_more = built()["stdlib_more"]
    host.rules[stdlib_more] = "missing"
    assert start(page, host.base, READY_MS)["state"] == "ready"
    page.locator("input[id$='-causal']").check()
    page.wait_for_function(f"() => document.querySelector('{LAB}').dataset.runs >= 1")
    failed = page.evaluate(CELL_JS, "import numpy as np\nnp.ma")
    assert "ModuleNotFoundError" in failed and stdlib_more in failed, failed
    host.rules.clear()
    page.evaluate("() => window.AttnLabs.runtime.restart()")
    page.wait_for_function("() => window.AttnLabs.runtime.state === 'ready'", timeout=READY_MS)
    ok = json.loads(
        page.evaluate(
            CELL_JS,
            "import numpy as np\n"
            "from numpy.testing import assert_allclose\n"
            "assert_allclose(np.ma.masked_array([1.0, 2.0, 4.0], mask=[0, 1, 0]).mean(), 2.5)\n"
            "float(np.polynomial.Polynomial([1, 2, 3])(2))",
        )
    )
    assert ok["error"] is None, ok
    assert "17.0" in json.dumps(ok["value"]), ok


# How Python got each NumPy extension module: "compiled ahead" where Emscripten's loader took
# the worker's background compile (preloadExtensions: its getter has run), "waiting" where
# that getter waits for a first import, "dlopen" where the import compiled the file itself.
EXTENSIONS_CODE = """
import sys, js, pyodide_js
import numpy as np
preloaded = pyodide_js._module.preloadedWasm
site = np.__file__.rsplit("/numpy/", 1)[0]
def how(path):
    found = js.Object.getOwnPropertyDescriptor(preloaded, path)
    if found is None:
        return "dlopen"
    return "waiting" if js.Reflect.has(found, "get") else "compiled ahead"
def loaded():
    origins = [getattr(getattr(m, "__spec__", None), "origin", None) for m in list(sys.modules.values())]
    return sorted(o for o in origins if o and o.endswith(".so"))
rational = site + "/numpy/_core/_rational_tests.cpython-312-wasm32-emscripten.so"
before = how(rational)
import numpy._core._rational_tests, numpy.fft, numpy.linalg
a = np.random.default_rng(0).standard_normal((3, 3)) + 3 * np.eye(3)
works = bool(np.allclose(np.linalg.inv(a) @ a, np.eye(3)))
works = works and bool(np.allclose(np.fft.ifft(np.fft.fft(a[0])).real, a[0]))
{"before": before, "works": works, "modules": {p[len(site) + 1:]: how(p) for p in loaded()}}
"""


def test_numpys_extension_modules_are_compiled_while_python_starts(page, host):
    """The worker compiles every extension module in NumPy's archive in the background while
    Python starts, and Python's imports take those instead of compiling on the worker's
    thread (where WebKit waited up to seconds: CONTRIBUTING, "Python's start-up"). Read
    from Pyodide's own loader, so a Pyodide whose loader works otherwise fails here."""
    assert start(page, host.base, READY_MS)["state"] == "ready"
    page.locator("input[id$='-causal']").check()  # the lab's first run (numpy.random)
    page.wait_for_function(f"() => document.querySelector('{LAB}').dataset.runs >= 1")
    out = json.loads(page.evaluate(CELL_JS, EXTENSIONS_CODE))
    assert out["error"] is None, out
    got = ast.literal_eval(out["value"])
    assert got["works"], got
    assert got["before"] == "waiting", got  # not imported yet: nothing instantiated early
    modules = got["modules"]
    assert "numpy/_core/_multiarray_umath.cpython-312-wasm32-emscripten.so" in modules, got
    assert any(p.startswith("numpy/random/") for p in modules), got
    assert set(modules.values()) == {"compiled ahead"}, got


HEAD_START_JS = """() => {
  const early = window.attnStarted, rt = window.AttnLabs.runtime;
  const { interruptBuffer, ...posted } = early.message;
  return { taken: early.taken, same: rt.worker === early.worker, posted,
           built: rt.initMessage(), left: early.messages.length };
}"""


def test_the_heads_script_starts_the_worker_that_the_runtime_takes(page, host):
    """The worker starts from the head's classic script (hooks/preload.py), before any
    module runs, with the init message the runtime would have posted; the runtime takes
    that worker and what it said meanwhile, and Python becomes ready through it."""
    got = start(page, host.base, READY_MS)
    assert got["state"] == "ready", got
    head = page.evaluate(HEAD_START_JS)
    assert head["taken"] is True and head["same"] is True and head["left"] == 0, head
    assert head["posted"] == head["built"]
    assert head["built"]["warmLab"] == "attention_pattern"


def release(page, held: list):
    """Let Python's held wasm download go, once the worker has asked for it."""
    for _ in range(READY_MS // 50):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the worker never requested pyodide.asm.wasm"
    for route in held:
        route.continue_()


def search_finds(page, word: str):
    page.locator("input.md-search__input").click()
    page.keyboard.type(word)  # Material reads key events, not a filled value
    page.wait_for_selector(".md-search-result__item", timeout=30_000)


HELD_JS = "() => !String(window.Worker).includes('[native code]')"  # search-hold.js's


def test_search_opened_while_python_starts_finds_pages(recorded, page):
    """Material's search index waits until the reader opens search (hooks/preload.py:
    SEARCH_HOLD), and is built at once then, while Python starts too. Python's wasm is held
    back here, so the search is opened before Python is ready on any machine."""
    held = []
    recorded.context.route("**/pyodide.asm.wasm", lambda route: held.append(route))
    page.goto(recorded.base + LESSON + "/")
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    page.wait_for_function("() => window.AttnLabs.runtime.state === 'loading'")
    search_finds(page, "softmax")
    assert page.evaluate("() => window.AttnLabs.runtime.state") == "loading"
    release(page, held)
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=READY_MS)


def test_search_works_once_python_is_ready(page, host):
    got = start(page, host.base, READY_MS)
    assert got["state"] == "ready", got
    assert page.evaluate(HELD_JS)  # no index built for a reader who has not searched
    search_finds(page, "softmax")
    assert page.evaluate("() => window.Worker.name") == "Worker"  # the browser's, given back
    assert "[native code]" in page.evaluate("() => String(window.Worker)")


def test_a_page_without_labs_builds_the_search_index_when_the_reader_asks(page, host):
    """No page builds Material's search index (about 0.3 s of CPU) before the reader opens
    search: here a page without labs, opened with Material's key "/"."""
    page.goto(host.base + "glossary/")
    page.wait_for_load_state("networkidle")
    assert page.evaluate(HELD_JS)
    page.keyboard.press("/")  # Material focuses the search field
    page.keyboard.type("softmax")
    page.wait_for_selector(".md-search-result__item", timeout=30_000)
    assert not page.evaluate(HELD_JS)


MATH_JS = """() => {
  const all = [...document.querySelectorAll('.md-content .arithmatex')];
  const seen = all.filter((e) => e.getBoundingClientRect().top < innerHeight && e.getBoundingClientRect().bottom > 0);
  const far = all.filter((e) => e.getBoundingClientRect().top > 3 * innerHeight);
  const done = (e) => e.querySelector('.katex') !== null;
  return { seen: seen.length, seenDone: seen.filter(done).length,
           far: far.length, farDone: far.filter(done).length, left: all.filter((e) => !done(e)).length };
}"""


def test_math_in_view_renders_at_once_the_rest_once_python_is_ready(recorded, page):
    """KaTeX renders the formulas in view (and the table of contents') while Python starts
    and the rest after it (they would take the main thread from the start-up): with Python's
    wasm held back, the math far below waits as TeX; once Python is ready, every formula is
    rendered."""
    held = []
    recorded.context.route("**/pyodide.asm.wasm", lambda route: held.append(route))
    page.goto(recorded.base + LESSON + "/")
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    page.wait_for_function(  # the top of the lesson, where its first formulas are
        f"() => (({MATH_JS})()).seen > 0 && (({MATH_JS})()).seen === (({MATH_JS})()).seenDone"
    )
    math = page.evaluate(MATH_JS)
    assert math["far"] > 0 and math["farDone"] == 0, math
    # the table of contents' copy of a heading's math ("Why divide by ...") renders at once
    page.wait_for_selector(".md-sidebar--secondary .katex")
    assert "\\(" not in page.locator(".md-sidebar--secondary").text_content()
    assert page.evaluate("() => window.AttnLabs.runtime.state") == "loading"
    release(page, held)
    page.wait_for_selector(f"{LAB}[data-runtime=ready]", timeout=READY_MS)
    page.wait_for_function(f"() => (({MATH_JS})()).left === 0")
