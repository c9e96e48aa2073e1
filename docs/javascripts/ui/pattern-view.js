// The view of a [query, key] pattern shared by the lab widgets: heatmap, the selected
// cell's numbers, and a table of each query's top key (the heatmap's text alternative).
//
//   const view = patternView(body, {label});
//   view.render(result)      result: tokens, weights, logits | masked, ...
//   view.destroy()           the heatmap stops watching the palette
import { Heatmap } from "../renderers/heatmap.js";
import { dataTable } from "./data-table.js";
import { el } from "./dom.js";

const COLUMNS = [
  { text: "Query", title: "The query token (row of the heatmap)" },
  { text: "Top key", title: "The key this query gives the most weight to" },
  { text: "Weight", title: "That key's weight" },
  { text: "Entropy", title: "Entropy of the row, in bits" },
  {
    text: "Max",
    title: "The largest entropy possible for this row: log2 of the number of visible keys",
  },
];

/** Masked entries: null in the build's JSON, -Infinity in results from the worker. */
export const isMasked = (x) => x === null || x === undefined || !Number.isFinite(x);

/** `x` with `digits` decimals, or "masked". */
export function fmt(x, digits = 4) {
  return isMasked(x) ? "masked" : Number(x).toFixed(digits);
}

/**
 * Heatmap + the selected cell's numbers + a table of each query's top key (the text
 * alternative), appended to `body`. render(res) takes tokens (the queries; also the keys
 * unless key_tokens is given, as in cross-attention), weights [query][key],
 * top_key, and optionally logits (masked: null or -Infinity), masked [query][key]
 * booleans (when there are no logits), entropy_bits and max_entropy_bits (null: unknown),
 * row_notes (per query a note, or null: a note replaces the row's top key, e.g. for a row
 * that sees no key, and is said when one of its cells is read).
 */
export function patternView(body, { label }) {
  const figure = el("div", "attn-lab__figure");
  const heatmap = new Heatmap(figure, {
    label,
    onSelect: (q, k) => describe(q, k),
  });
  const cellInfo = el("p", "attn-lab__cell");
  cellInfo.setAttribute("aria-live", "polite");
  cellInfo.textContent =
    "Click a cell, or focus the heatmap and use the arrow keys, to read its weight.";

  const details = el("details", "attn-lab__table");
  const summary = el("summary", null, "Show as a table: each query's top key and entropy (bits)");
  const table = dataTable({ label: "Table of each query's top key and entropy" });
  details.append(summary, table.root);
  body.append(figure, cellInfo, details);

  let result = null;
  const masked = (q, k) =>
    result.logits ? isMasked(result.logits[q][k]) : Boolean(result.masked?.[q][k]);
  const known = (a, q) => a && !isMasked(a[q]);

  const note = (q) => result.row_notes?.[q] || null;

  function describe(q, k) {
    const t = result.tokens;
    const kt = result.key_tokens || t;
    const w = result.weights[q][k];
    const row = note(q) ? ` This row sees no key: ${note(q).replace(/^→ /, "")}.` : "";
    if (masked(q, k)) {
      cellInfo.textContent = `Query “${t[q]}” (${q}) cannot see key “${kt[k]}” (${k}): masked, weight 0.${row}`;
      return;
    }
    let text = `Query “${t[q]}” (${q}) → key “${kt[k]}” (${k}): weight ${fmt(w)}`;
    if (result.logits) text += `, logit ${fmt(result.logits[q][k], 3)}`;
    text += `.${row}`;
    if (known(result.max_entropy_bits, q) && Number(result.max_entropy_bits[q]) === 0)
      text += " One key visible: it takes all of the row's weight (weight 1, entropy 0 bits).";
    else if (known(result.entropy_bits, q))
      text += ` Row entropy ${fmt(result.entropy_bits[q], 3)} bits of at most ${fmt(result.max_entropy_bits[q], 3)}.`;
    cellInfo.textContent = text;
  }

  function render(res) {
    result = res;
    const t = res.tokens;
    const kt = res.key_tokens || t;
    const entropy = (q) =>
      known(res.entropy_bits, q) ? ` · ${res.entropy_bits[q].toFixed(2)} bits` : "";
    heatmap.setData({
      rowLabels: t,
      colLabels: kt,
      values: res.weights,
      masked: Array.from(res.weights, (row, q) => Array.from(row, (_, k) => masked(q, k))),
      rowNotes: res.top_key.map((k, q) => res.row_notes?.[q] || `→ ${kt[k]}${entropy(q)}`),
    });
    table.fill({
      columns: COLUMNS,
      rows: t.map((token, q) => {
        const k = res.top_key[q];
        const rowNote = res.row_notes?.[q];
        return [
          token,
          rowNote ? rowNote.replace(/^→ /, "") : kt[k],
          rowNote ? "—" : fmt(res.weights[q][k], 3),
          known(res.entropy_bits, q) ? fmt(res.entropy_bits[q], 3) : "—",
          known(res.max_entropy_bits, q) ? fmt(res.max_entropy_bits[q], 3) : "—",
        ];
      }),
    });
    if (heatmap.selected) describe(...heatmap.selected);
  }

  return { render, heatmap, figure, cellInfo, details, destroy: () => heatmap.destroy() };
}
