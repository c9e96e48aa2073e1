// Widget for the induction_training lab (labs_py/attention_labs/labs/induction_training.py):
// a slider over the saved training steps and a head picker; the loss curves and the
// head's two scores over training, both with the chosen step marked (lineChart), a live
// sentence reading them, the head's map of the probe sequence at that step
// (ui/pattern-view.js) and a table of every head's scores. Found by name.
import { lineChart } from "../renderers/line_chart.js";
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { patternView } from "../ui/pattern-view.js";
import { headPicker, scoresTable } from "../ui/head-scores.js";

const series = (xs, ys) => Array.from(xs, (x, i) => [x, Number(ys[i])]);

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const out = el("output", "attn-induction__step");
  const slider = kit.field("checkpoint", "Training step", el("input"), out);
  Object.assign(slider, {
    type: "range",
    min: kit.spec.checkpoint.minimum,
    max: kit.spec.checkpoint.maximum,
    step: 1,
    value: lab.params.checkpoint,
  });
  out.htmlFor = slider.id;
  let mapSteps = [];
  const showStep = () => {
    const step = mapSteps[Number(slider.value)];
    out.textContent = step === undefined ? "" : `step ${step}`;
    slider.setAttribute("aria-valuetext", out.textContent);
  };
  slider.addEventListener("input", () => {
    showStep();
    lab.update({ checkpoint: Number(slider.value) });
  });
  headPicker(kit, lab);
  body.append(controls);

  const readout = el("p", "attn-lab__cell attn-induction__readout");
  readout.setAttribute("aria-live", "polite");
  const lossBox = el("div", "attn-lab__figure attn-induction__chart");
  const scoreBox = el("div", "attn-lab__figure attn-induction__chart");
  body.append(readout, lossBox, scoreBox);
  const loss = lineChart(lossBox, {
    label: "Loss during training: on the repeated letters and on the random ones",
    xLabel: "training step",
    yLabel: "loss (nats)",
    yDomain: [0, null],
    format: (v) => v.toFixed(3),
  });
  const scores = lineChart(scoreBox, {
    label: "The chosen head's induction and previous-token scores during training",
    xLabel: "training step",
    yLabel: "score",
    yDomain: [0, 1],
    format: (v) => v.toFixed(2),
  });
  const view = patternView(body, {
    label:
      "The chosen head's attention on the probe sequence (12 letters, then the same 12) at the chosen step: one row per query, one column per key. Focus and use the arrow keys to read cells.",
  });
  const table = scoresTable(body, "Every head's scores at this step");

  function render(res) {
    mapSteps = Array.from(res.map_steps, Number);
    slider.value = lab.params.checkpoint;
    showStep();
    const name = `layer ${lab.params.layer}, head ${lab.params.head}`;
    const i = Array.from(res.steps, Number).indexOf(res.step);
    const ind = Number(res.induction[i]);
    const formed = res.formed_at_step;
    readout.textContent =
      `At step ${res.step}, ${name} puts ${(100 * ind).toFixed(0)}% of its weight on the ` +
      `letter after the earlier copy (induction score ${ind.toFixed(2)}); loss on the ` +
      `repeated letters ${Number(res.loss_repeated[i]).toFixed(2)} nats. ` +
      (formed === null
        ? "No head crosses 0.5 in this run."
        : `The first head above ${res.threshold} appears at step ${formed}.`);
    const marker = { x: res.step, label: `step ${res.step}` };
    loss.update({
      series: [
        { name: "repeated letters", points: series(res.steps, res.loss_repeated) },
        { name: "random letters", points: series(res.steps, res.loss_random), dashed: true },
      ],
      marker,
    });
    scores.update({
      series: [
        { name: "induction score", points: series(res.steps, res.induction) },
        {
          name: "previous-token score",
          points: series(res.steps, res.previous_token),
          dashed: true,
        },
      ],
      marker,
    });
    view.render(res);
    table.render(res.heads, lab.params);
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    heatmap: view.heatmap,
    inputs: kit.inputs,
    controls,
    destroy() {
      loss.destroy();
      scores.destroy();
      view.destroy();
    },
  };
}
