"""The site's browser code as a whole (docs/javascripts/main.js and the ES modules it
imports) in headless Chromium against the built site: a page loads only what it uses,
components are destroyed when instant navigation leaves their page, controls and drawing
agree after Back, and every control shows a keyboard focus ring in both palettes."""

from __future__ import annotations

import re

import pytest
from helpers import RecordedPage

LESSON = "lessons/03-attention-pattern/"
EXPLORER = "explorer/"
LAB = ".attn-lab"
# What only pages with an explorer, a map, a cell or an exercise may load.
HEAVY = re.compile(r"/javascripts/(explorer|cells)/|/vendor/codemirror/|/vendor/ajv/")


def local_paths(rec) -> list[str]:
    return [u[len(rec.base) :].split("?")[0] for u in rec.requests if u.startswith(rec.base)]


def test_home_page_loads_no_explorer_cells_or_editor_code(recorded):
    page = recorded.page
    page.goto(recorded.base)
    page.wait_for_load_state("networkidle")
    page.mouse.wheel(0, 5000)  # nothing is waiting below the fold either
    page.wait_for_timeout(300)
    paths = local_paths(recorded)
    assert "javascripts/main.js" in paths
    assert [p for p in paths if HEAVY.search("/" + p)] == []
    assert [p for p in paths if p.startswith("javascripts/labs/")] == []  # no lab on it
    assert page.evaluate("() => window.AttnLabs.runtime.state") == "idle"
    assert recorded.errors == []


def test_lab_page_imports_its_labs_widget_found_from_the_name(recorded):
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    names = page.evaluate(
        f"() => [...document.querySelectorAll('{LAB}')].map((r) => JSON.parse(r.dataset.config).lab)"
    )
    paths = local_paths(recorded)
    for name in set(names):
        assert f"javascripts/labs/{name}.js" in paths
    # a lab of another page (the explorer's recompute) is not imported here
    assert "javascripts/labs/real_head.js" not in paths
    # the editor waits until a cell comes near
    if not page.evaluate(
        "() => [...document.querySelectorAll('.attn-cell')].some("
        "(c) => c.getBoundingClientRect().top < innerHeight * 1.5)"
    ):
        assert not [p for p in paths if "codemirror" in p]
    page.wait_for_selector(".attn-cell[data-state]", state="attached")
    page.locator(".attn-cell").first.scroll_into_view_if_needed()
    page.wait_for_selector(".attn-cell .cm-editor")
    assert "vendor/codemirror/codemirror.min.js" in local_paths(recorded)
    assert recorded.errors == []


def test_lab_is_drawn_before_domcontentloaded_and_every_lab_also_after_instant_navigation(
    recorded,
):
    """The head's module script (build_scripts/hooks/preload.py) hands the controller and
    every widget, charts included (no module awaits at its top level), to page.js, so every
    lab of the page is drawn while the page is parsed, before DOMContentLoaded; on a page
    reached by instant navigation (no new head) every lab is drawn all the same."""
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.wait_for_function(
        f"() => [...document.querySelectorAll('{LAB}')].every((r) => r.dataset.status)"
    )
    order = page.evaluate(
        """() => ({ pictures: performance.getEntriesByName('lab:initial').map((m) => m.startTime),
           dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventStart,
           statuses: [...document.querySelectorAll('.attn-lab')].map((r) => r.dataset.status) })"""
    )
    assert len(order["pictures"]) == len(order["statuses"]) == 2, order
    assert max(order["pictures"]) <= order["dcl"], order
    assert set(order["statuses"]) == {"initial"}, order
    assert page.locator(f"{LAB}[data-lab=scaling] figure").count() > 0
    instant_go(page, "../../about/", "article h1")
    instant_go(page, f"../{LESSON}", f"{LAB}[data-lab=scaling][data-status=initial]")
    page.wait_for_function(
        f"() => [...document.querySelectorAll('{LAB}')].every((r) => r.dataset.status === 'initial')"
    )
    assert recorded.errors == []


def measure(page, cdp) -> dict:
    for _ in range(3):
        cdp.send("HeapProfiler.collectGarbage")
    counters = cdp.send("Memory.getDOMCounters")
    return {
        "listeners": counters["jsEventListeners"],
        "documents": counters["documents"],
        "nodes": counters["nodes"],
        "heap": cdp.send("Runtime.getHeapUsage")["usedSize"],
    }


