// Shared SVG charts for the labs: a line chart, a horizontal bar chart and a 2-D vector
// plane with draggable arrow heads. Scales, axes, shapes and the DOM joins are d3's
// (d3-scale, d3-axis, d3-shape, d3-selection, with d3-array and d3-format: vendored UMD
// scripts in vendor/d3/, pinned in build_scripts/vendor/vendor-lock.json).
//
// Loading: those scripts are not on every page. This module injects them once, in order, the
// first time it is imported, and awaits them at its top level, so a widget that imports it
// (`import { lineChart } from "../renderers/charts.js"`) runs only once they are there, and
// then every function here is synchronous. With this file, about 42 kB as sent (gzip where
// the site has a .gz copy), on chart pages only; the hidden table follows an update after
// TABLE_DELAY_MS (its layout costs more than the drawing).
//
// Every chart is a <figure> that fills its container's width: the SVG's viewBox is its size
// in CSS pixels, redrawn when the container is resized, so text keeps its size (12 px) on a
// phone. Colours are the CSS variables --attn-chart-* (site.css, light and slate palettes);
// series and kinds also differ by dash, marker shape or fill pattern, never colour alone.
// Each figure has an accessible name and a visually hidden table of its data. Labels are
// inserted as text, never as HTML. destroy() removes the nodes, listeners, observers and
// timers of its chart (the d3 scripts stay: they are shared by every chart of the site).

// Each d3 module (in load order: each needs those before it) and a function it defines. Every
// page already has d3-color and d3-interpolate (mkdocs.yml); a module is loaded only if its
// function is missing.
const LIBS = [
  ["d3-color", "rgb"],
  ["d3-interpolate", "interpolateNumber"],
  ["d3-array", "ticks"],
  ["d3-format", "format"],
  ["d3-path", "path"],
  ["d3-shape", "line"],
  ["d3-scale", "scaleLinear"],
  ["d3-selection", "select"],
  ["d3-axis", "axisBottom"],
];
const FONT_PX = 12; // text size in the SVG (CSS pixels; the viewBox is 1:1)
const CHAR_PX = 7; // a rough width of one character at FONT_PX, for laying out margins
const FALLBACK_WIDTH = 640; // when the container has no width yet (e.g. hidden)
const TABLE_DELAY_MS = 150; // the hidden table follows the last update by this much
const MAX_LABEL = 18; // characters of a bar label drawn; the table has the whole label
const KINDS = ["query", "key", "value", "embedding", "update", "other"];
const PLANE_PAD = 30; // the vector plane's margin around its axes, in SVG pixels

/** Load the d3 modules the charts need (classic UMD scripts extending the global d3). */
function loadLibraries() {
  const base = new URL("../../vendor/d3/", import.meta.url);
  const loads = [];
  for (const [name, defines] of LIBS) {
    if (typeof globalThis.d3?.[defines] === "function") continue;
    let script = document.querySelector(`script[data-attn-lib="${name}"]`);
    if (!script) {
      script = document.createElement("script");
      script.src = new URL(`${name}.min.js`, base).href;
      script.async = false; // fetched in parallel, run in this order (each needs the ones before)
      script.dataset.attnLib = name;
      script.dataset.state = "loading";
      script.addEventListener("load", () => {
        script.dataset.state = "loaded";
      });
      document.head.append(script);
    }
    if (script.dataset.state === "loaded") continue;
    loads.push(
      new Promise((resolve, reject) => {
        script.addEventListener("load", resolve);
        script.addEventListener("error", () => {
          script.remove(); // a later import tries again
          reject(new Error(`charts: could not load ${script.src}`));
        });
      }),
    );
  }
  return Promise.all(loads);
}

await loadLibraries();

let uid = 0;
const nextId = (prefix) => `attn-chart-${prefix}-${++uid}`;
// Integers exactly (a seq_len of 16384 is not 16380); other numbers to 4 significant digits.
const defaultFormat = (v) =>
  Number.isInteger(v) ? String(v) : Number.isFinite(v) ? String(+v.toPrecision(4)) : String(v);
const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));
const clip = (text, n) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);
const SYMBOLS = () => [
  d3.symbolCircle,
  d3.symbolSquare,
  d3.symbolTriangle,
  d3.symbolDiamond,
  d3.symbolCross,
  d3.symbolWye,
];

