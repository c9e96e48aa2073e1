// Widget for the attention_pattern lab (labs_py/attention_labs/labs/attention_pattern.py):
// controls for every parameter, the heatmap, the selected cell's numbers, and a table
// with each query's most-attended key and entropy (the text alternative of the heatmap).
(function () {
  "use strict";
  const { el, Heatmap } = window.AttnLabs;

  // Masked entries: null in the build's JSON, -Infinity in results from the worker.
  const isMasked = (x) => x === null || x === undefined || !Number.isFinite(x);

  function fmt(x, digits = 4) {
    return isMasked(x) ? "masked" : Number(x).toFixed(digits);
  }

  function mount(body, lab) {
    const spec = Object.fromEntries(lab.schema.map((p) => [p.name, p]));
    const controls = el("div", "attn-lab__controls");
    const inputs = {};
    mount.count = (mount.count || 0) + 1;
    const uid = mount.count;
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

    // Sentence: whitespace-separated tokens.
    const tokens = field("tokens", "Tokens", el("input"));
    tokens.type = "text";
    tokens.value = lab.params.tokens.join(" ");
    tokens.spellcheck = false;
    const tokSpec = spec.tokens;
    const hint = el(
      "span",
      "attn-lab__hint",
      `Separate tokens with spaces (up to ${tokSpec.max_items}, each up to ${tokSpec.max_chars} characters); press Enter to apply.`,
    );
    hint.id = id("tokens-hint");
    tokens.setAttribute("aria-describedby", hint.id);
    tokens.parentElement.after(hint);
    tokens.addEventListener("change", () => {
      lab.update({ tokens: tokens.value.trim().split(/\s+/).filter(Boolean) });
    });

    // Head style.
    const preset = field("preset", "Head style", el("select"));
    for (const choice of spec.preset.choices) {
      const option = el("option", null, spec.preset.labels[choice] || choice);
      option.value = choice;
      preset.append(option);
    }
    preset.value = lab.params.preset;
    preset.addEventListener("change", () => lab.update({ preset: preset.value }));

    // Temperature: a number box and a slider that mirror each other. The slider is
    // logarithmic over the whole allowed range, so 0.1 -> 1 is as long as 1 -> 10.
    const tSpec = spec.temperature;
    const slider = el("input");
    Object.assign(slider, {
      type: "range",
      min: Math.log10(tSpec.minimum),
      max: Math.log10(tSpec.maximum),
      step: 0.01,
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
    dHead.addEventListener("change", () => numberChanged(dHead, "d_head"));

    // Toggles.
    for (const [name, label] of [
      ["causal", "Causal mask"],
      ["scale", "Divide by √d_head"],
    ]) {
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
    }

    // New random vectors.
    const reseed = el("button", "md-button attn-lab__reseed", "New random vectors");
    reseed.type = "button";
    reseed.addEventListener("click", () =>
      lab.update({ seed: (lab.params.seed + 1) % spec.seed.maximum }),
    );
    controls.append(reseed);

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

    const figure = el("div", "attn-lab__figure");
    const heatmap = new Heatmap(figure, {
      label:
        "Attention weights: one row per query token, one column per key token. Focus and use the arrow keys to read cells.",
      onSelect: (q, k) => describe(q, k),
    });
    const cellInfo = el("p", "attn-lab__cell");
    cellInfo.setAttribute("aria-live", "polite");
    cellInfo.textContent =
      "Click a cell, or focus the heatmap and use the arrow keys, to read its weight.";

    const details = el("details", "attn-lab__table");
    const summary = el("summary", null, "Show as a table: each query's top key and entropy (bits)");
    const table = el("table", "attn-lab__rows"); // a class: Material leaves it unwrapped
    const head = el("tr");
    for (const [h, title] of [
      ["Query", "The query token (row of the heatmap)"],
      ["Top key", "The key this query gives the most weight to"],
      ["Weight", "That key's weight"],
      ["Entropy", "Entropy of the row, in bits"],
      ["Max", "The largest entropy possible for this row: log2 of the number of visible keys"],
    ]) {
      const th = el("th", null, h);
      th.title = title;
      th.scope = "col";
      head.append(th);
    }
    const thead = el("thead");
    thead.append(head);
    const tbody = el("tbody");
    table.append(thead, tbody);
    const scroller = el("div", "attn-lab__table-scroll");
    // Scrollable on a phone, so it must take keyboard focus and have a name.
    scroller.tabIndex = 0;
    scroller.setAttribute("role", "region");
    scroller.setAttribute("aria-label", "Table of each query's top key and entropy");
    scroller.append(table);
    details.append(summary, scroller);
    body.append(controls, figure, cellInfo, details);

    let result = null;

    function describe(q, k) {
      const t = result.tokens;
      const w = result.weights[q][k];
      const logit = result.logits[q][k];
      cellInfo.textContent = isMasked(logit)
        ? `Query “${t[q]}” (${q}) cannot see key “${t[k]}” (${k}): masked, weight 0.`
        : `Query “${t[q]}” (${q}) → key “${t[k]}” (${k}): weight ${fmt(w)}, logit ${fmt(logit, 3)}. ` +
          `Row entropy ${fmt(result.entropy_bits[q], 3)} bits of at most ${fmt(result.max_entropy_bits[q], 3)}.`;
    }

    function render(res) {
      result = res;
      const t = res.tokens;
      heatmap.setData({
        rowLabels: t,
        colLabels: t,
        values: res.weights,
        masked: Array.from(res.logits, (row) => Array.from(row, isMasked)),
        rowNotes: res.top_key.map((k, q) => `→ ${t[k]} · ${res.entropy_bits[q].toFixed(2)} bits`),
      });
      const rows = t.map((token, q) => {
        const tr = el("tr");
        const k = res.top_key[q];
        for (const v of [
          token,
          t[k],
          fmt(res.weights[q][k], 3),
          fmt(res.entropy_bits[q], 3),
          fmt(res.max_entropy_bits[q], 3),
        ])
          tr.append(el("td", null, String(v)));
        return tr;
      });
      tbody.replaceChildren(...rows);
      if (heatmap.selected) describe(...heatmap.selected);
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

    // `controls`: the lab shows its error message right after them, near the field at fault.
    return { render, markInvalid, heatmap, inputs, controls };
  }

  window.AttnLabs.widgets.attention_pattern = { mount };
})();
