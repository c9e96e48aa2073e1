// Widget for the sinusoidal lab (labs_py/attention_labs/labs/sinusoidal.py): the
// [position, dimension] encodings as a heatmap with signed colours (-1 to +1), the selected
// cell's value and formula in a live line, a table of each dimension pair's frequency and
// wavelength (the text alternative), and a line chart of one position's dot product with
// every other against their offset (renderers/line_chart.js).
import { lineChart } from "../renderers/line_chart.js";
import { Heatmap } from "../renderers/heatmap.js";
import { controlKit } from "../ui/controls.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";
import { integerField } from "../ui/sentence.js";

const fmt = (v, d = 3) => Number(v).toFixed(d);

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  integerField(kit, lab, "d_model", "d_model");
  integerField(kit, lab, "n_positions", "Positions");
  const b = kit.spec.base;
  const base = kit.field("base", "Base", el("input"));
  Object.assign(base, {
    type: "number",
    min: b.minimum,
    max: b.maximum,
    step: "any",
    value: lab.params.base,
  });
  base.addEventListener("change", () => kit.numberChanged(base, "base"));
  kit.inputs.d_model.step = 2;
  integerField(kit, lab, "position", "Compare position");
  body.append(controls);

  const figure = el("div", "attn-lab__figure");
  const cell = el("p", "attn-lab__cell");
  cell.setAttribute("aria-live", "polite");
  cell.textContent =
    "Click a cell, or focus the heatmap and use the arrow keys, to read its value.";
  let shown = null;
  const heatmap = new Heatmap(figure, {
    label:
      "Sinusoidal position encodings: one row per position, one column per dimension, colour from −1 to +1. Focus and use the arrow keys to read cells.",
    onSelect: (p, d) => describe(p, d),
  });
  function describe(p, d) {
    const i = Math.floor(d / 2);
    const fn = d % 2 === 0 ? "sin" : "cos";
    const w = shown.frequencies[i];
    cell.textContent = `Position ${p}, dimension ${d} (pair ${i}, ${fn}): ${fn}(${p} × ${w.toPrecision(3)}) = ${fmt(shown.encodings[p][d])}. Pair ${i} repeats every ${shown.wavelengths[i].toPrecision(4)} positions.`;
  }

  const details = el("details", "attn-lab__table");
  const summary = el(
    "summary",
    null,
    "Show as a table: each pair's frequency and wavelength, and the value at the compared position",
  );
  const table = dataTable({
    label: "Table of each dimension pair's frequency and wavelength",
  });
  details.append(summary, table.root);

  const chartBox = el("div", "attn-sinusoidal__chart");
  const chart = lineChart(chartBox, {
    label:
      "Dot product of the compared position's encoding with every position's, against their offset",
    xLabel: "offset (other position − compared position)",
    yLabel: "dot product",
    format: (v) => v.toFixed(2),
    xFormat: (v) => String(v),
  });
  body.append(figure, cell, details, chartBox);

  function render(res) {
    shown = res;
    const n = res.encodings.length;
    const dm = res.encodings[0].length;
    heatmap.setData({
      rowLabels: Array.from({ length: n }, (_, p) => String(p)),
      colLabels: Array.from({ length: dm }, (_, d) => String(d)),
      values: res.encodings,
      vmin: -1,
      vmax: 1,
      legend: ["−1", "+1"],
    });
    const p = res.position;
    table.fill({
      columns: [
        "Pair",
        "Dimensions",
        "Frequency (rad / position)",
        "Wavelength (positions)",
        "sin, cos at the compared position",
      ],
      rows: Array.from(res.frequencies, (w, i) => [
        String(i),
        `${2 * i}, ${2 * i + 1}`,
        w.toPrecision(3),
        res.wavelengths[i].toPrecision(4),
        `${fmt(res.encodings[p][2 * i])}, ${fmt(res.encodings[p][2 * i + 1])}`,
      ]),
    });
    chart.update({
      series: [
        {
          name: `position ${p} · other position`,
          points: Array.from(res.offsets, (o, j) => [Number(o), res.dots[j]]),
        },
      ],
      marker: { x: 0, label: "offset 0" },
    });
    if (heatmap.selected) describe(...heatmap.selected);
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    inputs: kit.inputs,
    controls,
    heatmap,
    destroy: () => {
      heatmap.destroy();
      chart.destroy();
    },
  };
}
