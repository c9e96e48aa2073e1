"""Helpers shared by the test modules (imported as ``helpers``: pytest's ``pythonpath``
setting in pyproject.toml puts tests/ on the path). Fixtures live in conftest.py; no test
module imports another."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import markdown as md
import yaml

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "site"
FIXTURES = ROOT / "tests" / "fixtures"
MKDOCS = Path(sys.executable).with_name("mkdocs")
if not MKDOCS.exists():
    MKDOCS = ROOT / ".venv" / "bin" / "mkdocs"
VENDOR = ROOT / "docs" / "vendor"
LESSON = "lessons/03-attention-pattern"
# mkdocs-jupyter's rendered notebook pages (keyed by the notebook's bytes) for every project
# copy of this test process: conftest.py's session fixture sets it. A copy's notebooks built
# without outputs are the same bytes in each copy, so only the first copy's build renders
# them (about 2 s of each build here). One folder per process (pytest-xdist worker): its
# builds run one at a time, and each drops the pages it did not use.
NOTEBOOK_PAGES: Path | None = None

# The test tiers (pytest markers, registered in pyproject.toml and applied by conftest.py):
# every test is in exactly one, so the CI jobs that run one tier each
# (.github/workflows/ci.yml) run the whole suite between them, as `make test` does.
TIERS = {
    "python": "CPython only: labs math, claims of the lessons (no built site, no browser)",
    "build": "the site build and what reads the built site/ (gates, pages, notebooks)",
    "browser": "headless Chromium on the built site (Playwright)",
    "engines": "Firefox and WebKit on the built site (Selenium)",
}
# A tests/ folder's tier; a module may name its own (``pytestmark = pytest.mark.build``).
FOLDER_TIERS = {
    "python": "python",
    "lessons": "python",
    "build": "build",
    "pages": "build",
    "browser": "browser",
}
FILE_TIERS = {"browser/test_engines.py": "engines"}


def tier_of(path: Path) -> str | None:
    """The tier of the test module at ``path`` by where it is (None: in no tier)."""
    rel = Path(path).resolve().relative_to(ROOT / "tests").as_posix()
    return FILE_TIERS.get(rel) or FOLDER_TIERS.get(rel.split("/")[0])


def mkdocs_build(site_dir, config_file=None, env=None):
    """``mkdocs build --strict`` into ``site_dir``; ``env``: more environment variables
    (e.g. ``{"SITE_URL": ...}``)."""
    cmd = [str(MKDOCS), "build", "--strict", "-d", str(site_dir)]
    if config_file is not None:
        cmd += ["-f", str(config_file)]
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", **(env or {}))
    # generous: twelve lessons' notebooks run in the build; a loaded 2-core box took 130 s
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    return proc, proc.stdout + proc.stderr


def project_copy(tmp_path, pages=None, vendor=True, execute=()):
    """A copy of the project's mkdocs.yml and docs/ under tmp_path.

    ``pages`` maps extra docs-relative paths to their text (a lesson among them is in the
    nav: the build derives it from the files), and ``vendor=False`` leaves docs/vendor out
    (otherwise it is a symlink to the real one). Returns the config file's path.

    Only the notebooks named in ``execute`` (docs-relative, e.g. "notebooks/99-x.py"), or
    all with ``execute=True``, are executed; the others are built as pages without outputs.
    The copy's cache of executed notebooks is its own (under tmp_path/build/cache/), empty:
    executing every companion notebook then costs the build about 30 s, where the real site
    build (``make build``) finds them in the repository's cache. The rendered pages are kept
    in ``NOTEBOOK_PAGES`` when it is set (the copy's own folder otherwise)."""
    docs = tmp_path / "docs"
    shutil.copytree(
        ROOT / "docs", docs, ignore=lambda d, names: ["vendor"] if Path(d) == ROOT / "docs" else []
    )
    if vendor:
        (docs / "vendor").symlink_to(VENDOR, target_is_directory=True)
    for rel, text in (pages or {}).items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = str(docs)
    config["site_dir"] = str(tmp_path / "site")
    config["hooks"] = [str((ROOT / hook).resolve()) for hook in config["hooks"]]
    if config["theme"].get("custom_dir"):  # relative to the config file, which moves
        config["theme"]["custom_dir"] = str(ROOT / config["theme"]["custom_dir"])
    # build_scripts/hooks/notebooks.py: true, or the notebooks to execute
    config["extra"]["notebooks"]["execute"] = execute if execute is True else list(execute)
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocs-jupyter" in plugin:
            # relative to the working directory, which stays the repository's
            pages = NOTEBOOK_PAGES or tmp_path / "build/cache/notebooks/pages"
            plugin["mkdocs-jupyter"]["cache_dir"] = str(pages)
    config_file = tmp_path / "mkdocs.yml"
    config_file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return config_file


def broken_lesson(*fence_body):
    """A lesson with front matter whose lab fence holds ``fence_body``; returns the text
    and the 1-based line of the fence's opening ```lab."""
    lines = [
        "---",
        "title: Broken",
        "summary: A lesson with a bad lab fence.",
        "prerequisites: none",
        "---",
        "",
        "# Broken",
        "",
        "Some text with math, \\(x^2\\).",
        "",
        "```lab",
        *fence_body,
        "```",
        "",
        "After.",
        "",
        # the lesson gate (build_scripts/hooks/lesson_checks.py) wants an exercise and sources
        "```exercise",
        "kind: code",
        "id: twice",
        "title: Twice",
        "prompt: Return twice x.",
        "starter: |",
        "  def twice(x):",
        "      return x",
        "solution: |",
        "  def twice(x):",
        "      return 2 * x",
        "checks:",
        "  - name: doubles",
        "    code: assert twice(3) == 6",
        "```",
        "",
        "## Sources",
        "",
        "- None.",
        "",
    ]
    return "\n".join(lines), lines.index("```lab") + 1


def site_markdown(text):
    """`text` through Python-Markdown with the extensions and settings of mkdocs.yml."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    extensions, settings = [], {}
    for item in config["markdown_extensions"]:
        if isinstance(item, dict):
            ((name, options),) = item.items()
            extensions.append(name)
            settings[name] = options or {}
        else:
            extensions.append(item)
    return md.markdown(text, extensions=extensions, extension_configs=settings)


def head_params(asset: dict, entry: dict, **changes) -> dict:
    """The lab's parameters for one qkv head, at the model's own settings."""
    params = {
        "tokens": asset["tokens"]["text"],
        "q": entry["q"],
        "k": entry["k"],
        "d_head": asset["qkv"]["d_head"],
        "scale": True,
        "temperature": 1.0,
        "causal": asset["model"]["causal"],
        "stored": asset["attention"]["data"][entry["layer"]][entry["head"]],
    }
    return params | changes


class RecordedPage:
    """A fresh browser context and page, recording every request (workers' too)."""

    def __init__(self, browser, base: str):
        self.base = base
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def external_requests(self) -> list[str]:
        return [
            u
            for u in self.requests
            if not u.startswith(self.base)
            and not u.startswith("data:")
            and not u.startswith("blob:")
        ]


def linked_site(dest: Path, extra: dict[str, Path], site: Path = SITE) -> Path:
    """A copy of the built ``site`` at ``dest`` made of symbolic links, with ``extra`` (a
    site-relative path, e.g. "assets/attention/broken-model", to the folder or file served
    there) added or put in place of what is there. Only the folders on the way to an extra
    path are real; every other entry links to the build. Tests that need files in the served
    site use it, so the real site/ is never written while other tests (another xdist worker)
    read it. Returns ``dest``."""
    real = {Path(rel).parents[i] for rel in extra for i in range(len(Path(rel).parts) - 1)}

    def mirror(source: Path, target: Path, rel: Path) -> None:
        target.mkdir(parents=True, exist_ok=True)
        names = {e.name for e in source.iterdir()} if source.is_dir() else set()
        names |= {Path(k).name for k in extra if Path(k).parent == rel}
        for name in sorted(names):
            sub = rel / name
            if sub.as_posix() in extra:
                (target / name).symlink_to(extra[sub.as_posix()])
            elif sub in real:
                mirror(source / name, target / name, sub)
            else:
                (target / name).symlink_to(source / name)

    mirror(site, dest, Path("."))
    return dest


def start_server(directory, site_url="http://127.0.0.1:8000/", isolate=False):
    """``directory`` served on 127.0.0.1 at a free port in a background thread (the project's
    own server, build_scripts/serve.py); ``.base`` is its URL. Call ``.shutdown()`` after."""
    from build_scripts.serve import make_server

    httpd = make_server(directory, 0, site_url=site_url, isolate=isolate)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}/"
    return httpd


class WasmtimeKernel:
    """The browser models' WebAssembly kernels (attention_labs/models/kernels.wasm) run in
    CPython by wasmtime, called as Pyodide calls them: ``matmul_nt(x, W, y, m, n, k)`` and
    ``dequant_q4_1(codes, scale, minimum, out, n_blocks)`` with the byte addresses of NumPy's
    arrays (wrapped to signed 32 bits where wasm_kernels wraps them). Pyodide's module reads
    them in place; here they are copied into the module's own memory and the output back
    out, so both the arithmetic and the addresses wasm_kernels passes are checked.
    ``calls`` counts the products, ``dequant_calls`` the dequantisations."""

    def __init__(self):
        import wasmtime
        from attention_labs.models import wasm_kernels

        self.store = wasmtime.Store()
        module = wasmtime.Module(self.store.engine, wasm_kernels.wasm_bytes())
        self.memory = wasmtime.Memory(self.store, wasmtime.MemoryType(wasmtime.Limits(1, None)))
        instance = wasmtime.Instance(self.store, module, [self.memory])
        self.exports = instance.exports(self.store)
        self.calls = 0
        self.dequant_calls = 0

    def _run(self, name, inputs, output, *sizes):
        """Copy ``inputs`` ((address, bytes) each) in, run ``name`` with their addresses
        here, then the output's address and ``sizes``, and copy ``output`` back."""
        import ctypes

        spans = [*inputs, output]
        spans = [(at + (1 << 32) if at < 0 else at, n) for at, n in spans]
        need = sum(n + 16 for _, n in spans) + 16
        pages = -(-need // 65536) - self.memory.size(self.store)
        if pages > 0:
            self.memory.grow(self.store, pages)
        base = ctypes.addressof(self.memory.data_ptr(self.store).contents)
        ours, at = [], 16
        for _, n in spans:
            ours.append(at)
            at += -(-n // 16) * 16 + 16
        for (src, n), dst in zip(spans[:-1], ours, strict=False):
            ctypes.memmove(base + dst, src, n)
        self.exports[name](self.store, *ours, *sizes)
        ctypes.memmove(spans[-1][0], base + ours[-1], spans[-1][1])

    def matmul_nt(self, x_at, w_at, y_at, m, n, k):
        self._run("matmul_nt", [(x_at, 4 * m * k), (w_at, 4 * n * k)], (y_at, 4 * m * n), m, n, k)
        self.calls += 1

    def dequant_q4_1(self, codes_at, scale_at, min_at, out_at, n_blocks):
        self._run(
            "dequant_q4_1",
            [(codes_at, 16 * n_blocks), (scale_at, 4 * n_blocks), (min_at, 4 * n_blocks)],
            (out_at, 128 * n_blocks),
            n_blocks,
        )
        self.dequant_calls += 1
