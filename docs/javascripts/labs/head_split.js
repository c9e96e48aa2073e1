// Widget for the head_split lab (labs_py/attention_labs/labs/head_split.py): the
// parameters of one attention layer split into 1, 2, 4 and 8 heads and the picked n_heads
// (its bar highlighted), stacked per matrix
// (W_Q, W_K, W_V, W_O; each with its bias when `bias` is on), and the shapes of one
// forward pass for the picked n_heads. Text alternatives: the chart's table, the summary
// line and the diagram, which is text.
import { barChart } from "../renderers/bar_chart.js";
import { shapeDiagram } from "../renderers/shape_diagram.js";
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { integerField } from "../ui/sentence.js";

const count = (n) => Number(n).toLocaleString("en-US");

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  integerField(kit, lab, "d_model", "d_model");
  integerField(kit, lab, "n_heads", "n_heads (shapes)");
  integerField(kit, lab, "seq_len", "seq_len");
  kit.toggle("bias", "Count biases");
  body.append(controls);

  const summary = el("p", "attn-lab__summary");
  summary.setAttribute("aria-live", "polite");
  body.append(summary);
  const barsBox = el("div", "attn-lab__figure");
  body.append(barsBox);
  const bars = barChart(barsBox, {
    label:
      "Parameters of one attention layer, split into 1, 2, 4 and 8 heads and the picked n_heads (highlighted)",
    valueLabel: "parameters",
    format: count,
    domain: [0, null],
    stacked: true,
  });
  const diagramBox = el("div");
  body.append(diagramBox);
  const diagram = shapeDiagram(diagramBox, {
    label: "One forward pass of the layer, with the shape of every array",
  });

  function render(res) {
    const d = res.d_model;
    const with_ = res.bias ? ` + 4 × ${d} biases` : "";
    summary.textContent =
      `Every split has ${count(res.formula_total)} parameters = 4 × ${d}²${with_}. ` +
      `With ${res.n_heads} heads, d_head = ${d} / ${res.n_heads} = ${res.d_head}; head h owns ` +
      `${d} × ${res.d_head} = ${count(res.per_head.W_Q)} weights of each of W_Q, W_K, W_V.`;
    bars.update({
      bars: res.splits.map((s) => ({
        label: `${s.n_heads} head${s.n_heads > 1 ? "s" : ""} of ${s.d_head}`,
        parts: Object.entries(s.parts).map(([name, value]) => ({ name, value })),
        highlight: s.n_heads === res.n_heads,
      })),
    });
    const s = Object.fromEntries(res.shapes.map((x) => [x.name, x.shape]));
    diagram.update([
      { name: "X", shape: s.X },
      { from: "X", op: "× W_Q", name: "Q", shape: s["X W_Q (and K, V)"] },
      { op: "reshape", name: "Q", shape: s.reshape },
      { op: "transpose", name: "Q per head", shape: s.transpose },
      { op: "softmax(Q Kᵀ / √d_head)", name: "patterns", shape: s["scores, pattern"] },
      { op: "× V per head", name: "heads' outputs", shape: s["heads' outputs"] },
      { op: "transpose, reshape", name: "concatenation", shape: s.concatenate },
      { op: `× W_O (${s.W_O.join(" × ")})`, name: "output", shape: s.output },
    ]);
  }

  return {
    render,
    controls,
    inputs: kit.inputs,
    markInvalid: kit.markInvalid,
    destroy: () => {
      bars.destroy();
      diagram.destroy();
    },
  };
}
