// Widget for the tiled_attention lab (labs_py/attention_labs/labs/tiled_attention.py):
// block-size sliders, a step control that walks the tiles one at a time, the grid of tiles
// (a small SVG: the tile being read, those already read, those the causal mask skips), the
// running max and sum of the current query rows, the difference from plain attention, a
// memory counter, and work and memory against seq_len (renderers/line_chart.js).
import { lineChart } from "../renderers/line_chart.js";
import { controlKit } from "../ui/controls.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";

const SVG = "http://www.w3.org/2000/svg";
const GRID_PX = 240; // the grid's drawn size; it scales down inside its box on a phone
const int = (n) => Math.round(n).toLocaleString("en-US");

function svgEl(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const { spec, field } = kit;

  // seq_len and d_head: number boxes; a change restarts the walk at the first tile.
  for (const name of ["seq_len", "d_head"]) {
    const p = spec[name];
    const input = field(name, name, el("input"));
    Object.assign(input, { type: "number", min: p.minimum, max: p.maximum, step: 1 });
    input.value = lab.params[name];
    input.addEventListener("change", () => {
      if (input.value === "" || !input.checkValidity()) {
        kit.numberChanged(input, name);
        return;
      }
      lab.update({ [name]: Number(input.value), step: 0 });
    });
  }
  // Block sizes: sliders with their value beside them.
  for (const [name, label] of [
    ["block_q", "block_q (query rows per tile)"],
    ["block_k", "block_k (key columns per tile)"],
  ]) {
    const p = spec[name];
    const out = el("output", "attn-tiles__value", String(lab.params[name]));
    const slider = field(name, label, el("input"), out);
    Object.assign(slider, { type: "range", min: p.minimum, max: p.maximum, step: 1 });
    slider.value = lab.params[name];
    out.htmlFor = slider.id;
    slider.addEventListener("input", () => {
      out.textContent = slider.value;
      lab.update({ [name]: Number(slider.value), step: 0 });
    });
  }
  const causal = kit.toggle("causal", "Causal mask");
  causal.addEventListener("change", () => lab.update({ step: 0 }), { capture: true });

  // The step: previous / next buttons and a slider over the tiles read.
  const stepper = kit.stepper("step", {
    label: "Tile",
    previous: "Previous tile",
    next: "Next tile",
    className: "attn-tiles__step",
  });

  const reseed = el("button", "md-button attn-lab__reseed", "New random Q, K, V");
  reseed.type = "button";
  reseed.addEventListener("click", () =>
    lab.update({ seed: (lab.params.seed + 1) % spec.seed.maximum }),
  );
  controls.append(reseed);
  body.append(controls);

  // The grid of tiles and what it shows in words.
  const gridBox = el("div", "attn-heatmap__scroll");
  const svg = svgEl("svg", {
    role: "img",
    width: GRID_PX + 40,
    height: GRID_PX + 40,
    viewBox: `-36 -36 ${GRID_PX + 40} ${GRID_PX + 40}`,
  });
  svg.style.maxWidth = "100%";
  svg.style.height = "auto";
  gridBox.append(svg);
  const describe = el("p", "attn-lab__cell");
  describe.setAttribute("aria-live", "polite");
  const state = dataTable({ label: "Running max and sum of the current query rows" });
  const numbers = el("p", "attn-lab__cell");
  const memory = dataTable({ label: "Memory held by each method" });
  const chartBox = el("div", "attn-tiles__chart");
  body.append(gridBox, describe, state.root, numbers, memory.root, chartBox);
  const log2 = (v) => Math.log2(v);
  const chart = lineChart(chartBox, {
    label: "Work and memory against seq_len (both axes log2)",
    xLabel: "seq_len",
    yLabel: "log2 of floats or FLOPs",
    xLog2: true,
    // the table holds the counts themselves, not their log2
    format: (v) => int(2 ** v),
    xFormat: int,
    tableYLabel: "", // the series' names give their units
  });

  // The grid as a few paths, not an element per tile: at 1 x 1 tiles of 64 tokens that
  // is 4,096 tiles, and 4,096 SVG elements cost a frame or more to restyle and lay out.
  const fg = "var(--md-default-fg-color)";
  const gridParts = {
    back: svgEl("rect", { style: "fill: var(--md-default-bg-color)" }),
    read: svgEl("path", { style: "fill: var(--md-default-fg-color--lighter)" }),
    outline: svgEl("path", {
      class: "attn-tiles__outline",
      style: `fill: none; stroke: ${fg}; stroke-width: 0.75`,
    }),
    skipped: svgEl("path", { style: `fill: none; stroke: ${fg}; stroke-width: 0.75` }),
    current: svgEl("rect", {
      class: "attn-tiles__current",
      style: `fill: var(--md-accent-fg-color); stroke: ${fg}; stroke-width: 3`,
    }),
  };
  svg.append(...Object.values(gridParts));
  const label = (text, attrs) => {
    const t = svgEl("text", { ...attrs, style: `fill: ${fg}; font-size: 12px` });
    t.textContent = text;
    svg.append(t);
  };
  label("keys →", { x: 0, y: -8 });
  // Rotated a quarter turn: it reads upwards, ending at the grid's top-left corner.
  label("← queries", { x: 0, y: -8, transform: "rotate(-90)", "text-anchor": "end" });
  const setAttrs = (node, attrs) => {
    for (const [k, v] of Object.entries(attrs)) {
      const text = String(v);
      if (node.getAttribute(k) !== text) node.setAttribute(k, text);
    }
  };

  function drawGrid(r) {
    const cell = GRID_PX / r.seq_len; // one score
    const read = new Map(r.tiles.map(([q, k], i) => [`${q},${k}`, i]));
    const box = (x, y, w, h) => `M${x},${y}h${w}v${h}h${-w}Z`;
    const readPath = [];
    const outline = [];
    const crossed = [];
    let current = null;
    for (let qb = 0; qb < r.n_q_blocks; qb++) {
      for (let kb = 0; kb < r.n_k_blocks; kb++) {
        const x = kb * r.block_k * cell;
        const y = qb * r.block_q * cell;
        const w = Math.min(r.block_k, r.seq_len - kb * r.block_k) * cell;
        const h = Math.min(r.block_q, r.seq_len - qb * r.block_q) * cell;
        const i = read.get(`${qb},${kb}`);
        outline.push(box(x, y, w, h));
        if (i === r.step) current = { x, y, width: w, height: h };
        else if (i !== undefined && i < r.step) readPath.push(box(x, y, w, h));
        // skipped by the causal mask: crossed out
        if (i === undefined)
          crossed.push(`M${x},${y}L${x + w},${y + h}M${x + w},${y}L${x},${y + h}`);
      }
    }
    setAttrs(gridParts.back, { x: 0, y: 0, width: GRID_PX, height: GRID_PX });
    setAttrs(gridParts.read, { d: readPath.join("") });
    setAttrs(gridParts.outline, { d: outline.join("") });
    setAttrs(gridParts.skipped, { d: crossed.join("") });
    setAttrs(gridParts.current, current ?? { width: 0, height: 0 });
  }

  function render(r) {
    const nTiles = r.tiles.length;
    stepper.show(r.step, nTiles, `tile ${r.step + 1} of ${nTiles}`);
    for (const name of ["seq_len", "d_head"]) kit.inputs[name].value = r[name] ?? lab.params[name];
    drawGrid(r);
    const [q0, q1] = r.rows;
    const [k0, k1] = r.cols;
    const skipped = r.n_q_blocks * r.n_k_blocks - nTiles;
    const text =
      `Tile ${r.step + 1} of ${nTiles}: query rows ${q0 + 1} to ${q1}, key columns ${k0 + 1} to ${k1}` +
      ` (block ${r.current[0] + 1}, ${r.current[1] + 1} of a ${r.n_q_blocks} × ${r.n_k_blocks} grid).` +
      ` ${r.step} tiles read before it` +
      (skipped ? `; ${skipped} tiles above the diagonal are skipped.` : ".");
    svg.setAttribute("aria-label", `The score grid cut into tiles. ${text}`);
    describe.textContent = text;
    state.fill({
      caption: `After tile ${r.step + 1}: the running max m and sum ℓ of query rows ${q0 + 1} to ${q1}`,
      columns: ["Query row", "Running max m", "Running sum ℓ"],
      rows: Array.from(r.running_max, (m, i) => [
        String(q0 + i + 1),
        m.toFixed(4),
        r.running_sum[i].toFixed(4),
      ]),
    });
    numbers.textContent = `Largest |tiled − plain| over the whole output: ${r.max_abs_diff.toExponential(1)}.`;
    const mem = r.memory;
    memory.fill({
      caption: "Memory held besides the inputs and the output, in floats",
      columns: ["Method", "Largest intermediate", "All it holds"],
      rows: [
        [`Plain (the ${r.seq_len} × ${r.seq_len} scores)`, int(mem.plain), int(mem.plain)],
        [
          `Tiled (one ${Math.min(r.block_q, r.seq_len)} × ${Math.min(r.block_k, r.seq_len)} tile, one block's state, m and ℓ of every row)`,
          int(mem.tile),
          int(mem.tiled),
        ],
      ],
    });
    const sw = r.sweep;
    const pts = (ys) => sw.seq_len.map((n, i) => [n, log2(ys[i])]);
    chart.update({
      series: [
        { name: "memory, plain (floats)", points: pts(sw.memory_plain) },
        { name: "memory, tiled (floats)", points: pts(sw.memory_tiled), dashed: true },
        { name: "work, plain and tiled (FLOPs)", points: pts(sw.work) },
      ],
      marker: { x: r.seq_len, label: `seq_len = ${r.seq_len}` },
    });
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    inputs: kit.inputs,
    controls,
    destroy: () => chart.destroy(),
  };
}
