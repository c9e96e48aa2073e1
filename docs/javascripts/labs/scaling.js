// Widget for the scaling lab (labs_py/attention_labs/labs/scaling.py): two line charts
// against d_head (log2 axis), scaled and unscaled, of the mean row entropy and of the
// median row's softmax Jacobian norm, with a marker at the chosen d_head and a live
// sentence reading both charts there. Each chart also renders a hidden table of its data
// (renderers/line_chart.js). Found by labs/controller.js from the lab's name.
import { lineChart } from "../renderers/line_chart.js";
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";

/** Series of [d_head, value] points from a result's list or Float64Array. */
const points = (xs, ys) => Array.from(xs, (x, i) => [x, Number(ys[i])]);

/**
 * Draw the lab's controls and charts into `body`.
 * @param {HTMLElement} body the lab's body element
 * @param {LabController} lab params, schema, update(changes), showError(message, param)
 */
export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const { spec, field } = kit;

  const seqLen = field("seq_len", "seq_len", el("input"));
  Object.assign(seqLen, {
    type: "number",
    min: spec.seq_len.minimum,
    max: spec.seq_len.maximum,
    step: 1,
    value: lab.params.seq_len,
  });
  seqLen.addEventListener("change", () => kit.numberChanged(seqLen, "seq_len"));

  // The marked width: the powers of two the lab plots (the initial result lists them).
  const dHead = field("d_head", "Mark d_head", el("select"));
  for (let d = spec.d_head.minimum; d <= spec.d_head.maximum; d *= 2) {
    const option = el("option", null, String(d));
    option.value = String(d);
    dHead.append(option);
  }
  dHead.value = String(lab.params.d_head);
  dHead.addEventListener("change", () => lab.update({ d_head: Number(dHead.value) }));

  const reseed = el("button", "md-button attn-lab__reseed", "New random vectors");
  reseed.type = "button";
  reseed.addEventListener("click", () =>
    lab.update({ seed: (lab.params.seed + 1) % spec.seed.maximum }),
  );
  controls.append(reseed);
  body.append(controls);

  const readout = el("p", "attn-lab__cell attn-scaling__readout");
  readout.setAttribute("aria-live", "polite");
  const entropyBox = el("div", "attn-lab__figure attn-scaling__chart");
  const gradientBox = el("div", "attn-lab__figure attn-scaling__chart");
  body.append(readout, entropyBox, gradientBox);

  const entropy = lineChart(entropyBox, {
    label: "Mean row entropy against d_head, with and without the square-root scale",
    xLabel: "d_head",
    yLabel: "mean row entropy (bits)",
    xLog2: true,
    yDomain: [0, null],
    format: (v) => v.toFixed(2),
  });
  const gradient = lineChart(gradientBox, {
    label: "Norm of the softmax's Jacobian, ‖J‖_F (median row), against d_head",
    xLabel: "d_head",
    yLabel: "‖J‖ of the median row",
    xLog2: true,
    yDomain: [0, null],
    format: (v) => v.toFixed(4),
  });

  function render(res) {
    const xs = res.d_heads;
    const marker = { x: res.marker.d_head, label: `d_head = ${res.marker.d_head}` };
    entropy.update({
      series: [
        { name: "scaled (÷√d_head)", points: points(xs, res.scaled.entropy_bits) },
        { name: "unscaled", points: points(xs, res.unscaled.entropy_bits), dashed: true },
      ],
      marker,
    });
    gradient.update({
      series: [
        { name: "scaled (÷√d_head)", points: points(xs, res.scaled.gradient) },
        { name: "unscaled", points: points(xs, res.unscaled.gradient), dashed: true },
      ],
      marker,
    });
    const i = res.marker.index;
    readout.textContent =
      `At d_head = ${res.marker.d_head}, over ${res.seq_len} random rows: mean entropy ` +
      `${Number(res.scaled.entropy_bits[i]).toFixed(2)} bits scaled, ` +
      `${Number(res.unscaled.entropy_bits[i]).toFixed(2)} unscaled (a uniform row has ` +
      `${res.max_entropy_bits.toFixed(2)}); Jacobian norm ‖J‖_F ` +
      `${Number(res.scaled.gradient[i]).toFixed(4)} scaled, ` +
      `${Number(res.unscaled.gradient[i]).toFixed(4)} unscaled.`;
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    inputs: kit.inputs,
    controls,
    readout,
    destroy() {
      entropy.destroy();
      gradient.destroy();
    },
  };
}
