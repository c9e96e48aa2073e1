"""MkDocs hook: turn ```lab fences in lessons into live-lab placeholders.

A fence such as

    ```lab
    lab: attention_pattern
    causal: true
    ```

is parsed as YAML, validated against the lab's parameter schema, computed once here in
CPython with the same ``attention_labs`` code the browser runs, and replaced by a
``<div class="attn-lab" data-config="...">`` holding the parameters and that initial
result, so the page shows the result before any Python loads in the browser. A bad
fence fails the build with ``file:line: what is wrong``.
"""

from __future__ import annotations

import html
import json
import logging
import re
from pathlib import Path

import yaml
from attention_labs.labs import LabParameterError, lab_schema, run_lab
from mkdocs.exceptions import PluginError

log = logging.getLogger("mkdocs.hooks.lab_fences")

# A backtick fence's info string has no backtick (CommonMark): "```` ```lab ````" is code.
FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}(?!.*`)|~{3,})[ \t]*(?P<info>[^\s`]*)")
MANIFEST = Path("vendor/manifest.json")
WHEELS = Path("vendor/labs")
RUNTIME: dict = {}  # filled by on_config: where the browser finds Pyodide and the labs wheel


class LabFenceError(PluginError):
    """A lab fence that cannot be built; the message starts with ``file:line:``."""


def find_lab_fences(markdown: str, names=("lab",)):
    """Yield ``(start, end, indent, body, line_no)`` for each ```lab fence (or each fence
    whose info string is one of ``names``; build_scripts/cell_fences.py uses this).

    ``start``/``end`` are line indexes (end exclusive), ``line_no`` is 1-based. Fences
    nested in other fences (a lesson showing fence syntax) are skipped. An unclosed lab
    fence yields ``end=None``.
    """
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m["fence"], m["indent"]
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        if m["info"] in names:
            body = "\n".join(line[len(indent) :] for line in lines[i + 1 : j])
            yield i, (j + 1 if j < len(lines) else None), indent, body, i + 1
        i = j + 1


def parse_fence(body: str, where: str) -> tuple[str, dict]:
    """The lab name and parameters of one fence body; LabFenceError naming ``where``."""
    try:
        spec = yaml.safe_load(body) if body.strip() else None
    except yaml.YAMLError as err:
        raise LabFenceError(f"{where}: lab fence is not valid YAML: {err}") from None
    if not isinstance(spec, dict) or "lab" not in spec:
        raise LabFenceError(
            f"{where}: lab fence must be YAML with a 'lab:' key, e.g. 'lab: attention_pattern'"
        )
    spec = dict(spec)
    return spec.pop("lab"), spec


JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
PLAIN = re.compile(r"[A-Za-z0-9 .,:;?/-]|(?<=[A-Za-z0-9])_(?=[A-Za-z0-9])")


def _inert_json(data: str) -> str:
    """``data`` with every character of its strings that HTML or Markdown could act on
    (``<``, ``&``, ``\\``, ``*``, ``$``, a word-edge ``_``...) written as ``\\uXXXX``.

    In an admonition or a list item the placeholder is not a raw HTML block: Markdown
    runs over it as inline text. Outside strings JSON holds nothing Markdown acts on."""

    def inert(match: re.Match) -> str:
        text = json.loads(match.group(0))
        out = []
        for k, c in enumerate(text):
            if PLAIN.match(text, k):
                out.append(c)
            else:  # json.dumps writes a character beyond U+FFFF as its surrogate pair
                out.append(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else json.dumps(c)[1:-1])
        return '"' + "".join(out) + '"'

    return JSON_STRING.sub(inert, data)


def placeholder(name: str, out: dict, indent: str) -> str:
    """The HTML that replaces a fence: parameters, schema and initial result as JSON."""
    payload = {
        "lab": name,
        "params": out["params"],
        "schema": lab_schema(name),
        "initial": out,
        "runtime": RUNTIME,
    }
    # In an attribute, not a <script type="application/json">: Material's instant navigation
    # re-inserts the <script> elements of a new page and would run the JSON as JavaScript.
    # _inert_json leaves no '<' or '&' for HTML or Markdown to act on; escape adds &quot;.
    data = _inert_json(json.dumps(payload, separators=(",", ":"), allow_nan=False))
    label = html.escape(f"Interactive lab: {name.replace('_', ' ')}")
    lines = [
        f'<div class="attn-lab" data-lab="{html.escape(name)}" role="group" aria-label="{label}" '
        f'data-config="{html.escape(data, quote=True)}">',
        '<p class="attn-lab-noscript">This lab needs JavaScript; its first result is '
        "computed when the page loads.</p>",
        "</div>",
    ]
    return "\n".join(indent + line for line in lines)


def render_lab_fences(markdown: str, src_path: str, line_offset: int = 0) -> str:
    """Replace every ```lab fence of one page; raise LabFenceError on the first bad one.

    ``line_offset``: lines of the file before ``markdown`` (front matter MkDocs removed).
    """
    lines = markdown.split("\n")
    for start, end, indent, body, line_no in reversed(list(find_lab_fences(markdown))):
        where = f"docs/{src_path}:{line_no + line_offset}"
        if end is None:
            raise LabFenceError(f"{where}: lab fence is never closed (add a line with ```)")
        name, params = parse_fence(body, where)
        try:
            out = run_lab(name, params)
        except LabParameterError as err:
            raise LabFenceError(f"{where}: {err}") from None
        lines[start:end] = ["", placeholder(name, out, indent), ""]
    return "\n".join(lines)


# --- MkDocs events -------------------------------------------------------------------


def on_config(config):
    manifest = Path(config["docs_dir"]) / MANIFEST
    if not manifest.is_file():
        raise PluginError(
            f"{manifest} is missing: the browser runtime is not vendored. Run 'make vendor' "
            "(or 'make build'), which fetches Pyodide, NumPy and KaTeX and builds the labs wheel."
        )
    wheels = sorted((Path(config["docs_dir"]) / WHEELS).glob("attention_labs-*.whl"))
    if len(wheels) != 1:
        raise PluginError(
            f"expected exactly one labs wheel in {Path(config['docs_dir']) / WHEELS}, found "
            f"{len(wheels)}: run 'make wheel' to rebuild it from labs_py/"
        )
    settings = config["extra"].get("labs") or {}
    RUNTIME.clear()
    RUNTIME.update(
        wheel=f"{WHEELS.as_posix()}/{wheels[0].name}",
        # Self-hosted by default; a site may opt into a CDN with extra.labs.pyodide_index_url.
        pyodide_index_url=settings.get("pyodide_index_url") or None,
        pyodide="vendor/pyodide/",
    )
    return config


def on_page_markdown(markdown, page, config, files):
    # MkDocs has cut the front matter (and the blank lines after it) off `markdown`.
    try:
        source = page.file.content_string
    except (OSError, ValueError):
        source = markdown
    offset = source[: -len(markdown)].count("\n") if markdown and source.endswith(markdown) else 0
    return render_lab_fences(markdown, page.file.src_uri, line_offset=offset)
