"""`make bench`, editing with `make serve` (build_scripts/live.py): the seconds from saving a
file to the open page showing the change, in headless Chromium.

In a copy of the project (the tracked files, the vendored runtime linked, the build caches
copied, and a probe lab of its own: ``live_probe``, its widget and a page), the dev server
runs as ``make serve`` runs it; the page is open and listening. Then:

* **prose edit**: a word of docs/lessons/04-masking.md changes; timed until the reloaded
  page shows the new word (target: 3 s);
* **labs_py edit**: the probe lab's answer changes in labs_py/; timed until the reloaded
  page shows the new answer, drawn by the widget from the build's first result, computed
  by the new labs (target: 10 s). Edits are ``PAUSE`` seconds apart, as an author's are:
  the dev server readies a spare builder after each.

``LiveProject`` is also what tests/browser/test_live_reload.py drives (it asserts, this
times). A benchmark, not a test: it asserts nothing.

Usage: python -m build_scripts.bench.bench_live [--runs 5]
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from build_scripts.bench.contract import Row, med, run_alone

ROOT = Path(__file__).resolve().parents[2]
LESSON = "docs/lessons/04-masking.md"
PAUSE = 10  # seconds between two labs edits (live.py starts a spare builder after each)
LESSON_URL = "lessons/04-masking/"
PROBE_URL = "live-probe/"
PROBE_MODULE = "labs_py/attention_labs/labs/live_probe.py"
PROBE_FILES = {
    PROBE_MODULE: '''"""Lab: a word, to time an edit of labs_py with make serve (bench_live)."""

from __future__ import annotations

from ..params import Param

SCHEMA = (Param("tokens", "tokens", ["probe"], "Tokens.", max_items=4),)
LARGEST = {"tokens": ["probe"] * 4}


def compute(params: dict) -> dict:
    return {"word": "answer-0"}
''',
    "docs/javascripts/labs/live_probe.js": """// Widget of the live_probe lab: its word.
export function mount(body) {
  const out = document.createElement("output");
  out.className = "live-probe";
  body.append(out);
  return {
    controls: out,
    render(result) {
      out.textContent = result.word;
    },
  };
}
""",
    "docs/live-probe.md": """# Live probe

