// Widget for the param_calculator lab (labs_py/attention_labs/labs/param_calculator.py):
// a preset picker, the fields of a user-defined model (editing one switches to it, starting
// from the model shown), a table of the counts per layer and in total, and one stacked bar
// per model (each part as a share of that model's total) from renderers/bar_chart.js.
import { barChart } from "../renderers/bar_chart.js";
import { controlKit } from "../ui/controls.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";

const FIELDS = [
  ["d_model", "d_model"],
  ["n_layers", "n_layers"],
  ["n_heads", "n_heads (query heads)"],
  ["n_kv_heads", "n_kv_heads (key/value heads)"],
  ["d_ff", "d_ff (MLP width)"],
  ["vocab", "Vocabulary"],
  ["context", "Context length"],
];
const CHOICES = [
  ["mlp", "MLP"],
  ["norm", "Norms"],
  ["positions", "Positions"],
];
const TOGGLES = [
  ["biases", "Bias vectors"],
  ["tied", "Output matrix tied to the embedding"],
];
const PARTS = ["attention", "MLP", "embeddings", "norms", "other"];

const int = (n) => Math.round(n).toLocaleString("en-US");
// Shares under 1% keep two decimals, so that biases and norms do not read as zero.
const pct = (v) => (v === 0 ? "0%" : `${v.toFixed(Math.abs(v) < 1 ? 2 : 1)}%`);

/** The fields of the model shown, as custom parameters (so editing one starts from it). */
function customFrom(config) {
  const out = {};
  for (const [name] of [...FIELDS, ...CHOICES, ...TOGGLES]) out[name] = config[name];
  return out;
}

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const { spec, field } = kit;
  let shown = null; // the last result drawn

  const preset = field("preset", "Model", el("select"));
  for (const choice of spec.preset.choices) {
    const option = el("option", null, spec.preset.labels[choice] || choice);
    option.value = choice;
    preset.append(option);
  }
  preset.value = lab.params.preset;
  preset.addEventListener("change", () => {
    const changes = { preset: preset.value };
    // "Your own model" starts from the model shown.
    if (preset.value === "custom" && shown) Object.assign(changes, customFrom(shown.config));
    lab.update(changes);
  });

  const toCustom = (name, value) => {
    const base = shown ? customFrom(shown.config) : {};
    const changes = { ...base, preset: "custom", [name]: value };
    // n_kv_heads must divide n_heads: a model without GQA (n_kv_heads equal to n_heads)
    // keeps it so; otherwise n_kv_heads drops to the largest divisor of the new n_heads.
    if (name === "n_heads" && base.n_kv_heads !== undefined && value >= 1) {
      if (base.n_kv_heads === base.n_heads) changes.n_kv_heads = value;
      else {
        let kv = Math.min(base.n_kv_heads, value);
        while (kv > 1 && value % kv !== 0) kv -= 1;
        changes.n_kv_heads = kv;
      }
    }
    preset.value = "custom";
    lab.update(changes);
  };

  for (const [name, label] of FIELDS) {
    const p = spec[name];
    const input = field(name, label, el("input"));
    Object.assign(input, { type: "number", min: p.minimum, max: p.maximum, step: 1 });
    input.value = lab.params[name];
    input.addEventListener("change", () => {
      if (input.value === "" || !input.checkValidity()) {
        kit.numberChanged(input, name); // shows the range, sends nothing
        return;
      }
      toCustom(name, Number(input.value));
    });
  }
  for (const [name, label] of CHOICES) {
    const select = field(name, label, el("select"));
    for (const choice of spec[name].choices) {
      const option = el("option", null, spec[name].labels[choice] || choice);
      option.value = choice;
      select.append(option);
    }
    select.value = lab.params[name];
    select.addEventListener("change", () => toCustom(name, select.value));
  }
  for (const [name, label] of TOGGLES) {
    const box = el("input");
    box.type = "checkbox";
    box.checked = lab.params[name];
    box.id = kit.id(name);
    box.title = spec[name].description;
    const wrap = el("div", "attn-lab__field attn-lab__field--check");
    const lbl = el("label");
    lbl.htmlFor = box.id;
    lbl.append(box, el("span", null, label));
    wrap.append(lbl);
    controls.append(wrap);
    kit.inputs[name] = box;
    box.addEventListener("change", () => toCustom(name, box.checked));
  }
  body.append(controls);

  // The counts of the model shown.
  const summary = el("p", "attn-lab__summary");
  summary.setAttribute("aria-live", "polite");
  const table = dataTable({
    label: "Table of the parameter counts",
    className: "attn-lab__rows attn-params__table",
  });
  const chartBox = el("div", "attn-params__chart");
  body.append(summary, table.root, chartBox);
  const bars = barChart(chartBox, {
    label:
      "Where each model's parameters are: attention, MLP, embeddings, norms and other, as a share of its total",
    valueLabel: "share of the model's parameters",
    format: pct,
    domain: [0, 100],
    stacked: true,
  });

  function drawTable(result) {
    const c = result.counts;
    const pl = c.per_layer;
    const e = c.embedding_parts;
    const L = result.config.n_layers;
    const rows = [
      ["Attention", pl.attention, c.parts.attention],
      ["… weights", pl.attention_weights, L * pl.attention_weights],
      ["… biases", pl.attention_biases, L * pl.attention_biases],
      ["MLP", pl.mlp, c.parts.MLP],
      ["… weights", pl.mlp_weights, L * pl.mlp_weights],
      ["… biases", pl.mlp_biases, L * pl.mlp_biases],
      ["Norms", pl.norms, c.parts.norms],
      ["Token embedding", null, e.token],
      ["Position embedding", null, e.position],
      ["Token types", null, e.token_type],
      ["Output matrix (untied)", null, e.output],
      ["Other (pooler)", null, c.parts.other],
      ["Total", pl.total, c.total],
      [
        "Total without biases",
        pl.total - pl.attention_biases - pl.mlp_biases,
        c.total_without_biases,
      ],
      ["Non-embedding", pl.total, c.non_embedding],
    ];
    const trs = table.fill({
      caption: `Parameters of ${result.label} (${L} layers)`,
      columns: ["Part", "One layer", "Whole model", "Share"],
      rows: rows.map(([name, layer, whole]) => [
        name,
        layer === null ? "none" : int(layer),
        int(whole),
        pct((100 * whole) / c.total),
      ]),
    });
    rows.forEach(([name], i) => {
      if (name.startsWith("Total")) trs[i].className = "attn-params__total";
    });
  }

  function render(result) {
    shown = result;
    preset.value = result.preset;
    for (const [name] of [...FIELDS, ...CHOICES]) kit.inputs[name].value = result.config[name];
    for (const [name] of TOGGLES) kit.inputs[name].checked = result.config[name];
    const c = result.counts;
    summary.textContent =
      `${result.label}: ${int(c.total)} parameters; attention ${pct((100 * c.parts.attention) / c.total)}, ` +
      `MLP ${pct((100 * c.parts.MLP) / c.total)}, embeddings ${pct((100 * c.parts.embeddings) / c.total)}.`;
    drawTable(result);
    bars.update({
      bars: result.models.map((m) => ({
        label: m.label,
        highlight: m.name === result.preset,
        parts: PARTS.map((p) => ({ name: p, value: (100 * m.parts[p]) / m.total })),
      })),
    });
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    inputs: kit.inputs,
    controls,
    destroy: () => bars.destroy(),
  };
}
