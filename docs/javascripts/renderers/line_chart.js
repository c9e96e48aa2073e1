// The line chart of the labs: series of [x, y] points (x linear or log2), an optional
// vertical rule, a legend when there are two series or more, and the hidden table of every
// value (renderers/chart_frame.js).
import {
  axisBottom,
  axisLeft,
  extent,
  format,
  line,
  range,
  scaleLinear,
  scaleLog,
  select,
  symbol,
} from "../../vendor/d3/d3.min.js";
import {
  bottomAxis,
  clamp,
  dataKey,
  defaultFormat,
  frame,
  legendItem,
  part,
  SYMBOLS,
  setText,
  styleAxis,
  tickCount,
  tickFormat,
} from "./chart_frame.js";

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
  let drawnKey = null; // dataKey of the data drawn
  const axisKeys = { x: null, y: null }; // what each axis was last drawn for

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
      x = scaleLog()
        .base(2)
        .domain([lo, hi > lo ? hi : lo * 2])
        .range([0, innerW]);
    } else {
      const [lo, hi] = xs.length ? extent(xs) : [0, 1];
      x = scaleLinear()
        .domain([lo, hi > lo ? hi : lo + 1])
        .range([0, innerW]);
    }
    let [ylo, yhi] = ys.length ? extent(ys) : [0, 1];
    const fixed = data.yDomain || opts.yDomain || [null, null];
    if (fixed[0] != null) ylo = fixed[0];
    if (fixed[1] != null) yhi = fixed[1];
    if (!(yhi > ylo)) yhi = ylo + 1;
    const y = scaleLinear().domain([ylo, yhi]).range([innerH, 0]);
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
    // grid and axes: redrawn only when their scale or size changes (d3-axis rewrites
    // every tick, its text too, and that costs a relayout)
    const yTicks = tickCount(innerH);
    const yKey = `${y.domain()} ${y.range()} ${innerW} ${yTicks}`;
    const yChanged = yKey !== axisKeys.y;
    axisKeys.y = yKey;
    if (yChanged)
      part(plot, "g", "attn-chart__grid")
        .selectAll("line")
        .data(y.ticks(yTicks))
        .join("line")
        .attr("x1", 0)
        .attr("x2", innerW)
        .attr("y1", (v) => y(v))
        .attr("y2", (v) => y(v));
    let xAxis = axisBottom(x);
    if (opts.xLog2) {
      const [lo, hi] = x.domain();
      let powers = range(Math.ceil(Math.log2(lo) - 1e-9), Math.floor(Math.log2(hi) + 1e-9) + 1);
      const room = Math.max(2, Math.floor(innerW / 44));
      const every = Math.ceil(powers.length / room);
      powers = powers.filter((_, i) => i % every === 0);
      xAxis = xAxis.tickValues(powers.map((k) => 2 ** k)).tickFormat(format("~d"));
    } else {
      const n = tickCount(innerW);
      xAxis = xAxis.ticks(n).tickFormat(tickFormat(x, n));
    }
    const xKey = `${x.domain()} ${x.range()} ${innerH}`;
    if (xKey !== axisKeys.x) {
      axisKeys.x = xKey;
      bottomAxis(svg, plot, xAxis, { m, innerW, innerH, height }, opts.xLabel);
    }
    if (yChanged) {
      part(plot, "g", "attn-chart__axis--y")
        .call(axisLeft(y).ticks(yTicks).tickFormat(tickFormat(y, yTicks)))
        .call(styleAxis);
      part(svg, "text", "attn-chart__label--y").attr("x", 4).attr("y", 14).text(opts.yLabel);
    }

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
      const label = part(rule, "text", "attn-chart__rule-label")
        .attr("x", mx > innerW / 2 ? mx - 4 : mx + 4)
        .attr("y", 12)
        .attr("text-anchor", mx > innerW / 2 ? "end" : "start");
      setText(label, () => data.marker.label || "");
    }

    // series: colour, dash and marker shape all differ
    const linePath = line()
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
      const g = select(this);
      g.select(".attn-chart__line")
        .attr("stroke-dasharray", s.dashed ? "7 4" : null)
        .attr("d", linePath(s.points));
      const ok = s.points.filter((p) => Number.isFinite(p[1]) && Number.isFinite(x(p[0])));
      const every = Math.max(1, Math.ceil(ok.length / 12)); // at most ~12 markers a line
      const marker = symbol(SYMBOLS[i % SYMBOLS.length], 36);
      g.selectAll("path.attn-chart__point")
        .data(ok.filter((_, j) => j % every === 0 || j === ok.length - 1))
        .join("path")
        .attr("class", "attn-chart__point")
        .attr("transform", (p) => `translate(${x(p[0])},${y(p[1])})`)
        .attr("d", marker);
    });
  }

  function update(next) {
    const key = dataKey(next);
    if (key === drawnKey) return; // the same data: the picture and table stand
    drawnKey = key;
    data = next || { series: [] };
    const series = data.series || [];
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
              .attr("d", symbol(SYMBOLS[i % SYMBOLS.length], 36));
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
