"""The shared charts (docs/javascripts/renderers/line_chart.js, bar_chart.js and the vector
plane, ui/vector-plane.js) in headless Chromium: each chart mounted on a site page (the home
page, which draws none, so it also shows that d3, one ES module imported by name, loads only
when a chart is imported, and that no global d3 exists), its hidden data table, both
palettes' contrast and axe, 390 px, keyboard and pointer dragging of a vector head, destroy,
and update() time. One browser page for the whole module."""

from __future__ import annotations

import pytest
from helpers import RecordedPage

from build_scripts.gates.check_site import _axe_problems

CHARTS = ("renderers/line_chart.js", "renderers/bar_chart.js", "ui/vector-plane.js")
D3 = "vendor/d3/d3.min.js"

MOUNT = """async ([base, paths]) => {
  const modules = await Promise.all(paths.map((m) => import(`${base}javascripts/${m}`)));
  const charts = Object.assign({}, ...modules);
  window.charts = charts;
  const host = document.createElement("div");
  host.id = "chart-host";
  host.className = "attn-lab";
  document.querySelector(".md-content__inner").prepend(host);
  const box = (id) => { const d = document.createElement("div"); d.id = id; host.append(d); return d; };
  window.drags = [];
  window.made = {
    line: charts.lineChart(box("line"), {
      label: "Mean row entropy against d_head", xLabel: "d_head", yLabel: "bits",
      xLog2: true, yDomain: [0, null], format: (v) => v.toFixed(2),
    }),
    bars: charts.barChart(box("bars"), {
      label: "Dot product of the query with each key", valueLabel: "q·k",
      format: (v) => v.toFixed(2),
    }),
    stacked: charts.barChart(box("stacked"), {
      label: "Parameters per layer", valueLabel: "parameters", stacked: true,
      format: (v) => v.toExponential(1),
    }),
    plane: charts.vectorPlane(box("plane"), {
      label: "Query and key vectors in 2-D", extent: 3, step: 0.1,
      onDrag: (id, to) => window.drags.push([id, to, performance.now()]),
    }),
  };
  made.line.update({
    series: [
      { name: "scaled", points: [[4, 2.1], [8, 2.0], [16, 1.95], [64, 1.9]] },
      { name: "unscaled", points: [[4, 1.9], [8, 1.2], [16, 0.8], [64, 0.123]], dashed: true },
    ],
    marker: { x: 64, label: "d_head = 64" },
  });
  made.bars.update({ bars: [
    { label: "key 1", value: 1.5, highlight: true },
    { label: "key 2", value: -0.3 },
    { label: "a very long token label indeed", value: 0.25 },
  ] });
  made.stacked.update({ bars: [
    { label: "GPT-2", parts: [{ name: "attention", value: 2.8e7 }, { name: "MLP", value: 5.7e7 }] },
    { label: "tiny", parts: [{ name: "attention", value: 1e6 }, { name: "MLP", value: 2e6 }] },
  ] });
  made.plane.update({
    vectors: [
      { id: "q", to: [1, 0.5], label: "query", kind: "query", draggable: true },
      { id: "k1", to: [0.2, 1], label: "key 1", kind: "key", draggable: true },
      { id: "d", from: [1, 0.5], to: [1.3, 0.9], label: "Δ", kind: "update", dashed: true },
    ],
    points: [{ at: [2, 2], label: "animal sense" }],
  });
}"""

TABLE = """(sel) => [...document.querySelectorAll(`${sel} table tr`)].map(
  (tr) => [...tr.cells].map((c) => c.textContent))"""

HANDLE = "#plane .attn-chart__handle[data-id=q]"


@pytest.fixture(scope="module")
def charts_page(browser, server):
    rec = RecordedPage(browser, server.base)
    page = rec.page
    page.goto(server.base)
    page.wait_for_load_state("networkidle")
    rec.loaded_before = [u for u in rec.requests if "/vendor/d3/" in u]
    page.evaluate(MOUNT, [server.base, list(CHARTS)])
    yield rec
    rec.context.close()


