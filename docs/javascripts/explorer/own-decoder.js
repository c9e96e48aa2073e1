// The decoder's part of "Your own sentence": SmolLM2-135M-Instruct token by token
// (labs_py/attention_labs/models/own_decoder.py, run in the Python worker by the panel of
// own-sentence.js). After a Run it shows what the model predicts next (the 10 most likely
// tokens, each a button that adds it), "Next token" and "Generate" (greedy, or sampled with
// a temperature, top-k and a seed), the KV cache's bytes as measured against lesson 9's
// formula, the newest token's first-token share, heads to switch off (one, a layer, or
// lesson 12's induction heads) and a repeated random sequence on which switching the
// induction heads off shows the copy failing. It computes nothing itself: every number
// comes from the worker's answer.
import { el } from "../ui/dom.js";
import { button } from "./parts.js";

const count = (n) => n.toLocaleString("en");
const pct = (p) => `${(100 * p).toFixed(p < 0.001 ? 2 : 1)}%`;

/** A token's text as a reader sees it: in quotes, a newline as ↵, a tab as →. */
export function shownToken(text) {
  return `“${text.replace(/\r?\n/g, "↵").replace(/\t/g, "→")}”`;
}

// Common nouns for the repeated random sequence (each one token with its leading space in
// SmolLM2's vocabulary, so the repeat is exact).
const WORDS = [
  "river",
  "bottle",
  "silver",
  "garden",
  "pencil",
  "window",
  "monkey",
  "rocket",
  "yellow",
  "planet",
  "anchor",
  "marble",
  "lantern",
  "pepper",
  "candle",
  "thunder",
  "velvet",
  "violet",
  "forest",
  "castle",
  "doctor",
  "island",
  "jacket",
  "kitchen",
  "ladder",
  "mirror",
  "needle",
  "orange",
  "pillow",
  "rabbit",
  "saddle",
  "tunnel",
  "wallet",
  "button",
  "carpet",
  "dragon",
];

/** Ten different words from WORDS, drawn with `seed`, written twice. */
export function repeatedWords(seed, n = 10) {
  let s = (seed >>> 0) + 1;
  const rand = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0; // a linear congruential generator
    return s / 2 ** 32;
  };
  const pool = [...WORDS];
  const picked = [];
  while (picked.length < n) picked.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]);
  const once = picked.join(" ");
  return `${once} ${once}`;
}

function numberField(parent, id, label, value, { min, max, step }) {
  const wrap = el("div", "attn-own__field");
  const lbl = el("label", null, label);
  lbl.htmlFor = id;
  const input = el("input");
  input.type = "number";
  input.id = id;
  Object.assign(input, { min, max, step, value });
  wrap.append(lbl, input);
  parent.append(wrap);
  return input;
}

export class DecoderView {
  /**
   * @param {string} id a unique prefix for element ids
   * @param {object} decoder the build's config (own.decoder: max_new, induction_heads, ...)
   * @param {{step(action, extra), repeat(text)}} actions what the buttons ask the panel
   */
  constructor(id, decoder, actions) {
    this.decoder = decoder;
    this.actions = actions;
    this.root = el("div", "attn-own__decoder");
    this.root.hidden = true;

    this.nextTitle = el("p", "attn-own__subtitle", "Next token");
    this.nextTitle.id = `${id}-next`;
    this.nextList = el("ol", "attn-own__next");
    this.nextList.setAttribute("aria-labelledby", this.nextTitle.id);

    const steps = el("div", "attn-own__steps");
    this.nextButton = button("Next token", "attn-own__step");
    this.nextButton.addEventListener("click", () => actions.step("next", { token: -1 }));
    this.generateButton = button(`Generate ${Math.min(20, decoder.max_new)}`, "attn-own__generate");
    this.generateButton.addEventListener("click", () =>
      actions.step("generate", { n_new: Math.min(20, decoder.max_new) }),
    );
    steps.append(this.nextButton, this.generateButton);

    const picking = el("fieldset", "attn-own__picking");
    picking.append(el("legend", null, "How the model picks (temperature 0: the most likely)"));
    this.temperature = numberField(picking, `${id}-temperature`, "Temperature", 0, {
      min: 0,
      max: 5,
      step: 0.1,
    });
    this.topK = numberField(picking, `${id}-topk`, "Top-k (0: all)", 0, {
      min: 0,
      max: 1000,
      step: 1,
    });
    this.seed = numberField(picking, `${id}-seed`, "Seed", 0, {
      min: 0,
      max: 2 ** 31 - 1,
      step: 1,
    });

    const heads = el("div", "attn-own__heads");
    const hl = el("label", null, "Heads off");
    hl.htmlFor = `${id}-heads`;
    this.headsOff = el("input", "attn-own__heads-off");
    this.headsOff.id = `${id}-heads`;
    this.headsOff.type = "text";
    this.headsOff.placeholder = "e.g. 17.3, 18.6 or 17 (a whole layer) or induction";
    const hint = el(
      "p",
      "attn-own__hint",
      `Layer.head from 0.0 to ${decoder.n_layers - 1}.${decoder.n_heads - 1}, a layer number, or “induction” (lesson 12's heads ${decoder.induction_heads.map(([l, h]) => `${l}.${h}`).join(", ")}): each output is multiplied by 0 from the next Run or step on.`,
    );
    hint.id = `${id}-heads-hint`;
    this.headsOff.setAttribute("aria-describedby", hint.id);
    this.inductionButton = button("Lesson 12's induction heads off", "attn-own__induction");
    this.inductionButton.addEventListener("click", () => {
      this.headsOff.value = "induction";
    });
    this.repeatButton = button("Repeated random words", "attn-own__repeat");
    this.repeatButton.addEventListener("click", () =>
      actions.repeat(repeatedWords(Number(this.seed.value) || 0)),
    );
    heads.append(hl, this.headsOff, hint, this.inductionButton, this.repeatButton);

    this.facts = el("dl", "attn-own__facts");
    this.root.append(this.nextTitle, this.nextList, steps, picking, heads, this.facts);
    this.buttons = [this.nextButton, this.generateButton];
  }

