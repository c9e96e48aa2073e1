// The frame every chart of the site shares (renderers/line_chart.js, renderers/bar_chart.js,
// ui/vector-plane.js): a <figure> that fills its container's width, its SVG, a legend, the
// hidden table of its data (ui/data-table.js), a redraw on resize, and the small helpers the
// charts draw with. Scales, axes, shapes and DOM joins are d3's, imported by name from the
// one vendored d3 module (vendor/d3/d3.min.js; build_scripts/vendor/d3/).
//
// The SVG's viewBox is its size in CSS pixels, redrawn when the container is resized, so text
// keeps its size (12 px) on a phone. Colours are the CSS variables --attn-chart-* (site.css,
// light and slate palettes); series and kinds also differ by dash, marker shape or fill
// pattern, never colour alone. Each figure has an accessible name and a visually hidden table
// of its data; the table follows an update after TABLE_DELAY_MS (its layout costs more than
// the drawing). Labels are inserted as text, never as HTML. destroy() removes the nodes,
// listeners, observers and timers of its chart.
import {
  select,
  symbolCircle,
  symbolCross,
  symbolDiamond,
  symbolSquare,
  symbolTriangle,
  symbolWye,
} from "../../vendor/d3/d3.min.js";
import { dataTable } from "../ui/data-table.js";

export const FONT_PX = 12; // text size in the SVG (CSS pixels; the viewBox is 1:1)
export const CHAR_PX = 7; // a rough width of one character at FONT_PX, for laying out margins
const FALLBACK_WIDTH = 640; // when the container has no width yet (e.g. hidden)
export const TABLE_DELAY_MS = 150; // the hidden table follows the last update by this much

let uid = 0;
export const nextId = (prefix) => `attn-chart-${prefix}-${++uid}`;
// Integers exactly (a seq_len of 16384 is not 16380); other numbers to 4 significant digits.
export const defaultFormat = (v) =>
  Number.isInteger(v) ? String(v) : Number.isFinite(v) ? String(+v.toPrecision(4)) : String(v);
export const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));
export const clip = (text, n) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);
/** Marker shapes, in the order series and kinds take them. */
export const SYMBOLS = [
  symbolCircle,
  symbolSquare,
  symbolTriangle,
  symbolDiamond,
  symbolCross,
  symbolWye,
];

/** A chart's frame: figure, SVG, legend, hidden table, and a redraw on resize. */
export function frame(container, kind, label) {
  const figure = document.createElement("figure");
  figure.className = `attn-chart attn-chart--${kind}`;
  const svg = select(figure)
    .append("svg")
    .attr("class", "attn-chart__svg")
    .attr("font-size", FONT_PX);
  const legend = document.createElement("ul");
  legend.className = "attn-chart__legend";
  legend.setAttribute("aria-hidden", "true"); // the table names every series
  // the table inside a hidden box: a table itself does not shrink to 1 px
  const data = dataTable({ label, className: "attn-chart__table", hidden: true });
  const table = data.table;
  figure.append(legend, data.root);
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
      const [caption, columns, rows] = make();
      data.fill({ caption, columns, rows });
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

/** One legend entry: a small SVG swatch drawn by `drawSwatch(svgSelection)` and a name. */
export function legendItem(legend, name, drawSwatch) {
  const li = document.createElement("li");
  const swatch = select(li)
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
export const tickCount = (px) => Math.max(2, Math.floor(px / 70));

/** A tick format for `scale`: SI prefixes for large numbers, else d3's default. */
export function tickFormat(scale, count) {
  const [lo, hi] = scale.domain();
  const big = Math.max(Math.abs(lo), Math.abs(hi)) >= 1e4;
  return scale.tickFormat(count, big ? "~s" : undefined);
}

/** The child `tag.cls` of the selection `parent`, made on first use (kept across redraws:
 * an update changes attributes instead of rebuilding the nodes). */
export function part(parent, tag, cls) {
  const found = parent.select(`:scope > ${tag}.${cls}`);
  return found.empty() ? parent.append(tag).attr("class", cls) : found;
}

/** A key for a chart's data (JSON; NaN and ±Infinity kept apart from null and each other):
 * an update whose key is the last one's draws the same picture, so it is skipped. */
export const dataKey = (data) =>
  JSON.stringify(data ?? null, (_, v) =>
    typeof v === "number" && !Number.isFinite(v) ? String(v) : v,
  );

/** Set `selection`'s text to `text(d, i)` only where it differs: setting textContent
 * replaces the text node and costs a relayout even when the text is the same. */
export function setText(selection, text) {
  selection.each(function (d, i) {
    const t = String(text(d, i));
    if (this.textContent !== t) this.textContent = t;
  });
  return selection;
}

/** Set attribute `name` of every node in `selection` to `value` (a constant, or a function
 * of (d, i) as for d3's attr; null removes it), writing only where it differs: the browser
 * restyles and lays out again after a write even of the same value. Returns `selection`. */
export function setAttr(selection, name, value) {
  selection.each(function (d, i) {
    const v = typeof value === "function" ? value.call(this, d, i) : value;
    if (v === null || v === undefined) {
      if (this.hasAttribute(name)) this.removeAttribute(name);
      return;
    }
    const text = String(v);
    if (this.getAttribute(name) !== text) this.setAttribute(name, text);
  });
  return selection;
}

/** Style an axis group drawn by d3-axis: text in the chart's text colour and size. */
export function styleAxis(g) {
  g.attr("font-size", null).attr("font-family", null).classed("attn-chart__axis", true);
}

/** The x axis along the plot's bottom and its label under it: `axis` (a d3 axisBottom,
 * ticks set), `label` centred under the plot area (`m`: margins; `innerW`, `innerH`: plot
 * area; `height`: the SVG's). */
export function bottomAxis(svg, plot, axis, { m, innerW, innerH, height }, label) {
  part(plot, "g", "attn-chart__axis--x")
    .attr("transform", `translate(0,${innerH})`)
    .call(axis)
    .call(styleAxis);
  part(svg, "text", "attn-chart__label--x")
    .attr("x", m.left + innerW / 2)
    .attr("y", height - 8)
    .attr("text-anchor", "middle")
    .text(label);
}