def test_d3_loads_once_as_a_module_only_when_a_chart_is_imported(charts_page):
    assert charts_page.loaded_before == []
    paths = [u[len(charts_page.base) :] for u in charts_page.requests]
    assert [p for p in paths if p.startswith("vendor/d3/")] == [D3]
    assert charts_page.page.evaluate("() => typeof globalThis.d3") == "undefined"
    assert (
        charts_page.page.evaluate("() => document.querySelectorAll('script[src*=d3]').length") == 0
    )
    assert charts_page.errors == []


def test_line_chart_has_a_name_a_legend_and_every_value_in_its_table(charts_page):
    page = charts_page.page
    svg = page.locator("#line svg.attn-chart__svg")
    assert svg.get_attribute("role") == "img"
    assert svg.get_attribute("aria-label") == "Mean row entropy against d_head"
    assert page.evaluate(TABLE, "#line") == [
        ["d_head", "scaled (bits)", "unscaled (bits)"],
        ["4", "2.10", "1.90"],
        ["8", "2.00", "1.20"],
        ["16", "1.95", "0.80"],
        ["64", "1.90", "0.12"],
    ]
    assert "d_head = 64" in page.locator("#line caption").text_content()
    assert page.locator("#line .attn-chart__legend li").count() == 2
    # told apart by dash and marker shape, not colour alone
    dashes = page.eval_on_selector_all(
        "#line .attn-chart__series .attn-chart__line",
        "(ps) => ps.map((p) => p.getAttribute('stroke-dasharray'))",
    )
    assert dashes == [None, "7 4"]
    shapes = page.eval_on_selector_all(
        "#line .attn-chart__series",
        "(gs) => gs.map((g) => g.querySelector('.attn-chart__point').getAttribute('d'))",
    )
    assert shapes[0] != shapes[1]
    # log2 axis: ticks at powers of two
    ticks = page.eval_on_selector_all(
        "#line .attn-chart__axis .tick text", "(ts) => ts.map((t) => t.textContent)"
    )
    assert {"4", "8", "16", "32", "64"} <= set(ticks)
    assert page.locator("#line .attn-chart__marker text").text_content() == "d_head = 64"


def test_table_writes_integers_exactly_and_names_its_cells_units(charts_page):
    """The default format keeps integers whole (16384, not 16380) and rounds others to 4
    significant digits; tableYLabel names the cells when they are not the axis' units."""
    page = charts_page.page
    page.evaluate(
        """() => {
      const box = document.createElement("div");
      box.id = "ints";
      document.querySelector("#chart-host").append(box);
      window.made.ints = window.charts.lineChart(box, {
        label: "Counts", xLabel: "seq_len", yLabel: "log2 of floats", tableYLabel: "floats",
        xLog2: true,
      });
      window.made.ints.update({ series: [
        { name: "memory", points: [[16384, 1.23456], [131072, 262200]] },
      ] });
    }"""
    )
    page.wait_for_function("() => document.querySelectorAll('#ints table tr').length === 3")
    assert page.evaluate(TABLE, "#ints") == [
        ["seq_len", "memory (floats)"],
        ["16384", "1.235"],
        ["131072", "262200"],
    ]
    page.evaluate("() => { window.made.ints.destroy(); delete window.made.ints; }")
    page.evaluate("() => document.querySelector('#ints').remove()")


