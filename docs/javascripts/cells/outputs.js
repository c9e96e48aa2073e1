// What a cell prints and draws: streams as text, show_heatmap(...) as the site's heatmap
// with its values in a table (the text alternative).
import { Heatmap } from "../renderers/heatmap.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";

/**
 * Draw a cell's output items (streams and heatmaps) into `box`.
 * @param {HTMLElement} box
 * @param {Array<{type: "stream", name: string, text: string} |
 *   {type: "heatmap", rows: string[], cols: string[], values: number[][], title?: string}>} items
 * @returns {Heatmap[]} the heatmaps drawn: the caller destroys them with the output
 */
export function renderOutputs(box, items) {
  const heatmaps = [];
  for (const item of items) {
    if (item.type === "stream") {
      const last = box.lastElementChild;
      if (last && last.dataset.stream === item.name) last.textContent += item.text;
      else {
        const pre = el("pre", `attn-cell__stream attn-cell__stream--${item.name}`, item.text);
        pre.dataset.stream = item.name;
        box.append(pre);
      }
    } else if (item.type === "heatmap") {
      const fig = el("figure", "attn-cell__figure");
      const title = item.title || "Attention heatmap";
      const map = new Heatmap(fig, {
        label: `${title}: ${item.rows.length} queries × ${item.cols.length} keys`,
      });
      map.setData({ rowLabels: item.rows, colLabels: item.cols, values: item.values });
      fig.append(el("figcaption", "attn-cell__caption", title));
      box.append(fig, valuesTable(item, title));
      heatmaps.push(map);
    }
  }
  return heatmaps;
}

/** The heatmap's text alternative: its values in a table, in a disclosure. */
function valuesTable(item, title) {
  const details = el("details", "attn-lab__table");
  details.append(el("summary", "", `${title}: the weights as a table`));
  const table = dataTable({ label: `${title}: weights (rows are queries, columns are keys)` });
  table.fill({
    columns: ["query \\ key", ...item.cols],
    rows: item.values.map((row, i) => [item.rows[i], ...row.map((v) => v.toFixed(3))]),
  });
  details.append(table.root);
  return details;
}