/** A chart's frame: figure, SVG, legend, hidden table, and a redraw on resize. */
function frame(container, kind, label) {
  const figure = document.createElement("figure");
  figure.className = `attn-chart attn-chart--${kind}`;
  const svg = d3
    .select(figure)
    .append("svg")
    .attr("class", "attn-chart__svg")
    .attr("font-size", FONT_PX);
  const legend = document.createElement("ul");
  legend.className = "attn-chart__legend";
  legend.setAttribute("aria-hidden", "true"); // the table names every series
  // the table inside a hidden box: a table itself does not shrink to 1 px
  const hidden = document.createElement("div");
  hidden.className = "attn-visually-hidden";
  const table = document.createElement("table");
  table.className = "attn-chart__table"; // a class keeps Material's table styles (a scroll box) off
  hidden.append(table);
  figure.append(legend, hidden);
  container.append(figure);

  const state = { figure, svg, legend, table, label, width: 0, draw: null, frame: 0 };
  state.measure = () => Math.round(figure.clientWidth) || FALLBACK_WIDTH;
  state.width = state.measure();
  state.observer = new ResizeObserver(() => {
    const width = state.measure();
    if (width === state.width || state.frame) return;
    state.frame = requestAnimationFrame(() => {
      state.frame = 0;
      state.width = state.measure();
      state.draw?.();
    });
  });
  state.observer.observe(figure);
  let drawnSize = "";
  state.size = (width, height) => {
    if (`${width} ${height}` === drawnSize) return; // setting them again costs a page layout
    drawnSize = `${width} ${height}`;
    svg.attr("viewBox", `0 0 ${width} ${height}`).attr("width", width).attr("height", height);
  };
  // The hidden table is laid out like any table: for a long one that costs more than the
  // drawing (about 15 ms for 130 rows), so after the first fill it follows the picture once
  // updates pause for TABLE_DELAY_MS (a drag redraws every frame, the table once at the end).
  state.tableTimer = 0;
  // the legend is rebuilt only when what it shows (`key`, JSON-able) changes
  let legendKey = null;
  state.setLegend = (key, build, hide) => {
    const text = JSON.stringify(key);
    if (text !== legendKey) {
      legendKey = text;
      legend.replaceChildren();
      build();
    }
    legend.hidden = hide;
  };
  state.fillTable = (make) => {
    clearTimeout(state.tableTimer);
    const fill = () => {
      state.tableTimer = 0;
      const [caption, header, rows] = make();
      fillTable(table, caption, header, rows);
    };
    if (table.rows.length === 0) fill();
    else state.tableTimer = setTimeout(fill, TABLE_DELAY_MS);
  };
  state.destroy = () => {
    clearTimeout(state.tableTimer);
    state.observer.disconnect();
    if (state.frame) cancelAnimationFrame(state.frame);
    state.frame = 0;
    state.draw = null;
    figure.remove();
  };
  return state;
}

/** Fill `table` with a caption, a header row and body rows (text only). */
function fillTable(table, caption, header, rows) {
  table.replaceChildren();
  const cap = table.createCaption();
  cap.textContent = caption;
  const head = table.createTHead().insertRow();
  for (const text of header) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = text;
    head.append(th);
  }
  const body = table.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    row.forEach((text, i) => {
      const cell = document.createElement(i === 0 ? "th" : "td");
      if (i === 0) cell.scope = "row";
      cell.textContent = text;
      tr.append(cell);
    });
  }
}

/** One legend entry: a small SVG swatch drawn by `drawSwatch(svgSelection)` and a name. */
function legendItem(legend, name, drawSwatch) {
  const li = document.createElement("li");
  const swatch = d3
    .select(li)
    .append("svg")
    .attr("class", "attn-chart__swatch")
    .attr("width", 28)
    .attr("height", 14)
    .attr("viewBox", "0 0 28 14");
  drawSwatch(swatch);
  const span = document.createElement("span");
  span.textContent = name;
  li.append(span);
  legend.append(li);
}

/** Axis tick count for a length in pixels (about one tick per 70 px, at least 2). */
const tickCount = (px) => Math.max(2, Math.floor(px / 70));

/** A tick format for `scale`: SI prefixes for large numbers, else d3's default. */
function tickFormat(scale, count) {
  const [lo, hi] = scale.domain();
  const big = Math.max(Math.abs(lo), Math.abs(hi)) >= 1e4;
  return scale.tickFormat(count, big ? "~s" : undefined);
}

/** The child `tag.cls` of the selection `parent`, made on first use (kept across redraws:
 * an update changes attributes instead of rebuilding the nodes). */
function part(parent, tag, cls) {
  const found = parent.select(`:scope > ${tag}.${cls}`);
  return found.empty() ? parent.append(tag).attr("class", cls) : found;
}

/** Style an axis group drawn by d3-axis: text in the chart's text colour and size. */
function styleAxis(g) {
  g.attr("font-size", null).attr("font-family", null).classed("attn-chart__axis", true);
}

// --------------------------------------------------------------------------- line chart

/**
 * A line chart in `container`.
 * @param {HTMLElement} container
 * @param {{label: string, xLabel?: string, yLabel?: string, xLog2?: boolean,
 *   yDomain?: [number|null, number|null], format?: (v: number) => string,
 *   xFormat?: (v: number) => string, tableYLabel?: string}} options
 *   xLog2 puts x on a log2 scale with ticks at powers of two; yDomain fixes the y range's
 *   ends (null: from the data); format writes y values in the table, xFormat x values;
 *   tableYLabel names what the table's y cells hold (default yLabel: set it when format
 *   writes them in other units than the axis, e.g. raw counts of a log2 axis; "" when the
 *   series' names carry their units).
 * @returns {{update(data: {series: {name: string, points: [number, number][],
 *   dashed?: boolean}[], marker?: {x: number, label?: string},
 *   yDomain?: [number|null, number|null]}), destroy(), figure}}
 *   An update's yDomain overrides the option's while its data is shown (a range that
 *   depends on the data).
 */
