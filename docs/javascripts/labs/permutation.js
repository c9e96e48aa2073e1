// Widget for the permutation lab (labs_py/attention_labs/labs/permutation.py): a sentence,
// a Shuffle button (a seeded shuffle, computed in Python), a token picker with buttons that
// move one token earlier or later, a position toggle, the pattern as written and shuffled
// (two heatmaps with their tables), and a live line with the largest difference between
// the shuffled results, un-permuted, and the original ones.
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { patternView } from "../ui/pattern-view.js";
import { integerField, reseedButton, tokensField } from "../ui/sentence.js";

/** A difference as the page writes it: 0, or scientific notation below 1e-3. */
export function fmtDiff(x) {
  if (x === 0) return "0";
  return x < 1e-3 ? x.toExponential(1) : x.toFixed(3);
}

/** Differences up to this size are float rounding (an exact reordering gives ~1e-16). */
const ROUNDING = 1e-9;

/**
 * The live line under the controls: it depends on whether the order differs from the one
 * as written (the identity leaves nothing to compare) and on the size of the differences.
 */
export function verdictText(res, positions) {
  const order = Array.from(res.order, Number);
  const pd = fmtDiff(res.pattern_diff);
  const od = fmtDiff(res.output_diff);
  const what = positions ? "With positions" : "Without positions";
  if (order.every((j, i) => j === i)) {
    return `${what}: the order is as written, so the shuffled sentence is the sentence itself and there is nothing to compare (largest difference ${pd}). Press Shuffle or move a token to see what a new order does.`;
  }
  const small = Math.max(res.pattern_diff, res.output_diff) <= ROUNDING;
  if (small) {
    return `${what}: un-permuting the shuffled pattern's rows and columns gives the original back, largest difference ${pd} (outputs: ${od}), float rounding only. Rows and columns moved with their tokens.`;
  }
  const why = positions
    ? "The head sees where each token is, so the new order changed the pattern for real, not only its layout."
    : "More than float rounding.";
  return `${what}: un-permuting the shuffled pattern leaves a largest difference of ${pd} from the original (outputs: ${od}). ${why}`;
}

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const { spec } = kit;
  let shown = null; // the last result drawn

  // New words: the explicit order no longer fits, so go back to the shuffle seed.
  tokensField(kit, lab, (words) => ({ tokens: words, order: [] }));

  const buttons = el("div", "attn-lab__inputs");
  const shuffle = el("button", "md-button attn-lab__reseed", "Shuffle");
  shuffle.type = "button";
  shuffle.addEventListener("click", () =>
    lab.update({ shuffle: (lab.params.shuffle % spec.shuffle.maximum) + 1, order: [] }),
  );
  const written = el("button", "md-button attn-lab__reseed", "Order as written");
  written.type = "button";
  written.addEventListener("click", () => lab.update({ shuffle: 0, order: [] }));
  buttons.append(shuffle, written);
  controls.append(buttons);

  // Move one token: pick it by its place in the shuffled sentence, then earlier / later.
  // Not a lab parameter, so not kit.field: the moves are sent as `order`.
  const moveWrap = el("div", "attn-lab__field attn-lab__field--move");
  const moveLabel = el("label", null, "Token to move");
  const picker = el("select");
  picker.id = kit.id("move");
  moveLabel.htmlFor = picker.id;
  picker.title = "A token of the shuffled sentence";
  const earlier = el("button", "md-button attn-lab__reseed", "Move earlier");
  const later = el("button", "md-button attn-lab__reseed", "Move later");
  const moveRow = el("div", "attn-lab__inputs");
  moveRow.append(picker, earlier, later);
  moveWrap.append(moveLabel, moveRow);
  controls.append(moveWrap);
  for (const b of [earlier, later]) b.type = "button";
  let pick = 0; // place, in the shuffled sentence, of the token being moved
  const edges = () => {
    // aria-disabled, not disabled: the button keeps the keyboard focus at the edge.
    earlier.setAttribute("aria-disabled", String(pick === 0));
    later.setAttribute("aria-disabled", String(shown !== null && pick === shown.order.length - 1));
  };
  picker.addEventListener("change", () => {
    pick = Number(picker.value);
    edges();
  });
  const move = (by) => {
    if (!shown) return;
    const order = Array.from(shown.order, Number);
    const to = pick + by;
    if (to < 0 || to >= order.length) return;
    [order[pick], order[to]] = [order[to], order[pick]];
    pick = to;
    lab.update({ order: order.map(String) });
  };
  earlier.addEventListener("click", () => move(-1));
  later.addEventListener("click", () => move(1));

  kit.toggle("positions", "Add position encodings");
  integerField(kit, lab, "d_head", "d_head");
  reseedButton(kit, lab, controls, "New random head");
  body.append(controls);

  const sentence = el("p", "attn-lab__cell attn-permutation__sentence");
  const verdict = el("p", "attn-lab__cell attn-permutation__verdict");
  verdict.setAttribute("aria-live", "polite");
  body.append(sentence, verdict);

  // The two patterns side by side where there is room, one above the other on a phone.
  const pair = el("div", "attn-permutation__pair");
  Object.assign(pair.style, { display: "flex", flexWrap: "wrap", gap: "0 1.5rem" });
  const colA = el("div");
  const colB = el("div");
  for (const col of [colA, colB]) {
    Object.assign(col.style, { flex: "1 1 18rem", minWidth: "0" });
    pair.append(col);
  }
  body.append(pair);
  const headA = el("p", "attn-permutation__title");
  colA.append(headA);
  const viewA = patternView(colA, {
    label:
      "Attention weights of the sentence as written: one row per query token, one column per key token. Focus and use the arrow keys to read cells.",
  });
  const headB = el("p", "attn-permutation__title");
  colB.append(headB);
  const viewB = patternView(colB, {
    label:
      "Attention weights of the shuffled sentence: one row per query token, one column per key token. Focus and use the arrow keys to read cells.",
  });

  function render(res) {
    shown = res;
    const order = Array.from(res.order, Number);
    const shuffledTokens = Array.from(res.shuffled_tokens);
    headA.textContent = `As written: “${res.tokens.join(" ")}”`;
    headB.textContent = `Shuffled: “${shuffledTokens.join(" ")}”`;
    sentence.textContent = `Shuffled order: tokens ${order.map((i) => i + 1).join(", ")} of the sentence as written.`;
    verdict.textContent = verdictText(res, lab.params.positions);
    viewA.render({ tokens: res.tokens, weights: res.weights, top_key: res.top_key });
    viewB.render({
      tokens: shuffledTokens,
      weights: res.shuffled_weights,
      top_key: res.shuffled_top_key,
    });
    pick = Math.min(pick, order.length - 1);
    picker.replaceChildren(
      ...shuffledTokens.map((t, i) => {
        const option = el("option", null, `${i + 1}: ${t}`);
        option.value = String(i);
        return option;
      }),
    );
    picker.value = String(pick);
    edges();
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    inputs: kit.inputs,
    controls,
    destroy: () => {
      viewA.destroy();
      viewB.destroy();
    },
  };
}
