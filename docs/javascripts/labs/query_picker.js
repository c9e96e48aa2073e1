// Widget for the query_picker lab (labs_py/attention_labs/labs/query_picker.py): the
// sentence, a query picker, d_head and new random vectors; the shapes of X, W_Q, Q, K and
// S for these sizes; the picked query's first components, its score with every key and
// that row as weights (bars); and the whole [query, key] score grid as a table whose row
// headers pick a query, the picked row marked. Found by labs/controller.js.
import { barChart } from "../renderers/bar_chart.js";
import { controlKit } from "../ui/controls.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";
import { tokensField } from "../ui/sentence.js";

const f2 = (v) => Number(v).toFixed(2);
const shape = (s) => `(${s[0]}, ${s[1]})`;

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const { spec, field } = kit;

  const tokens = tokensField(kit, lab, (list) => ({
    tokens: list,
    query: Math.max(0, Math.min(lab.params.query, list.length - 1)),
  }));

  const query = field("query", "Query token", el("select"));
  query.addEventListener("change", () => lab.update({ query: Number(query.value) }));

  const dHead = field("d_head", "d_head", el("input"));
  Object.assign(dHead, {
    type: "number",
    min: spec.d_head.minimum,
    max: spec.d_head.maximum,
    step: 1,
    value: lab.params.d_head,
  });
  dHead.addEventListener("change", () => kit.numberChanged(dHead, "d_head"));

  const reseed = el("button", "md-button attn-lab__reseed", "New random vectors");
  reseed.type = "button";
  reseed.addEventListener("click", () =>
    lab.update({ seed: (lab.params.seed + 1) % spec.seed.maximum }),
  );
  controls.append(reseed);
  body.append(controls);

  const shapes = el("p", "attn-lab__shapes");
  shapes.setAttribute("aria-live", "polite");
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
  body.append(shapes, charts, summary, details);

  let drawnGrid = ""; // the grid's tokens, d_head and seed: a new query only moves the mark
  let drawnTokens = "";
  let rows = [];

  /** The score grid: a header row of keys, then one row per query whose header picks it. */
  function drawGrid(res) {
    const t = res.tokens;
    const buttons = t.map((token, i) => {
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
    });
    const trs = grid.fill({
      columns: ["query \\ key", ...t],
      rows: t.map((_, i) => [buttons[i], ...t.map((_, j) => f2(res.S[i][j]))]),
    });
    rows = t.map((token, i) => ({ tr: trs[i], button: buttons[i], token }));
  }

  /** Mark the picked query's row (outline and bold; aria-current for screen readers). */
  function markRow(picked) {
    rows.forEach(({ tr, button, token }, i) => {
      const on = i === picked;
      if (on) tr.setAttribute("aria-current", "true");
      else tr.removeAttribute("aria-current");
      tr.style.outline = on ? "2px solid var(--md-accent-fg-color)" : "";
      tr.style.fontWeight = on ? "bold" : "";
      button.setAttribute(
        "aria-label",
        on ? `Query ${i}: ${token} (picked)` : `Pick query ${i}: ${token}`,
      );
    });
  }

  function render(res) {
    const t = res.tokens;
    const picked = res.query;
    const tokenKey = JSON.stringify(t);
    if (tokenKey !== drawnTokens) {
      // the query picker: one option per token, "index: token"
      query.replaceChildren(
        ...t.map((token, i) => {
          const option = el("option", null, `${i}: ${token}`);
          option.value = String(i);
          return option;
        }),
      );
      tokens.value = t.join(" ");
      drawnTokens = tokenKey;
    }
    query.value = String(picked);
    dHead.value = res.d_head;

    const s = res.shapes;
    shapes.textContent = `X ${shape(s.X)} → Q = X W_Q ${shape(s.Q)} and K = X W_K ${shape(s.K)}, with W_Q and W_K ${shape(s.W_Q)} → S = Q Kᵀ ${shape(s.S)}. Random W_Q, W_K and embeddings: nothing here is learned.`;

    const n = res.shown_dims;
    qBars.update({
      bars: Array.from({ length: n }, (_, d) => ({ label: `dim ${d + 1}`, value: res.q[d] })),
    });
    const top = res.top_key;
    const label = (j) => `${j}: ${t[j]}`;
    scoreBars.update({
      bars: t.map((_, j) => ({ label: label(j), value: res.scores[j], highlight: j === top })),
    });
    weightBars.update({
      bars: t.map((_, j) => ({ label: label(j), value: res.weights[j], highlight: j === top })),
    });
    boxes[0].firstChild.textContent = `The query q of “${t[picked]}”: its first ${n} of ${res.d_head} components`;
    summary.textContent = `Query “${t[picked]}” (${picked}): ${n} of its ${res.d_head} components shown. Its highest score is with the key of “${t[top]}” (${f2(res.scores[top])}), which gets weight ${Number(res.weights[top]).toFixed(3)}.`;

    const gridKey = JSON.stringify([t, res.d_head, res.seed]);
    if (gridKey !== drawnGrid) {
      drawGrid(res);
      drawnGrid = gridKey;
    }
    markRow(picked);
  }

  return {
    render,
    controls,
    inputs: kit.inputs,
    markInvalid: kit.markInvalid,
    destroy: () => {
      qBars.destroy();
      scoreBars.destroy();
      weightBars.destroy();
    },
  };
}