export function lineChart(container, options) {
  const opts = { xLabel: "x", yLabel: "y", xLog2: false, format: defaultFormat, ...options };
  const xFormat = opts.xFormat || defaultFormat;
  const f = frame(container, "line", opts.label);
  f.svg.attr("role", "img").attr("aria-label", opts.label);
  let data = { series: [] };

  function draw() {
    const width = f.width;
    const height = Math.round(clamp(width * 0.55, 220, 340));
    const m = { top: 26, right: 18, bottom: 44, left: 56 };
    const innerW = Math.max(40, width - m.left - m.right);
    const innerH = height - m.top - m.bottom;
    f.size(width, height);
    const svg = f.svg;

    const series = data.series || [];
    const points = series.flatMap((s) => s.points);
    const xs = points.map((p) => p[0]);
    const ys = points.map((p) => p[1]).filter(Number.isFinite);
    if (data.marker) xs.push(data.marker.x);

    let x;
    if (opts.xLog2) {
      const pos = xs.filter((v) => v > 0);
      const lo = pos.length ? Math.min(...pos) : 1;
      const hi = pos.length ? Math.max(...pos) : 2;
      x = d3
        .scaleLog()
        .base(2)
        .domain([lo, hi > lo ? hi : lo * 2])
        .range([0, innerW]);
    } else {
      const [lo, hi] = xs.length ? d3.extent(xs) : [0, 1];
      x = d3
        .scaleLinear()
        .domain([lo, hi > lo ? hi : lo + 1])
        .range([0, innerW]);
    }
    let [ylo, yhi] = ys.length ? d3.extent(ys) : [0, 1];
    const fixed = data.yDomain || opts.yDomain || [null, null];
    if (fixed[0] != null) ylo = fixed[0];
    if (fixed[1] != null) yhi = fixed[1];
    if (!(yhi > ylo)) yhi = ylo + 1;
    const y = d3.scaleLinear().domain([ylo, yhi]).range([innerH, 0]);
    if (fixed[0] == null || fixed[1] == null) {
      const niced = y
        .copy()
        .nice(Math.max(5, tickCount(innerH)))
        .domain();
      y.domain([fixed[0] ?? niced[0], fixed[1] ?? niced[1]]);
    }

    const plot = part(svg, "g", "attn-chart__plot").attr(
      "transform",
      `translate(${m.left},${m.top})`,
    );
    // grid and axes
    const yTicks = tickCount(innerH);
    part(plot, "g", "attn-chart__grid")
      .selectAll("line")
      .data(y.ticks(yTicks))
      .join("line")
      .attr("x1", 0)
      .attr("x2", innerW)
      .attr("y1", (v) => y(v))
      .attr("y2", (v) => y(v));
    let xAxis = d3.axisBottom(x);
    if (opts.xLog2) {
      const [lo, hi] = x.domain();
      let powers = d3.range(Math.ceil(Math.log2(lo) - 1e-9), Math.floor(Math.log2(hi) + 1e-9) + 1);
      const room = Math.max(2, Math.floor(innerW / 44));
      const every = Math.ceil(powers.length / room);
      powers = powers.filter((_, i) => i % every === 0);
      xAxis = xAxis.tickValues(powers.map((k) => 2 ** k)).tickFormat(d3.format("~d"));
    } else {
      const n = tickCount(innerW);
      xAxis = xAxis.ticks(n).tickFormat(tickFormat(x, n));
    }
    part(plot, "g", "attn-chart__axis--x")
      .attr("transform", `translate(0,${innerH})`)
      .call(xAxis)
      .call(styleAxis);
    part(plot, "g", "attn-chart__axis--y")
      .call(d3.axisLeft(y).ticks(yTicks).tickFormat(tickFormat(y, yTicks)))
      .call(styleAxis);
    part(svg, "text", "attn-chart__label--x")
      .attr("x", m.left + innerW / 2)
      .attr("y", height - 8)
      .attr("text-anchor", "middle")
      .text(opts.xLabel);
    part(svg, "text", "attn-chart__label--y").attr("x", 4).attr("y", 14).text(opts.yLabel);

    // the optional vertical rule
    const rule = part(plot, "g", "attn-chart__marker");
    const mx = data.marker ? x(data.marker.x) : Number.NaN;
    rule.attr("display", Number.isFinite(mx) ? null : "none");
    if (Number.isFinite(mx)) {
      part(rule, "line", "attn-chart__rule")
        .attr("x1", mx)
        .attr("x2", mx)
        .attr("y1", 0)
        .attr("y2", innerH);
      part(rule, "text", "attn-chart__rule-label")
        .attr("x", mx > innerW / 2 ? mx - 4 : mx + 4)
        .attr("y", 12)
        .attr("text-anchor", mx > innerW / 2 ? "end" : "start")
        .text(data.marker.label || "");
    }

    // series: colour, dash and marker shape all differ
    const shapes = SYMBOLS();
    const line = d3
      .line()
      .defined((p) => Number.isFinite(p[1]) && Number.isFinite(x(p[0])))
      .x((p) => x(p[0]))
      .y((p) => y(p[1]));
    const groups = part(plot, "g", "attn-chart__lines")
      .selectAll("g.attn-chart__series")
      .data(series)
      .join((enter) => {
        const g = enter.append("g");
        g.append("path").attr("class", "attn-chart__line");
        return g;
      })
      .attr("class", (_, i) => `attn-chart__series attn-chart__c${(i % 6) + 1}`)
      .attr("data-series", (s) => s.name);
    groups.each(function (s, i) {
      const g = d3.select(this);
      g.select(".attn-chart__line")
        .attr("stroke-dasharray", s.dashed ? "7 4" : null)
        .attr("d", line(s.points));
      const ok = s.points.filter((p) => Number.isFinite(p[1]) && Number.isFinite(x(p[0])));
      const every = Math.max(1, Math.ceil(ok.length / 12)); // at most ~12 markers a line
      const symbol = d3.symbol(shapes[i % shapes.length], 36);
      g.selectAll("path.attn-chart__point")
        .data(ok.filter((_, j) => j % every === 0 || j === ok.length - 1))
        .join("path")
        .attr("class", "attn-chart__point")
        .attr("transform", (p) => `translate(${x(p[0])},${y(p[1])})`)
        .attr("d", symbol);
    });
  }

  function update(next) {
    data = next || { series: [] };
    const series = data.series || [];
    const shapes = SYMBOLS();
    f.setLegend(
      series.map((s) => [s.name, s.dashed]),
      () =>
        series.forEach((s, i) => {
          legendItem(f.legend, s.name, (sw) => {
            const g = sw.append("g").attr("class", `attn-chart__c${(i % 6) + 1}`);
            g.append("line")
              .attr("class", "attn-chart__line")
              .attr("x1", 1)
              .attr("x2", 27)
              .attr("y1", 7)
              .attr("y2", 7)
              .attr("stroke-dasharray", s.dashed ? "7 4" : null);
            g.append("path")
              .attr("class", "attn-chart__point")
              .attr("transform", "translate(14,7)")
              .attr("d", d3.symbol(shapes[i % shapes.length], 36));
          });
        }),
      series.length < 2,
    );
    f.fillTable(() => {
      // table: one row per x, one column per series
      const xsAll = [...new Set(series.flatMap((s) => s.points.map((p) => p[0])))].sort(
        (a, b) => a - b,
      );
      const lookup = series.map((s) => new Map(s.points.map((p) => [p[0], p[1]])));
      const unit = opts.tableYLabel ?? opts.yLabel;
      const header = [opts.xLabel, ...series.map((s) => (unit ? `${s.name} (${unit})` : s.name))];
      const rows = xsAll.map((xv) => [
        xFormat(xv),
        ...lookup.map((mp) => (mp.has(xv) ? opts.format(mp.get(xv)) : "none")),
      ]);
      const caption = data.marker?.label
        ? `${opts.label} (marked: ${data.marker.label})`
        : opts.label;
      return [caption, header, rows];
    });
    draw();
  }

  f.draw = draw;
  draw();
  return { update, destroy: f.destroy, figure: f.figure };
}

