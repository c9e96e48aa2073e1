// Widget for the eight_heads lab (labs_py/attention_labs/labs/eight_heads.py): the
// patterns of eight synthetic heads of one layer on one sentence, as small heatmaps side by
// side, each captioned with what it was built to do, its mean row entropy and the picked
// query's top key. Text alternative: a table of the same for every head, and each
// heatmap's own label; a heatmap's cell can be read with the arrow keys.
import { Heatmap } from "../renderers/heatmap.js";
import { controlKit } from "../ui/controls.js";
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
  const scroller = el("div", "attn-lab__table-scroll");
  scroller.tabIndex = 0;
  scroller.setAttribute("role", "region");
  scroller.setAttribute("aria-label", "Table of the eight heads");
  const table = el("table", "attn-lab__rows");
  const head = el("tr");
  for (const h of ["Head", "Built as", "Mean entropy (bits)", "Query's top key", "Weight"]) {
    const th = el("th", null, h);
    th.scope = "col";
    head.append(th);
  }
  const thead = el("thead");
  thead.append(head);
  const tbody = el("tbody");
  table.append(thead, tbody);
  scroller.append(table);
  details.append(scroller);
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
      const tr = el("tr");
      for (const v of [
        String(h),
        res.kinds[h],
        mean.toFixed(3),
        `${t[top]} (${top})`,
        weights[q][top].toFixed(3),
      ])
        tr.append(el("td", null, v));
      rows.push(tr);
    });
    tbody.replaceChildren(...rows);
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
