// Widget for the qk_geometry lab (labs_py/attention_labs/labs/qk_geometry.py): a 2-D plane
// with one query and four keys whose heads the reader drags (pointer or arrow keys), the
// scores q·k and the softmax weights as bars, and a table that writes each score as
// |q| |k| cos θ. Found by labs/controller.js from the lab's name.
import { barChart } from "../renderers/bar_chart.js";
import { vectorPlane } from "../ui/vector-plane.js";
import { controlKit } from "../ui/controls.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";

const N_KEYS = 4;
const f2 = (v) => Number(v).toFixed(2);

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  kit.toggle("scale", "Divide by √d_head (√2) before softmax");
  const reset = el("button", "md-button attn-lab__reseed", "Reset the arrows");
  reset.type = "button";
  reset.addEventListener("click", () =>
    lab.update(Object.fromEntries(lab.schema.map((p) => [p.name, p.default]))),
  );
  controls.append(reset);
  body.append(controls);

  const figure = el("div", "attn-lab__figure");
  const plane = vectorPlane(figure, {
    label: "The query and four keys in 2-D; drag an arrow head, or focus it and use the arrow keys",
    extent: 3,
    step: 0.1,
    onDrag: (id, [x, y]) =>
      lab.update(id === "q" ? { qx: x, qy: y } : { [`${id}x`]: x, [`${id}y`]: y }),
  });
  const charts = el("div", "attn-lab__charts");
  const scoreBox = el("div");
  scoreBox.append(el("p", "attn-lab__hint", "Scores q·k"));
  const weightBox = el("div");
  weightBox.append(el("p", "attn-lab__hint", "Weights: softmax of the scores (lesson 3)"));
  charts.append(scoreBox, weightBox);
  const scores = barChart(scoreBox, {
    label: "Score of the query with each key, q·k",
    valueLabel: "q·k",
    format: f2,
  });
  const weights = barChart(weightBox, {
    label: "Softmax weights over the four keys (they sum to 1)",
    valueLabel: "weight",
    format: (v) => v.toFixed(3),
    domain: [0, 1],
  });
  const summary = el("p", "attn-lab__cell");
  summary.setAttribute("aria-live", "polite");

  const details = el("details", "attn-lab__table");
  details.open = true;
  details.append(el("summary", null, "Each score as |q| |k| cos θ"));
  const table = dataTable({
    label: "Each key's length, angle, score and weight",
    className: "attn-lab__rows attn-lab__rows--nowrap", // it scrolls in its box on a phone
  });
  details.append(table.root);
  body.append(figure, charts, summary, details);

  function render(res) {
    kit.inputs.scale.checked = lab.params.scale;
    const keys = Array.from({ length: N_KEYS }, (_, j) => Array.from(res.keys[j]));
    plane.update({
      vectors: [
        { id: "q", to: Array.from(res.query), label: "query", kind: "query", draggable: true },
        ...keys.map((k, j) => ({
          id: `k${j + 1}`,
          to: k,
          label: `key ${j + 1}`,
          kind: "key",
          draggable: true,
        })),
      ],
    });
    const top = res.top_key;
    scores.update({
      bars: keys.map((_, j) => ({
        label: `key ${j + 1}`,
        value: res.scores[j],
        highlight: j === top,
      })),
    });
    weights.update({
      bars: keys.map((_, j) => ({
        label: `key ${j + 1}`,
        value: res.weights[j],
        highlight: j === top,
      })),
    });
    const q = res.query_length;
    table.fill({
      columns: ["Key", "|k|", "θ", "cos θ", "|q| |k| cos θ = q·k", "Weight"],
      rows: keys.map((_, j) => [
        `key ${j + 1}`,
        f2(res.key_lengths[j]),
        `${Number(res.angles_deg[j]).toFixed(0)}°`,
        f2(res.cosines[j]),
        `${f2(q)} × ${f2(res.key_lengths[j])} × ${f2(res.cosines[j])} = ${f2(res.scores[j])}`,
        Number(res.weights[j]).toFixed(3),
      ]),
    });
    summary.textContent = `Query (${f2(res.query[0])}, ${f2(res.query[1])}), length ${f2(q)}. Key ${top + 1} scores highest (${f2(res.scores[top])}) and gets weight ${Number(res.weights[top]).toFixed(3)}${lab.params.scale ? " (scores divided by √2 before softmax)" : ""}.`;
  }

  return {
    render,
    controls,
    inputs: kit.inputs,
    markInvalid: kit.markInvalid,
    destroy: () => {
      plane.destroy();
      scores.destroy();
      weights.destroy();
    },
  };
}