// --------------------------------------------------------------------------- bar chart

const PATTERNS = ["solid", "hatch", "dots", "cross"];

/** Fill patterns for stacked parts (colour is never the only cue): defs in `svg`. */
function addPatterns(svg, prefix, count) {
  const defs = part(svg, "defs", "attn-chart__defs");
  if (defs.selectAll("pattern").size() === count) return;
  defs.selectAll("*").remove();
  for (let i = 0; i < count; i++) {
    const kind = PATTERNS[i % PATTERNS.length];
    if (kind === "solid") continue;
    const p = defs
      .append("pattern")
      .attr("id", `${prefix}-${i}`)
      .attr("patternUnits", "userSpaceOnUse")
      .attr("width", 8)
      .attr("height", 8)
      .attr("class", `attn-chart__c${(i % 6) + 1}`);
    p.append("rect").attr("class", "attn-chart__pattern-bg").attr("width", 8).attr("height", 8);
    if (kind === "hatch") {
      p.append("path")
        .attr("class", "attn-chart__pattern-ink")
        .attr("d", "M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4");
    } else if (kind === "dots") {
      p.append("circle")
        .attr("class", "attn-chart__pattern-dot")
        .attr("cx", 4)
        .attr("cy", 4)
        .attr("r", 2);
    } else {
      p.append("path").attr("class", "attn-chart__pattern-ink").attr("d", "M0,4 h8 M4,0 v8");
    }
  }
}
const partFill = (prefix, i) =>
  PATTERNS[i % PATTERNS.length] === "solid" ? null : `url(#${prefix}-${i})`;

/**
 * Horizontal bars in `container`, one per label; values may be negative (a zero line is
 * drawn). With `stacked: true` each bar has `parts` and a legend names them.
 * @param {HTMLElement} container
 * @param {{label: string, valueLabel?: string, format?: (v: number) => string,
 *   domain?: [number|null, number|null], stacked?: boolean}} options
 * @returns {{update(data: {bars: {label: string, value?: number, highlight?: boolean,
 *   parts?: {name: string, value: number}[]}[]}), destroy(), figure}}
 */