  /** What the next request sends besides the text and the action. */
  params() {
    const num = (input, lo, hi) => Math.min(hi, Math.max(lo, Number(input.value) || 0));
    return {
      temperature: num(this.temperature, 0, 5),
      top_k: Math.round(num(this.topK, 0, 1000)),
      seed: Math.round(num(this.seed, 0, 2 ** 31 - 1)),
      heads_off: this.headsOff.value.trim(),
    };
  }

  /** While a request runs the step buttons are off; at the length cap they stay off. */
  set busy(on) {
    for (const b of [...this.buttons, ...this.nextList.querySelectorAll("button")])
      b.disabled = on || this.full;
  }

  _fact(term, text) {
    this.facts.append(el("dt", null, term), el("dd", null, text));
  }

  /** Draw the answer of own_decoder.compute. */
  show(result) {
    this.root.hidden = false;
    const full = result.ids.length >= this.decoder.max_tokens;
    this.full = full;
    this.nextList.replaceChildren(
      ...result.next.map(({ id, text, p }) => {
        const li = el("li");
        const shown = `${shownToken(text)} ${pct(p)}`;
        const b = button(shown, "attn-own__token");
        b.dataset.id = String(id);
        b.setAttribute("aria-label", `Add ${shown}`); // the visible text, as axe asks
        b.disabled = full;
        b.addEventListener("click", () => this.actions.step("next", { token: id }));
        li.append(b);
        return li;
      }),
    );
    this.nextTitle.textContent = `Next token after “…${result.pieces.slice(-3).join("")}”: the model's 10 most likely (press one to add it)`;
    for (const b of this.buttons) b.disabled = full;
    this.facts.replaceChildren();
    const c = result.cache;
    this._fact(
      "KV cache",
      `${count(c.bytes)} bytes for ${c.tokens} tokens, measured on the arrays: ${c.formula} = ${count(c.bytes_per_token * c.tokens)}, ${count(c.bytes_per_token)} bytes a token (lesson 9's formula, in float32).`,
    );
    const newest = result.pieces[result.pieces.length - 1];
    this._fact(
      "First-token share",
      `The newest token, ${shownToken(newest)}, puts ${pct(result.sink.share)} of its attention on the first token, <|endoftext|> (mean over all ${this.decoder.n_layers * this.decoder.n_heads} heads); the grid's “First-token share” gives every head's over all tokens.`,
    );
    const generated = result.pieces.slice(result.n_prompt);
    if (generated.length)
      this._fact(
        "Added",
        `${generated.length} token${generated.length > 1 ? "s" : ""}: ${generated.map(shownToken).join(" ")}${result.stopped ? " (stopped at an end token)" : ""}. The head view shows the newest token's row.`,
      );
    if (result.copy)
      this._fact(
        "Copying",
        `At the ${result.copy.queries} tokens whose next token followed an earlier copy of them, the model's most likely next token is that one ${pct(result.copy.accuracy)} of the time (mean probability ${pct(result.copy.probability)}).`,
      );
    this._fact(
      "Heads off",
      result.heads_off.length
        ? `${result.heads_off.length}: ${result.heads_off.map(([l, h]) => `${l}.${h}`).join(", ")}`
        : "none",
    );
    if (full)
      this._fact(
        "Length",
        `The text has reached ${this.decoder.max_tokens} tokens, the most the explorer keeps: press Run to start again.`,
      );
  }
}
