"""A new contributor adds a lab as CONTRIBUTING.md says: two new files (the Python module and
its widget) and a page whose ```lab fence uses it. In a copy of the project, with no other
file edited, the build validates the fence and pre-renders the lab, and in headless Chromium
the widget draws it and Pyodide recomputes it from the copy's own labs wheel."""

from __future__ import annotations

import textwrap

import pytest
from helpers import ROOT, start_server

from build_scripts.bench.bench_live import LiveProject, tracked_files

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


@pytest.fixture(scope="module")
def copy_with_new_lab(tmp_path_factory):
    """The project as a contributor's working tree (its tracked files, the vendored runtime
    linked, the build caches copied: a notebook executes only if what it reads changed),
    the three new files added, then the labs wheel and the site built as `make build` does
    (PYTHONPATH puts the copy's labs first)."""
    project = LiveProject(tmp_path_factory.mktemp("project")).make(probe=False)
    for rel, text in NEW_FILES.items():
        (project.top / rel).parent.mkdir(parents=True, exist_ok=True)
        (project.top / rel).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    built = project.build(release=True)
    assert built.returncode == 0, built.stdout + built.stderr
    return project.top, tracked_files()


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
