// Widget for the cache_size lab (labs_py/attention_labs/labs/cache_size.py): a decoder
// preset or your own model (n_layers, n_heads, d_head: editing one switches to it), MHA /
// GQA / MQA, a slider over the n_kv_heads that GQA allows (the divisors of n_heads), the
// context length (a box and a log2 slider), the number format and a sliding window that
// caps the cache; the formula with the numbers filled in, and one bar per kind of sharing
// (barChart).
import { barChart } from "../renderers/bar_chart.js";
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";

const int = (n) => Math.round(n).toLocaleString("en-US");

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const { spec, field } = kit;
  let shown = null;

  const select = (name, label) => {
    const s = field(name, label, el("select"));
    for (const choice of spec[name].choices) {
      const o = el("option", null, spec[name].labels[choice] || choice);
      o.value = choice;
      s.append(o);
    }
    s.value = lab.params[name];
    return s;
  };

  const preset = select("preset", "Model");
  // The model shown, as your own model's fields (so editing one starts from it).
  const ownFrom = (r) => ({ n_layers: r.n_layers, n_heads: r.n_heads, d_head: r.d_head });
  // A new model starts as published: its own n_kv_heads, MHA when it has no GQA, its
  // sliding window (Mistral-7B's 4,096) or none, and the context clamped to its maximum
  // (GPT-2 has 1,024 positions). Your own model starts from the model shown.
  preset.addEventListener("change", () => {
    if (preset.value === "custom")
      return lab.update({ preset: "custom", ...(shown ? ownFrom(shown) : {}) });
    const p = shown?.presets[preset.value];
    if (!p) return lab.update({ preset: preset.value });
    const gqa = p.n_kv_heads !== p.n_heads;
    lab.update({
      preset: preset.value,
      sharing: gqa ? "gqa" : "mha",
      n_kv_heads: p.n_kv_heads,
      seq_len: Math.min(lab.params.seq_len, p.context),
      sliding: p.window !== null,
      window: p.window ?? lab.params.window,
    });
  });
  // Your own model: typing a field switches to it. n_kv_heads must divide n_heads, so a
  // new n_heads brings it down to its largest divisor not above the old value.
  const own = {};
  for (const [name, label] of [
    ["n_layers", "n_layers"],
    ["n_heads", "n_heads (query heads)"],
    ["d_head", "d_head"],
  ]) {
    const p = spec[name];
    const box = field(name, label, el("input"));
    Object.assign(box, { type: "number", min: p.minimum, max: p.maximum, step: 1 });
    box.value = lab.params[name];
    box.addEventListener("change", () => {
      if (box.value === "" || !box.checkValidity()) return kit.numberChanged(box, name);
      const value = Number(box.value);
      const changes = { ...(shown ? ownFrom(shown) : {}), preset: "custom", [name]: value };
      if (name === "n_heads" && shown) {
        let kv = Math.min(shown.n_kv_heads, value);
        while (kv > 1 && value % kv !== 0) kv -= 1;
        changes.n_kv_heads = shown.n_kv_heads === shown.n_heads ? value : kv;
      }
      preset.value = "custom";
      lab.update(changes);
    });
    own[name] = box;
  }
  const sharing = select("sharing", "Key/value heads");
  sharing.addEventListener("change", () => {
    const changes = { sharing: sharing.value };
    // GQA chosen from MHA or MQA: start at the middle divisor, a real group size
    if (sharing.value === "gqa" && shown) {
      const c = shown.kv_choices;
      if (!c.includes(lab.params.n_kv_heads) || lab.params.n_kv_heads === shown.n_heads)
        changes.n_kv_heads = c[Math.floor((c.length - 1) / 2)];
    }
    lab.update(changes);
  });

  // n_kv_heads: a slider over the divisors of n_heads (its value is an index).
  const kvOut = el("output", null, String(lab.params.n_kv_heads));
  const kvSlider = field("n_kv_heads", "n_kv_heads (groups, with GQA)", el("input"), kvOut);
  kvSlider.type = "range";
  kvSlider.min = 0;
  kvSlider.step = 1;
  kvOut.htmlFor = kvSlider.id;
  kvSlider.addEventListener("input", () => {
    const kv = shown.kv_choices[Number(kvSlider.value)];
    kvOut.textContent = String(kv);
    kvSlider.setAttribute("aria-valuetext", `${kv} key/value heads`);
    lab.update({ sharing: "gqa", n_kv_heads: kv });
  });

  // seq_len: a box and a slider on a log2 scale, mirroring each other.
  const pSeq = spec.seq_len;
  const seqSlider = el("input");
  Object.assign(seqSlider, {
    type: "range",
    min: 0,
    max: Math.log2(pSeq.maximum),
    step: 1,
    value: Math.round(Math.log2(lab.params.seq_len)),
  });
  seqSlider.setAttribute("aria-label", "seq_len (log2 slider: powers of two)");
  const seqBox = field("seq_len", "seq_len (context length, tokens)", el("input"), seqSlider);
  Object.assign(seqBox, { type: "number", min: pSeq.minimum, max: pSeq.maximum, step: 1 });
  seqBox.value = lab.params.seq_len;
  seqSlider.addEventListener("input", () => {
    const n = 2 ** Number(seqSlider.value);
    seqBox.value = n;
    seqSlider.setAttribute("aria-valuetext", `${int(n)} tokens`);
    lab.update({ seq_len: n });
  });
  seqBox.addEventListener("change", () => kit.numberChanged(seqBox, "seq_len"));

  const dtype = select("dtype", "Number format");
  dtype.addEventListener("change", () => lab.update({ dtype: dtype.value }));

  // The sliding window: a toggle and its size (the cache holds min(seq_len, window)).
  const sliding = kit.toggle("sliding", "Sliding window (caps the cache)");
  const pWin = spec.window;
  const windowBox = field("window", "window (tokens)", el("input"));
  Object.assign(windowBox, { type: "number", min: pWin.minimum, max: pWin.maximum, step: 1 });
  windowBox.value = lab.params.window;
  windowBox.disabled = !lab.params.sliding; // render keeps it so: the window needs sliding on
  windowBox.addEventListener("change", () => kit.numberChanged(windowBox, "window"));
  body.append(controls);

  const formula = el("p", "attn-lab__summary");
  formula.setAttribute("aria-live", "polite");
  const summary = el("p", "attn-lab__cell");
  const note = el("p", "attn-lab__cell"); // when seq_len is past the model's context
  note.setAttribute("aria-live", "polite");
  const windowNote = el("p", "attn-lab__cell"); // when the window caps the cache
  windowNote.setAttribute("aria-live", "polite");
  const chartBox = el("div", "attn-cache__chart");
  body.append(formula, summary, windowNote, note, chartBox);
  const bars = barChart(chartBox, {
    label: "Key/value cache of one sequence with MHA, GQA and MQA, in bytes",
    valueLabel: "bytes",
    format: (v) => readable(v),
  });

  function render(r) {
    shown = r;
    preset.value = r.preset;
    sharing.value = r.sharing;
    dtype.value = r.dtype;
    const i = r.kv_choices.indexOf(r.n_kv_heads);
    kvSlider.max = r.kv_choices.length - 1;
    kvSlider.value = i;
    kvOut.textContent = String(r.n_kv_heads);
    kvSlider.setAttribute("aria-valuetext", `${r.n_kv_heads} key/value heads`);
    // The groups slider only means something with GQA: disabled (and said so) otherwise.
    kvSlider.disabled = r.sharing !== "gqa";
    kvSlider.title = kvSlider.disabled ? "Choose GQA to set the number of groups" : "";
    for (const [name, box] of Object.entries(own)) box.value = r[name];
    sliding.checked = r.sliding;
    windowBox.value = r.window ?? lab.params.window;
    windowBox.disabled = !r.sliding;
    windowBox.title = windowBox.disabled ? "Turn the sliding window on to set it" : "";
    seqBox.value = r.seq_len;
    seqSlider.value = Math.round(Math.log2(r.seq_len));
    seqSlider.setAttribute("aria-valuetext", `${int(r.seq_len)} tokens`);
    // With a window the cache holds min(seq_len, window) tokens: the formula says which.
    const tokens =
      r.window === null
        ? `${int(r.cached_tokens)} tokens`
        : `min(${int(r.seq_len)}, window ${int(r.window)}) = ${int(r.cached_tokens)} tokens`;
    formula.textContent =
      `2 × ${r.n_layers} layer${r.n_layers > 1 ? "s" : ""} × ${r.n_kv_heads} key/value head${r.n_kv_heads > 1 ? "s" : ""} × ` +
      `${r.d_head} (d_head) × ${tokens} × ${r.bytes_per_number} byte${r.bytes_per_number > 1 ? "s" : ""} ` +
      `= ${int(r.bytes)} bytes ≈ ${r.readable}`;
    const group =
      r.group > 1
        ? `each key/value head serves ${r.group} of the ${r.n_heads} query heads`
        : `each of the ${r.n_heads} query heads has its own key/value head`;
    let published = "";
    if (r.preset !== "custom") {
      published =
        r.published_kv_heads === r.n_heads
          ? ` ${r.label} as published uses MHA`
          : ` ${r.label} as published uses GQA with ${r.published_kv_heads} key/value heads`;
      if (r.published_window !== null)
        published += ` and a sliding window of ${int(r.published_window)} tokens`;
      published += ".";
    }
    const weights =
      r.weights_readable === null
        ? ""
        : ` The model's weights in the same format take ${r.weights_readable}.`;
    summary.textContent =
      `${r.label}, ${r.sharing.toUpperCase()}: ${group}. ${r.per_token_readable} per cached token (${int(r.per_token)} bytes).` +
      `${weights}${published}`;
    note.textContent = r.context_note || "";
    note.hidden = !r.context_note;
    windowNote.textContent = r.window_note || "";
    windowNote.hidden = !r.window_note;
    bars.update({
      bars: r.compare.map((c) => ({
        label: `${c.name.toUpperCase()} (${c.n_kv_heads} KV head${c.n_kv_heads > 1 ? "s" : ""})`,
        value: c.bytes,
        highlight: c.name === r.sharing,
      })),
    });
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    inputs: kit.inputs,
    controls,
    destroy: () => bars.destroy(),
  };
}

/** Bytes with a decimal unit and three significant figures, as cache_size.readable_bytes. */
export function readable(n) {
  for (const [size, unit] of [
    [1e12, "TB"],
    [1e9, "GB"],
    [1e6, "MB"],
    [1e3, "kB"],
  ]) {
    if (n >= size) {
      const v = n / size;
      const d = v < 10 ? 2 : v < 100 ? 1 : 0;
      if (Number(v.toFixed(d)) >= 1000 && unit !== "TB") return readable(1000 * size);
      return `${v.toFixed(d)} ${unit}`;
    }
  }
  return `${Math.round(n)} B`;
}