def test_bar_charts_list_every_value_and_draw_a_zero_line(charts_page):
    page = charts_page.page
    assert page.evaluate(TABLE, "#bars") == [
        ["bar", "q·k"],
        ["key 1 (highlighted)", "1.50"],
        ["key 2", "-0.30"],
        ["a very long token label indeed", "0.25"],
    ]
    assert page.locator("#bars .attn-chart__zero").count() == 1
    assert page.locator("#bars .attn-chart__bar--highlight").count() == 1
    assert page.locator("#bars .attn-chart__legend").is_hidden()
    # the negative bar lies left of the zero line
    zero = float(page.locator("#bars .attn-chart__zero").get_attribute("x1"))
    neg = page.locator("#bars .attn-chart__bar").nth(1).locator("rect")
    assert float(neg.get_attribute("x")) + float(neg.get_attribute("width")) == pytest.approx(zero)
    assert page.evaluate(TABLE, "#stacked") == [
        ["bar", "attention", "MLP", "total (parameters)"],
        ["GPT-2", "2.8e+7", "5.7e+7", "8.5e+7"],
        ["tiny", "1.0e+6", "2.0e+6", "3.0e+6"],
    ]
    assert page.locator("#stacked .attn-chart__legend li").count() == 2
    fills = (
        page.locator("#stacked .attn-chart__bar")
        .first.locator("rect")
        .evaluate_all("(rs) => rs.map((r) => r.style.fill)")
    )
    assert fills[0] == "" and fills[1].startswith("url(")  # solid, then a pattern


def _last_drag(page):
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    return page.evaluate("() => window.drags.at(-1)")


def test_vector_head_moves_by_keyboard_clamped_once_per_frame(charts_page):
    page = charts_page.page
    handle = page.locator(HANDLE)
    assert handle.get_attribute("tabindex") == "0"
    assert handle.get_attribute("role") == "slider"
    assert handle.get_attribute("aria-label") == "query (query)"
    assert handle.get_attribute("aria-valuetext") == "x 1.00, y 0.50"
    handle.focus()
    page.evaluate("() => { window.drags = []; }")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    drag = _last_drag(page)
    assert drag[0] == "q" and drag[1] == [1.3, 0.5]
    page.keyboard.press("Shift+ArrowUp")  # 0.5 + 1.0
    assert _last_drag(page)[1] == [1.3, 1.5]
    for _ in range(3):
        page.keyboard.press("Shift+ArrowUp")  # clamped at the extent
    assert _last_drag(page)[1] == [1.3, 3]
    assert handle.get_attribute("aria-valuetext") == "x 1.30, y 3.00"
    # many keys within one frame: onDrag once, with the newest position
    page.evaluate("() => { window.drags = []; }")
    page.evaluate(
        """(sel) => { const h = document.querySelector(sel);
          for (let i = 0; i < 10; i++) h.dispatchEvent(new KeyboardEvent("keydown", {key: "ArrowLeft", bubbles: true})); }""",
        HANDLE,
    )
    assert _last_drag(page)[1] == [0.3, 3]
    assert page.evaluate("() => window.drags.length") == 1
    # the table follows once the moves pause (chart_frame.js: TABLE_DELAY_MS); a busy machine
    # may fire that timer late, so wait for the row, not for a fixed time
    page.wait_for_function(
        "(sel) => document.querySelector(sel).textContent.includes('(0.30, 3.00)')",
        arg="#plane table",
    )
    rows = page.evaluate(TABLE, "#plane")
    assert rows[0] == ["vector", "kind", "from (x, y)", "to (x, y)"]
    assert ["query", "query", "(0.00, 0.00)", "(0.30, 3.00)"] in rows
    assert ["animal sense", "point", "", "(2.00, 2.00)"] in rows


