"""MkDocs hook: the companion notebooks, executed only when what they read changes.

The source kept in git is ``docs/notebooks/<name>.py`` (jupytext percent format). For each:

* **Same source, same bytes.** ``read`` gives every cell an id derived from its position
  and content (jupytext and nbformat draw random ones).
* **Executed once per change of its inputs** (``prepare``, in on_files). nbclient runs it
  in a fresh kernel of this Python (a cell that raises fails the build, naming the file),
  with stream outputs merged and no timings recorded, and keeps the executed notebook in
  the cache folder (``extra.notebooks.cache``, relative to mkdocs.yml) with what it read:
  every file of the project its kernel opened (the labs' modules and data files, anything
  under docs/: a Python audit hook in the kernel lists them) and their sha256. A later
  build executes it again only when its source, one of those files, this Python or its
  installed packages changed; the executions a build needs run side by side, one per CPU.
* **The page** is mkdocs-jupyter's rendering of that executed notebook: ``prepare`` points
  the page's source file at it, and mkdocs-jupyter (``execute: false``) caches its HTML
  keyed by the file's bytes. Math in the page's headings is shown in the table of contents
  as in a lesson (``on_page_context``).
* **The download** ``<site>/notebooks/<name>.ipynb`` (``on_post_build``) is the notebook
  without outputs whose first cell installs what it needs from this site: Matplotlib (and
  NumPy) from PyPI and the labs package as a pure-Python wheel (``vendor/labs/py3/``, from
  ``make wheel``) at ``site_url``, so the file runs outside the repository.

``extra.notebooks.execute`` is true (all), false (pages without outputs, nothing cached)
or a list of docs-relative paths to execute (tests build the others without outputs).

``on_post_page`` drops the empty ``<script src="">`` that mkdocs-jupyter's template writes
where MathJax would load (the site renders math with KaTeX): browsers fire an error event
for it on every notebook page.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import posixpath
import re
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import urljoin

import jupytext
import nbformat
from mkdocs.exceptions import PluginError
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from build_scripts.files import write_atomic

FOLDER = "notebooks"
WHEELS = "vendor/labs/py3"  # under docs/: the labs as a pure-Python wheel (make wheel)
REPO = Path(__file__).resolve().parents[2]
FORMAT = 1  # of the cache's entries: a change here invalidates them all
EMPTY_SCRIPT = re.compile(r'<script src="">\s*</script>\n?')
INLINE_MATH = re.compile(r"(?<![$\\])\$(?!\$)(.+?)(?<![$\\])\$(?!\$)")

# Run first in every kernel (IPython's exec_lines: silent, not numbered): record the path
# of every file the kernel opens, one a line, into the file named by {log!r}.
RECORD_READS = """\
def _record_reads(log):
    import os, sys
    out = open(log, "a", buffering=1, encoding="utf-8")
    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            out.write(os.path.abspath(os.fsdecode(args[0])) + "\\n")
    sys.addaudithook(hook)
_record_reads({log!r})
del _record_reads
"""

INSTALL = """\
# Installs what this notebook needs: Matplotlib and NumPy from PyPI, and this site's labs
# package (attention_labs, pure Python) from the site itself.
%pip install matplotlib {wheel}"""


@dataclass(frozen=True)
class Settings:
    """What on_config reads for the notebooks (``extra.notebooks`` and the files)."""

    execute: bool | frozenset[str]  # all, none, or these docs-relative paths
    cache: Path  # the executed notebooks and what each read
    wheel: str  # the pure-Python labs wheel's address: site_url + vendor/labs/py3/...
    docs: Path
    # A file a kernel opens under one of these is an input of its notebook: the project
    # (mkdocs.yml's folder), this hook's repository (the labs, installed editable), docs/.
    roots: tuple[Path, ...]
    # make serve's quick rebuild after a labs edit (build_scripts/live.py): a notebook whose
    # cache entry is out of date keeps its last executed outputs for now (logged with
    # ``stale_notebooks``), and the next build executes it. Never in make build.
    reuse_stale: bool = False


def configure(config) -> Settings:
    """``extra.notebooks`` and the labs wheel's address; PluginError when ``make wheel``
    has not written the wheel under docs/."""
    options = config["extra"].get("notebooks") or {}
    execute = options.get("execute", True)
    if not isinstance(execute, bool):
        execute = frozenset(execute)
    # mkdocs.yml's folder (a test's plain dict has none: the working directory's)
    base = Path(getattr(config, "config_file_path", None) or "mkdocs.yml").resolve().parent
    wheels = sorted((Path(config["docs_dir"]) / WHEELS).glob("attention_labs-*-py3-none-any.whl"))
    if len(wheels) != 1:
        raise PluginError(
            f"expected one pure-Python labs wheel in {Path(config['docs_dir']) / WHEELS}, "
            f"found {len(wheels)}: run 'make wheel' (the notebooks' first cell installs it)"
        )
    return Settings(
        execute=execute,
        cache=base / options.get("cache", "build/cache/notebooks"),
        wheel=urljoin(config.get("site_url") or "", f"{WHEELS}/{wheels[0].name}"),
        docs=Path(config["docs_dir"]).resolve(),
        roots=(base, REPO, Path(config["docs_dir"]).resolve()),
        reuse_stale=bool(options.get("reuse_stale", False)),
    )


# --- the notebook -------------------------------------------------------------------


def read(path: Path, first: list | None = None) -> nbformat.NotebookNode:
    """The notebook of jupytext source ``path``, with the cells ``first`` before its own,
    each cell's id derived from its position and content (``cell_id``)."""
    notebook = jupytext.read(path)
    notebook.metadata.pop("jupytext", None)  # the .py pairing, meaningless in a download
    notebook.cells[:0] = first or []
    for index, cell in enumerate(notebook.cells):
        cell.id = cell_id(index, cell)
    return notebook


