// Widget for the real_head lab (labs_py/attention_labs/labs/real_head.py): one real head's
// pattern, first as the model's stored weights, then recomputed by Python from the head's
// own queries and keys with the scaling toggle, temperature and causal mask.
//
// realHeadData(asset, qkvEntry, recompute) builds the data for mountLab (labs/controller.js)
// from a loaded asset (maps.js loadAsset), one item of asset.qkv.heads and the
// page's recompute config ({lab, schema, runtime}). Its initial result is the stored
// pattern (decodeHead): no attention math here. The explorer imports this module by the
// name in its config (recompute.lab), as the controller does for every lab.
import { decodeHead } from "../maps.js";
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { patternView } from "../ui/pattern-view.js";

// Stored weights are bytes / 255: a recompute within this of them is the model's own
// pattern (plus a little for q and k being float32).
const STORED_TOLERANCE = 1 / 255 + 1e-4;

/** The lab widget (see labs/attention_pattern.js for the shape of what it returns). */
export function mount(body, lab) {
  const modelCausal = Boolean(lab.params.causal);
  const info = lab.info || {};

  const source = el("p", "attn-real-head__source");
  source.setAttribute("aria-live", "polite");
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const scale = kit.toggle("scale", "Divide by √d_head");
  const temperature = kit.temperature();
  const causal = kit.toggle("causal", "Causal mask");
  const reset = el("button", "md-button attn-lab__reseed", "The model's settings");
  reset.type = "button";
  reset.title = `Scaling on, temperature 1, ${modelCausal ? "causal mask" : "no mask"}, as the model computes it`;
  reset.addEventListener("click", () => {
    scale.checked = true;
    causal.checked = modelCausal;
    temperature.show(1);
    lab.update({ scale: true, temperature: 1, causal: modelCausal });
  });
  controls.append(reset);
  const summary = el("p", "attn-real-head__summary");
  summary.setAttribute("aria-live", "polite");
  body.append(source, controls);

  const where = info.layer === undefined ? "" : ` of layer ${info.layer}, head ${info.head}`;
  const view = patternView(body, {
    label: `Attention weights${where}: one row per query token, one column per key token. Focus and use the arrow keys to read cells.`,
  });
  view.figure.before(summary);

  const isOwn = (p) => p.scale && Number(p.temperature) === 1 && p.causal === modelCausal;

  function settings(p) {
    const bits = [
      p.scale ? "divided by √d_head" : "not divided by √d_head",
      `temperature ${p.temperature}`,
      p.causal ? "causal mask" : "no mask",
    ];
    return bits.join(", ");
  }

  function render(res) {
    const stored = Boolean(res.stored);
    body.dataset.source = stored ? "stored" : "python";
    source.textContent = stored
      ? "Showing the model's stored weights (precomputed) until Python has recomputed them from this head's queries and keys."
      : `Showing Python's recompute from this head's queries and keys: ${settings(lab.params)}.`;
    let text = `Mean entropy ${Number(res.mean_entropy_bits).toFixed(2)} bits per query`;
    const most = Math.max(...Array.from(res.max_entropy_bits, Number));
    if (Number.isFinite(most)) text += ` (at most ${most.toFixed(2)})`;
    text += ".";
    const diff = res.stored_max_abs_diff;
    if (!stored && diff !== null && diff !== undefined) {
      text += ` Largest difference from the model's stored weights: ${diff.toFixed(4)}`;
      if (diff > STORED_TOLERANCE) text += ": this is no longer the pattern the model computes.";
      else if (isOwn(lab.params))
        text += ", within their 1/255 ≈ 0.004 rounding: this is the model's own pattern.";
      else
        text +=
          ", within their 1/255 rounding, although the settings differ from the model's: " +
          "this head is so sharp that each row stays on the same key. Try a higher temperature, or another head.";
    }
    summary.textContent = text;
    view.render(res);
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    heatmap: view.heatmap,
    inputs: kit.inputs,
    controls,
    destroy: view.destroy,
  };
}

/**
 * Data for mountLab(root, data) that recomputes one real head.
 * @param asset a loaded asset (maps.js loadAsset)
 * @param qkvEntry one item of asset.qkv.heads: {layer, head, reason, q, k, v}
 * @param recompute {lab: "real_head", schema, runtime}, as in the page's config
 * @returns {{lab, schema, runtime, params, initial: {result}, info}}
 */
export function realHeadData(asset, qkvEntry, recompute) {
  if (recompute?.lab !== "real_head")
    throw new Error("this page has no real_head lab to recompute heads with");
  const { layer, head } = qkvEntry;
  const n = asset.seq_len;
  const causal = Boolean(asset.model.causal);
  const flat = decodeHead(asset, layer, head); // [query * n + key]
  const weights = Array.from({ length: n }, (_, q) => flat.subarray(q * n, (q + 1) * n));
  const topKey = weights.map((row) => row.indexOf(Math.max(...row))); // earliest on ties
  const visible = (q) => (causal ? q + 1 : n);
  return {
    lab: recompute.lab,
    schema: recompute.schema,
    runtime: recompute.runtime,
    params: {
      tokens: asset.tokens.text,
      q: qkvEntry.q,
      k: qkvEntry.k,
      d_head: asset.qkv.d_head,
      scale: true,
      temperature: 1,
      causal,
      stored: asset.attention.data[layer][head],
    },
    initial: {
      result: {
        stored: true, // the widget says so until Python's first result replaces it
        tokens: asset.tokens.text,
        weights,
        logits: null,
        masked: weights.map((row, q) => Array.from(row, (_, k) => causal && k > q)),
        entropy_bits: null, // per query: unknown until Python computes it
        max_entropy_bits: weights.map((_, q) => Math.log2(visible(q))),
        top_key: topKey,
        mean_entropy_bits: asset.head_stats.entropy_bits[layer][head],
        stored_max_abs_diff: 0,
      },
    },
    info: { layer, head, reason: qkvEntry.reason, model: asset.model.id },
  };
}
