// Pieces shared by the lab widgets (widgets/*.js): labelled controls bound to a lab, and
// the view of a [query, key] pattern (heatmap, the selected cell's numbers, a table).
//
//   const kit = AttnLabs.parts.controlKit(lab, controlsElement);
//   kit.field(name, label, input, extra?)   labelled input with a page-unique id
//   kit.temperature()                       number box + logarithmic slider
//   kit.toggle(name, label)                 checkbox bound to a boolean parameter
//   kit.markInvalid(param, errorId)         aria-invalid on the control at fault
//   const view = AttnLabs.parts.patternView(body, {label});
//   view.render(result)                     result: tokens, weights, logits | masked, ...
(function () {
  "use strict";
  const { el, Heatmap } = window.AttnLabs;

  // Masked entries: null in the build's JSON, -Infinity in results from the worker.
  const isMasked = (x) => x === null || x === undefined || !Number.isFinite(x);

  function fmt(x, digits = 4) {
    return isMasked(x) ? "masked" : Number(x).toFixed(digits);
  }

  let count = 0;

  function controlKit(lab, controls) {
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
    // logarithmic over the whole allowed range, so 0.1 -> 1 is as long as 1 -> 10.
    function temperature() {
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
        Math.min(
          tSpec.maximum,
          Math.max(tSpec.minimum, Number((10 ** slider.value).toPrecision(2))),
        );
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

    return { spec, inputs, id, field, numberChanged, temperature, toggle, markInvalid };
  }

  /**
   * Heatmap + the selected cell's numbers + a table of each query's top key (the text
   * alternative), appended to `body`. render(res) takes tokens, weights [query][key],
   * top_key, and optionally logits (masked: null or -Infinity), masked [query][key]
   * booleans (when there are no logits), entropy_bits and max_entropy_bits (null: unknown).
   */
  function patternView(body, { label }) {
    const figure = el("div", "attn-lab__figure");
    const heatmap = new Heatmap(figure, {
      label,
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
    body.append(figure, cellInfo, details);

    let result = null;
    const masked = (q, k) =>
      result.logits ? isMasked(result.logits[q][k]) : Boolean(result.masked?.[q][k]);
    const known = (a, q) => a && !isMasked(a[q]);

    function describe(q, k) {
      const t = result.tokens;
      const w = result.weights[q][k];
      if (masked(q, k)) {
        cellInfo.textContent = `Query “${t[q]}” (${q}) cannot see key “${t[k]}” (${k}): masked, weight 0.`;
        return;
      }
      let text = `Query “${t[q]}” (${q}) → key “${t[k]}” (${k}): weight ${fmt(w)}`;
      if (result.logits) text += `, logit ${fmt(result.logits[q][k], 3)}`;
      text += ".";
      if (known(result.entropy_bits, q))
        text += ` Row entropy ${fmt(result.entropy_bits[q], 3)} bits of at most ${fmt(result.max_entropy_bits[q], 3)}.`;
      cellInfo.textContent = text;
    }

    function render(res) {
      result = res;
      const t = res.tokens;
      const entropy = (q) =>
        known(res.entropy_bits, q) ? ` · ${res.entropy_bits[q].toFixed(2)} bits` : "";
      heatmap.setData({
        rowLabels: t,
        colLabels: t,
        values: res.weights,
        masked: Array.from(res.weights, (row, q) => Array.from(row, (_, k) => masked(q, k))),
        rowNotes: res.top_key.map((k, q) => `→ ${t[k]}${entropy(q)}`),
      });
      const rows = t.map((token, q) => {
        const tr = el("tr");
        const k = res.top_key[q];
        for (const v of [
          token,
          t[k],
          fmt(res.weights[q][k], 3),
          known(res.entropy_bits, q) ? fmt(res.entropy_bits[q], 3) : "—",
          known(res.max_entropy_bits, q) ? fmt(res.max_entropy_bits[q], 3) : "—",
        ])
          tr.append(el("td", null, String(v)));
        return tr;
      });
      tbody.replaceChildren(...rows);
      if (heatmap.selected) describe(...heatmap.selected);
    }

    return { render, heatmap, figure, cellInfo, details, destroy: () => heatmap.destroy() };
  }

  window.AttnLabs.parts = { isMasked, fmt, controlKit, patternView };
})();