def cell_id(index: int, cell) -> str:
    """``NNN-`` (the position, so ids are unique) and 8 hex digits of the cell's type and
    source: the same notebook always has the same ids."""
    digest = hashlib.sha256(f"{cell.cell_type}\n{cell.source}".encode()).hexdigest()
    return f"{index:03d}-{digest[:8]}"


def install_cell(wheel: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(INSTALL.format(wheel=wheel))


# --- executing, cached --------------------------------------------------------------


def environment() -> str:
    """This Python and its installed distributions (name and version), one a line: the
    kernel runs this interpreter, so they are inputs of every notebook.

    Each once: the labs can be found more than once (installed editable, their egg-info
    in labs_py/ that `pip wheel` writes, a project copy's labs_py/ on PYTHONPATH), and a
    project copy then has the same environment as the repository it was copied from."""
    packages = sorted({f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()})
    return "\n".join([sys.executable, sys.version, *packages])


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None  # a file looked for and absent is an input too: it may appear


def _inputs(opened: list[str], roots: tuple[Path, ...]) -> dict[str, str | None]:
    """The files under ``roots`` among ``opened`` (the kernel's log), with their sha256:
    the Python environment (its own key) and bytecode caches left out."""
    inside = tuple(str(root) + os.sep for root in roots)
    outside = (sys.prefix + os.sep, sys.base_prefix + os.sep)
    return {
        path: _sha256(Path(path))
        for path in sorted(set(opened))
        if path.startswith(inside)
        and not path.startswith(outside)
        and "__pycache__" not in Path(path).parts
    }


class Cache:
    """The executed notebooks of one cache folder: ``<name>.ipynb`` and ``<name>.json``
    ({"key", "inputs": {path: sha256 or null}}), one entry per notebook name."""

    def __init__(self, folder: Path, env: str):
        self.folder = folder
        self.env = env

    def key(self, notebook) -> str:
        text = "\n".join([str(FORMAT), self.env, nbformat.writes(notebook)])
        return hashlib.sha256(text.encode()).hexdigest()

    def hit(self, name: str, key: str) -> Path | None:
        """The executed notebook if its entry has ``key`` and its inputs are unchanged."""
        try:
            entry = json.loads((self.folder / f"{name}.json").read_text("utf-8"))
        except (OSError, ValueError):
            return None
        executed = self.folder / f"{name}.ipynb"
        fresh = entry.get("key") == key and all(
            _sha256(Path(p)) == h for p, h in entry.get("inputs", {}).items()
        )
        return executed if fresh and executed.is_file() else None

    def store(self, name: str, key: str, notebook, inputs: dict) -> Path:
        executed = self.folder / f"{name}.ipynb"
        write_atomic(executed, nbformat.writes(notebook))
        # the entry last: a reader that finds it finds its notebook
        write_atomic(self.folder / f"{name}.json", json.dumps({"key": key, "inputs": inputs}))
        return executed


async def _execute(notebook, where: str, cwd: Path, slots: asyncio.Semaphore) -> list[str]:
    """Execute ``notebook`` in place in a fresh kernel started in ``cwd``; returns the
    paths its kernel opened. PluginError naming ``where`` if a cell raises."""
    async with slots:
        with tempfile.TemporaryDirectory(prefix="notebook-reads.") as tmp:
            log = Path(tmp) / "opened"
            client = NotebookClient(
                notebook,
                timeout=600,  # seconds per cell
                allow_errors=False,
                record_timing=False,  # dates in the metadata: never the same bytes
                coalesce_streams=True,  # one output per stream, however the kernel flushed
                resources={"metadata": {"path": str(cwd)}},
                extra_arguments=[f"--IPKernelApp.exec_lines={RECORD_READS.format(log=str(log))}"],
            )
            try:
                await client.async_execute()
            except CellExecutionError as err:
                raise PluginError(f"{where}: a cell raised:\n{err}") from None
            return log.read_text("utf-8").splitlines() if log.is_file() else []


def _execute_all(jobs: list[tuple]) -> list[list[str]]:
    """``_execute`` each ``(notebook, where, cwd)`` of ``jobs``, one kernel per CPU at once."""

    async def run():
        slots = asyncio.Semaphore(os.cpu_count() or 1)
        return await asyncio.gather(*(_execute(*job, slots) for job in jobs))

    return asyncio.run(run())


def _executes(settings: Settings, src_uri: str) -> bool:
    execute = settings.execute
    return execute if isinstance(execute, bool) else src_uri in execute


def prepare(files, settings: Settings, log=None) -> dict[str, Path]:
    """on_files: each notebook page's source file (``notebooks/<name>.py``) pointed at its
    notebook as mkdocs-jupyter should render it, executed (from the cache, or executed now
    and cached) or, when not to be executed, without outputs. Returns {src_uri: path}.

    With ``settings.reuse_stale`` (make serve, after a labs edit) a notebook whose source is
    unchanged but whose cache entry is out of date keeps its last outputs."""
    pages = [f for f in files if posixpath.dirname(f.src_uri) == FOLDER and f.src_uri[-3:] == ".py"]
    cache = Cache(settings.cache, environment())
    ready: dict[str, Path] = {}
    stale: list[str] = []
    changed = {
        f.src_uri for f in pages if settings.reuse_stale and _source_changed(settings.cache, f)
    }
    todo = []  # (file, name, key, notebook) to execute
    for file in pages:
        name = Path(file.src_uri).stem
        notebook = read(Path(file.abs_src_path))
        if not _executes(settings, file.src_uri):
            ready[file.src_uri] = settings.cache / "unexecuted" / f"{name}.ipynb"
            write_atomic(ready[file.src_uri], nbformat.writes(notebook))
            continue
        key = cache.key(notebook)
        hit = cache.hit(name, key)
        last = settings.cache / f"{name}.ipynb"
        if hit is not None:
            ready[file.src_uri] = hit
        elif settings.reuse_stale and file.src_uri not in changed and last.is_file():
            ready[file.src_uri] = last
            stale.append(name)
        else:
            todo.append((file, name, key, notebook))
    if stale and log is not None:
        log.info(
            "notebook outputs from before the last edit (executed next): %s",
            ", ".join(stale),
            extra={"stale_notebooks": stale},
        )
    if todo and log is not None:
        log.info("executing %d notebook(s): %s", len(todo), ", ".join(t[1] for t in todo))
    runs = [(nb, f"docs/{f.src_uri}", Path(f.abs_src_path).parent) for f, _, _, nb in todo]
    for (file, name, key, notebook), opened in zip(todo, _execute_all(runs), strict=True):
        inputs = _inputs(opened, settings.roots)
        ready[file.src_uri] = cache.store(name, key, notebook, inputs)
    for file in pages:
        # What mkdocs-jupyter reads and renders. Its page files wrap MkDocs' and compute
        # their own abs_src_path: set it on them (on_files after the plugin's).
        file.abs_src_path = str(ready[file.src_uri])
    return ready


def _source_changed(folder: Path, file) -> bool:
    """True when notebook page ``file``'s source is newer than its last executed notebook
    (or there is none): its own edit, which even a quick rebuild executes."""
    last = folder / f"{Path(file.src_uri).stem}.ipynb"
    try:
        return Path(file.abs_src_path).stat().st_mtime > last.stat().st_mtime
    except OSError:
        return True


# --- the page and the download ------------------------------------------------------


def is_notebook_page(page) -> bool:
    return page.file.src_uri.startswith(FOLDER + "/")


def on_page_context(page) -> None:
    """A notebook page's table of contents with its headings' ``$...$`` math written
    ``\\(...\\)``, which KaTeX renders there as in a lesson's (katex-init.js renders $ only
    inside the notebook's body)."""
    if not is_notebook_page(page):
        return
    links = list(page.toc)
    while links:
        link = links.pop()
        link.title = INLINE_MATH.sub(r"\\(\1\\)", link.title)
        links += link.children


def on_post_page(output: str, page, config) -> str:
    """A notebook page's HTML without mkdocs-jupyter's empty MathJax ``<script src="">``."""
    if is_notebook_page(page):
        return EMPTY_SCRIPT.sub("", output)
    return output


def download(path: Path, settings: Settings) -> str:
    """The .ipynb readers download for notebook source ``path``: no outputs, and a first
    cell that installs what it needs from the site."""
    notebook = read(path, first=[install_cell(settings.wheel)])
    return nbformat.writes(notebook)


def on_post_build(config, settings: Settings) -> None:
    target = Path(config["site_dir"]) / FOLDER
    for path in sorted((settings.docs / FOLDER).glob("*.py")):
        write_atomic(target / f"{path.stem}.ipynb", download(path, settings))
