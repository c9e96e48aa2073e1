// Widget for the masking lab (labs_py/attention_labs/labs/masking.py): controls for the
// length, the scores' spread, the mask (with its pad count and side, or window), where it
// acts and what a hidden score becomes; the masked pattern (ui/pattern-view.js: heatmap,
// cell readout, table), a live summary of the counts, row sums and rows that see nothing,
// the first such row under the three fills side by side (ui/data-table.js), and a line
// chart of kept entries against length (renderers/line_chart.js, with its own hidden
// table). Found by labs/controller.js by name.
import { lineChart } from "../renderers/line_chart.js";
import { controlKit } from "../ui/controls.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";
import { patternView } from "../ui/pattern-view.js";

const MASK_NAMES = {
  none: "no mask",
  causal: "the causal mask",
  padding: "the padding mask",
  sliding_window: "the sliding window",
  causal_padding: "the causal and padding masks together",
};
const PADDED = ["padding", "causal_padding"];
// The three fills of a hidden score, as the comparison table names them.
const FILLS = [
  ["neg_inf", "−∞, plain softmax"],
  ["neg_1e9", "−10⁹, plain softmax"],
  ["skip", "−∞, an empty row gives 0s (this site)"],
];
const FILL_SHORT = { neg_inf: "−∞, plain softmax", neg_1e9: "−10⁹, plain softmax" };
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/** A number input for integer or number parameter `name`, labelled `label`. */
function numberInput(kit, lab, name, label, step) {
  const p = kit.spec[name];
  const input = kit.field(name, label, el("input"));
  Object.assign(input, {
    type: "number",
    min: p.minimum,
    max: p.maximum,
    step,
    value: lab.params[name],
  });
  return input;
}

/** A select for choice parameter `name`. */
function choiceInput(kit, lab, name, label) {
  const p = kit.spec[name];
  const select = kit.field(name, label, el("select"));
  for (const choice of p.choices) {
    const option = el("option", null, p.labels[choice] || choice);
    option.value = choice;
    select.append(option);
  }
  select.value = lab.params[name];
  select.addEventListener("change", () => lab.update({ [name]: select.value }));
  return select;
}

/**
 * Draw the lab's controls, pattern, summary and cost chart into `body`.
 * @param {HTMLElement} body the lab's body element
 * @param {LabController} lab params, schema, update(changes), showError(message, param)
 */