def test_vector_head_drags_by_pointer_clamped_to_the_extent(charts_page):
    page = charts_page.page
    page.evaluate("() => { window.drags = []; }")
    box = page.locator(f"{HANDLE} .attn-chart__hit").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    plane = page.locator("#plane svg.attn-chart__svg").bounding_box()
    page.mouse.move(plane["x"] + plane["width"] / 2, plane["y"] + plane["height"] / 2, steps=4)
    near_origin = _last_drag(page)[1]
    assert max(abs(near_origin[0]), abs(near_origin[1])) <= 0.2
    page.mouse.move(plane["x"] - 200, plane["y"] - 200, steps=4)  # far outside, up and left
    assert _last_drag(page)[1] == [-3, 3]
    page.mouse.up()
    # capture released: moving now does nothing
    n = page.evaluate("() => window.drags.length")
    page.mouse.move(plane["x"] + 10, plane["y"] + plane["height"] - 10)
    _last_drag(page)
    assert page.evaluate("() => window.drags.length") == n
    assert page.locator(HANDLE).get_attribute("aria-valuetext") == "x -3.00, y 3.00"
    # an update from the widget brings the head to the data's position
    page.evaluate(
        """() => made.plane.update({ vectors: [
          { id: "q", to: [-1, 2], label: "query", kind: "query", draggable: true },
          { id: "k1", to: [0.2, 1], label: "key 1", kind: "key", draggable: true }] })"""
    )
    assert page.locator(HANDLE).get_attribute("aria-valuetext") == "x -1.00, y 2.00"


def _contrast_and_axe(page, scheme):
    page.evaluate(f"() => document.body.setAttribute('data-md-color-scheme', '{scheme}')")
    ratios = page.evaluate(
        """() => {
      const rgb = (s) => s.match(/[\\d.]+/g).map(Number);
      const lum = (c) => { const [r, g, b] = c.slice(0, 3).map((v) => { v /= 255;
        return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
      const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
      // a translucent colour (rgba) as it shows over what is behind it
      const over = (c, b) => c.length > 3 ? c.slice(0, 3).map((v, i) => v * c[3] + b[i] * (1 - c[3])) : c;
      const backdrop = (el) => { if (!el) return [255, 255, 255];
        const c = rgb(getComputedStyle(el).backgroundColor);
        return c.length > 3 && c[3] < 1 ? over(c, backdrop(el.parentElement)) : c.slice(0, 3); };
      const bg = backdrop(document.querySelector("#chart-host"));
      const out = {};
      for (const sel of ["#line .attn-chart__line", "#plane .attn-chart__shaft", "#plane .attn-chart__grip", "#bars .attn-chart__rect"]) {
        for (const node of document.querySelectorAll(sel)) {
          const cs = getComputedStyle(node);
          const ink = sel.endsWith("rect") ? cs.fill : cs.stroke;
          out[`${sel} ${node.closest("[class*=kind--], [class*=__c]")?.getAttribute("class")}`] = ratio(over(rgb(ink), bg), bg);
        }
      }
      for (const node of document.querySelectorAll("#chart-host text")) {
        const c = rgb(getComputedStyle(node).fill);
        out[`text ${node.textContent}`] = ratio(over(c, bg), bg);
      }
      return out;
    }"""
    )
    low = {k: round(v, 2) for k, v in ratios.items() if v < (4.5 if k.startswith("text") else 3)}
    assert low == {}, f"{scheme}: contrast too low: {low}"
    problems = [p for p in _axe_problems(page, scheme) if "chart" in p or "#chart-host" in p]
    assert problems == []


def test_both_palettes_have_contrast_and_pass_axe(charts_page):
    page = charts_page.page
    try:
        _contrast_and_axe(page, "default")
        _contrast_and_axe(page, "slate")
    finally:
        page.evaluate("() => document.body.setAttribute('data-md-color-scheme', 'default')")


def test_focus_ring_shows_on_a_focused_head(charts_page):
    page = charts_page.page
    page.locator(HANDLE).focus()
    page.keyboard.press("ArrowDown")  # keyboard focus: :focus-visible
    ring = page.locator(f"{HANDLE} .attn-chart__ring")
    assert (
        page.evaluate("(r) => getComputedStyle(r).visibility", ring.element_handle()) == "visible"
    )
    other = page.locator("#plane .attn-chart__handle[data-id=k1] .attn-chart__ring")
    assert (
        page.evaluate("(r) => getComputedStyle(r).visibility", other.element_handle()) == "hidden"
    )


