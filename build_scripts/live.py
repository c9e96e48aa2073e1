"""`make serve`: the site served as you edit it. Save a file and the open page reloads.

    python -m build_scripts.live [--port 8000] [--prefix /] [--root .]

It serves site/ like build_scripts/serve.py (``--isolate``: cross-origin isolated, so a
cell's Stop keeps its variables), with a ``LiveChannel``: every page it sends listens for
"reload" (the page reloads) and "failed" (the page shows the build's message and stays as it
was). ``watchfiles`` watches the sources; what changed decides the rebuild (``plan``):

* a lesson or page (``docs/**/*.md``) whose front matter did not change: only that page is
  rendered again (the hooks run on it as in a full build), in a builder process that keeps
  MkDocs' state (config, files, nav, templates) from its last build: about a second;
* ``labs_py/``: the labs wheel is rebuilt with its sources only (``labs_wheel.dev_wheel``,
  in milliseconds: Pyodide compiles the labs as it imports them; ``make wheel`` precompiles)
  while a new builder imports the new labs; it renders the pages that name an edited lab
  (``labs/<name>.py``), or every page for any other file of labs_py/, each notebook keeping
  its last outputs; then the notebooks that read the labs are executed in a second build,
  and the page reloads again. (The pages of a development build do not check the wheel's
  checksum, which each labs edit changes.)
* ``build_scripts/hooks/`` (and the modules it imports, ``HOOK_SOURCES``): a new builder,
  then every page;
* ``mkdocs.yml``, ``overrides/``, a new, deleted or renamed file, a front matter, a
  notebook, ``docs/data/`` or the glossary: every page again (MkDocs' dirty build with every
  page marked changed: static files are copied only when they changed);
* a stylesheet, script or other file of docs/: copied into site/.

site/ is then a development build: it lacks the compressed copies and, after a page-only
rebuild, the search index still has the page's old text. ``make build`` makes it whole.
A failed build leaves site/ as it was; the next save builds again.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WATCHED = ("docs", "labs_py", "build_scripts", "overrides", "mkdocs.yml")
# What MkDocs imports of build_scripts/: the hook package and the modules it uses. Other
# tools (the bench, the gates, this file) do not change the site.
HOOK_SOURCES = (
    "build_scripts/hooks/",
    "build_scripts/mkdocs_hooks.py",
    "build_scripts/compress.py",
    "build_scripts/files.py",
)
IGNORED_PARTS = {"vendor", "__pycache__", ".git", "node_modules", ".ipynb_checkpoints"}
IGNORED_SUFFIXES = (".pyc", ".swp", ".swx", ".tmp", "~", ".kate-swp")
# Pages others are built from, and the classic scripts every page (search-hold.js) or every
# lab page (start-worker.js) carries inline (hooks/preload.py: INLINE): each page again.
FULL_DOCS = (
    "data/",
    "glossary.md",
    "index.md",
    "javascripts/runtime/start-worker.js",
    "javascripts/runtime/search-hold.js",
)
LAB_MODULE = re.compile(r"^labs_py/attention_labs/labs/(?P<name>[a-z][a-z0-9_]*)\.py$")


# --------------------------------------------------------------------------- the plan


@dataclass
class Plan:
    """What one batch of changed files needs, in order: a new wheel, a new builder, then
    every page, or only some pages and static files."""

    wheel: bool = False
    restart: bool = False
    full: bool = False
    labs: list[str] = field(default_factory=list)  # edited lab modules (labs/<name>.py)
    pages: list[str] = field(default_factory=list)  # docs-relative Markdown pages
    static: list[str] = field(default_factory=list)  # docs-relative other files

    @property
    def empty(self) -> bool:
        return not (self.wheel or self.restart or self.full or self.pages or self.static)


def watched(path: Path, root: Path) -> bool:
    """True for a file of the sources (not docs/vendor, caches, editors' temporary files)."""
    try:
        rel = Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return False
    if not rel.parts or rel.parts[0] not in WATCHED:
        return False
    if IGNORED_PARTS & set(rel.parts[:-1]) or rel.name.startswith((".#", ".")):
        return False
    if any(part.endswith(".egg-info") for part in rel.parts):  # written by pip wheel
        return False
    if rel.parts[0] == "build_scripts" and not rel.as_posix().startswith(HOOK_SOURCES):
        return False
    return not rel.name.endswith(IGNORED_SUFFIXES)


def plan(changes, root: Path, front_matter: dict[str, str]) -> Plan:
    """The rebuild for ``changes`` ({(change, path)}: watchfiles' added, modified, deleted)
    under ``root``; ``front_matter``: each page's front matter at the builder's last build."""
    out = Plan()
    for change, path in changes:
        path = Path(path)
        if not watched(path, root):
            continue
        rel = path.resolve().relative_to(root.resolve()).as_posix()
        top = rel.split("/")[0]
        kind = getattr(change, "name", str(change))
        if top == "labs_py":
            out.wheel = out.restart = True
            lab = LAB_MODULE.match(rel)
            if lab and kind == "modified":
                out.labs.append(lab["name"])  # the pages that name it, below
            else:
                out.full = True
        elif top == "build_scripts":
            out.restart = out.full = True
        elif top in ("overrides", "mkdocs.yml"):
            out.full = True
        elif top == "docs":
            doc = rel[len("docs/") :]
            if kind != "modified" or doc.startswith(FULL_DOCS) or doc.startswith("notebooks/"):
                out.full = True
            elif doc.endswith(".md"):
                if doc not in front_matter or front_matter[doc] != read_front_matter(path):
                    out.full = True
                elif doc not in out.pages:
                    out.pages.append(doc)
            elif doc not in out.static:
                out.static.append(doc)
    if out.full:
        out.pages, out.static, out.labs = [], [], []
    elif out.labs:  # a new builder renders the pages that name an edited lab, and these
        out.pages = sorted(set(out.pages) | set(pages_naming(root, out.labs)))
    return out


def pages_naming(root: Path, labs: list[str]) -> list[str]:
    """The docs-relative Markdown pages whose source names one of ``labs`` (a lab fence's
    ``lab: <name>``, a numbers fence's ``run_lab("<name>")``...): those a lab edit changes."""
    docs = root / "docs"
    words = re.compile(r"\b(" + "|".join(map(re.escape, labs)) + r")\b")
    return [
        p.relative_to(docs).as_posix()
        for p in sorted(docs.rglob("*.md"))
        if "vendor" not in p.relative_to(docs).parts and words.search(p.read_text("utf-8"))
    ]


def read_front_matter(path: Path) -> str | None:
    """The YAML front matter block of a Markdown file (None without one)."""
    try:
        text = Path(path).read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---", 4)
    return text[: end + 4] if end > 0 else None


# --------------------------------------------------------------------------- the builder


class Builder:
    """MkDocs in this process, keeping what the last build made, so that one page can be
    rendered again alone. Runs in the builder process (``--builder``)."""

    def __init__(self, root: Path, config_file: Path, site_dir: Path | None):
        self.root, self.config_file, self.site_dir = root, config_file, site_dir
        self.state: dict | None = None
        self.front_matter: dict[str, str] = {}
        self.warnings: list[str] = []
        self.stale: list[str] = []
        logging.getLogger("mkdocs.commands.build").addFilter(
            lambda record: "'dirty' build is being performed" not in record.getMessage()
        )
        handler = logging.Handler(logging.WARNING)
        handler.emit = self._record  # type: ignore[method-assign]
        logging.getLogger("mkdocs").addHandler(handler)
        stale = logging.Handler(logging.INFO)
        stale.emit = self._record_stale  # type: ignore[method-assign]
        logging.getLogger("mkdocs.hooks").addHandler(stale)
        logging.getLogger("mkdocs.hooks").setLevel(logging.INFO)

    def _record(self, record):
        message = record.getMessage()
        if "'dirty' build is being performed" not in message:
            self.warnings.append(message)

    def _record_stale(self, record):
        self.stale += getattr(record, "stale_notebooks", [])

    def full(self, reuse_stale: bool = False, only: list[str] | None = None) -> dict:
        """Every page (a dirty build with every page marked changed: only changed static
        files are copied), or ``only`` these. ``reuse_stale``: notebooks keep outputs a labs
        edit made stale."""
        from mkdocs.commands import build as mkbuild
        from mkdocs.config import load_config
        from mkdocs.structure.files import File

        overrides = {"site_dir": str(self.site_dir)} if self.site_dir else {}
        config = load_config(str(self.config_file), **overrides)
        config["extra"].setdefault("notebooks", {})
        config["extra"]["notebooks"] = {**config["extra"]["notebooks"], "reuse_stale": reuse_stale}
        # the labs wheel changes with each labs edit: no page holds its checksum, so a page
        # this build does not render still takes the new one (make build's pages do)
        config["extra"]["labs"] = {**(config["extra"].get("labs") or {}), "check_wheel": False}
        state: dict = {"config": config}

        def keep_nav(nav, config, files):
            state.update(nav=nav, files=files)
            return nav

        def keep_env(env, config, files):
            state["env"] = env
            return env

        config.plugins._register_event("nav", keep_nav)
        config.plugins._register_event("env", keep_env)
        self._quicker(config, static_templates=not reuse_stale)
        modified = File.is_modified
        File.is_modified = lambda f: (
            (only is None or f.src_uri in only) if f.is_documentation_page() else modified(f)
        )
        self.warnings, self.stale = [], []
        try:
            mkbuild.build(config, dirty=True)
        finally:
            File.is_modified = modified
        self.state = state
        docs = Path(config["docs_dir"])
        self.front_matter = {
            f.src_uri: read_front_matter(docs / f.src_uri)
            for f in state["files"].documentation_pages()
            if f.src_uri.endswith(".md")
        }
        built = len(self.front_matter) if only is None else len(only)
        return {"pages": built, "stale": self.stale}

    def _quicker(self, config, static_templates: bool) -> None:
        """What a development build can leave out. The search index: it stays as
        ``make build`` wrote it (Material's search plugin parses every page's HTML again, a
        quarter of a build). The templates: compiled once, kept in build/cache/jinja/ for
        the next builder. After a labs edit (``static_templates=False``): 404.html and
        sitemap.xml, which only the nav changes."""
        import jinja2

        search = [p for name, p in config.plugins.items() if name.endswith("search")]
        for event in ("page_context", "post_build"):
            config.plugins.events[event] = [
                m
                for m in config.plugins.events[event]
                if getattr(m, "__self__", None) not in search
            ]
        folder = self.root / "build" / "cache" / "jinja"
        folder.mkdir(parents=True, exist_ok=True)

        def bytecode(env, config, files):
            env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(folder))
            return env

        config.plugins._register_event("env", bytecode)
        if not static_templates:
            config.theme.static_templates.clear()

    def pages(self, src_uris: list[str]) -> dict:
        """Render ``src_uris`` again with the last build's config, files, nav and templates."""
        from mkdocs.commands import build as mkbuild
        from mkdocs.structure.files import InclusionLevel

        config, files = self.state["config"], self.state["files"]
        doc_files = files.documentation_pages(inclusion=InclusionLevel.is_included)
        self.warnings = []
        for uri in src_uris:
            file = files.get_file_from_path(uri)
            mkbuild._populate_page(file.page, config, files)
            mkbuild._build_page(file.page, config, doc_files, self.state["nav"], self.state["env"])
            site = Path(config["site_dir"]) / file.dest_uri
            for copy in (site.with_name(site.name + ".gz"), site.with_name(site.name + ".br")):
                copy.unlink(missing_ok=True)  # a precompressed copy of the old page
        return {"pages": len(src_uris)}

    def static(self, src_uris: list[str]) -> dict:
        files = self.state["files"]
        for uri in src_uris:
            file = files.get_file_from_path(uri)
            if file is None:
                return self.full()
            file.copy_file()
            site = Path(self.state["config"]["site_dir"]) / file.dest_uri
            for copy in (site.with_name(site.name + ".gz"), site.with_name(site.name + ".br")):
                copy.unlink(missing_ok=True)
        return {"files": len(src_uris)}

    def handle(self, request: dict) -> dict:
        t0 = time.perf_counter()
        try:
            if request["do"] == "pages" and self.state is not None:
                done = self.pages(request["pages"])
            elif request["do"] == "static" and self.state is not None:
                done = self.static(request["static"])
            else:
                done = self.full(request.get("reuse_stale", False), request.get("only"))
        except Exception as err:  # any failure of the build is the contributor's to see
            message = str(err) or type(err).__name__
            if not isinstance(err, (OSError, ValueError)) and "PluginError" not in repr(type(err)):
                message = f"{type(err).__name__}: {message}"
            return {"ok": False, "error": message, "seconds": time.perf_counter() - t0}
        if self.warnings:
            return {"ok": False, "error": "\n".join(self.warnings), "seconds": 0}
        return {
            "ok": True,
            "seconds": time.perf_counter() - t0,
            "front_matter": self.front_matter,
            **done,
        }


