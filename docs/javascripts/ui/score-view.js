// One query's scores against every key, shared by the query_picker lab (a random head) and
// the real_scores lab (a trained head): the picked query's first components, its score q·k
// with every key and that row as weights (bar charts, each with its hidden table), a line
// naming the top key, and the whole [query, key] score grid as a table whose row headers
// pick a query (lab.update({query})), the picked row marked. A score hidden by a causal mask
// (null or -Infinity) is drawn as 0, "(hidden)", and written "—" in the grid.
//
//   const view = scoreView(body, lab);   // appends the charts, the line and the grid
//   view.render(res, gridKey)            // res: tokens, query, q, shown_dims, d_head,
//                                        //   scores, weights, top_key, S; the grid is
//                                        //   redrawn only when gridKey changes, and when
//                                        //   it is far from the screen only once the
//                                        //   updates pause (TABLE_DELAY_MS)
//   view.destroy()
import { barChart } from "../renderers/bar_chart.js";
import { TABLE_DELAY_MS } from "../renderers/chart_frame.js";
import { dataTable } from "./data-table.js";
import { el } from "./dom.js";

const f2 = (v) => Number(v).toFixed(2);
// A score hidden by a causal mask: null in the build's JSON, -Infinity from the worker.
const hidden = (x) => x === null || x === undefined || !Number.isFinite(Number(x));

export function scoreView(body, lab) {
  const charts = el("div", "attn-lab__charts");
  // each chart under a visible title (the charts' own names are for screen readers)
  const boxes = [
    "The query q: its first components",
    "Scores q·k with every key",
    "Weights: softmax of q·k / √d_head",
  ].map((title) => {
    const box = el("div");
    box.append(el("p", "attn-lab__hint", title));
    return box;
  });
  charts.append(...boxes);
  const qBars = barChart(boxes[0], {
    label: "The picked query's first components",
    valueLabel: "q component",
    format: f2,
  });
  const scoreBars = barChart(boxes[1], {
    label: "The picked query's score with every key, q·k",
    valueLabel: "q·k",
    format: f2,
  });
  const weightBars = barChart(boxes[2], {
    label: "That row of scores as weights: softmax of q·k / √d_head (lesson 3)",
    valueLabel: "weight",
    format: (v) => v.toFixed(3),
    domain: [0, 1],
  });
  const summary = el("p", "attn-lab__cell");
  summary.setAttribute("aria-live", "polite");

  const details = el("details", "attn-lab__table");
  details.open = true;
  details.append(
    el("summary", null, "The score grid S = Q Kᵀ, [query, key] (press a row's token to pick it)"),
  );
  const grid = dataTable({
    label: "Score grid: rows are queries, columns are keys",
    className: "attn-lab__rows attn-lab__grid",
  });
  details.append(grid.root);
  body.append(charts, summary, details);

  let drawnGrid = null; // a new query only moves the mark
  let rows = [];
  // The grid's numbers far from the screen follow the charts once updates pause, as the
  // charts' hidden tables do: at 32 tokens its 1,024 cells cost ~12 ms of layout per new
  // seed, while the reader is at the controls above three long bar charts. Near the
  // screen (or scrolled, tabbed or read to) it is drawn at once.
  let pending = null; // {res, gridKey} not drawn yet
  let timer = 0;
  let near = true; // until the observer first says
  const observer = new IntersectionObserver(
    (entries) => {
      near = entries[entries.length - 1].isIntersecting;
      if (near) showGrid();
    },
    { rootMargin: "50% 0px" },
  );
  observer.observe(grid.root);

  /** Draw the pending grid (when its numbers are new) and mark its picked row. */
  function showGrid() {
    clearTimeout(timer);
    timer = 0;
    if (!pending) return;
    const { res, gridKey } = pending;
    pending = null;
    if (gridKey !== drawnGrid) {
      drawGrid(res);
      drawnGrid = gridKey;
    }
    markRow(res.query);
  }
  let buttons = [];
  let buttonTokens = null;

  /** The score grid: a header row of keys, then one row per query whose header picks it. */
  function drawGrid(res) {
    const t = res.tokens;
    // the same sentence keeps its buttons (and the table its rows): only numbers change
    const tokensKey = JSON.stringify(t);
    if (tokensKey !== buttonTokens) buttons = t.map(pickButton);
    buttonTokens = tokensKey;
    const trs = grid.fill({
      columns: ["query \\ key", ...t],
      rows: t.map((_, i) => [
        buttons[i],
        ...t.map((_, j) => (hidden(res.S[i][j]) ? "—" : f2(res.S[i][j]))),
      ]),
    });
    rows = t.map((token, i) => ({ tr: trs[i], button: buttons[i], token }));
  }

  /** The button that picks query i (the row's header). */
  function pickButton(token, i) {
    const button = el("button", "attn-lab__pick", token);
    button.type = "button";
    Object.assign(button.style, {
      font: "inherit",
      color: "inherit",
      textDecoration: "underline",
      background: "none",
      border: "none",
      padding: "0",
      cursor: "pointer",
    });
    button.addEventListener("click", () => lab.update({ query: i }));
    return button;
  }

  /** Mark the picked query's row (outline and bold; aria-current for screen readers). */
  function markRow(picked) {
    // Written only where it differs: a row's style written again, even to nothing, makes
    // the browser restyle that row and its cells (32 rows of 33 at the largest settings).
    rows.forEach(({ tr, button, token }, i) => {
      const on = i === picked;
      if (on) tr.setAttribute("aria-current", "true");
      else if (tr.hasAttribute("aria-current")) tr.removeAttribute("aria-current");
      if (on) {
        tr.style.outline = "2px solid var(--md-accent-fg-color)";
        tr.style.fontWeight = "bold";
      } else if (tr.hasAttribute("style")) tr.removeAttribute("style");
      const label = on ? `Query ${i}: ${token} (picked)` : `Pick query ${i}: ${token}`;
      if (button.getAttribute("aria-label") !== label) button.setAttribute("aria-label", label);
    });
  }

  function render(res, gridKey) {
    const t = res.tokens;
    const picked = res.query;
    const n = res.shown_dims;
    qBars.update({
      bars: Array.from({ length: n }, (_, d) => ({ label: `dim ${d + 1}`, value: res.q[d] })),
    });
    const top = res.top_key;
    const label = (j) => `${j}: ${t[j]}`;
    scoreBars.update({
      bars: t.map((_, j) => ({
        label: hidden(res.scores[j]) ? `${label(j)} (hidden)` : label(j),
        value: hidden(res.scores[j]) ? 0 : Number(res.scores[j]),
        highlight: j === top,
      })),
    });
    weightBars.update({
      bars: t.map((_, j) => ({ label: label(j), value: res.weights[j], highlight: j === top })),
    });
    boxes[0].firstChild.textContent = `The query q of “${t[picked]}”: its first ${n} of ${res.d_head} components`;
    summary.textContent = `Query “${t[picked]}” (${picked}): ${n} of its ${res.d_head} components shown. Its highest score is with the key of “${t[top]}” (${f2(res.scores[top])}), which gets weight ${Number(res.weights[top]).toFixed(3)}.`;
    pending = { res, gridKey };
    // the same numbers (a new query only moves the mark) are shown at once
    if (near || gridKey === drawnGrid) showGrid();
    else {
      clearTimeout(timer);
      timer = setTimeout(showGrid, TABLE_DELAY_MS);
    }
  }

  return {
    render,
    summary,
    destroy: () => {
      observer.disconnect();
      clearTimeout(timer);
      qBars.destroy();
      scoreBars.destroy();
      weightBars.destroy();
    },
  };
}
