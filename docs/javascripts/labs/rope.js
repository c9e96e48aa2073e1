// Widget for the rope lab (labs_py/attention_labs/labs/rope.py): the score of a rotated
// query against a rotated key, against their offset, for the key at two absolute positions
// (two series of renderers/line_chart.js, the second dashed), and a live line with
// the largest difference between the curves.
import { lineChart } from "../renderers/line_chart.js";
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { integerField, reseedButton } from "../ui/sentence.js";

/** A difference: 0, or scientific notation below 1e-3. */
const fmtDiff = (x) => (x === 0 ? "0" : x < 1e-3 ? x.toExponential(1) : x.toFixed(3));

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  integerField(kit, lab, "d_head", "d_head");
  kit.inputs.d_head.step = 2;
  const b = kit.spec.base;
  const base = kit.field("base", "Base", el("input"));
  Object.assign(base, {
    type: "number",
    min: b.minimum,
    max: b.maximum,
    step: "any",
    value: lab.params.base,
  });
  base.addEventListener("change", () => kit.numberChanged(base, "base"));
  integerField(kit, lab, "key_a", "Key position, curve 1");
  integerField(kit, lab, "key_b", "Key position, curve 2");
  integerField(kit, lab, "max_offset", "Largest offset");
  kit.toggle("same_vector", "Key = query (k = q)");
  reseedButton(kit, lab, controls, "New random vectors");
  body.append(controls);

  const verdict = el("p", "attn-lab__cell");
  verdict.setAttribute("aria-live", "polite");
  const chartBox = el("div", "attn-rope__chart");
  // The y range starts at 0 while every score is non-negative (a range from 2 or 3 would
  // exaggerate the drops); with negative scores its lower end comes from the data: each
  // update says which (render).
  const chart = lineChart(chartBox, {
    label: "Score of the rotated query against the rotated key, against the offset m − n",
    xLabel: "offset m − n (query position − key position)",
    yLabel: "score q·k / √d_head",
    format: (v) => v.toFixed(4),
    xFormat: (v) => String(v),
  });
  body.append(verdict, chartBox);

  function render(res) {
    const offsets = Array.from(res.offsets, Number);
    const lowest = Math.min(...Array.from(res.score_a), ...Array.from(res.score_b));
    chart.update({
      yDomain: [lowest >= 0 ? 0 : null, null],
      series: [
        {
          name: `key at n = ${res.key_a}`,
          points: offsets.map((o, i) => [o, res.score_a[i]]),
        },
        {
          name: `key at n = ${res.key_b}`,
          points: offsets.map((o, i) => [o, res.score_b[i]]),
          dashed: true,
        },
      ],
    });
    verdict.textContent = `The two curves differ by at most ${fmtDiff(res.curve_diff)}: with the key at ${res.key_a} or at ${res.key_b}, the score is the same function of the offset. Without rotation the score would be ${res.unrotated.toFixed(3)} at every offset.`;
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    inputs: kit.inputs,
    controls,
    destroy: chart.destroy,
  };
}