def test_charts_fit_390_px_with_legible_text(charts_page):
    page = charts_page.page
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.evaluate("() => new Promise((r) => setTimeout(r, 200))")  # the resize redraw
        sizes = page.evaluate(
            """() => {
          const out = [];
          for (const svg of document.querySelectorAll("#chart-host svg.attn-chart__svg")) {
            const box = svg.getBoundingClientRect();
            const vb = svg.viewBox.baseVal;
            for (const t of svg.querySelectorAll("text")) {
              out.push(parseFloat(getComputedStyle(t).fontSize) * box.width / vb.width);
            }
          }
          return out;
        }"""
        )
        assert min(sizes) >= 11
        assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
        widths = page.eval_on_selector_all(
            "#chart-host svg.attn-chart__svg",
            "(ss) => ss.map((s) => s.getBoundingClientRect().right)",
        )
        assert max(widths) <= 390
    finally:
        page.set_viewport_size({"width": 1200, "height": 900})


def test_updates_reuse_the_charts_nodes(charts_page):
    """Repeated update() calls (how long they take is make bench's, through every lab's
    recompute) keep each chart's node count instead of adding nodes."""
    page = charts_page.page
    # each update reuses the chart's nodes instead of adding more
    counts = page.evaluate(
        "() => [...document.querySelectorAll('#chart-host svg.attn-chart__svg')].map((s) => s.querySelectorAll('*').length)"
    )
    page.evaluate(
        "() => { made.bars.update({ bars: Array.from({ length: 12 }, (_, j) => ({ label: `key ${j}`, value: j - 5 })) });"
        " made.line.update({ series: [{ name: 'a', points: [[1, 1], [2, 3], [130, 2]] }, { name: 'b', points: [[1, 0]], dashed: true }] }); }"
    )
    page.evaluate(
        "() => { made.bars.update({ bars: Array.from({ length: 12 }, (_, j) => ({ label: `key ${j}`, value: j - 6 })) });"
        " made.line.update({ series: [{ name: 'a', points: [[1, 1], [2, 3], [130, 2]] }, { name: 'b', points: [[1, 0]], dashed: true }] }); }"
    )
    again = page.evaluate(
        "() => [...document.querySelectorAll('#chart-host svg.attn-chart__svg')].map((s) => s.querySelectorAll('*').length)"
    )
    assert len(counts) == len(again) == 4
    assert page.locator("#bars .attn-chart__axis").count() == 1
    assert page.locator("#line .attn-chart__axis").count() == 2


def test_an_update_with_the_same_data_changes_nothing_and_new_data_is_drawn(charts_page):
    """The labs send every chart its data on each recompute; a chart whose data did not
    change is left as it is (no DOM writes), one whose data did is redrawn."""
    page = charts_page.page
    changed = page.evaluate(
        """() => {
      const data = { series: [{ name: 'a', points: [[1, 1], [2, 3], [130, 2]] }],
                     marker: { x: 2, label: 'two' } };
      made.line.update(data);
      const seen = [];
      const watch = new MutationObserver((records) => seen.push(...records));
      watch.observe(document.getElementById('line'),
                    { subtree: true, attributes: true, childList: true, characterData: true });
      made.line.update(JSON.parse(JSON.stringify(data)));
      const same = watch.takeRecords().length;
      made.line.update({ ...data, marker: { x: 130, label: 'last' } });
      const moved = watch.takeRecords().length;
      watch.disconnect();
      return [same, moved, document.querySelector('#line .attn-chart__rule-label').textContent];
    }"""
    )
    assert changed[0] == 0 and changed[1] > 0 and changed[2] == "last"


