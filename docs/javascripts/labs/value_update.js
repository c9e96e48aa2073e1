// Widget for the value_update lab (labs_py/attention_labs/labs/value_update.py): for one
// query, its weights on every key (bars), the values taken to the model's width, their
// weighted sum Delta and the move x -> x + Delta (a 2-D plane, exact for x, Delta and
// x + Delta), and the shape diagram of the whole head. Text alternatives: the charts' own
// tables, the live summary line and the diagram, which is text.
import { barChart } from "../renderers/bar_chart.js";
import { vectorPlane } from "../ui/vector-plane.js";
import { shapeDiagram } from "../renderers/shape_diagram.js";
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { integerField, reseedButton, sentenceControls } from "../ui/sentence.js";

const NICE = [1, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50, 100];

/** The smallest "nice" extent that holds every coordinate (with a margin). */
function niceExtent(points) {
  const m = Math.max(1e-9, ...points.flatMap((p) => [Math.abs(p[0]), Math.abs(p[1])])) * 1.1;
  return NICE.find((n) => n >= m) ?? Math.ceil(m);
}

const pair = (p) => [Number(p[0]), Number(p[1])];

/** Token j's label on the plane: the first of the tokens whose arrows end at the same point
 * names them all ("The, the"), the others get none, so coincident labels do not overprint. */
function sharedLabel(values, tokens, j) {
  const same = (a, b) => Math.abs(a[0] - b[0]) < 1e-9 && Math.abs(a[1] - b[1]) < 1e-9;
  const group = values.flatMap((v, k) => (same(v, values[j]) ? [k] : []));
  if (group[0] !== j) return "";
  return [...new Set(group.map((k) => tokens[k]))].join(", ");
}

/** The steps of one head, from the shapes the lab computed (name -> shape). */
export function headSteps(shapes) {
  const s = Object.fromEntries(shapes.map((x) => [x.name, Array.from(x.shape)]));
  const sh = (name) => `(${s[name].join(" × ")})`;
  return [
    { name: "X", shape: s.X },
    { from: "X", op: `× W_Q ${sh("W_Q")}`, name: "Q", shape: s.Q },
    { from: "X", op: `× W_K ${sh("W_K")}`, name: "K", shape: s.K },
    { from: "X", op: `× W_V ${sh("W_V")}`, name: "V", shape: s.V },
    // no `from` here: "→ Q, K Q Kᵀ / √d_head →" would read garbled
    { op: "Q and K: Q Kᵀ / √d_head", name: "scores", shape: s.scores },
    { op: "softmax over keys", name: "pattern A", shape: s.pattern },
    { op: "A × V", name: "weighted values", shape: s["weighted values"] },
    { op: `× W_O ${sh("W_O")}`, name: "Δ", shape: s.delta },
    { op: "X + Δ", name: "updated X", shape: s.updated },
  ];
}

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const sentence = sentenceControls(kit, lab, { query: true });
  integerField(kit, lab, "d_head", "d_head");
  reseedButton(kit, lab, controls, "New random weights");
  body.append(controls);

  const summary = el("p", "attn-lab__summary");
  summary.setAttribute("aria-live", "polite");
  body.append(summary);

  const barsBox = el("div", "attn-lab__figure");
  body.append(barsBox);
  const bars = barChart(barsBox, {
    label: "The query's weights on each key (its row of the pattern)",
    valueLabel: "weight",
    format: (v) => v.toFixed(3),
    domain: [0, null],
  });

  const planeBox = el("div", "attn-lab__figure");
  body.append(planeBox);
  const planeLabel = (extent) =>
    `The plane through the origin, the query's embedding x and x + Δ (axes from −${extent} to ${extent}): values v_j W_O, their weighted sum Δ, and x moved to x + Δ`;
  let extent = 1;
  const plane = vectorPlane(planeBox, {
    label: planeLabel(extent),
    extent,
    step: 0.01,
    kindLabels: { value: "values v_j W_O", update: "update Δ", embedding: "x and x + Δ" },
  });

  const diagramBox = el("div");
  body.append(diagramBox);
  const diagram = shapeDiagram(diagramBox, {
    label: "The whole head, with the shape of every array (rows × columns)",
  });

  function render(res) {
    sentence.render(res);
    const t = res.tokens;
    const i = res.query;
    const row = Array.from(res.row, Number);
    const norm = (v) => Math.hypot(...Array.from(v, Number));
    summary.textContent =
      `Query “${t[i]}” (${i}): largest weight ${row[res.top_key].toFixed(2)} on “${t[res.top_key]}”, ` +
      `row entropy ${Number(res.entropy_bits).toFixed(2)} bits. |Δ| = ${norm(res.delta).toFixed(2)}, ` +
      `|x| = ${norm(res.x).toFixed(2)}. Rank of W_V W_O: ${res.value_rank} (d_model ${res.d_model}, d_head ${res.d_head}).`;
    bars.update({
      bars: row.map((w, j) => ({ label: `${j}: ${t[j]}`, value: w, highlight: j === res.top_key })),
    });

    const p = res.plane;
    const values = Array.from(p.values, pair);
    const x = pair(p.x);
    const delta = pair(p.delta);
    const updated = pair(p.updated);
    const need = niceExtent([...values, x, delta, updated]);
    // New axes only when the arrows leave them or shrink to under half of them (axes that
    // jump at every small change would be hard to read).
    if (need > extent || need < extent / 2) extent = need;
    plane.update({
      extent,
      label: planeLabel(extent),
      vectors: [
        ...values.map((v, j) => ({
          id: `v${j}`,
          to: v,
          label: t[j],
          drawnLabel: sharedLabel(values, t, j),
          kind: "value",
        })),
        { id: "delta0", to: delta, label: "Δ", kind: "update" },
        { id: "x", to: x, label: "x", kind: "embedding" },
        { id: "delta", from: x, to: updated, label: "+Δ", kind: "update", dashed: true },
        { id: "updated", to: updated, label: "x + Δ", kind: "embedding" },
      ],
    });
    diagram.update(headSteps(res.shapes));
  }

  return {
    render,
    controls,
    inputs: kit.inputs,
    markInvalid: kit.markInvalid,
    destroy: () => {
      bars.destroy();
      plane.destroy();
      diagram.destroy();
    },
  };
}