def wait_for(page, selector: str):
    """Wait for `selector` without keeping an element handle (a handle would keep the old
    page's tree alive and spoil the counts)."""
    page.locator(selector).first.wait_for()


def instant_go(page, href: str, ready: str):
    """Follow a link to `href` the way a reader does: Material's instant navigation; returns
    once the new page's content has replaced the old (the link is gone, the address is the
    target's) and `ready` is there. `ready` alone could match the old page still showing."""
    target = page.evaluate(
        """(href) => { const a = document.createElement('a'); a.href = href; a.id = 'go';
           a.textContent = 'go'; document.querySelector('.md-content').prepend(a);
           return a.href; }""",
        href,
    )
    page.locator("#go").click()
    page.wait_for_function(
        "(target) => location.href === target && !document.getElementById('go')", arg=target
    )
    wait_for(page, ready)


def visits(rec, n: int, ours: bool) -> list[dict]:
    """Go n times from the lesson (cells, exercises, a lab and a map, all mounted) to the
    About page and back by instant navigation; the counters on About after each visit."""
    page = rec.page
    page.goto(rec.base + LESSON)
    wait_for(page, "article h1")
    page.evaluate("() => { window.__kept = true; }")
    cdp = page.context.new_cdp_session(page)
    out = []
    for _ in range(n):
        if ours:
            page.locator(".attn-cell[data-state]").first.wait_for(state="attached")
        page.locator(".attn-cell").first.scroll_into_view_if_needed()
        page.locator(".attn-map").first.scroll_into_view_if_needed()
        if ours:
            wait_for(page, f"{LAB}[data-status=initial]")
            wait_for(page, ".attn-cell .cm-editor")
            wait_for(page, ".attn-map:is([data-state=ready], [data-state=error])")
            assert page.evaluate("() => window.AttnLabs.liveCount()") > 0
        instant_go(page, "../../about/", "article h1")
        if ours:  # every component of the lesson was destroyed
            page.wait_for_function("() => window.AttnLabs.liveCount() === 0")
        page.wait_for_timeout(300)
        out.append(measure(page, cdp))
        instant_go(page, f"../{LESSON}", "article .attn-cell")
    assert page.evaluate("() => window.__kept") is True  # no reload: instant navigation
    return out


WARM = 4  # visits before the heap settles: JIT code and caches grow during the first ones


def growth(series: list[dict], key: str) -> float:
    """Per visit, once warm (the first visits also load and compile modules and fill caches:
    12 visits measured +400, +375, +117, +233 kB, then 26 to 127 kB a visit)."""
    return (series[-1][key] - series[WARM][key]) / (len(series) - 1 - WARM)


def test_instant_navigation_destroys_components_nothing_grows_per_visit(browser, server):
    """Listeners, nodes, documents and the JS heap stay flat per visit. Material itself
    keeps a reference into each page it swaps away (its table of contents, mkdocs-material
    9.x), so the same walk with the site's modules blocked is the baseline: our code must
    add nothing to it per visit."""
    runs = {}
    for ours in (True, False):
        rec = RecordedPage(browser, server.base)
        try:
            if not ours:
                rec.context.route("**/javascripts/main.js", lambda route: route.abort())
            runs[ours] = visits(rec, WARM + 4, ours)
            assert rec.errors == []
        finally:
            rec.context.close()
    ours, material = runs[True], runs[False]
    report = {"ours": ours, "material alone": material}
    assert ours[-1]["documents"] <= ours[1]["documents"], report
    assert growth(ours, "listeners") <= max(0, growth(material, "listeners")) + 1, report
    assert growth(ours, "nodes") <= max(0, growth(material, "nodes")) + 50, report
    # CodeMirror's state, a lab's results or a map's decoded heads are far more than this
    assert growth(ours, "heap") <= max(0, growth(material, "heap")) + 150_000, report