export function barChart(container, options) {
  const opts = { valueLabel: "value", format: defaultFormat, stacked: false, ...options };
  const f = frame(container, "bar", opts.label);
  f.svg.attr("role", "img").attr("aria-label", opts.label);
  const patternId = nextId("pattern");
  let data = { bars: [] };

  const partsOf = (bar) =>
    opts.stacked ? bar.parts || [] : [{ name: opts.valueLabel, value: bar.value }];
  const totalOf = (bar) => d3.sum(partsOf(bar), (p) => p.value);

  function draw() {
    const width = f.width;
    const bars = data.bars || [];
    const names = opts.stacked
      ? [...new Set(bars.flatMap((b) => partsOf(b).map((p) => p.name)))]
      : [];
    const labels = bars.map((b) => clip(String(b.label), MAX_LABEL));
    const values = bars.map((b) => opts.format(totalOf(b)));
    const row = 28;
    const m = {
      top: 8,
      bottom: 44,
      left: Math.min(width * 0.4, 10 + CHAR_PX * (d3.max(labels, (t) => t.length) || 0)),
      right: Math.min(width * 0.3, 12 + CHAR_PX * (d3.max(values, (t) => t.length) || 0)),
    };
    const innerW = Math.max(40, width - m.left - m.right);
    const innerH = Math.max(row, row * bars.length);
    const height = m.top + innerH + m.bottom;
    f.size(width, height);
    const svg = f.svg;
    if (opts.stacked) addPatterns(svg, patternId, names.length);

    // extent: positive parts stack right of zero, negative ones left
    let lo = 0;
    let hi = 0;
    for (const b of bars) {
      const parts = partsOf(b);
      lo = Math.min(
        lo,
        d3.sum(parts, (p) => Math.min(0, p.value)),
      );
      hi = Math.max(
        hi,
        d3.sum(parts, (p) => Math.max(0, p.value)),
      );
    }
    const fixed = opts.domain || [null, null];
    const x = d3.scaleLinear().domain([lo, hi > lo ? hi : lo + 1]);
    const n = tickCount(innerW);
    x.nice(Math.max(5, n)); // a fine nice step, even when few ticks fit
    x.domain([fixed[0] ?? x.domain()[0], fixed[1] ?? x.domain()[1]]).range([0, innerW]);
    const y = d3
      .scaleBand()
      .domain(d3.range(bars.length))
      .range([0, innerH])
      .paddingInner(0.25)
      .paddingOuter(0.12);

    const plot = part(svg, "g", "attn-chart__plot").attr(
      "transform",
      `translate(${m.left},${m.top})`,
    );
    part(plot, "g", "attn-chart__grid")
      .selectAll("line")
      .data(x.ticks(n))
      .join("line")
      .attr("x1", (v) => x(v))
      .attr("x2", (v) => x(v))
      .attr("y1", 0)
      .attr("y2", innerH);
    part(plot, "g", "attn-chart__axis--x")
      .attr("transform", `translate(0,${innerH})`)
      .call(d3.axisBottom(x).ticks(n).tickFormat(tickFormat(x, n)))
      .call(styleAxis);
    part(svg, "text", "attn-chart__label--x")
      .attr("x", m.left + innerW / 2)
      .attr("y", height - 8)
      .attr("text-anchor", "middle")
      .text(opts.valueLabel);

    const rows = part(plot, "g", "attn-chart__bars")
      .selectAll("g.attn-chart__bar")
      .data(bars)
      .join((enter) => {
        const g = enter.append("g");
        g.append("g").attr("class", "attn-chart__rects");
        g.append("text").attr("class", "attn-chart__bar-label");
        g.append("text").attr("class", "attn-chart__bar-value");
        return g;
      })
      .attr("class", (b) => `attn-chart__bar${b.highlight ? " attn-chart__bar--highlight" : ""}`)
      .attr("transform", (_, i) => `translate(0,${y(i)})`);
    const bandH = y.bandwidth();
    const [dlo, dhi] = x.domain();
    rows.each(function (b) {
      let pos = 0;
      let neg = 0;
      const spans = partsOf(b).map((p) => {
        const i = opts.stacked ? names.indexOf(p.name) : 0;
        const v = Number.isFinite(p.value) ? p.value : 0;
        const start = v >= 0 ? pos : neg + v;
        if (v >= 0) pos += v;
        else neg += v;
        const x0 = x(clamp(start, dlo, dhi));
        const x1 = x(clamp(start + Math.abs(v), dlo, dhi));
        return { i, x: Math.min(x0, x1), w: Math.abs(x1 - x0) };
      });
      d3.select(this)
        .select(".attn-chart__rects")
        .selectAll("rect")
        .data(spans)
        .join("rect")
        .attr("class", (d) => `attn-chart__rect attn-chart__c${(d.i % 6) + 1}`)
        .attr("x", (d) => d.x)
        .attr("width", (d) => d.w)
        .attr("height", bandH)
        .style("fill", (d) => (opts.stacked ? partFill(patternId, d.i) : null));
    });
    rows
      .select(".attn-chart__bar-label")
      .attr("x", -6)
      .attr("y", bandH / 2)
      .attr("dy", "0.35em")
      .attr("text-anchor", "end")
      .text((_, i) => labels[i]);
    rows
      .select(".attn-chart__bar-value")
      .attr("x", innerW + 6)
      .attr("y", bandH / 2)
      .attr("dy", "0.35em")
      .text((_, i) => values[i]);
    // zero line on top of the bars
    const zero = part(plot, "line", "attn-chart__zero");
    zero.attr("display", dlo <= 0 && dhi >= 0 ? null : "none");
    if (dlo <= 0 && dhi >= 0) {
      zero.attr("x1", x(0)).attr("x2", x(0)).attr("y1", 0).attr("y2", innerH);
    }
  }

  function update(next) {
    data = next || { bars: [] };
    const bars = data.bars || [];
    const names = opts.stacked
      ? [...new Set(bars.flatMap((b) => partsOf(b).map((p) => p.name)))]
      : [];
    f.setLegend(
      names,
      () =>
        names.forEach((name, i) => {
          legendItem(f.legend, name, (sw) =>
            sw
              .append("rect")
              .attr("class", `attn-chart__rect attn-chart__c${(i % 6) + 1}`)
              .attr("x", 2)
              .attr("y", 1)
              .attr("width", 24)
              .attr("height", 12)
              .style("fill", partFill(patternId, i)),
          );
        }),
      names.length === 0,
    );
    f.fillTable(() => {
      const header = opts.stacked
        ? ["bar", ...names, `total (${opts.valueLabel})`]
        : ["bar", opts.valueLabel];
      const rows = bars.map((b) => {
        const label = b.highlight ? `${b.label} (highlighted)` : String(b.label);
        if (!opts.stacked) return [label, opts.format(b.value)];
        const byName = new Map(partsOf(b).map((p) => [p.name, p.value]));
        return [
          label,
          ...names.map((nm) => (byName.has(nm) ? opts.format(byName.get(nm)) : "none")),
          opts.format(totalOf(b)),
        ];
      });
      return [opts.label, header, rows];
    });
    draw();
  }

  f.draw = draw;
  draw();
  return { update, destroy: f.destroy, figure: f.figure };
}

