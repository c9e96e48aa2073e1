// Pieces shared by the explorer's views: the head statistics each asset stores, number
// and model-name formatting, and its labelled pickers and buttons.
import { el } from "../ui/dom.js";

// Head statistics stored in each asset (build_scripts/precompute/precompute_attention.py).
export const STATS = {
  previous_token: {
    label: "Previous-token score",
    help: "mean weight a query gives the token just before it",
    high: true,
  },
  first_token: {
    label: "First-token score",
    help: "mean weight on the first token (often a resting place: an attention sink)",
    high: true,
  },
  self: { label: "Self score", help: "mean weight a query gives itself", high: true },
  induction: {
    label: "Induction score",
    help: "weight on the token after an earlier copy of the current token",
    high: true,
  },
  entropy_bits: {
    label: "Mean entropy (bits)",
    help: "how spread out each row is: 0 bits looks at one key; more bits, more keys",
    high: false,
  },
};
export const HINT =
  "Point at a cell, or focus the heatmap and use the arrow keys, to read its weight.";
export const fmt = (x, digits = 3) => (x === null || x === undefined ? "n/a" : x.toFixed(digits));
export const modelName = (id) => id.split("/").pop();

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

/** A Material button of the explorer. */
export function button(text, className = "") {
  const b = el("button", `md-button attn-map__button ${className}`.trim(), text);
  b.type = "button";
  return b;
}
