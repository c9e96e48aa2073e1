// Widget for the induction_model lab (labs_py/attention_labs/labs/induction_model.py): the
// reader's letters (one token each) and a head picker; the head's pattern
// (ui/pattern-view.js), a live sentence with its scores and how often the model continues a
// repeat correctly, the model's next-letter guess under every letter, and every head's
// scores. Found by labs/controller.js by name.
import { controlKit } from "../ui/controls.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";
import { headPicker, scoresTable } from "../ui/head-scores.js";
import { patternView } from "../ui/pattern-view.js";

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const spec = kit.spec.tokens;
  const letters = kit.field("tokens", "Letters", el("input"));
  Object.assign(letters, { type: "text", spellcheck: false, value: lab.params.tokens.join("") });
  letters.setAttribute("autocapitalize", "characters");
  const hint = el(
    "span",
    "attn-lab__hint",
    `${spec.min_items} to ${spec.max_items} letters A to Z, one token each (spaces are ignored); press Enter to run.`,
  );
  hint.id = kit.id("tokens-hint");
  letters.setAttribute("aria-describedby", hint.id);
  letters.parentElement.after(hint);
  // One token per letter; anything else goes to Python, which names what is wrong.
  letters.addEventListener("change", () =>
    lab.update({ tokens: Array.from(letters.value.replace(/\s+/g, "")) }),
  );
  headPicker(kit, lab);
  kit.toggle("ablate", "Switch this head off");
  body.append(controls);

  const readout = el("p", "attn-lab__cell attn-induction__readout");
  readout.setAttribute("aria-live", "polite");
  body.append(readout);
  const view = patternView(body, {
    label:
      "The chosen head's attention on your letters: one row per query, one column per key. Focus and use the arrow keys to read cells.",
  });
  const guesses = dataTable({
    label: "The model's guess of the next letter after each letter",
    className: "attn-lab__rows attn-induction__guesses",
  });
  body.append(guesses.root);
  const table = scoresTable(body, "Every head's scores on your letters");

  function render(res) {
    const name = `Layer ${lab.params.layer}, head ${lab.params.head}${lab.params.ablate ? " (switched off: its pattern is shown, its output removed)" : ""}`;
    const copy =
      res.copy_accuracy === null
        ? "No letter repeats, so there is nothing to copy yet: repeat a stretch of letters."
        : `Where a repeated stretch continues, the model guesses the next letter right ${(100 * res.copy_accuracy).toFixed(0)}% of the time.`;
    readout.textContent =
      res.induction === null
        ? `${name}: previous-token score ${res.previous_token.toFixed(2)}. ${copy}`
        : `${name}: induction score ${res.induction.toFixed(2)}, previous-token score ${res.previous_token.toFixed(2)}. ${copy}`;
    view.render(res);
    const conf = Array.from(res.confidence, Number);
    const rows = [
      ["Letter", ...res.tokens],
      ["Next, guessed", ...res.predicted],
      ["Probability", ...conf.map((p) => p.toFixed(2))],
    ];
    guesses.fill({ caption: "Next letter, as the model guesses it", rows });
    table.render(res.heads, lab.params);
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    heatmap: view.heatmap,
    inputs: kit.inputs,
    controls,
    destroy() {
      view.destroy();
    },
  };
}