// --------------------------------------------------------------------------- vector plane

/**
 * A square 2-D plane from -extent to extent on both axes, with arrows (from the origin or
 * from `from`), optional labelled points, and draggable arrow heads.
 *
 * A draggable head is a focusable slider-like handle named after its vector, whose value
 * text gives its coordinates; arrow keys move it by `step`, Shift+arrow by 10 steps, and a
 * pointer drags it (pointer capture). Coordinates are clamped to [-extent, extent] and
 * rounded to multiples of `step`. `onDrag(id, [x, y])` is called at most once per animation
 * frame with the newest position. While a head is being dragged, it stays where the pointer
 * is even if `update` brings an older position for it.
 * @param {HTMLElement} container
 * Vector labels stay inside the plane and are moved off each other (coincident heads).
 * @param {{label: string, extent?: number, step?: number, format?: (v: number) => string,
 *   onDrag?: (id: string, to: [number, number]) => void,
 *   kindLabels?: Record<string, string>}} options
 *   kindLabels: the legend's name for a kind (default: the kind itself); a vector's
 *   drawnLabel is the text drawn at its head (default: its label, which the table keeps).
 * @returns {{update(data: {vectors: {id: string, to: [number, number], from?: [number, number],
 *   label?: string, drawnLabel?: string, kind?: string, draggable?: boolean,
 *   dashed?: boolean}[],
 *   points?: {at: [number, number], label?: string}[]}), destroy(), figure}}
 */
