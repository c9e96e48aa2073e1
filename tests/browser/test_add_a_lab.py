"""A new contributor adds a lab as CONTRIBUTING.md says: two new files (the Python module and
its widget) and a page whose ```lab fence uses it. In a copy of the project, with no other
file edited, the build validates the fence and pre-renders the lab, and in headless Chromium
the widget draws it and Pyodide recomputes it from the copy's own labs wheel."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from helpers import MKDOCS, ROOT, VENDOR, start_server

pytestmark = pytest.mark.slow  # a project copy's wheel and build

NAME = "shout_tokens"
LAB_MODULE = f"labs_py/attention_labs/labs/{NAME}.py"
WIDGET = f"docs/javascripts/labs/{NAME}.js"
PAGE = "docs/try-a-lab.md"

NEW_FILES = {
    LAB_MODULE: '''
        """Lab: each token in capitals and the mean token length (a contributor's first lab)."""

        from __future__ import annotations

        import numpy as np

        from ..params import Param

        SCHEMA = (
            Param("tokens", "tokens", ["quiet", "words"], "Tokens to shout.", max_items=8),
        )


        def compute(params: dict) -> dict:
            lengths = np.array([len(token) for token in params["tokens"]], dtype=float)
            return {
                "shout": [token.upper() for token in params["tokens"]],
                "mean_length": float(lengths.mean()),
            }
        ''',
    WIDGET: """
        // Widget of the shout_tokens lab: a text box and the lab's answer.
        export function mount(body, lab) {
          const input = document.createElement("input");
          input.type = "text";
          input.value = lab.params.tokens.join(" ");
          input.setAttribute("aria-label", "Tokens");
          const out = document.createElement("output");
          out.className = "shout";
          body.append(input, out);
          input.addEventListener("change", () =>
            lab.update({ tokens: input.value.split(/\\s+/).filter(Boolean) }),
          );
          return {
            controls: input,
            render(result) {
              out.textContent = `${result.shout.join(" ")} (${result.mean_length})`;
            },
          };
        }
        """,
    PAGE: """
        # Try a lab

        ```lab
        lab: shout_tokens
        tokens: [hello, attention]
        ```
        """,
}


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return [p for p in out.stdout.split("\0") if p and (ROOT / p).is_file()]


@pytest.fixture(scope="module")
def copy_with_new_lab(tmp_path_factory):
    """The project's tracked files copied, the three new files added, the labs wheel built
    from the copy and the site built from it (PYTHONPATH puts the copy's labs first)."""
    top = tmp_path_factory.mktemp("project")
    original = tracked_files()
    for rel in original:
        if rel.startswith("tests/"):
            continue  # not needed to build the site
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, top / rel)
    for rel, text in NEW_FILES.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")

    # The vendored runtime is shared (read-only); the labs wheel is the copy's own.
    vendor = top / "docs" / "vendor"
    vendor.mkdir(parents=True)
    for entry in VENDOR.iterdir():
        if entry.name != "labs":
            (vendor / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    env = dict(os.environ, PYTHONPATH=str(top / "labs_py"), NO_MKDOCS_2_WARNING="1")
    for cmd in (  # as `make wheel` and `make build` do, in the copy
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
        + ["-w", str(top / "build" / "labs-wheel"), "."],
        [sys.executable, "-m", "build_scripts.vendor.labs_wheel", "build/labs-wheel"]
        + [str(vendor / "labs")],
        [str(MKDOCS), "build", "--strict"],
    ):
        proc = subprocess.run(cmd, cwd=top, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return top, original


def test_adding_a_lab_edits_no_existing_file(copy_with_new_lab):
    top, original = copy_with_new_lab
    changed = [
        rel
        for rel in original
        if not rel.startswith("tests/") and (top / rel).read_bytes() != (ROOT / rel).read_bytes()
    ]
    assert changed == []
    assert (top / "site" / "try-a-lab" / "index.html").is_file()


def test_the_new_lab_is_prerendered_drawn_and_recomputed_in_pyodide(copy_with_new_lab, browser):
    top, _ = copy_with_new_lab
    httpd = start_server(top / "site")
    context = browser.new_context()
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(httpd.base + "try-a-lab/")
        lab = page.locator(".attn-lab")
        # The build computed the first result: drawn before Python is ready.
        page.wait_for_function(
            "() => document.querySelector('.attn-lab output.shout')?.textContent"
            " === 'HELLO ATTENTION (7)'",
            timeout=30_000,
        )
        lab.locator("input").fill("a bbb")
        lab.locator("input").press("Enter")
        page.wait_for_function(
            "() => document.querySelector('.attn-lab')?.dataset.runs === '1'", timeout=120_000
        )
        assert lab.locator("output.shout").text_content() == "A BBB (2)"
        assert lab.get_attribute("data-runtime") == "ready"
        assert errors == []
    finally:
        context.close()
        httpd.shutdown()