export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);

  const seqLen = numberInput(kit, lab, "seq_len", "seq_len", 1);
  const spread = numberInput(kit, lab, "spread", "Score spread", "any");
  const mask = choiceInput(kit, lab, "mask", "Mask");
  const pad = numberInput(kit, lab, "pad", "Pad tokens", 1);
  const padSide = choiceInput(kit, lab, "pad_side", "Padding goes");
  const windowBox = numberInput(kit, lab, "window", "Window", 1);
  const apply = choiceInput(kit, lab, "apply", "Apply the mask");
  const fill = choiceInput(kit, lab, "fill", "A hidden score becomes");
  const field = (input) => input.closest(".attn-lab__field");

  // Pad tokens leave at least one real token: the box's limit follows seq_len.
  const padLimit = () => {
    pad.max = Math.max(0, Number(lab.params.seq_len) - 1);
  };
  padLimit();
  seqLen.addEventListener("change", () => {
    if (seqLen.value === "" || !seqLen.checkValidity()) {
      kit.numberChanged(seqLen, "seq_len"); // explains the limits
      return;
    }
    const n = Number(seqLen.value);
    const changes = { seq_len: n };
    if (Number(lab.params.pad) > n - 1) {
      changes.pad = n - 1;
      pad.value = n - 1;
    }
    pad.max = n - 1;
    lab.update(changes);
  });
  spread.addEventListener("change", () => kit.numberChanged(spread, "spread"));
  pad.addEventListener("change", () => kit.numberChanged(pad, "pad"));
  windowBox.addEventListener("change", () => kit.numberChanged(windowBox, "window"));

  const showRelevant = () => {
    field(pad).hidden = !PADDED.includes(mask.value);
    field(padSide).hidden = !PADDED.includes(mask.value);
    field(windowBox).hidden = mask.value !== "sliding_window";
    field(fill).hidden = apply.value !== "before"; // after softmax nothing is filled
  };
  showRelevant();
  mask.addEventListener("change", showRelevant);
  apply.addEventListener("change", showRelevant);

  const reseed = el("button", "md-button attn-lab__reseed", "New random scores");
  reseed.type = "button";
  reseed.addEventListener("click", () =>
    lab.update({ seed: (lab.params.seed + 1) % kit.spec.seed.maximum }),
  );
  controls.append(reseed);
  body.append(controls);

  const summary = el("p", "attn-lab__cell attn-masking__summary");
  summary.setAttribute("aria-live", "polite");
  body.append(summary);
  const view = patternView(body, {
    label:
      "Attention weights under the mask: one row per query, one column per key; masked cells are blank. Focus and use the arrow keys to read cells.",
  });
  // The first row that sees no key, under the three fills side by side.
  const empty = el("div", "attn-masking__empty");
  const emptyNote = el("p", "attn-lab__hint");
  emptyNote.setAttribute("aria-live", "polite");
  const emptyTable = dataTable({
    label: "A row that sees no key, under each way of filling the hidden scores",
    className: "attn-lab__rows attn-masking__fills",
  });
  empty.append(emptyNote, emptyTable.root);
  body.append(empty);
  const costBox = el("div", "attn-lab__figure attn-masking__cost");
  body.append(costBox);
  const cost = lineChart(costBox, {
    label: "Score entries kept by the mask against sequence length, next to the full grid",
    xLabel: "seq_len",
    yLabel: "entries kept",
    yDomain: [0, null],
    format: (v) => Math.round(v).toLocaleString("en-US"), // 4,096 as in the lesson's prose
  });

  /** What the row sums say: rows summing to 1, the others' range, the NaN rows. */
  function rowsText(res) {
    const all = Array.from(res.row_sums, (s) => (s === null ? null : Number(s)));
    const nan = all.filter((s) => s === null).length;
    const sums = all.filter((s) => s !== null);
    const ones = sums.filter((s) => Math.abs(s - 1) < 1e-9).length;
    const others = sums.filter((s) => Math.abs(s - 1) >= 1e-9);
    let text =
      ones === all.length
        ? "every row sums to 1"
        : `${ones} of ${all.length} rows ${ones === 1 ? "sums" : "sum"} to 1`;
    if (others.length)
      text += `; ${nan ? "others" : "the others"} sum to between ${Math.min(...others).toFixed(2)} and ${Math.max(...others).toFixed(2)}`;
    if (nan) text += `; ${plural(nan, "row is", "rows are")} NaN (0/0), shown blank`;
    return text;
  }

  /** The first row with no visible key, under each fill; or why there is none. */
  function renderEmpty(res) {
    const cmp = res.fill_compare;
    const agree = `On every row that sees a key, −∞ and −10⁹ give the same weights (largest difference ${Number(res.fill_agreement) === 0 ? "0" : Number(res.fill_agreement).toExponential(1)}).`;
    if (cmp.row === null) {
      emptyNote.textContent = `No row is fully masked here. ${agree} To see one, choose Causal + padding with the padding at the start.`;
      emptyTable.root.hidden = true;
      return;
    }
    const t = res.tokens;
    const n = res.empty_rows.length;
    emptyNote.textContent = `${plural(n, "row sees", "rows see")} no key at all (query ${res.empty_rows.map((q) => q + 1).join(", ")}). The table is row ${cmp.row + 1} under the three ways of filling its hidden scores. ${agree}`;
    const value = (name, k) =>
      name === "neg_inf" ? (cmp.neg_inf_is_nan ? "NaN" : "—") : Number(cmp[name][k]).toFixed(3);
    emptyTable.fill({
      caption: `Query ${cmp.row + 1} (${t[cmp.row]}), which may see no key: its weights`,
      columns: ["hidden score", ...t.map((token, k) => `${k + 1}: ${token}`), "row sum"],
      rows: FILLS.map(([name, label]) => [
        label,
        ...t.map((_, k) => value(name, k)),
        name === "neg_inf" ? "NaN" : cmp[name].reduce((a, b) => a + Number(b), 0).toFixed(3),
      ]),
    });
    emptyTable.root.hidden = false;
  }

  function render(res) {
    padLimit();
    view.render(res);
    const c = res.counts;
    // the fill is named when it is not this site's (it matters only for an empty row)
    const fillText =
      res.apply === "before" && res.fill !== "skip"
        ? ` (hidden scores ${FILL_SHORT[res.fill]})`
        : "";
    summary.textContent =
      `${MASK_NAMES[res.mask]}, applied ${res.apply} softmax${fillText}: keeps ${c.kept} of ` +
      `${c.total} entries, blocks ${c.masked} (${c.blocked_percent.toFixed(1)}%); ${rowsText(res)}.`;
    summary.textContent = summary.textContent[0].toUpperCase() + summary.textContent.slice(1);
    renderEmpty(res);
    const xs = res.cost.lengths;
    cost.update({
      series: [
        {
          name: `kept by ${MASK_NAMES[res.mask]}`,
          points: xs.map((x, i) => [x, res.cost.kept[i]]),
        },
        {
          name: "full grid (seq_len²)",
          points: xs.map((x, i) => [x, res.cost.full[i]]),
          dashed: true,
        },
        // a window is compared with the causal mask in the lesson: draw both curves
        ...(res.mask === "sliding_window"
          ? [
              {
                name: "kept by the causal mask",
                points: xs.map((x) => [x, (x * (x + 1)) / 2]),
              },
            ]
          : []),
      ],
      marker: { x: res.tokens.length, label: `seq_len = ${res.tokens.length}` },
    });
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    heatmap: view.heatmap,
    inputs: kit.inputs,
    controls,
    summary,
    destroy() {
      view.destroy();
      cost.destroy();
    },
  };
}