export function vectorPlane(container, options) {
  const opts = { extent: 3, step: 0.1, format: (v) => v.toFixed(2), ...options };
  const f = frame(container, "plane", opts.label);
  // Not role="img": the handles inside must stay reachable. The figure is a named group.
  f.figure.setAttribute("role", "group");
  f.figure.setAttribute("aria-label", opts.label);
  const hintId = nextId("hint");
  const hint = document.createElement("p");
  hint.id = hintId;
  hint.className = "attn-visually-hidden";
  hint.textContent = `Arrow keys move the point by ${opts.step}; with Shift, by ${+(opts.step * 10).toPrecision(6)}.`;
  hint.hidden = true; // shown (to screen readers) only while some vector is draggable
  f.figure.append(hint);
  const ext = opts.extent;
  const stepDigits = Math.max(0, Math.ceil(-Math.log10(opts.step) + 1e-9)) + 1;
  const snap = (v) =>
    +(Math.round(clamp(v, -ext, ext) / opts.step) * opts.step).toFixed(stepDigits);
  const snapPoint = ([px, py]) => [clamp(snap(px), -ext, ext), clamp(snap(py), -ext, ext)];

  let data = { vectors: [], points: [] };
  let scale = null; // [x, y] scales of the last draw
  const local = new Map(); // id -> position set by a drag or key, until update agrees
  let dragging = null; // id under the pointer
  let pending = null; // [id, to] waiting for the next frame
  let raf = 0;

  const svg = f.svg;
  const back = svg.append("g").attr("class", "attn-chart__plane-back");
  const dots = svg.append("g").attr("class", "attn-chart__plane-dots");
  const layer = svg.append("g").attr("class", "attn-chart__plane-layer");
  let drawnSide = 0;
  const handles = svg.append("g").attr("class", "attn-chart__handles");

  function emit(id, to) {
    pending = [id, to];
    if (raf) return;
    raf = requestAnimationFrame(() => {
      raf = 0;
      const call = pending;
      pending = null;
      if (call && opts.onDrag) opts.onDrag(call[0], call[1]);
    });
  }

  function position(v) {
    return local.get(v.id) || v.to;
  }

  function moveTo(v, to) {
    const next = snapPoint(to);
    const prev = position(v);
    if (next[0] === prev[0] && next[1] === prev[1]) return;
    local.set(v.id, next);
    drawVectors();
    emit(v.id, next);
  }

  function onKey(event, v) {
    const keys = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
    const d = keys[event.key];
    if (!d || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    const k = (event.shiftKey ? 10 : 1) * opts.step;
    const [px, py] = position(v);
    moveTo(v, [px + d[0] * k, py + d[1] * k]);
  }

  function pointerPlace(event) {
    const rect = svg.node().getBoundingClientRect();
    const [w, h] = [+svg.attr("width"), +svg.attr("height")];
    const sx = ((event.clientX - rect.left) * w) / (rect.width || w);
    const sy = ((event.clientY - rect.top) * h) / (rect.height || h);
    return [scale[0].invert(sx), scale[1].invert(sy)];
  }

  function onPointerDown(event, v) {
    if (event.button !== 0) return;
    event.preventDefault();
    const node = event.currentTarget;
    node.focus();
    node.setPointerCapture(event.pointerId);
    dragging = v.id;
    node.classList.add("attn-chart__handle--dragging");
  }
  function onPointerMove(event, v) {
    if (dragging !== v.id || !event.currentTarget.hasPointerCapture(event.pointerId)) return;
    moveTo(v, pointerPlace(event));
  }
  function onPointerUp(event) {
    dragging = null;
    event.currentTarget.classList.remove("attn-chart__handle--dragging");
    if (event.currentTarget.hasPointerCapture(event.pointerId)) {
      event.currentTarget.releasePointerCapture(event.pointerId);
    }
  }

  function arrowPath(from, to) {
    const [x, y] = scale;
    const [x0, y0, x1, y1] = [x(from[0]), y(from[1]), x(to[0]), y(to[1])];
    const len = Math.hypot(x1 - x0, y1 - y0);
    if (len < 1e-6) return { shaft: "", head: "" };
    const [ux, uy] = [(x1 - x0) / len, (y1 - y0) / len];
    const size = Math.min(10, len * 0.6);
    const bx = x1 - ux * size;
    const by = y1 - uy * size;
    const head = `M${x1},${y1}L${bx - uy * size * 0.45},${by + ux * size * 0.45}L${bx + uy * size * 0.45},${by - ux * size * 0.45}Z`;
    return { shaft: `M${x0},${y0}L${bx},${by}`, head, ux, uy, x1, y1 };
  }

  const kindOf = (v) => (KINDS.includes(v.kind) ? v.kind : "other");
  const kindSymbol = (kind) => SYMBOLS()[KINDS.indexOf(kind)];
  const coords = (p) => `(${opts.format(p[0])}, ${opts.format(p[1])})`;

  // Labels placed so far in this drawing: [left, top, right, bottom] in SVG pixels.
  let placed = [];
  /** Where to write a label of `width` anchored at (lx, ly): kept inside the plane (a label
   * at its edge is not clipped) and moved off the labels already placed, along the arrow's
   * vertical direction `uy` (coincident or near arrow heads would print over each other). */
  function placeLabel(lx, ly, width, anchor, uy) {
    const [x] = scale;
    const [lo, hi] = [x.range()[0] - PLANE_PAD + 2, x.range()[1] + PLANE_PAD - 2];
    const left0 = anchor === "start" ? lx : anchor === "end" ? lx - width : lx - width / 2;
    const left = clamp(left0, lo, Math.max(lo, hi - width));
    let top = clamp(ly - FONT_PX / 2, lo, hi - FONT_PX);
    const step = (uy > 0 ? 1 : -1) * (FONT_PX + 2);
    const hits = (t) =>
      placed.some((b) => left < b[2] && left + width > b[0] && t < b[3] && t + FONT_PX > b[1]);
    let dir = step;
    for (let tries = 0; tries < 8 && hits(top); tries++) {
      if (top + dir < lo || top + dir > hi - FONT_PX) dir = -dir; // at the edge: the other way
      top = clamp(top + dir, lo, hi - FONT_PX);
    }
    top = clamp(top, lo, hi - FONT_PX);
    placed.push([left, top, left + width, top + FONT_PX]);
    const ax = anchor === "start" ? left : anchor === "end" ? left + width : left + width / 2;
    return [ax, top + FONT_PX / 2];
  }

  function drawVectors() {
    if (!scale) return;
    placed = [];
    const vectors = data.vectors || [];
    // arrows
    const arrows = layer
      .selectAll("g.attn-chart__vector")
      .data(vectors, (v) => v.id)
      .join((enter) => {
        const g = enter.append("g");
        g.append("path").attr("class", "attn-chart__shaft");
        g.append("path").attr("class", "attn-chart__head");
        g.append("path").attr("class", "attn-chart__kind");
        g.append("text").attr("class", "attn-chart__vector-label");
        return g;
      })
      .attr("class", (v) => `attn-chart__vector attn-chart__kind--${kindOf(v)}`)
      .attr("data-id", (v) => v.id);
    arrows.each(function (v) {
      const g = d3.select(this);
      const a = arrowPath(v.from || [0, 0], position(v));
      g.select(".attn-chart__shaft")
        .attr("d", a.shaft)
        .attr("stroke-dasharray", v.dashed ? "6 4" : null);
      g.select(".attn-chart__head").attr("d", v.draggable ? "" : a.head);
      // the kind's shape: at the middle of a fixed arrow (draggable heads carry it)
      const [x, y] = scale;
      const from = v.from || [0, 0];
      const to = position(v);
      g.select(".attn-chart__kind")
        .attr("d", v.draggable || !a.shaft ? "" : d3.symbol(kindSymbol(kindOf(v)), 40)())
        .attr(
          "transform",
          `translate(${(x(from[0]) + x(to[0])) / 2},${(y(from[1]) + y(to[1])) / 2})`,
        );
      const off = v.draggable ? 16 : 10;
      const ux = a.ux ?? 0;
      const uy = a.uy ?? -1;
      const text = v.drawnLabel ?? v.label ?? v.id;
      const anchor = ux > 0.3 ? "start" : ux < -0.3 ? "end" : "middle";
      const place = (text ? placeLabel : (lx, ly) => [lx, ly])(
        x(to[0]) + ux * off,
        y(to[1]) + uy * off,
        text.length * CHAR_PX,
        anchor,
        uy,
      );
      g.select(".attn-chart__vector-label")
        .attr("x", place[0])
        .attr("y", place[1])
        .attr("dy", "0.35em")
        .attr("text-anchor", anchor)
        .text(text);
    });
    // draggable heads: kept across updates (keyed by id) so focus stays on them
    const movable = vectors.filter((v) => v.draggable);
    hint.hidden = movable.length === 0;
    handles
      .selectAll("g.attn-chart__handle")
      .data(movable, (v) => v.id)
      .join((enter) => {
        const g = enter
          .append("g")
          .attr("class", "attn-chart__handle")
          .attr("tabindex", 0)
          .attr("role", "slider")
          .attr("aria-describedby", hintId)
          .attr("aria-orientation", "horizontal")
          .attr("aria-valuemin", -ext)
          .attr("aria-valuemax", ext);
        g.append("circle").attr("class", "attn-chart__ring").attr("r", 15);
        g.append("circle").attr("class", "attn-chart__hit").attr("r", 18);
        g.append("path").attr("class", "attn-chart__grip");
        g.on("keydown", function (event, v) {
          onKey(event, v);
        })
          .on("pointerdown", onPointerDown)
          .on("pointermove", onPointerMove)
          .on("pointerup pointercancel lostpointercapture", onPointerUp);
        return g;
      })
      .attr("data-id", (v) => v.id)
      .attr("class", (v) => `attn-chart__handle attn-chart__kind--${kindOf(v)}`)
      .attr(
        "transform",
        (v) => `translate(${scale[0](position(v)[0])},${scale[1](position(v)[1])})`,
      )
      .attr("aria-label", (v) => `${v.label ?? v.id} (${kindOf(v)})`)
      .attr("aria-valuenow", (v) => position(v)[0])
      .attr(
        "aria-valuetext",
        (v) => `x ${opts.format(position(v)[0])}, y ${opts.format(position(v)[1])}`,
      )
      .select(".attn-chart__grip")
      .attr("d", (v) => d3.symbol(kindSymbol(kindOf(v)), 110)());
    fillPlaneTable();
  }

  function fillPlaneTable() {
    f.fillTable(() => {
      const rows = (data.vectors || []).map((v) => [
        v.label ?? v.id,
        kindOf(v),
        coords(v.from || [0, 0]),
        coords(position(v)),
      ]);
      for (const p of data.points || []) rows.push([p.label ?? "point", "point", "", coords(p.at)]);
      return [opts.label, ["vector", "kind", "from (x, y)", "to (x, y)"], rows];
    });
  }

  function draw() {
    const width = f.width;
    const side = Math.round(clamp(width, 220, 440));
    const pad = PLANE_PAD;
    const x = d3
      .scaleLinear()
      .domain([-ext, ext])
      .range([pad, side - pad]);
    const y = d3
      .scaleLinear()
      .domain([-ext, ext])
      .range([side - pad, pad]);
    scale = [x, y];
    drawDots();
    if (side !== drawnSide) drawBack(side, pad);
    drawVectors();
  }

  // the labelled points (redrawn on each update)
  function drawDots() {
    const [x, y] = scale;
    dots
      .selectAll("g.attn-chart__dot")
      .data(data.points || [])
      .join((enter) => {
        const g = enter.append("g").attr("class", "attn-chart__dot");
        g.append("circle").attr("r", 4);
        g.append("text").attr("x", 7).attr("y", -7);
        return g;
      })
      .attr("transform", (p) => `translate(${x(p.at[0])},${y(p.at[1])})`)
      .select("text")
      .text((p) => p.label ?? "");
  }

  // grid and axes: only when the size changes
  function drawBack(side, pad) {
    drawnSide = side;
    const [x, y] = scale;
    f.size(side, side);
    back.selectAll("*").remove();
    const n = Math.min(2 * ext, Math.max(2, Math.floor((side - 2 * pad) / 45)));
    const ticks = x.ticks(n);
    const grid = back.append("g").attr("class", "attn-chart__grid");
    grid
      .selectAll("line.v")
      .data(ticks)
      .join("line")
      .attr("class", "v")
      .attr("x1", (v) => x(v))
      .attr("x2", (v) => x(v))
      .attr("y1", y(-ext))
      .attr("y2", y(ext));
    grid
      .selectAll("line.h")
      .data(ticks)
      .join("line")
      .attr("class", "h")
      .attr("y1", (v) => y(v))
      .attr("y2", (v) => y(v))
      .attr("x1", x(-ext))
      .attr("x2", x(ext));
    back
      .append("g")
      .attr("transform", `translate(0,${y(-ext)})`)
      .call(d3.axisBottom(x).tickValues(ticks).tickFormat(x.tickFormat(n)).tickSizeOuter(0))
      .call(styleAxis);
    back
      .append("g")
      .attr("transform", `translate(${x(-ext)},0)`)
      .call(d3.axisLeft(y).tickValues(ticks).tickFormat(x.tickFormat(n)).tickSizeOuter(0))
      .call(styleAxis);
    back
      .append("g")
      .attr("class", "attn-chart__origin")
      .call((g) =>
        g.append("line").attr("x1", x(-ext)).attr("x2", x(ext)).attr("y1", y(0)).attr("y2", y(0)),
      )
      .call((g) =>
        g.append("line").attr("y1", y(-ext)).attr("y2", y(ext)).attr("x1", x(0)).attr("x2", x(0)),
      );
  }

  function update(next) {
    data = { vectors: [], points: [], ...next };
    // a position set locally is dropped once the data agrees with it (or the drag ended)
    for (const v of data.vectors) {
      const mine = local.get(v.id);
      if (!mine || v.id === dragging) continue;
      if (!pending || pending[0] !== v.id) local.delete(v.id);
    }
    // legend: the kinds present
    const kinds = KINDS.filter((k) => data.vectors.some((v) => kindOf(v) === k));
    f.setLegend(
      kinds,
      () => {
        for (const k of kinds) {
          legendItem(f.legend, opts.kindLabels?.[k] ?? k, (sw) =>
            sw
              .append("path")
              .attr("class", `attn-chart__grip attn-chart__kind--${k}`)
              .attr("transform", "translate(14,7)")
              .attr("d", d3.symbol(kindSymbol(k), 60)()),
          );
        }
      },
      kinds.length === 0,
    );
    draw();
  }

  f.draw = draw;
  draw();
  const destroy = () => {
    if (raf) cancelAnimationFrame(raf);
    raf = 0;
    pending = null;
    handles
      .selectAll("g")
      .on("keydown pointerdown pointermove pointerup pointercancel lostpointercapture", null);
    f.destroy();
  };
  return { update, destroy, figure: f.figure };
}
