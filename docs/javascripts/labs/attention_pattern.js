// Widget for the attention_pattern lab (labs_py/attention_labs/labs/attention_pattern.py):
// controls for every parameter, the heatmap, the selected cell's numbers, and a table
// with each query's most-attended key and entropy (the text alternative of the heatmap).
// The shared pieces are in ui/controls.js and ui/pattern-view.js. Found by labs/controller.js
// from the lab's name: labs/<name>.js exports mount.
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { patternView } from "../ui/pattern-view.js";
import { tokensField } from "../ui/sentence.js";

/**
 * Draw the lab's controls into `body` and return what the controller drives.
 * @param {HTMLElement} body the lab's body element
 * @param {LabController} lab params, schema, update(changes), showError(message, param)
 * @returns {{render(result), markInvalid(param, errorId), controls: HTMLElement,
 *   inputs: Object<string, HTMLElement>, heatmap, destroy()}}
 */
export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const { spec, field } = kit;

  // Sentence: whitespace-separated tokens.
  tokensField(kit, lab);

  // Head style.
  const preset = field("preset", "Head style", el("select"));
  for (const choice of spec.preset.choices) {
    const option = el("option", null, spec.preset.labels[choice] || choice);
    option.value = choice;
    preset.append(option);
  }
  preset.value = lab.params.preset;
  preset.addEventListener("change", () => lab.update({ preset: preset.value }));

  kit.temperature();

  // d_head.
  const dSpec = spec.d_head;
  const dHead = field("d_head", "d_head", el("input"));
  Object.assign(dHead, {
    type: "number",
    min: dSpec.minimum,
    max: dSpec.maximum,
    step: 1,
    value: lab.params.d_head,
  });
  dHead.addEventListener("change", () => kit.numberChanged(dHead, "d_head"));

  kit.toggle("causal", "Causal mask");
  kit.toggle("scale", "Divide by √d_head");

  // New random vectors.
  const reseed = el("button", "md-button attn-lab__reseed", "New random vectors");
  reseed.type = "button";
  reseed.addEventListener("click", () =>
    lab.update({ seed: (lab.params.seed + 1) % spec.seed.maximum }),
  );
  controls.append(reseed);

  body.append(controls);
  const view = patternView(body, {
    label:
      "Attention weights: one row per query token, one column per key token. Focus and use the arrow keys to read cells.",
  });

  // `controls`: the lab shows its error message right after them, near the field at fault.
  return {
    render: view.render,
    markInvalid: kit.markInvalid,
    heatmap: view.heatmap,
    inputs: kit.inputs,
    controls,
    destroy: view.destroy,
  };
}
