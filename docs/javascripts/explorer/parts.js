// Pieces shared by the explorer's views: the head statistics each asset stores, number
// and model-name formatting, and its labelled pickers and buttons.
import { el } from "../ui/dom.js";

// Head statistics stored in each asset (computed by labs_py/attention_labs/maps.py,
// head_statistics). `help(asset)` says what the number measures there.
export const STATS = {
  previous_token: {
    label: "Previous-token share",
    help: () => "mean weight a query gives the token just before it",
    high: true,
  },
  first_token: {
    label: "First-token share (attention sink)",
    help: (asset) =>
      `mean weight a query gives the first token, “${asset.tokens.text[0]}”; ` +
      "a large share is a resting place for weight (an attention sink)",
    high: true,
  },
  self: { label: "Self share", help: () => "mean weight a query gives itself", high: true },
  induction: {
    label: "Induction score",
    help: (asset) =>
      "at a token seen before, the weight on the token that followed its earlier copy " +
      `(the copying step of an induction head), averaged over the ${repeats(asset).queries} ` +
      "tokens of this sentence that repeat",
    high: true,
  },
  entropy_bits: {
    label: "Mean entropy (bits)",
    help: () => "how spread out each row is: 0 bits looks at one key; more bits, more keys",
    high: false,
  },
};

// The induction score means something only on a sequence of tokens that repeats: a lone
// repeated word ("the" twice) gives a number from one or two queries, mostly noise.
export const MIN_REPEAT = 3;

/**
 * How the tokens of `asset` repeat (the same rule as real_maps.induction_targets and
 * real_maps.longest_repeat: special tokens never count). Returns {queries, longest}:
 * the number of queries whose token appeared earlier (those the induction score averages
 * over), and the length of the longest run of tokens that occurs twice.
 */
export function repeats(asset) {
  const { ids, special } = asset.tokens;
  const n = ids.length;
  let queries = 0;
  let longest = 0;
  for (let q = 0; q < n; q++) {
    if (special[q]) continue;
    let seen = false;
    for (let k = 0; k < q; k++) {
      if (special[k] || ids[k] !== ids[q]) continue;
      seen = true;
      let run = 0;
      while (q + run < n && ids[k + run] === ids[q + run] && !special[k + run] && !special[q + run])
        run++;
      if (run > longest) longest = run;
    }
    if (seen) queries++;
  }
  return { queries, longest };
}

/**
 * Why the statistic `key` is not shown for `asset`, or null when its stored values mean
 * something: the induction score needs a repeated run of MIN_REPEAT tokens or more.
 */
export function statUnavailable(asset, key) {
  const values = asset.head_stats[key];
  if (key === "induction") {
    const r = repeats(asset);
    if (values === null || r.queries === 0)
      return "not measured: no token of this sentence appears twice";
    if (r.longest < MIN_REPEAT)
      return (
        `not measured: no sequence of ${MIN_REPEAT} or more tokens repeats in this sentence ` +
        `(only ${r.longest === 1 ? "single tokens" : "pairs of tokens"} repeat, at ` +
        `${r.queries} ${r.queries === 1 ? "query" : "queries"}: too few for a fair score). ` +
        "Pick a sentence that repeats, such as “induction-random”"
      );
    return null;
  }
  return values === null || values === undefined ? "not available for this sentence" : null;
}

export const HINT =
  "Point at a cell, or focus the heatmap and use the arrow keys, to read its weight.";
export const fmt = (x, digits = 3) => (x === null || x === undefined ? "n/a" : x.toFixed(digits));

/**
 * The name a reader sees for a model: the last part of its id, and, when the weights are
 * not the original checkpoint's, how they were made: a GGUF file's quantisation type
 * (the part before ".gguf", e.g. "SmolLM2-135M-Instruct (Q4_1, dequantised)").
 * `model`: an index or asset model entry, {id, source?, weights_files?}.
 */
export function modelLabel(model) {
  const name = model.id.split("/").pop();
  const where = [...(model.weights_files || []), model.source || ""].join(" ");
  const quant = /\.([A-Za-z0-9_]+)\.gguf\b/.exec(where)?.[1];
  return quant && /^I?Q\d\w*$/i.test(quant) ? `${name} (${quant}, dequantised)` : name;
}

/**
 * The key/value head query head `head` reads with grouped-query attention (Ainslie et al.
 * 2023), and the query heads that share it: {kv, members}; null where every query head has
 * its own keys and values. `model.kv_heads` (the asset's map, query head -> key/value head)
 * is used when present; else consecutive groups of n_heads / n_kv_heads, as Llama's
 * repeat_kv groups them.
 */
export function kvGroup(model, head) {
  const n = model.n_heads;
  const nKv = model.n_kv_heads ?? n;
  if (!(nKv < n)) return null;
  const map = model.kv_heads ?? Array.from({ length: n }, (_, h) => Math.floor(h / (n / nKv)));
  const kv = map[head];
  const members = [];
  map.forEach((k, h) => {
    if (k === kv) members.push(h);
  });
  return { kv, members };
}

/** "heads 3 and 5", "heads 3, 4 and 5" */
export function headList(heads) {
  const names = heads.map(String);
  const last = names.pop();
  return `head${names.length ? "s" : ""} ${names.length ? `${names.join(", ")} and ` : ""}${last}`;
}

/** A labelled <select> of `options` ([value, text] pairs); returns {wrap, select}. */
export function select(label, id, options) {
  const wrap = el("div", "attn-map__field");
  const lbl = el("label", null, label);
  const s = el("select");
  s.id = id;
  lbl.htmlFor = id;
  for (const [value, text] of options) {
    const o = el("option", null, text);
    o.value = String(value);
    s.append(o);
  }
  wrap.append(lbl, s);
  return { wrap, select: s };
}

/** A labelled checkbox appended to `parent`; returns the input. */
export function checkbox(parent, id, label, onChange) {
  const wrap = el("div", "attn-map__field attn-map__field--check");
  const lbl = el("label");
  const box = el("input");
  box.type = "checkbox";
  box.id = id;
  lbl.htmlFor = id;
  lbl.append(box, el("span", null, label));
  box.addEventListener("change", onChange);
  wrap.append(lbl);
  parent.append(wrap);
  return box;
}

/**
 * A status line: a progress bar and a text that screen readers announce (role=status).
 * `show(text, progress)`: progress null hides the bar, a number in [0, max] fills it, and
 * 0 with no max makes it indeterminate (still working, amount unknown).
 * Returns {root, bar, text, show}.
 */
export function statusLine(className, barLabel) {
  const root = el("div", className);
  const bar = el("progress", "attn-lab__progress");
  bar.setAttribute("aria-label", barLabel);
  const text = el("span");
  text.setAttribute("role", "status");
  root.append(bar, text);
  const show = (message, progress = null, max = null) => {
    text.textContent = message;
    bar.hidden = progress === null;
    if (progress === null) return;
    if (max) {
      bar.max = max;
      bar.value = progress;
    } else bar.removeAttribute("value"); // indeterminate
  };
  return { root, bar, text, show };
}

/** A Material button of the explorer. */
export function button(text, className = "") {
  const b = el("button", `md-button attn-map__button ${className}`.trim(), text);
  b.type = "button";
  return b;
}