def test_the_plane_takes_a_new_extent_in_place(charts_page):
    page = charts_page.page
    page.evaluate(
        """() => {
      const d = document.createElement("div"); d.id = "plane-grow";
      document.getElementById("chart-host").append(d);
      window.growPlane = charts.vectorPlane(d, { label: "Small", extent: 2 });
      growPlane.update({ vectors: [{ id: "x", to: [1, 1], label: "x", draggable: true }] });
    }"""
    )
    page.evaluate("() => { document.querySelector('#plane-grow figure').dataset.first = 'yes'; }")
    ticks = "(sel) => [...document.querySelectorAll(`${sel} .tick text`)].map((t) => t.textContent)"
    assert "2" in page.evaluate(ticks, "#plane-grow") and "8" not in page.evaluate(
        ticks, "#plane-grow"
    )
    page.evaluate(
        "() => growPlane.update({ extent: 8, label: 'Large', vectors: "
        "[{ id: 'x', to: [6, -5], label: 'x', draggable: true }] })"
    )
    # the same figure (not a new plane), the axes redrawn for the new extent
    assert page.get_attribute("#plane-grow figure", "data-first") == "yes"
    assert page.evaluate("() => document.querySelectorAll('#plane-grow figure').length") == 1
    assert "8" in page.evaluate(ticks, "#plane-grow")
    assert page.get_attribute("#plane-grow figure", "aria-label") == "Large"
    handle = "#plane-grow .attn-chart__handle"
    assert page.get_attribute(handle, "aria-valuemax") == "8"
    assert page.get_attribute(handle, "aria-valuetext") == "x 6.00, y -5.00"
    page.evaluate("() => { growPlane.destroy(); document.getElementById('plane-grow').remove(); }")
    assert charts_page.errors == []


def test_the_plane_gives_the_arrow_key_hint_only_when_a_vector_is_draggable(charts_page):
    page = charts_page.page
    hint = "Arrow keys move the point by 0.1; with Shift, by 1."
    shown = """(sel) => [...document.querySelectorAll(`${sel} p.attn-visually-hidden`)]
      .filter((p) => !p.hidden).map((p) => p.textContent)"""
    assert page.evaluate(shown, "#plane") == [hint]
    described = page.get_attribute(HANDLE, "aria-describedby")
    assert page.evaluate("(id) => document.getElementById(id).hidden", described) is False
    page.evaluate(
        """() => {
      const d = document.createElement("div"); d.id = "plane-fixed";
      document.getElementById("chart-host").append(d);
      window.fixedPlane = charts.vectorPlane(d, { label: "Fixed vectors", extent: 2 });
      fixedPlane.update({ vectors: [{ id: "x", to: [1, 1], label: "x", kind: "embedding" }] });
    }"""
    )
    assert page.evaluate(shown, "#plane-fixed") == []
    page.evaluate(
        "() => fixedPlane.update({ vectors: [{ id: 'x', to: [1, 1], draggable: true }] })"
    )
    assert page.evaluate(shown, "#plane-fixed") == [hint]
    page.evaluate(
        "() => { fixedPlane.destroy(); document.getElementById('plane-fixed').remove(); }"
    )
    assert charts_page.errors == []


def test_destroy_leaves_nothing(charts_page):
    page = charts_page.page
    page.evaluate("() => { for (const c of Object.values(made)) c.destroy(); }")
    assert (
        page.evaluate("() => document.querySelector('#chart-host').querySelectorAll('*').length")
        == 4
    )
    assert (
        page.evaluate(
            "() => document.querySelectorAll('#chart-host figure, #chart-host svg, #chart-host table').length"
        )
        == 0
    )
    # the containers are empty, and a resize after destroy draws nothing back
    page.set_viewport_size({"width": 800, "height": 900})
    page.evaluate("() => new Promise((r) => setTimeout(r, 150))")
    page.set_viewport_size({"width": 1200, "height": 900})
    assert page.evaluate(
        "() => [...document.querySelectorAll('#chart-host > div')].every((d) => !d.firstChild)"
    )
    assert charts_page.errors == []
