// The 2-D vector plane of the labs, a control as much as a chart: arrows from the origin (or
// from a given point), labelled points, and arrow heads the reader drags with a pointer or
// moves with the arrow keys. Drawn in the charts' frame (renderers/chart_frame.js).
import { axisBottom, axisLeft, scaleLinear, select, symbol } from "../../vendor/d3/d3.min.js";
import {
  CHAR_PX,
  clamp,
  FONT_PX,
  frame,
  legendItem,
  nextId,
  SYMBOLS,
  setAttr,
  setText,
  styleAxis,
} from "../renderers/chart_frame.js";

const KINDS = ["query", "key", "value", "embedding", "update", "other"];
const PLANE_PAD = 30; // the plane's margin around its axes, in SVG pixels
const LABEL_GAP = 3; // the least room between two vector labels, in SVG pixels

/** The SVG path of kind `kind`'s marker (query, key, value, embedding, update, other) at
 * `size` square pixels: the shape a plane draws for it, for a widget's own legend. */
export function kindShape(kind, size) {
  return symbol(SYMBOLS[Math.max(0, KINDS.indexOf(kind))], size)();
}

const vertexCache = new Map(); // "kind size" -> the marker's vertices

/** The vertices [[x, y], ...] of kind `kind`'s marker at `size` square pixels, centred on
 * 0: the corners of kindShape's path (moves, lines, h and v), or for a circle (arcs) a
 * 16-gon of its radius. */
function kindVertices(kind, size) {
  const key = `${kind} ${size}`;
  if (!vertexCache.has(key)) {
    const d = kindShape(kind, size);
    let points = [];
    let [x, y] = [0, 0];
    for (const [, c, args] of d.matchAll(/([A-Za-z])([^A-Za-z]*)/g)) {
      const n = args
        .split(/[\s,]+/)
        .filter(Boolean)
        .map(Number);
      if (c === "M" || c === "L") [x, y] = n;
      else if (c === "h") x += n[0];
      else if (c === "v") y += n[0];
      else if (c === "Z") continue;
      else {
        points = null; // an arc: the circle
        break;
      }
      points.push([x, y]);
    }
    if (!points) {
      const r = Math.sqrt(size / Math.PI);
      points = Array.from({ length: 16 }, (_, i) => [
        r * Math.cos((i * Math.PI) / 8),
        r * Math.sin((i * Math.PI) / 8),
      ]);
    }
    vertexCache.set(key, points);
  }
  return vertexCache.get(key);
}

