"""Where the browser finds Pyodide and the labs wheel: computed once per build (on_config)
and written into every placeholder that may start Python (labs, maps, cells, exercises).

Also the one way placeholders carry JSON in an HTML attribute (``data_attribute``)."""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path

from mkdocs.exceptions import PluginError

from build_scripts.vendor.labs_wheel import archive_of

MANIFEST = Path("vendor/manifest.json")
WHEELS = Path("vendor/labs")


def _file_check(path: Path) -> dict:
    """{size, sha256} of a file the worker checks after downloading it."""
    data = path.read_bytes()
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def configure(config) -> dict:
    """The runtime (``BuildState.runtime``: {wheel, labs (its archive, where there is
    one), pyodide_index_url, pyodide, expect, ...})
    from the vendored runtime under ``config["docs_dir"]`` and ``extra.labs``; PluginError
    saying which make target to run when it is missing."""
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
    wheel = f"{WHEELS.as_posix()}/{wheels[0].name}"
    # The wheel's files as the .tar.gz the worker unpacks itself (labs_wheel.write_archive),
    # where 'make wheel' wrote one; the wheel is what Pyodide installs otherwise.
    archive = archive_of(wheels[0])
    labs = f"{WHEELS.as_posix()}/{archive.name}" if archive.is_file() else None
    checked = {wheel: wheels[0]} | ({labs: archive} if labs else {})
    runtime = dict(
        wheel=wheel,
        # Self-hosted by default; a site may opt into a CDN with extra.labs.pyodide_index_url.
        pyodide_index_url=settings.get("pyodide_index_url") or None,
        pyodide="vendor/pyodide/",
        # site-relative path -> {size, sha256}: the worker names a cut-off or damaged file
        # (not the labs wheel and archive in make serve's builds, build_scripts/live.py:
        # each labs edit changes them, and only the pages that name the edited lab are
        # rendered again)
        expect={path: _file_check(file) for path, file in checked.items()}
        if settings.get("check_wheel", True)
        else {},
    )
    if labs:
        runtime["labs"] = labs
    # The stdlib and NumPy precompiled at vendor time (build_scripts/vendor/vendor.py), on
    # our own host only: a CDN serves the official files.
    pre = json.loads(manifest.read_text("utf-8")).get("precompiled")
    if pre and not runtime["pyodide_index_url"]:
        stdlib, lock = f"vendor/{pre['stdlib']}", f"vendor/{pre['lock_file']}"
        runtime.update(stdlib=stdlib, stdlib_more=f"vendor/{pre['stdlib_more']}", lock_file=lock)
        # The worker downloads NumPy alongside the interpreter instead of after it: the
        # archive it unpacks itself, or else the wheel Pyodide's loadPackage installs.
        if "numpy" in pre.get("archives", {}):
            numpy = runtime["numpy"] = f"vendor/{pre['archives']['numpy']}"
            runtime["expect"][numpy] = _file_check(Path(config["docs_dir"]) / numpy)
        elif "numpy" in pre.get("wheels", {}):
            runtime["numpy"] = f"vendor/{pre['wheels']['numpy']}"
        runtime["expect"][stdlib] = _file_check(Path(config["docs_dir"]) / stdlib)
    return runtime


JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
PLAIN = re.compile(r"[A-Za-z0-9 .,:;?/-]|(?<=[A-Za-z0-9])_(?=[A-Za-z0-9])")


def inert_json(data: str) -> str:
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


def data_attribute(payload: dict) -> str:
    """``payload`` as inert JSON, escaped for a double-quoted HTML attribute.

    In an attribute, not a <script type="application/json">: Material's instant navigation
    re-inserts the <script> elements of a new page and would run the JSON as JavaScript."""
    data = inert_json(json.dumps(payload, separators=(",", ":"), allow_nan=False))
    return html.escape(data, quote=True)


def inert_text(text: str) -> str:
    """HTML text that Markdown and arithmatex leave alone: all but letters, digits and
    spaces as character references (newlines too, so the block stays one line)."""
    return "".join(c if c.isalnum() and c.isascii() or c == " " else f"&#{ord(c)};" for c in text)
