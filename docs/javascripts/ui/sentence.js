// The sentence controls shared by the lab widgets: `tokensField` (the "Tokens" text field,
// every lab with a reader's sentence) and, on it, the sentence and query-token pair of
// lessons 2, 5 and 6 (labs/query_picker.js, value_update.js, eight_heads.js, concat_wo.js).
//
//   const sentence = sentenceControls(kit, lab, {query: true});
//   sentence.render(result)   the field and the query picker follow result.tokens and
//                             result.query (the field only when the tokens drawn change,
//                             so a redraw never writes over a reader's typing)
//
// The tokens field is whitespace-separated text (applied on Enter or change); the query is
// a <select> of the sentence's tokens (text, never HTML). A shorter sentence keeps the query
// within it: the update that changes the tokens also moves the query to the last token.
import { el } from "./dom.js";

/**
 * The "Tokens" text field of a lab (whitespace-separated words, applied on Enter or change)
 * and its hint, limits from the schema. `changes(words)` gives the update for new words
 * (default `{tokens: words}`), so a lab can move an index into the new sentence in the same
 * update. Returns the <input>.
 */
export function tokensField(kit, lab, changes = (words) => ({ tokens: words })) {
  const tokens = kit.field("tokens", "Tokens", el("input"));
  tokens.type = "text";
  tokens.value = lab.params.tokens.join(" ");
  tokens.spellcheck = false;
  const tokSpec = kit.spec.tokens;
  const hint = el(
    "span",
    "attn-lab__hint",
    `Separate tokens with spaces (up to ${tokSpec.max_items}, each up to ${tokSpec.max_chars} characters); press Enter to apply.`,
  );
  hint.id = kit.id("tokens-hint");
  tokens.setAttribute("aria-describedby", hint.id);
  tokens.parentElement.after(hint);
  tokens.addEventListener("change", () =>
    lab.update(changes(tokens.value.trim().split(/\s+/).filter(Boolean))),
  );
  return tokens;
}

export function sentenceControls(kit, lab, { query = false } = {}) {
  const { field } = kit;
  let picker = null;
  const tokens = tokensField(kit, lab, (words) => {
    const changes = { tokens: words };
    if (picker && words.length && lab.params.query >= words.length)
      changes.query = words.length - 1;
    return changes;
  });

  let showQuery = null;
  if (query) {
    picker = field("query", "Query token", el("select"));
    picker.addEventListener("change", () => lab.update({ query: Number(picker.value) }));
    showQuery = tokenPicker(picker);
  }

  let drawnWords = null; // the first result always writes the field (over a restored value)
  function render(result) {
    const words = Array.from(result.tokens).join(" ");
    if (words !== drawnWords) {
      tokens.value = words;
      drawnWords = words;
    }
    showQuery?.(result.tokens, result.query);
  }

  return { tokens, picker, render };
}

/**
 * Keeps `select`'s options ("index: token", value the index) on a sentence: returns
 * show(tokens, picked), which makes new options only when the tokens differ from the last
 * ones shown (a new seed or size keeps them: rebuilt options restyle and lay out the
 * select again) and selects index `picked`.
 */
export function tokenPicker(select) {
  let shown = null; // the tokens of the options, as JSON
  return (tokens, picked) => {
    const key = JSON.stringify(Array.from(tokens));
    if (key !== shown) {
      select.replaceChildren(
        ...Array.from(tokens, (t, i) => {
          const option = el("option", null, `${i}: ${t}`);
          option.value = String(i);
          return option;
        }),
      );
      shown = key;
    }
    const value = String(picked);
    if (select.value !== value) select.value = value;
  };
}

/** A "New random ..." button that moves the lab's seed on by one. */
export function reseedButton(kit, lab, controls, text) {
  const button = el("button", "md-button attn-lab__reseed", text);
  button.type = "button";
  button.addEventListener("click", () =>
    lab.update({ seed: (lab.params.seed + 1) % kit.spec.seed.maximum }),
  );
  controls.append(button);
  return button;
}

/** A labelled whole-number input bound to parameter `name` (limits from the schema). */
export function integerField(kit, lab, name, label) {
  const p = kit.spec[name];
  const input = kit.field(name, label, el("input"));
  Object.assign(input, {
    type: "number",
    min: p.minimum,
    max: p.maximum,
    step: 1,
    value: lab.params[name],
  });
  input.addEventListener("change", () => kit.numberChanged(input, name));
  return input;
}
