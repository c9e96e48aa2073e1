// Widget for the concat_wo lab (labs_py/attention_labs/labs/concat_wo.py): for one query,
// the concatenation of the eight heads' outputs (a strip of eight blocks of d_head), the
// length of each head's contribution o^h W_O^h (bars), and the check that the eight
// contributions add up to the layer's output. Text alternatives: the chart's table, the
// strip's text and the summary line.
import { barChart } from "../renderers/bar_chart.js";
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { reseedButton, sentenceControls } from "../ui/sentence.js";

// Short names of what each head was built to do, so that a bar's label fits.
const SHORT = {
  "previous token": "previous",
  "first token": "first",
  "next token": "next",
  "random content": "random",
};

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const sentence = sentenceControls(kit, lab, { query: true });
  reseedButton(kit, lab, controls, "New random weights");
  body.append(controls);

  const stripLabel = el("p", "attn-lab__summary");
  stripLabel.style.margin = "0.4rem 0 0";
  body.append(stripLabel);
  const strip = el("ol", "attn-concat");
  strip.setAttribute("aria-label", "The concatenation: each head's block of the row");
  Object.assign(strip.style, {
    display: "flex",
    flexWrap: "wrap",
    listStyle: "none",
    padding: "0",
    margin: "0.4rem 0",
    gap: "2px",
    fontSize: "0.65rem",
  });
  body.append(strip);

  const summary = el("p", "attn-lab__summary");
  summary.setAttribute("aria-live", "polite");
  body.append(summary);
  const barsBox = el("div", "attn-lab__figure");
  body.append(barsBox);
  const bars = barChart(barsBox, {
    label: "Length of each head's contribution o^h W_O^h to the query's output",
    valueLabel: "length",
    format: (v) => v.toFixed(3),
    domain: [0, null],
  });

  function render(res) {
    sentence.render(res);
    const t = res.tokens;
    const norms = Array.from(res.norms, Number);
    const blocks = res.widths.map((w, h) => {
      const li = el("li", null, `h${h}: ${res.offsets[h]}–${res.offsets[h] + w - 1}`);
      Object.assign(li.style, {
        flex: `${w} 1 0`,
        minWidth: "3.4rem",
        margin: "0",
        padding: "0.15rem 0.25rem",
        border: "1px solid var(--md-default-fg-color--light)",
        textAlign: "center",
      });
      return li;
    });
    strip.replaceChildren(...blocks);
    stripLabel.textContent = `The concatenation: ${res.d_model} numbers, one block of ${res.widths[0]} per head (h = head, then the positions of its numbers).`;
    const biggest = norms.indexOf(Math.max(...norms));
    summary.textContent =
      `Query “${t[res.query]}”: ${res.widths.length} heads × ${res.widths[0]} = ${res.d_model} numbers concatenated. ` +
      `Largest contribution: head ${biggest} (${res.kinds[biggest]}). ` +
      `The contributions add up to the output: the largest difference is ${Number(res.sum_error).toExponential(1)}.`;
    bars.update({
      bars: norms.map((v, h) => ({
        label: `h${h} ${SHORT[res.kinds[h]] ?? res.kinds[h]}`,
        value: v,
        highlight: h === biggest,
      })),
    });
  }

  return {
    render,
    controls,
    inputs: kit.inputs,
    markInvalid: kit.markInvalid,
    destroy: () => bars.destroy(),
  };
}