/** The polygon points of kind `kind`'s marker at `size` square pixels centred on (cx, cy). */
function kindPoints(kind, size, cx, cy) {
  return kindVertices(kind, size)
    .map(([x, y]) => `${+(cx + x).toFixed(2)},${+(cy + y).toFixed(2)}`)
    .join(" ");
}

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
 *   points?: {at: [number, number], label?: string}[], extent?: number, label?: string}),
 *   destroy(), figure}}
 *   update's extent and label, when given, replace the plane's (the axes are redrawn in
 *   place: cheaper than a new plane when the arrows outgrow it).
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
  let ext = opts.extent;
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
  let drawnExt = 0;
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

  /** The arrow from `from` to `to` in SVG pixels: its shaft [x0, y0, x1, y1] (null when it
   * has no length), its head's polygon points ("" for none) and its direction (ux, uy). */
  function arrowGeometry(from, to) {
    const [x, y] = scale;
    const [x0, y0, x1, y1] = [x(from[0]), y(from[1]), x(to[0]), y(to[1])];
    const len = Math.hypot(x1 - x0, y1 - y0);
    if (len < 1e-6) return { shaft: null, head: "" };
    const [ux, uy] = [(x1 - x0) / len, (y1 - y0) / len];
    const size = Math.min(10, len * 0.6);
    const bx = x1 - ux * size;
    const by = y1 - uy * size;
    const head = `${x1},${y1} ${bx - uy * size * 0.45},${by + ux * size * 0.45} ${bx + uy * size * 0.45},${by - ux * size * 0.45}`;
    return { shaft: [x0, y0, bx, by], head, ux, uy, x1, y1 };
  }

  const kindOf = (v) => (KINDS.includes(v.kind) ? v.kind : "other");
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
    // A drawn label is ~2 px taller than FONT_PX, and `width` is an estimate: boxes keep a
    // LABEL_GAP between them so that near labels do not touch (lesson 5's plane at seed 0).
    const step = (uy > 0 ? 1 : -1) * (FONT_PX + 2 + LABEL_GAP);
    const hits = (t) =>
      placed.some(
        (b) =>
          left - LABEL_GAP < b[2] &&
          left + width + LABEL_GAP > b[0] &&
          t - LABEL_GAP < b[3] &&
          t + FONT_PX + 2 + LABEL_GAP > b[1],
      );
    let dir = step;
    for (let tries = 0; tries < 8 && hits(top); tries++) {
      if (top + dir < lo || top + dir > hi - FONT_PX) dir = -dir; // at the edge: the other way
      top = clamp(top + dir, lo, hi - FONT_PX);
    }
    top = clamp(top, lo, hi - FONT_PX);
    placed.push([left, top, left + width, top + FONT_PX + 2]);
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
        // A line and a polygon, not paths: their coordinates are attributes, while a path's
        // d is a style, and restyling 64 arrows' paths took ~5 ms an update (lesson 5).
        g.append("line").attr("class", "attn-chart__shaft");
        g.append("polygon").attr("class", "attn-chart__head");
        // the kind's marker: a polygon at its place, not a shape moved by a transform
        // (64 transforms changed an update made as many paint chunks and restyles)
        g.append("polygon").attr("class", "attn-chart__kind");
        g.append("text").attr("class", "attn-chart__vector-label");
        return g;
      });
    // Only what differs is written (setAttr): a path's d and a transform are styles, and
    // each one written, even unchanged, restyles its element (64 arrows at the largest).
    setAttr(arrows, "class", (v) => `attn-chart__vector attn-chart__kind--${kindOf(v)}`);
    setAttr(arrows, "data-id", (v) => v.id);
    arrows.each(function (v) {
      const g = select(this);
      const a = arrowGeometry(v.from || [0, 0], position(v));
      const shaft = g.select(".attn-chart__shaft");
      // no length: a line of none, drawn as nothing
      const [x0, y0, x1, y1] = a.shaft || [0, 0, 0, 0];
      setAttr(shaft, "x1", x0);
      setAttr(shaft, "y1", y0);
      setAttr(shaft, "x2", x1);
      setAttr(shaft, "y2", y1);
      setAttr(shaft, "stroke-dasharray", v.dashed ? "6 4" : null);
      setAttr(g.select(".attn-chart__head"), "points", v.draggable ? "" : a.head);
      // the kind's shape: at the middle of a fixed arrow (draggable heads carry it)
      const [x, y] = scale;
      const from = v.from || [0, 0];
      const to = position(v);
      setAttr(
        g.select(".attn-chart__kind"),
        "points",
        v.draggable || !a.shaft
          ? ""
          : kindPoints(kindOf(v), 40, (x(from[0]) + x(to[0])) / 2, (y(from[1]) + y(to[1])) / 2),
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
      const label = g.select(".attn-chart__vector-label");
      setAttr(label, "x", place[0]);
      setAttr(label, "y", place[1]);
      setAttr(label, "dy", "0.35em");
      setAttr(label, "text-anchor", anchor);
      setText(label, () => text);
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
          .attr("aria-orientation", "horizontal");
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
      .attr("aria-valuemin", -ext)
      .attr("aria-valuemax", ext)
      .attr("aria-valuenow", (v) => position(v)[0])
      .attr(
        "aria-valuetext",
        (v) => `x ${opts.format(position(v)[0])}, y ${opts.format(position(v)[1])}`,
      )
      .select(".attn-chart__grip")
      .attr("d", (v) => kindShape(kindOf(v), 110));
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
    const x = scaleLinear()
      .domain([-ext, ext])
      .range([pad, side - pad]);
    const y = scaleLinear()
      .domain([-ext, ext])
      .range([side - pad, pad]);
    scale = [x, y];
    drawDots();
    if (side !== drawnSide || ext !== drawnExt) drawBack(side, pad);
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

  // grid and axes: only when the size or the extent changes
  function drawBack(side, pad) {
    drawnSide = side;
    drawnExt = ext;
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
      .call(axisBottom(x).tickValues(ticks).tickFormat(x.tickFormat(n)).tickSizeOuter(0))
      .call(styleAxis);
    back
      .append("g")
      .attr("transform", `translate(${x(-ext)},0)`)
      .call(axisLeft(y).tickValues(ticks).tickFormat(x.tickFormat(n)).tickSizeOuter(0))
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
    const { extent, label, ...rest } = next;
    if (extent !== undefined && extent !== ext) {
      ext = extent;
      for (const [id, to] of local) local.set(id, snapPoint(to)); // inside the new axes
    }
    if (label !== undefined && label !== opts.label) {
      opts.label = label;
      f.figure.setAttribute("aria-label", label);
    }
    data = { vectors: [], points: [], ...rest };
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
              .attr("d", kindShape(k, 60)),
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
