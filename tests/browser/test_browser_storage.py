"""A browser that refuses storage (private modes, blocked cookies: reading
``localStorage`` or ``sessionStorage`` throws). Without the shim in overrides/main.html,
Material's own scripts throw on every page, the palette toggle vanishes and search never
starts. Here every page must stay fully usable: palette, search, a lab, a cell, an exercise.
"""

from __future__ import annotations

import pytest
from lab_pages import PYTHON_TIMEOUT_MS

LESSON = "lessons/03-attention-pattern/"

# Before any script of the page: both storages throw on access, as in a browser that
# blocks them.
REFUSE_STORAGE = """
for (const name of ["localStorage", "sessionStorage"]) {
  Object.defineProperty(window, name, {
    configurable: true,
    get() { throw new DOMException("The operation is insecure.", "SecurityError"); },
  });
}
"""


@pytest.fixture
def refused(browser, server):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    context.add_init_script(REFUSE_STORAGE)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page, errors, server.base
    context.close()


def test_the_refusal_is_real_and_the_shim_replaces_it(browser, server):
    """The init script does what a refusing browser does (so the test below means it):
    on a file without the site's HTML (no shim) storage throws; on a page it does not."""
    context = browser.new_context()
    context.add_init_script(REFUSE_STORAGE)
    probe = (
        "() => { try { localStorage.setItem('k', 'v'); return localStorage.getItem('k'); }"
        " catch (e) { return e.name; } }"
    )
    try:
        page = context.new_page()
        page.goto(server.base + "vendor/notices/THIRD-PARTY-NOTICES.txt")
        assert page.evaluate(probe) == "SecurityError"
        page.goto(server.base + "404.html")
        assert page.evaluate(probe) == "v"  # in memory, for this page's life
    finally:
        context.close()


def test_site_is_fully_usable_when_storage_is_refused(refused):
    page, errors, base = refused
    page.goto(base + LESSON)
    page.wait_for_function("() => typeof document$ !== 'undefined'")
    # Palette: the toggle is there and switches the scheme.
    before = page.evaluate("() => document.body.dataset.mdColorScheme")
    page.locator("form[data-md-component=palette] label:visible").first.click()
    page.wait_for_function(f"() => document.body.dataset.mdColorScheme !== {before!r}")
    # Search starts and finds a lesson.
    page.locator("input.md-search__input").click()
    page.keyboard.type("softmax")  # Material reads key events, not a filled value
    page.wait_for_selector(".md-search-result__item", timeout=30_000)
    page.keyboard.press("Escape")
    # A lab starts and recomputes.
    lab = page.locator(".attn-lab").first
    lab.scroll_into_view_if_needed()
    page.wait_for_selector(".attn-lab[data-runtime=ready]", timeout=PYTHON_TIMEOUT_MS)
    page.evaluate("() => document.querySelector('.attn-lab').attnLab.update({})")
    page.wait_for_function(
        "() => Number(document.querySelector('.attn-lab').dataset.runs || 0) >= 1",
        timeout=PYTHON_TIMEOUT_MS,
    )
    # A cell runs.
    cell = page.locator(".attn-cell").first
    cell.scroll_into_view_if_needed()
    page.wait_for_selector(".attn-cell .cm-editor")
    page.evaluate(
        "() => { document.querySelector('.attn-cell').attnCell.editor.code = 'print(6 * 7)'; }"
    )
    cell.locator(".attn-cell__run").click()
    page.wait_for_function(
        "() => { const r = document.querySelector('.attn-cell');"
        " return Number(r.dataset.runs) >= 1 && r.dataset.state !== 'running'; }",
        timeout=PYTHON_TIMEOUT_MS,
    )
    assert "42" in cell.locator(".attn-cell__output").inner_text()
    # An exercise checks (an empty answer is explained, not an error).
    exercise = page.locator("#exercise-attention-by-hand")
    exercise.scroll_into_view_if_needed()
    exercise.locator("button.attn-exercise__check").click()
    assert exercise.locator(".attn-exercise__result").inner_text().strip() != ""
    assert errors == []
