// Widget for the eight_heads lab (labs_py/attention_labs/labs/eight_heads.py): the
// patterns of eight synthetic heads of one layer on one sentence, as small heatmaps side by
// side, each captioned with what it was built to do, its mean row entropy and the picked
// query's top key. Text alternative: a table of the same for every head, and each
// heatmap's own label; a heatmap's cell can be read with the arrow keys.
import { Heatmap } from "../renderers/heatmap.js";
import { controlKit } from "../ui/controls.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";
import { reseedButton, sentenceControls } from "../ui/sentence.js";

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const sentence = sentenceControls(kit, lab, { query: true });
  reseedButton(kit, lab, controls, "New random weights");
  body.append(controls);

  const grid = el("div", "attn-heads");
  Object.assign(grid.style, {
    display: "grid",
    gridTemplateColumns: "repeat(auto-fill, minmax(min(100%, 250px), 1fr))",
    gap: "0.8rem",
  });
  body.append(grid);
  const cellInfo = el("p", "attn-lab__cell");
  cellInfo.setAttribute("aria-live", "polite");
  cellInfo.textContent =
    "Click a cell of a head, or focus it and use the arrow keys, to read its weight.";
  body.append(cellInfo);

  const details = el("details", "attn-lab__table");
  details.append(
    el("summary", null, "Show as a table: each head's entropy and the query's top key"),
  );
  const table = dataTable({ label: "Table of the eight heads" });
  details.append(table.root);
  body.append(details);

  const panels = [];
  let result = null;
  for (let h = 0; h < 8; h += 1) {
    const figure = el("figure", "attn-heads__head");
    figure.style.margin = "0";
    const caption = el("figcaption");
    caption.style.fontSize = "0.65rem";
    const box = el("div");
    figure.append(caption, box);
    grid.append(figure);
    const heatmap = new Heatmap(box, {
      label: `Head ${h}: attention weights, one row per query token, one column per key token. Use the arrow keys to read cells.`,
      onSelect: (q, k) => {
        const t = result.tokens;
        const w = Number(result.weights[h][q][k]);
        cellInfo.textContent = `Head ${h} (${result.kinds[h]}): query “${t[q]}” (${q}) → key “${t[k]}” (${k}): weight ${w.toFixed(4)}.`;
      },
    });
    panels.push({ caption, heatmap });
  }

  function render(res) {
    result = res;
    sentence.render(res);
    const t = res.tokens;
    const q = res.query;
    const rows = [];
    panels.forEach(({ caption, heatmap }, h) => {
      const weights = Array.from(res.weights[h], (r) => Array.from(r, Number));
      const top = res.top_key[h][q];
      const mean = Number(res.mean_entropy_bits[h]);
      caption.textContent = `Head ${h}: ${res.kinds[h]} · mean ${mean.toFixed(2)} bits · “${t[q]}” → “${t[top]}”`;
      heatmap.setData({
        rowLabels: t,
        colLabels: t,
        values: weights,
        masked: weights.map((r) => r.map(() => false)),
        rowNotes: null,
      });
      rows.push([
        String(h),
        res.kinds[h],
        mean.toFixed(3),
        `${t[top]} (${top})`,
        weights[q][top].toFixed(3),
      ]);
    });
    table.fill({
      columns: ["Head", "Built as", "Mean entropy (bits)", "Query's top key", "Weight"],
      rows,
    });
  }

  return {
    render,
    controls,
    inputs: kit.inputs,
    markInvalid: kit.markInvalid,
    heatmaps: panels.map((p) => p.heatmap),
    destroy: () => {
      for (const p of panels) p.heatmap.destroy();
    },
  };
}