```lab
lab: live_probe
tokens: [probe]
```
""",
}


def tracked_files(root: Path = ROOT) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True
    )
    return [p for p in out.stdout.split("\0") if p and (root / p).is_file()]


class LiveProject:
    """A copy of the project under ``top`` with the dev server running on it."""

    def __init__(self, top: Path):
        self.top = Path(top)
        self.proc: subprocess.Popen | None = None
        self.lines: queue.Queue = queue.Queue()
        self.log: list[str] = []
        self.base = ""
        self.env = dict(os.environ, PYTHONPATH=str(self.top / "labs_py"), NO_MKDOCS_2_WARNING="1")

    def make(self, probe: bool = True) -> LiveProject:
        """Copy the tracked files (tests/ too: check-lesson runs them), link the vendored
        runtime (the labs wheel is the copy's own), copy the build caches, add the probe
        lab and its page (``probe``)."""
        for rel in tracked_files():
            (self.top / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, self.top / rel)
        vendor = self.top / "docs" / "vendor"
        vendor.mkdir(parents=True, exist_ok=True)
        for entry in (ROOT / "docs" / "vendor").iterdir():
            if entry.name == "labs":
                shutil.copytree(entry, vendor / "labs")
            else:
                (vendor / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
        if (ROOT / "node_modules").is_dir():  # axe-core, for the browser gates
            (self.top / "node_modules").symlink_to(ROOT / "node_modules", True)
        for cache in ("notebooks", "brotli"):
            if (ROOT / "build" / "cache" / cache).is_dir():
                shutil.copytree(ROOT / "build" / "cache" / cache, self.top / "build/cache" / cache)
        self._move_notebook_inputs()
        for rel, text in PROBE_FILES.items() if probe else ():
            (self.top / rel).write_text(text, "utf-8")
        return self

    def _move_notebook_inputs(self) -> None:
        """The copied notebook cache names the files each notebook read by their path in
        the repository (build_scripts/hooks/notebooks.py): name the copy's instead, so that
        an edit in the copy executes the notebooks that read the edited file."""
        here, there = str(ROOT) + os.sep, str(self.top) + os.sep
        for entry in (self.top / "build" / "cache" / "notebooks").glob("*.json"):
            data = json.loads(entry.read_text("utf-8"))
            data["inputs"] = {
                (there + path[len(here) :] if path.startswith(here) else path): sha
                for path, sha in data.get("inputs", {}).items()
            }
            entry.write_text(json.dumps(data), "utf-8")

    def run(self, *cmd: str, timeout: int = 600) -> subprocess.CompletedProcess:
        return subprocess.run(
            list(cmd),
            cwd=self.top,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def build(self, release: bool = False) -> subprocess.CompletedProcess:
        """The copy's site: the labs wheel, then the strict build. ``release``: as
        `make build` makes it (the wheel precompiled in Pyodide, the compressed copies that
        the budget gate counts); else as `make serve` rebuilds it (sources only)."""
        python = sys.executable
        with tempfile.TemporaryDirectory() as tmp:
            pip = [python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
            wheel = self.run(*pip, "-w", tmp, ".")
            if wheel.returncode != 0:
                return wheel
            sources = [] if release else ["--sources-only"]
            labs_wheel = [python, "-m", "build_scripts.vendor.labs_wheel", *sources]
            labs = self.run(*labs_wheel, tmp, "docs/vendor/labs")
            if labs.returncode != 0:
                return labs
        mkdocs = Path(python).with_name("mkdocs")
        built = self.run(str(mkdocs), "build", "--strict", "--quiet")
        if built.returncode != 0 or not release:
            return built
        return self.run(python, "-m", "build_scripts.compress", "site")

    def start(self, timeout: float = 300) -> str:
        """Start the dev server (as make serve does); returns its address once it watches."""
        cmd = [sys.executable, "-m", "build_scripts.live", "--port", "0", "--root", str(self.top)]
        self.proc = subprocess.Popen(
            cmd,
            cwd=self.top,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

        def read():
            for line in self.proc.stdout:
                self.log.append(line.rstrip("\n"))
                self.lines.put(line)

        threading.Thread(target=read, daemon=True).start()
        self.wait_line(r"Serving .* at (http://\S+)", timeout)
        self.wait_line(r"live: watching", timeout)
        return self.base

    def wait_line(self, pattern: str, timeout: float) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            m = re.search(pattern, line)
            if m:
                if pattern.startswith("Serving"):
                    self.base = m.group(1)
                return m
        raise TimeoutError(f"no line {pattern!r} from the dev server:\n" + "\n".join(self.log))

    def edit(self, rel: str, old: str, new: str) -> float:
        """Replace ``old`` with ``new`` in file ``rel`` of the copy; returns when it was saved
        (time.monotonic())."""
        path = self.top / rel
        text = path.read_text("utf-8")
        if old not in text:
            raise ValueError(f"{rel} has no {old!r}")
        path.write_text(text.replace(old, new, 1), "utf-8")
        return time.monotonic()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def wait_for_text(page, selector: str, text: str, timeout: float = 120) -> float:
    """Poll the page (it reloads meanwhile) until ``selector``'s text holds ``text``;
    returns when (time.monotonic())."""
    deadline = time.monotonic() + timeout
    script = "([s, t]) => (document.querySelector(s)?.textContent || '').includes(t)"
    while time.monotonic() < deadline:
        try:
            if page.evaluate(script, [selector, text]):
                return time.monotonic()
        except Exception:  # the page is reloading: its context went away
            pass
        time.sleep(0.02)
    raise TimeoutError(f"{selector} never showed {text!r}")


def measure(runs: int = 5, labs_runs: int = 3) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    from build_scripts.gates.browser import launch

    out: dict[str, list[float]] = {"prose": [], "labs": []}
    with tempfile.TemporaryDirectory(prefix="bench-live.") as tmp, sync_playwright() as pw:
        project = LiveProject(Path(tmp)).make()
        built = project.build()
        if built.returncode != 0:
            raise RuntimeError(built.stdout + built.stderr)
        browser = launch(pw)
        try:
            base = project.start()
            page = browser.new_page()
            page.goto(base + LESSON_URL)
            page.wait_for_function("() => window.attnLive && window.attnLive.hello")
            word = "Masking"
            for k in range(runs):
                new = f"Maskingedit{k}"
                saved = project.edit(LESSON, f"# {word}", f"# {new}")
                out["prose"].append(wait_for_text(page, "article h1", new) - saved)
                word = new
                time.sleep(0.5)
            page.goto(base + PROBE_URL)
            wait_for_text(page, "output.live-probe", "answer-0")
            for k in range(1, labs_runs + 1):
                time.sleep(PAUSE)  # an author's pause: the spare builder is ready by then
                saved = project.edit(PROBE_MODULE, f"answer-{k - 1}", f"answer-{k}")
                out["labs"].append(wait_for_text(page, "output.live-probe", f"answer-{k}") - saved)
                project.wait_line(r"live: rebuilt", 60)
        finally:
            project.stop()
            browser.close()
    return out


def rows(args) -> list[Row]:
    """Save → the open page shows it, with make serve's dev server."""
    runs = max(1, min(args.runs, 5))
    seconds = measure(runs=runs, labs_runs=max(1, min(args.runs, 3)))
    return [
        Row(
            "make serve",
            "prose edit saved → page reloaded with it",
            med(seconds["prose"], "s", 1, 2),
            f"{len(seconds['prose'])} edits of a lesson's heading; only that page rebuilt "
            "(target 3 s)",
        ),
        Row(
            "make serve",
            "labs_py edit saved → page reloaded with it",
            med(seconds["labs"], "s", 1, 2),
            f"{len(seconds['labs'])} edits of a lab's answer, {PAUSE} s apart: the wheel "
            "(sources only), a spare builder renders the page naming the lab (target 10 s)",
        ),
    ]


def main(argv=None) -> int:
    return run_alone(rows, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
