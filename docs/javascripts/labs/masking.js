// Widget for the masking lab (labs_py/attention_labs/labs/masking.py): controls for the
// length, the scores' spread, the mask (with its pad count or window) and where it acts;
// the masked pattern (ui/pattern-view.js: heatmap, cell readout, table), a live summary
// of the counts and row sums, and a line chart of kept entries against length
// (renderers/line_chart.js, with its own hidden table). Found by labs/controller.js by name.
import { lineChart } from "../renderers/line_chart.js";
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { patternView } from "../ui/pattern-view.js";

const MASK_NAMES = {
  none: "no mask",
  causal: "the causal mask",
  padding: "the padding mask",
  sliding_window: "the sliding window",
};

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
  const windowBox = numberInput(kit, lab, "window", "Window", 1);
  choiceInput(kit, lab, "apply", "Apply the mask");
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
    field(pad).hidden = mask.value !== "padding";
    field(windowBox).hidden = mask.value !== "sliding_window";
  };
  showRelevant();
  mask.addEventListener("change", showRelevant);

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
  const costBox = el("div", "attn-lab__figure attn-masking__cost");
  body.append(costBox);
  const cost = lineChart(costBox, {
    label: "Score entries kept by the mask against sequence length, next to the full grid",
    xLabel: "seq_len",
    yLabel: "entries kept",
    yDomain: [0, null],
    format: (v) => Math.round(v).toLocaleString("en-US"), // 4,096 as in the lesson's prose
  });

  function render(res) {
    padLimit();
    view.render(res);
    const c = res.counts;
    const sums = Array.from(res.row_sums, Number);
    const ones = sums.filter((s) => Math.abs(s - 1) < 1e-9).length;
    const rows =
      ones === sums.length
        ? "every row sums to 1"
        : `${ones} of ${sums.length} rows ${ones === 1 ? "sums" : "sum"} to 1; the others sum to between ` +
          `${Math.min(...sums).toFixed(2)} and ` +
          `${Math.max(...sums.filter((s) => Math.abs(s - 1) >= 1e-9)).toFixed(2)}`;
    summary.textContent =
      `${MASK_NAMES[res.mask]}, applied ${res.apply} softmax: keeps ${c.kept} of ` +
      `${c.total} entries, blocks ${c.masked} (${c.blocked_percent.toFixed(1)}%); ${rows}.`;
    summary.textContent = summary.textContent[0].toUpperCase() + summary.textContent.slice(1);
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
