// The horizontal bar chart of the labs: one bar per label (negative values left of a zero
// line), or stacked parts told apart by fill pattern as well as colour, and the hidden table
// of every value (renderers/chart_frame.js).
import {
  axisBottom,
  max,
  range,
  scaleBand,
  scaleLinear,
  select,
  sum,
} from "../../vendor/d3/d3.min.js";
import {
  bottomAxis,
  CHAR_PX,
  clamp,
  clip,
  dataKey,
  defaultFormat,
  frame,
  legendItem,
  nextId,
  part,
  setAttr,
  setText,
  tickCount,
  tickFormat,
} from "./chart_frame.js";

const MAX_LABEL = 18; // characters of a bar label drawn; the table has the whole label

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
  let drawnKey = null; // dataKey of the data drawn
  let axisKey = null; // what the grid and axis were last drawn for

  const partsOf = (bar) =>
    opts.stacked ? bar.parts || [] : [{ name: opts.valueLabel, value: bar.value }];
  const totalOf = (bar) => sum(partsOf(bar), (p) => p.value);

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
      left: Math.min(width * 0.4, 10 + CHAR_PX * (max(labels, (t) => t.length) || 0)),
      right: Math.min(width * 0.3, 12 + CHAR_PX * (max(values, (t) => t.length) || 0)),
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
        sum(parts, (p) => Math.min(0, p.value)),
      );
      hi = Math.max(
        hi,
        sum(parts, (p) => Math.max(0, p.value)),
      );
    }
    const fixed = opts.domain || [null, null];
    const x = scaleLinear().domain([lo, hi > lo ? hi : lo + 1]);
    const n = tickCount(innerW);
    x.nice(Math.max(5, n)); // a fine nice step, even when few ticks fit
    x.domain([fixed[0] ?? x.domain()[0], fixed[1] ?? x.domain()[1]]).range([0, innerW]);
    const y = scaleBand()
      .domain(range(bars.length))
      .range([0, innerH])
      .paddingInner(0.25)
      .paddingOuter(0.12);

    const plot = part(svg, "g", "attn-chart__plot").attr(
      "transform",
      `translate(${m.left},${m.top})`,
    );
    // grid and axis only when their scale or place changes: d3-axis rewrites every tick
    const key = `${x.domain()} ${innerW} ${innerH} ${m.left} ${n}`;
    if (key !== axisKey) {
      axisKey = key;
      part(plot, "g", "attn-chart__grid")
        .selectAll("line")
        .data(x.ticks(n))
        .join("line")
        .attr("x1", (v) => x(v))
        .attr("x2", (v) => x(v))
        .attr("y1", 0)
        .attr("y2", innerH);
      const axis = axisBottom(x).ticks(n).tickFormat(tickFormat(x, n));
      bottomAxis(svg, plot, axis, { m, innerW, innerH, height }, opts.valueLabel);
    }

    const rows = part(plot, "g", "attn-chart__bars")
      .selectAll("g.attn-chart__bar")
      .data(bars)
      .join((enter) => {
        const g = enter.append("g");
        g.append("g").attr("class", "attn-chart__rects");
        g.append("text").attr("class", "attn-chart__bar-label");
        g.append("text").attr("class", "attn-chart__bar-value");
        return g;
      });
    // only what differs is written (setAttr): a new seed changes the bars' lengths and
    // numbers, not their places, labels or heights
    setAttr(
      rows,
      "class",
      (b) => `attn-chart__bar${b.highlight ? " attn-chart__bar--highlight" : ""}`,
    );
    setAttr(rows, "transform", (_, i) => `translate(0,${y(i)})`);
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
      const rects = select(this)
        .select(".attn-chart__rects")
        .selectAll("rect")
        .data(spans)
        .join("rect");
      setAttr(rects, "class", (d) => `attn-chart__rect attn-chart__c${(d.i % 6) + 1}`);
      setAttr(rects, "x", (d) => d.x);
      setAttr(rects, "width", (d) => d.w);
      setAttr(rects, "height", bandH);
      if (opts.stacked) rects.style("fill", (d) => partFill(patternId, d.i));
    });
    const barLabels = rows.select(".attn-chart__bar-label");
    setAttr(barLabels, "x", -6);
    setAttr(barLabels, "y", bandH / 2);
    setAttr(barLabels, "dy", "0.35em");
    setAttr(barLabels, "text-anchor", "end");
    setText(barLabels, (_, i) => labels[i]);
    const barValues = rows.select(".attn-chart__bar-value");
    setAttr(barValues, "x", innerW + 6);
    setAttr(barValues, "y", bandH / 2);
    setAttr(barValues, "dy", "0.35em");
    setText(barValues, (_, i) => values[i]);
    // zero line on top of the bars
    const zero = part(plot, "line", "attn-chart__zero");
    zero.attr("display", dlo <= 0 && dhi >= 0 ? null : "none");
    if (dlo <= 0 && dhi >= 0) {
      zero.attr("x1", x(0)).attr("x2", x(0)).attr("y1", 0).attr("y2", innerH);
    }
  }

  function update(next) {
    const key = dataKey(next);
    if (key === drawnKey) return; // the same data: the picture and table stand
    drawnKey = key;
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