# What a builder imports before it is asked anything: the build's third-party modules, never
# the project's (the hooks and the labs are imported by its first build, as they are then).
PRELOAD = (
    "mkdocs.commands.build",
    "mkdocs.config",
    "material.plugins.search.plugin",
    "mkdocs_jupyter.plugin",
    "jupytext",
    "nbclient",
    "numpy",
    "yaml",
    "markdown",
    "pymdownx.superfences",
    "pymdownx.arithmatex",
    "pymdownx.highlight",
    "jinja2",
)


def builder_main(args) -> int:
    """The builder process: one JSON request a line on stdin, one answer a line on stdout."""
    import importlib

    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    out = sys.stdout
    sys.stdout = sys.stderr  # anything printed by a build goes to the log, not the answers
    builder = Builder(Path(args.root), Path(args.config), Path(args.site) if args.site else None)
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    for line in sys.stdin:
        out.write(json.dumps(builder.handle(json.loads(line))) + "\n")
        out.flush()
    return 0


class BuilderProcess:
    """The builder process seen from the server: ``ask(request) -> answer``."""

    def __init__(self, root: Path, config: Path, site: Path | None, env: dict):
        cmd = [sys.executable, "-m", "build_scripts.live", "--builder", "--root", str(root)]
        cmd += ["--config", str(config)] + (["--site", str(site)] if site else [])
        self.proc = subprocess.Popen(
            cmd, cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.ready = threading.Thread(target=self.proc.stdout.readline, daemon=True)
        self.ready.start()  # it imports MkDocs meanwhile

    def ask(self, request: dict) -> dict:
        self.ready.join()
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            return {"ok": False, "error": "the builder stopped (see the log above)"}
        return json.loads(line)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


# --------------------------------------------------------------------------- the loop


class Live:
    """The watcher's side: plans each batch of changes, runs it, tells the pages."""

    def __init__(self, root: Path, channel, config: Path, site: Path | None, say=print):
        self.root, self.channel, self.config, self.site, self.say = root, channel, config, site, say
        self.env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
        self.builder = BuilderProcess(root, config, site, self.env)
        self.spare: BuilderProcess | None = None  # started after each build, for the next
        self.front_matter: dict[str, str] = {}
        self.builds: list[dict] = []  # each build's answer and what it was for (benchmarks)
        self.lock = threading.Lock()  # one rebuild at a time; a batch waits for the last

    def _builder(self) -> BuilderProcess:
        return BuilderProcess(self.root, self.config, self.site, self.env)

    def start(self) -> dict:
        """The builder's first build (its state for page-only rebuilds), then a spare."""
        with self.lock:
            answer = self._ask({"do": "full"}, "start")
            self.spare = self._builder()
            return answer

    def _ask(self, request: dict, what: str) -> dict:
        answer = self.builder.ask(request)
        if self.builder.proc.poll() is not None:  # it died (see its log): a new one next
            self.builder, self.spare = self.spare or self._builder(), None
            self.front_matter = {}  # the new one has no pages yet: the next edit builds all
        if answer.get("front_matter") is not None:
            self.front_matter = answer.pop("front_matter")
        answer["what"] = what
        self.builds.append(answer)
        return answer

    def wheel(self) -> str | None:
        """The labs wheel from labs_py/, sources only (labs_wheel.dev_wheel); the error's
        text, or None."""
        from build_scripts.vendor.labs_wheel import dev_wheel

        try:
            dev_wheel(self.root / "labs_py" / "attention_labs", self.root / "docs/vendor/labs")
        except (OSError, ValueError) as err:
            return f"the labs wheel: {err} (run make wheel)"
        return None

    def run(self, changes) -> Plan:
        """Rebuild for one batch of changes and tell the pages."""
        with self.lock:
            return self._run(changes)

    def _run(self, changes) -> Plan:
        todo = plan(changes, self.root, self.front_matter)
        if todo.empty:
            return todo
        t0 = time.perf_counter()
        names = sorted(
            {
                Path(p).resolve().relative_to(self.root.resolve()).as_posix()
                for _, p in changes
                if watched(Path(p), self.root)
            }
        )
        self.say(f"live: {', '.join(names[:4])}{' ...' if len(names) > 4 else ''} changed")
        if todo.restart:  # the spare has its imports done; the project's are its own
            old, self.builder = self.builder, self.spare or self._builder()
            self.spare = None
            threading.Thread(target=old.close, daemon=True).start()
        if todo.wheel and (error := self.wheel()):
            return self._failed(todo, error)
        wheel = time.perf_counter() - t0
        if todo.full:
            answer = self._ask({"do": "full", "reuse_stale": todo.wheel}, "full")
        elif todo.restart:  # a new builder: MkDocs' dirty build of the pages that changed
            request = {"do": "full", "reuse_stale": todo.wheel, "only": todo.pages}
            answer = self._ask(request, "labs")
        elif todo.pages:
            answer = self._ask({"do": "pages", "pages": todo.pages}, "pages")
        else:
            answer = self._ask({"do": "static", "static": todo.static}, "static")
        if not answer["ok"]:
            return self._failed(todo, answer["error"])
        self.channel.send("reload")
        if self.spare is None:
            self.spare = self._builder()  # for the next labs or hooks edit
        took = f"{time.perf_counter() - t0:.1f} s"
        if todo.wheel:
            pages = f"{answer.get('pages')} page(s) {answer['seconds']:.1f} s"
            took += f" (the labs wheel {wheel:.1f} s, {pages})"
        self.say(f"live: rebuilt in {took}; pages reloaded")
        if answer.get("stale"):
            self.say(
                f"live: executing the notebooks the edit changed: {', '.join(answer['stale'])}"
            )
            again = self._ask({"do": "full"}, "notebooks")
            if not again["ok"]:
                return self._failed(todo, again["error"])
            self.channel.send("reload")
            self.say("live: notebooks executed; pages reloaded")
        return todo

    def _failed(self, todo: Plan, error: str) -> Plan:
        self.say(f"live: the build failed; the site stays as it was:\n{error}")
        self.channel.send("failed", error)
        return todo

    def watch(self, stop: threading.Event) -> None:
        import watchfiles

        paths = [str(self.root / p) for p in WATCHED if (self.root / p).exists()]
        for changes in watchfiles.watch(
            *paths,
            watch_filter=lambda change, path: watched(Path(path), self.root),
            stop_event=stop,
            debounce=400,
            step=30,
            raise_interrupt=False,
        ):
            try:
                self.run(changes)
            except Exception as err:  # keep serving: say what broke
                self._failed(Plan(), f"{type(err).__name__}: {err}")

    def close(self) -> None:
        self.builder.close()
        if self.spare is not None:
            self.spare.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0: any)")
    parser.add_argument("--prefix", default="/", help="serve under this path only")
    parser.add_argument("--root", default=str(ROOT), help="the project (default: this one)")
    parser.add_argument("--config", default="mkdocs.yml", help="relative to --root")
    parser.add_argument("--site", default=None, help="the site folder (default: mkdocs.yml's)")
    parser.add_argument("--builder", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.builder:
        return builder_main(args)

    from build_scripts.serve import LiveChannel, make_server

    root = Path(args.root).resolve()
    site = Path(args.site).resolve() if args.site else root / "site"
    channel = LiveChannel()
    try:
        server = make_server(
            site, args.port, isolate=True, quiet=False, prefix=args.prefix, live=channel
        )
    except OSError as err:
        print(
            f"serve: cannot listen on 127.0.0.1:{args.port}: {err.strerror}. "
            "Try another port: make serve PORT=8001",
            file=sys.stderr,
        )
        return 1
    host, port = server.server_address[:2]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(
        f"Serving {site.name}/ at http://{host}:{port}{args.prefix}  (Ctrl+C to stop)", flush=True
    )
    live = Live(
        root,
        channel,
        root / args.config,
        Path(args.site) if args.site else None,
        say=lambda text: print(text, flush=True),
    )

    def first_build():
        first = live.start()
        if first["ok"]:
            print(f"live: watching {', '.join(WATCHED)}; pages reload as you save", flush=True)
        else:
            live._failed(Plan(), first["error"])

    threading.Thread(target=first_build, daemon=True).start()  # edits wait for it
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())  # stopped like Ctrl+C
    try:
        live.watch(stop)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        channel.close()
        server.shutdown()
        live.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
