// Labelled controls bound to a lab's parameters, shared by the lab widgets (labs/*.js).
//
//   const kit = controlKit(lab, controlsElement);
//   kit.field(name, label, input, extra?)   labelled input with a page-unique id
//   kit.temperature()                       number box + logarithmic slider
//   kit.toggle(name, label)                 checkbox bound to a boolean parameter
//   kit.stepper(name, labels)               previous / slider / next over 0 … count − 1
//   kit.markInvalid(param, errorId)         aria-invalid on the control at fault
import { el } from "./dom.js";

let count = 0;
const LOG_STEP = 0.05; // the temperature slider's step, in log10(T)

/**
 * Controls for `lab` (a LabController: lab, schema, params, update, showError) appended
 * to `controls`; every control sends its parameter with lab.update on change.
 */
export function controlKit(lab, controls) {
  const spec = Object.fromEntries(lab.schema.map((p) => [p.name, p]));
  const inputs = {};
  count += 1;
  const uid = count;
  const id = (name) => `attn-${lab.lab}-${uid}-${name}`;

  function field(name, label, input, extra) {
    const wrap = el("div", `attn-lab__field attn-lab__field--${name}`);
    const lbl = el("label", null, label);
    input.id = id(name);
    lbl.htmlFor = input.id;
    input.title = spec[name].description;
    const row = el("div", "attn-lab__inputs");
    row.append(input);
    if (extra) row.append(extra);
    wrap.append(lbl, row);
    controls.append(wrap);
    inputs[name] = input;
    return input;
  }

  /** Send a typed number only if it is within the schema's limits; else explain. */
  function numberChanged(input, name, after) {
    // The input's own constraint check (min, max, step from the schema) decides; the
    // message is worded like the Python side's, whatever the browser's language.
    if (input.value === "" || !input.checkValidity()) {
      const p = spec[name];
      const kind = p.kind === "integer" ? "a whole number" : "a number";
      const got = input.value === "" ? "" : `, got ${input.value}`;
      lab.showError(`${name} must be ${kind} from ${p.minimum} to ${p.maximum}${got}`, name);
      return;
    }
    if (after) after();
    lab.update({ [name]: Number(input.value) });
  }

  // Temperature: a number box and a slider that mirror each other. The slider is
  // logarithmic over the whole allowed range, so 0.1 -> 1 is as long as 1 -> 10. A step of
  // LOG_STEP multiplies T by 1.12, so every arrow key press changes T as it is shown (two
  // significant digits); the slider's ends are multiples of the step, so T = 1 is on it.
  function temperature() {
    const tSpec = spec.temperature;
    const slider = el("input");
    Object.assign(slider, {
      type: "range",
      min: Math.ceil(Math.log10(tSpec.minimum) / LOG_STEP) * LOG_STEP,
      max: Math.floor(Math.log10(tSpec.maximum) / LOG_STEP) * LOG_STEP,
      step: LOG_STEP,
    });
    slider.value = Math.log10(lab.params.temperature);
    slider.setAttribute("aria-label", "Temperature (logarithmic slider)");
    const fromSlider = () =>
      Math.min(tSpec.maximum, Math.max(tSpec.minimum, Number((10 ** slider.value).toPrecision(2))));
    slider.setAttribute("aria-valuetext", String(lab.params.temperature));
    const tBox = field("temperature", "Temperature", el("input"), slider);
    Object.assign(tBox, {
      type: "number",
      min: tSpec.minimum,
      max: tSpec.maximum,
      step: "any",
      value: lab.params.temperature,
    });
    slider.addEventListener("input", () => {
      const t = fromSlider();
      tBox.value = t;
      slider.setAttribute("aria-valuetext", String(t));
      lab.update({ temperature: t });
    });
    tBox.addEventListener("change", () =>
      numberChanged(tBox, "temperature", () => {
        slider.value = Math.log10(Number(tBox.value));
        slider.setAttribute("aria-valuetext", tBox.value);
      }),
    );
    /** Show `t` in both without sending it (e.g. after a reset). */
    const show = (t) => {
      tBox.value = t;
      slider.value = Math.log10(t);
      slider.setAttribute("aria-valuetext", String(t));
    };
    return { box: tBox, slider, show };
  }

  function toggle(name, label) {
    const box = el("input");
    box.type = "checkbox";
    box.checked = lab.params[name];
    const wrap = el("div", `attn-lab__field attn-lab__field--check`);
    const lbl = el("label");
    box.id = id(name);
    lbl.htmlFor = box.id;
    lbl.append(box, el("span", null, label));
    box.title = spec[name].description;
    wrap.append(lbl);
    controls.append(wrap);
    inputs[name] = box;
    box.addEventListener("change", () => lab.update({ [name]: box.checked }));
    return box;
  }

  function markInvalid(param, errorId) {
    for (const [name, input] of Object.entries(inputs)) {
      if (name === param) {
        input.setAttribute("aria-invalid", "true");
        input.setAttribute("aria-errormessage", errorId);
      } else {
        input.removeAttribute("aria-invalid");
        input.removeAttribute("aria-errormessage");
      }
    }
  }

  /**
   * Step through 0 … count − 1: "previous" and "next" buttons around a slider, bound to the
   * integer parameter `name`. labels: {label, previous, next, className?}. Returns
   * {show(step, count, valueText)}, which render calls to mirror the result (the count can
   * change with other parameters; the ends disable their button).
   */
  function stepper(name, labels) {
    const box = el("div", `attn-lab__field ${labels.className ?? `attn-lab__field--${name}`}`);
    const lbl = el("label", null, labels.label);
    const slider = el("input");
    slider.type = "range";
    slider.min = 0;
    slider.id = id(name);
    lbl.htmlFor = slider.id;
    const prev = el("button", "md-button attn-lab__reseed", labels.previous);
    const next = el("button", "md-button attn-lab__reseed", labels.next);
    prev.type = next.type = "button";
    const row = el("div", "attn-lab__inputs");
    row.append(prev, slider, next);
    box.append(lbl, row);
    controls.append(box);
    inputs[name] = slider;
    let count = 1;
    const goTo = (s) => {
      const step = Math.max(0, Math.min(count - 1, s));
      slider.value = step;
      lab.update({ [name]: step });
    };
    slider.addEventListener("input", () => goTo(Number(slider.value)));
    prev.addEventListener("click", () => goTo(lab.params[name] - 1));
    next.addEventListener("click", () => goTo(lab.params[name] + 1));
    function show(step, n, valueText) {
      count = n;
      slider.max = n - 1;
      slider.value = step;
      slider.setAttribute("aria-valuetext", valueText);
      prev.disabled = step === 0;
      next.disabled = step === n - 1;
    }
    return { show };
  }

  return { spec, inputs, id, field, numberChanged, temperature, toggle, stepper, markInvalid };
}
