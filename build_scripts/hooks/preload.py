"""``<link rel="modulepreload">`` in each page's head for the ES modules its first picture
waits for: main.js and what it imports, and on a page with labs the lab controller and
each lab's widget (labs/<name>.js) with what they import.

Without them the browser finds those modules one level at a time (the head's script, then
the widgets' imports, then theirs: a chart's widget is four levels deep, down to d3), each
level a round trip; listed in the head, they download in parallel while the page is parsed.
Measured with the head's static imports in place (12 lessons, 3 cold runs each, Chromium
with a 40 ms round trip): the first picture came at 975 ms on average with the links and
1232 ms without them. Nothing is added that the page would not load anyway (a page without
labs gets main.js's own imports only).

On a page with labs, also a module script in the head that imports the controller and every
widget of the page statically and hands them to runtime/page.js (``provide``): an
``import()``, even of a module already fetched and evaluated, resolves only 100-300 ms after
DOMContentLoaded in Chromium, while a static import is evaluated before it, so the lab is
drawn with the text. No module of the site awaits at its top level (tests/build/
test_modules.py), so every widget can be imported so.

On a page with labs, last, scripts at the top of the head that start Python (the worker
of runtime/lab-runtime.js, with the first lab's runtime config and name) as soon as the
browser has read them, so that the worker's downloads and compile overlap the page's own
parse, styles, scripts and first picture instead of following them (from navigation,
Python was ready some 1 s later when the worker started at the lab's mount; make bench,
section startup). A classic script creates the worker and posts its init message: an
``async`` module, even with its modules preloaded, ran only after the page's first style
and layout (a trace of lesson 3: new Worker at 434 ms from navigation, 216 ms from the
classic script). The module after it configures the runtime, which takes that worker.
A page without labs gets none of them and starts no Python.

On every page, at the top of its head (after those scripts on a page with labs), a classic
script that holds Material's search index until the reader opens search (runtime/
search-hold.js says why). Both classic scripts are JavaScript files of their own, read here
and inlined; what differs per page goes in as data (a JSON data block).

The import graph is read from the modules' own static ``import``/``export ... from`` lines
(the formatter puts each at a line's start); tests/build/test_modules.py checks it against
esbuild's parse of the same files."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path, PurePosixPath

from mkdocs.utils import get_relative_url

JS = Path("javascripts")
# A static import or re-export (not a dynamic import()): its specifier.
STATIC_IMPORT = re.compile(
    r"""^\s*(?:import|export)\b(?:[^;'"()]*?\bfrom\s*)?["']([^"']+)["']""", re.M
)
LAB = re.compile(r'<div class="attn-lab" data-lab="([a-z][a-z0-9_]*)"')
# The first lab placeholder's JSON (hooks/lab.py: data_attribute) in its opening tag.
LAB_CONFIG = re.compile(
    r'<div class="attn-lab" data-lab="[a-z][a-z0-9_]*"[^>]*? data-config="([^"]*)"'
)
LINK = re.compile(r'<link rel="modulepreload" href="[^"]*">')
# Where the start script goes: right after the head's charset, before styles and scripts.
HEAD_START = re.compile(r'<meta charset="utf-8">')


def static_imports(docs: Path, module: PurePosixPath) -> list[PurePosixPath]:
    """``module`` (a path under docs/) and every module it imports statically, directly or
    not, that exists under docs/: depth first, each once."""
    seen: list[PurePosixPath] = []

    def visit(path: PurePosixPath) -> None:
        if path in seen or not (docs / path).is_file():
            return
        seen.append(path)
        for spec in STATIC_IMPORT.findall((docs / path).read_text("utf-8")):
            if spec.startswith("."):
                visit(PurePosixPath(_normal(path.parent / spec)))

    visit(module)
    return seen


def _normal(path: PurePosixPath) -> str:
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)


def _url(module: PurePosixPath, page_url: str) -> str:
    """``module``'s address relative to the page; "./" first, so an import never reads it
    as a bare specifier (the home page's "javascripts/...")."""
    url = get_relative_url(module.as_posix(), page_url)
    return url if url.startswith(".") else "./" + url


def provide_script(labs: list[str], page_url: str, docs: Path) -> str:
    """The head's module script handing the controller and the widgets of ``labs`` to
    page.js; "" without labs."""
    if not labs:
        return ""
    modules = {"controller": PurePosixPath(JS / "labs" / "controller.js")}
    for name in labs:
        widget = PurePosixPath(JS / "labs" / f"{name}.js")
        if (docs / widget).is_file():
            modules[name] = widget
    page_js = _url(PurePosixPath(JS / "runtime" / "page.js"), page_url)
    body = f'import {{ provide }} from "{page_js}";'
    for i, (key, module) in enumerate(modules.items()):
        body += f'import * as m{i} from "{_url(module, page_url)}";provide("{key}", m{i});'
    return f'<script type="module">{body}</script>'


# Classic scripts the head carries inline (read at build time, so no request and no
# download in the parser's way): the one that starts Python's worker (a page with labs) and
# the one that holds Material's search index until the reader opens search (every page).
# Each file says why. Not published (mkdocs.yml: exclude_docs) and imported by nothing.
START_WORKER = PurePosixPath(JS / "runtime" / "start-worker.js")
SEARCH_HOLD = PurePosixPath(JS / "runtime" / "search-hold.js")
INLINE = (START_WORKER, SEARCH_HOLD)
# The search hold's attribute (for a reader of the HTML, and the bench's baseline page,
# which takes it out).
HOLD_ATTRIBUTE = ' data-hold="search"'


# A line that is only a comment (the files' why, for their readers: 0.9 kB of gzip a lab page).
COMMENT_LINE = re.compile(r"^[ \t]*//.*\n", re.M)


def inline_script(docs: Path, script: PurePosixPath, attributes: str = "") -> str:
    """A ``<script>`` element with ``script``'s text (a path under docs/) inline, less its
    lines that are only a comment (the scripts have no multi-line string to cut into)."""
    text = COMMENT_LINE.sub("", (docs / script).read_text("utf-8"))
    # the HTML parser would end the element (or start a comment) at these, whatever the JS
    if re.search(r"</script|<!--", text, re.I):
        raise ValueError(f"{script} cannot be inlined: it contains </script or <!--")
    return f"<script{attributes}>{text}</script>"


def json_data(value) -> str:
    """``value`` as compact JSON for a data block in the head: "<" escaped, so no
    "</script>" in a string can end the element."""
    return json.dumps(value, separators=(",", ":")).replace("<", "\\u003c")


def init_message(runtime: dict, lab: str, page_url: str) -> dict:
    """The worker's init message (runtime/pyodide-worker.js) for the build's ``runtime``
    config and the first lab ``lab``, as LabRuntime.initMessage builds it, but with each
    address relative to the page (the head's script resolves them) and no interrupt buffer."""

    def rel(path: str | None) -> str | None:
        return get_relative_url(path, page_url) if path else None

    message = {
        "type": "init",
        "indexURL": runtime.get("pyodide_index_url")
        or rel(runtime.get("pyodide") or "vendor/pyodide/").rstrip("/") + "/",
        "wheelURL": rel(runtime.get("wheel")),
        "labsURL": rel(runtime.get("labs")),
        "stdlibURL": rel(runtime.get("stdlib")),
        "stdlibMoreURL": rel(runtime.get("stdlib_more")),
        "lockFileURL": rel(runtime.get("lock_file")),
        "numpyURL": rel(runtime.get("numpy")),
        "expect": {rel(path): want for path, want in (runtime.get("expect") or {}).items()},
        "warmLab": lab,
    }
    return {key: value for key, value in message.items() if value is not None}


def start_script(html: str, page_url: str, docs: Path) -> str:
    """The head's scripts that start Python on a page with labs: a classic script that
    starts the worker (runtime/pyodide-worker.js) with the first lab placeholder's
    ``runtime`` and name as soon as the parser reaches it, keeping what the worker says
    until the runtime takes it (``self.attnStarted``, LabRuntime.start); the module that
    configures the runtime as the lab's controller would and starts it (it takes that
    worker), with the preload links of its modules before it (asked for first and at high
    priority). The classic script is inline (``inline_script``), after a JSON data block it
    reads (id ``attn-start``). "" without labs."""
    match = LAB_CONFIG.search(html)
    if not match:
        return ""
    data = json.loads(html_lib.unescape(match.group(1)))
    runtime = data.get("runtime") or {}
    start = {
        "worker": get_relative_url((JS / "runtime" / "pyodide-worker.js").as_posix(), page_url),
        "message": init_message(runtime, data["lab"], page_url),
    }
    early = f'<script type="application/json" id="attn-start">{json_data(start)}</script>'
    early += inline_script(docs, START_WORKER)
    config = json_data(runtime)  # JSON is a JavaScript expression
    lab = json.dumps(data["lab"])
    module = PurePosixPath(JS / "runtime" / "lab-runtime.js")
    runtime_js = _url(module, page_url)
    return (
        early
        + "".join(
            f'<link rel="modulepreload" href="{get_relative_url(m.as_posix(), page_url)}">'
            for m in static_imports(docs, module)
        )
        + (
            f'<script type="module" async>import {{ runtime }} from "{runtime_js}";'
            f"runtime.configure({config}, {lab});runtime.preload();</script>"
        )
    )


def links(html: str, page_url: str, docs: Path) -> str:
    """The modulepreload links for a page whose HTML is ``html`` at ``page_url``."""
    modules = static_imports(docs, PurePosixPath(JS / "main.js"))
    labs = sorted(set(LAB.findall(html)))
    if labs:
        for root in [JS / "labs" / "controller.js", *(JS / "labs" / f"{n}.js" for n in labs)]:
            modules += [m for m in static_imports(docs, PurePosixPath(root)) if m not in modules]
    return "".join(
        f'<link rel="modulepreload" href="{get_relative_url(m.as_posix(), page_url)}">'
        for m in modules
    )


def search_hold(docs: Path) -> str:
    """The search hold (runtime/search-hold.js) as an inline classic script."""
    return inline_script(docs, SEARCH_HOLD, HOLD_ATTRIBUTE)


def head_top(html: str, text: str) -> str:
    """``html`` with ``text`` right after its head's charset (``HEAD_START``), if it has one."""
    return HEAD_START.sub(lambda m: m.group(0) + text, html, count=1)


def on_post_template(html: str, template_name: str, config) -> str:
    """404.html (a theme template, not a page) with the search hold at the top of its head,
    as every page has it."""
    if template_name != "404.html":
        return html
    return head_top(html, search_hold(Path(config["docs_dir"])))


def on_post_page(html: str, page, config) -> str:
    """``html`` with the start script (pages with labs) and the search hold at the top of its
    head, and the preload links at its end."""
    if "</head>" not in html:
        return html
    docs = Path(config["docs_dir"])
    extra = links(html, page.url, docs)
    script = provide_script(sorted(set(LAB.findall(html))), page.url, docs)
    start = start_script(html, page.url, docs)
    if HEAD_START.search(html):
        html = head_top(html, start + search_hold(docs))
        # each module preloaded once: those of the start script are at the top already
        extra = "".join(link for link in LINK.findall(extra) if link not in start)
    return html.replace("</head>", extra + script + "</head>", 1)