def lab_state(page) -> dict:
    return page.evaluate(
        f"""() => {{ const c = document.querySelector('{LAB}').attnLab;
          const inputs = c.widget.inputs;
          return {{ drawn: Array.from(c.result.tokens), params: c.params.tokens,
                    typed: inputs.tokens.value, causal: inputs.causal.checked,
                    causalParam: c.params.causal }}; }}"""
    )


def test_back_after_a_full_load_shows_controls_that_match_the_drawing(recorded):
    page = recorded.page
    page.goto(recorded.base + LESSON)
    page.wait_for_selector(f"{LAB}[data-status=initial]")
    built = lab_state(page)
    tokens = page.locator(f"{LAB} input[id$=-tokens]").first
    tokens.fill("one two three")
    tokens.press("Enter")
    page.locator(f"{LAB} input[id$=-causal]").first.click()
    page.wait_for_function(
        f"() => Number(document.querySelector('{LAB}').dataset.runs || 0) >= 1", timeout=120_000
    )
    page.goto(recorded.base + "about/")  # a full page load, not instant navigation
    page.go_back()
    page.wait_for_selector(f"{LAB}[data-status]")
    page.wait_for_timeout(500)  # the browser restores form controls after load
    state = lab_state(page)
    # whatever the browser restored, the controls say what the drawing shows
    assert state["typed"].split() == state["drawn"] == state["params"], state
    assert state["causal"] == state["causalParam"], state
    assert state["drawn"] in (built["drawn"], ["one", "two", "three"])
    assert recorded.errors == []


# Every kind of control a reader can tab to, on the page that has it.
FOCUSABLE = [
    (LESSON, f"{LAB} input[type=text]"),
    (LESSON, f"{LAB} input[type=number]"),
    (LESSON, f"{LAB} input[type=range]"),
    (LESSON, f"{LAB} input[type=checkbox]"),
    (LESSON, f"{LAB} select"),
    (LESSON, f"{LAB} button"),
    (EXPLORER, ".attn-map select"),
    (EXPLORER, ".attn-map input[type=checkbox]"),
    (EXPLORER, ".attn-map button.attn-map__view"),
]

RING = """(sel) => { const e = document.activeElement; const s = getComputedStyle(e);
  return { match: e.matches(sel), outline: s.outlineStyle, width: parseFloat(s.outlineWidth),
           shadow: s.boxShadow }; }"""


@pytest.mark.parametrize("scheme", ["default", "slate"])
def test_keyboard_focus_ring_on_every_control_in_both_palettes(recorded, scheme):
    page = recorded.page
    for url in (LESSON, EXPLORER):
        page.goto(recorded.base + url)
        page.evaluate(f"() => document.body.setAttribute('data-md-color-scheme', '{scheme}')")
        if url == LESSON:
            page.wait_for_selector(f"{LAB}[data-status=initial]")
        else:
            page.wait_for_selector(".attn-map[data-state=ready]")
        for where, selector in FOCUSABLE:
            if where != url:
                continue
            # Focus the control by keyboard: from it, Shift+Tab then Tab comes back to it.
            page.locator(selector).first.focus()
            page.keyboard.press("Shift+Tab")
            page.keyboard.press("Tab")
            ring = page.evaluate(RING, selector)
            assert ring["match"], (scheme, selector, ring)
            visible = (ring["outline"] != "none" and ring["width"] >= 2) or ring["shadow"] not in (
                "",
                "none",
            )
            assert visible, (scheme, selector, ring)
    assert recorded.errors == []


def test_colour_legends_keep_their_colours_under_forced_colours(browser, server):
    """Windows' high-contrast mode (forced colours) removes gradient backgrounds: the heatmap's
    legend, a gradient, must keep it there, in a lab and in the explorer's head view."""
    context = browser.new_context(viewport={"width": 1200, "height": 900}, forced_colors="active")
    try:
        page = context.new_page()
        ramp = "document.querySelector('.attn-heatmap__ramp')"
        shown = f"() => !!{ramp} && getComputedStyle({ramp}).backgroundImage"
        for path in (LESSON, EXPLORER + "?view=head"):
            page.goto(server.base + path)
            page.wait_for_function(f"() => !!{ramp}", timeout=30_000)
            assert page.evaluate("matchMedia('(forced-colors: active)').matches")
            assert "linear-gradient" in page.evaluate(shown), path
    finally:
        context.close()
