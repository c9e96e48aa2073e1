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
    let uid = (mount.count = (mount.count || 0) + 1);
    const id = (name) => `attn-${lab.lab}-${uid}-${name}`;

    function field(name, label, input, extra) {
      const wrap = el("div", `attn-lab__field attn-lab__field--${name}`);
      const lbl = el("label", null, label);
      input.id = id(name);
      lbl.htmlFor = input.id;
      input.title = spec[name].description;
      wrap.append(lbl, input);
      if (extra) wrap.append(extra);
      controls.append(wrap);
      inputs[name] = input;
      return input;
    }

    // Sentence: whitespace-separated tokens.
    const tokens = field("tokens", "Tokens", el("input"));
    tokens.type = "text";
    tokens.value = lab.params.tokens.join(" ");
    tokens.spellcheck = false;
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

    // Temperature: a slider and a number box that mirror each other.
    const tSpec = spec.temperature;
    const slider = el("input");
    Object.assign(slider, { type: "range", min: tSpec.minimum, max: 3, step: 0.05, value: lab.params.temperature });
    slider.setAttribute("aria-label", "Temperature slider");
    const tBox = field("temperature", "Temperature", el("input"), slider);
    Object.assign(tBox, { type: "number", min: tSpec.minimum, max: tSpec.maximum, step: "any", value: lab.params.temperature });
    slider.addEventListener("input", () => {
      tBox.value = slider.value;
      lab.update({ temperature: Number(slider.value) });
    });
    tBox.addEventListener("change", () => numberChanged(tBox, "temperature", () => (slider.value = tBox.value)));

    // d_head.
    const dSpec = spec.d_head;
    const dHead = field("d_head", "d_head", el("input"));
    Object.assign(dHead, { type: "number", min: dSpec.minimum, max: dSpec.maximum, step: 1, value: lab.params.d_head });
    dHead.addEventListener("change", () => numberChanged(dHead, "d_head"));

    // Toggles.
    for (const [name, label] of [["causal", "Causal mask"], ["scale", "Divide by √d_head"]]) {
      const box = el("input");
      box.type = "checkbox";
      box.checked = lab.params[name];
      const wrap = el("div", `attn-lab__field attn-lab__field--check`);
      const lbl = el("label");
      box.id = id(name);
      lbl.htmlFor = box.id;
      lbl.append(box, document.createTextNode(` ${label}`));
      box.title = spec[name].description;
      wrap.append(lbl);
      controls.append(wrap);
      inputs[name] = box;
      box.addEventListener("change", () => lab.update({ [name]: box.checked }));
    }

    // New random vectors.
    const reseed = el("button", "md-button attn-lab__reseed", "New random vectors");
    reseed.type = "button";
    reseed.addEventListener("click", () => lab.update({ seed: (lab.params.seed + 1) % spec.seed.maximum }));
    controls.append(reseed);

    /** Send a typed number only if the browser's constraint check passes; else explain. */
    function numberChanged(input, name, after) {
      if (input.value === "" || !input.checkValidity()) {
        const why = input.validationMessage || "Enter a number.";
        lab.showError(`${name}: ${why} Allowed: ${spec[name].minimum} to ${spec[name].maximum}.`, name);
        return;
      }
      if (after) after();
      lab.update({ [name]: Number(input.value) });
    }

    const figure = el("div", "attn-lab__figure");
    const heatmap = new Heatmap(figure, {
      label: "Attention weights: one row per query token, one column per key token. Focus and use the arrow keys to read cells.",
      onSelect: (q, k) => describe(q, k),
    });
    const cellInfo = el("p", "attn-lab__cell");
    cellInfo.setAttribute("aria-live", "polite");
    cellInfo.textContent = "Click a cell, or focus the heatmap and use the arrow keys, to read its weight.";

    const details = el("details", "attn-lab__table");
    const summary = el("summary", null, "Table: the key each query attends to most, and its entropy");
    const table = el("table");
    const head = el("tr");
    for (const h of ["Query", "Most-attended key", "Weight", "Entropy (bits)", "Maximum (bits)"]) head.append(el("th", null, h));
    const thead = el("thead");
    thead.append(head);
    const tbody = el("tbody");
    table.append(thead, tbody);
    details.append(summary, table);
    body.append(controls, figure, cellInfo, details);

    let result = null;

    function describe(q, k) {
      const t = result.tokens;
      const w = result.weights[q][k];
      const logit = result.logits[q][k];
      cellInfo.textContent =
        isMasked(logit)
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
        for (const v of [token, t[k], fmt(res.weights[q][k], 3), fmt(res.entropy_bits[q], 3), fmt(res.max_entropy_bits[q], 3)]) tr.append(el("td", null, String(v)));
        return tr;
      });
      tbody.replaceChildren(...rows);
      if (heatmap.selected) describe(...heatmap.selected);
    }

    function markInvalid(param) {
      for (const [name, input] of Object.entries(inputs)) {
        if (name === param) input.setAttribute("aria-invalid", "true");
        else input.removeAttribute("aria-invalid");
      }
    }

    return { render, markInvalid, heatmap, inputs };
  }

  window.AttnLabs.widgets.attention_pattern = { mount };
})();
