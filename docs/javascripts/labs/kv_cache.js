// Widget for the kv_cache lab (labs_py/attention_labs/labs/kv_cache.py): the sentence, a
// step control (previous / next / slider), n_heads, n_kv_heads and d_head; the cache of one
// key/value head as a growing table (rows cached, the new row, rows not generated yet) with
// the weights of the query heads that read it; at every step the largest difference from
// full causal attention; and what the step computed. Tables only: they are the picture and
// its text alternative at once.
import { controlKit } from "../ui/controls.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";
import { integerField, reseedButton, tokensField } from "../ui/sentence.js";

const HEADS = [1, 2, 4, 8];
// Two decimals with a true minus sign; a value that rounds to zero is shown as 0.00.
const num = (x) => (x <= -0.005 ? `−${(-x).toFixed(2)}` : Math.abs(x).toFixed(2));
const vec = (row) => `(${Array.from(row, num).join(", ")})`;
const int = (n) => Math.round(n).toLocaleString("en-US");
// A difference in scientific notation; an exact zero (the browser's NumPy often gets one) as 0.
const rows = (n) => `${n} key row${n > 1 ? "s" : ""} and ${n} value row${n > 1 ? "s" : ""}`;
const sci = (x) => (x === 0 ? "0" : x.toExponential(1));

/** A weight as its number and a bar of that length (the bar is decoration). */
function weightCell(w) {
  const wrap = el("span");
  wrap.style.cssText = "display: inline-flex; align-items: center; gap: 0.4em;";
  const bar = el("span");
  bar.setAttribute("aria-hidden", "true");
  bar.style.cssText =
    "display: inline-block; height: 0.7em; background: var(--md-default-fg-color--light);" +
    ` width: ${(2 * w).toFixed(2)}em;`;
  wrap.append(el("span", null, w.toFixed(3)), bar);
  return wrap;
}

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const { field } = kit;

  // The sentence: a change keeps the step inside it, in the same update.
  const tokens = tokensField(kit, lab, (words) => {
    const changes = { tokens: words };
    if (words.length && lab.params.step >= words.length) changes.step = words.length - 1;
    return changes;
  });

  // The step: previous / next and a slider over the sentence.
  const stepper = kit.stepper("step", {
    label: "Step",
    previous: "Previous step",
    next: "Next step",
  });

  // Heads: n_heads from 1, 2, 4, 8; n_kv_heads from its divisors (kept valid in one update).
  const nHeads = field("n_heads", "n_heads (query heads)", el("select"));
  for (const h of HEADS) {
    const o = el("option", null, String(h));
    o.value = String(h);
    nHeads.append(o);
  }
  const nKv = field("n_kv_heads", "n_kv_heads (key/value heads)", el("select"));
  const fillKv = (h, kv) => {
    nKv.replaceChildren(
      ...HEADS.filter((k) => k <= h && h % k === 0).map((k) => {
        const label = k === h ? `${k} (MHA)` : k === 1 ? "1 (MQA)" : `${k} (GQA)`;
        const o = el("option", null, label);
        o.value = String(k);
        return o;
      }),
    );
    nKv.value = String(kv);
  };
  nHeads.addEventListener("change", () => {
    const h = Number(nHeads.value);
    // keep the kind of sharing: MHA stays MHA, otherwise the largest divisor not above it
    let kv = lab.params.n_kv_heads === lab.params.n_heads ? h : Math.min(lab.params.n_kv_heads, h);
    while (h % kv) kv -= 1;
    lab.update({ n_heads: h, n_kv_heads: kv });
  });
  nKv.addEventListener("change", () => lab.update({ n_kv_heads: Number(nKv.value) }));
  integerField(kit, lab, "d_head", "d_head");

  // Which key/value head's cache the table shows (the widget's own choice, not a parameter).
  const showKv = el("select");
  showKv.id = kit.id("show_kv");
  const showWrap = el("div", "attn-lab__field");
  const showLabel = el("label", null, "Show the cache of key/value head");
  showLabel.htmlFor = showKv.id;
  const showRow = el("div", "attn-lab__inputs");
  showRow.append(showKv);
  showWrap.append(showLabel, showRow);
  controls.append(showWrap);
  let shownKv = 0;
  showKv.addEventListener("change", () => {
    shownKv = Number(showKv.value);
    if (shown) drawCache(shown);
  });
  reseedButton(kit, lab, controls, "New random weights");
  body.append(controls);

  const status = el("p", "attn-lab__cell");
  status.setAttribute("aria-live", "polite");
  const cache = dataTable({
    label: "The cache as a table: which key and value rows exist at this step",
  });
  cache.table.style.fontSize = "0.7rem"; // nine columns with MQA and 4 query heads: fit 1280 px
  // When the table is still wider than its box (a phone, 8 query heads), say that it scrolls.
  const scrollHint = el(
    "p",
    "attn-lab__hint",
    "The table is wider than the page: scroll it sideways (or focus it and use the arrow keys) to see every column.",
  );
  scrollHint.hidden = true;
  const work = el("p", "attn-lab__cell");
  const check = dataTable({ label: "Cached against full causal attention, at every step" });
  body.append(status, scrollHint, cache.root, work, check.root);
  let shown = null;

  function drawCache(r) {
    const t = r.step;
    const g = Math.min(shownKv, r.n_kv_heads - 1);
    const readers = r.kv_head_of.flatMap((kv, h) => (kv === g ? [h] : []));
    const trs = cache.fill({
      caption: `The cache of key/value head ${g + 1} of ${r.n_kv_heads} after step ${t + 1}, and the weights w of the query ${readers.length > 1 ? "heads that read it" : "head that reads it"} (key and value rows have d_head = ${r.d_head} numbers)`,
      columns: [
        "Position",
        "Token",
        "In the cache",
        "Key k",
        "Value v",
        ...readers.map((h) => `w, head ${h + 1}`),
      ],
      rows: r.tokens.map((token, j) => {
        const state = j < t ? "cached" : j === t ? "new: appended" : "not generated yet";
        const row = [String(j + 1), token, state];
        if (j > t) return [...row, ...Array(2 + readers.length).fill("—")];
        return [
          ...row,
          vec(r.K_cache[g][j]),
          vec(r.V_cache[g][j]),
          ...readers.map((h) => weightCell(r.weights[h][j])),
        ];
      }),
    });
    trs.forEach((tr, j) => {
      if (j === t) tr.style.fontWeight = "700";
      else if (j > t) tr.style.fontStyle = "italic"; // not generated yet (a lighter colour fails contrast)
    });
    fitCache();
  }

  // The hint, and a caption no wider than the box (left-aligned, so it wraps in view).
  function fitCache() {
    const caption = cache.table.querySelector("caption");
    if (caption) {
      caption.style.textAlign = "left";
      caption.style.maxWidth = `${cache.root.clientWidth}px`;
    }
    scrollHint.hidden = cache.root.scrollWidth <= cache.root.clientWidth + 1;
  }
  const resize = new ResizeObserver(() => fitCache());
  resize.observe(cache.root);

  function render(r) {
    shown = r;
    const t = r.step;
    const nSteps = r.tokens.length;
    stepper.show(t, nSteps, `step ${t + 1} of ${nSteps}: ${r.tokens[t]}`);
    tokens.value = r.tokens.join(" ");
    nHeads.value = String(r.n_heads);
    fillKv(r.n_heads, r.n_kv_heads);
    kit.inputs.d_head.value = r.d_head;
    showKv.replaceChildren(
      ...Array.from({ length: r.n_kv_heads }, (_, g) => {
        const o = el("option", null, String(g + 1));
        o.value = String(g);
        return o;
      }),
    );
    shownKv = Math.min(shownKv, r.n_kv_heads - 1);
    showKv.value = String(shownKv);
    const kind =
      r.n_kv_heads === r.n_heads
        ? "multi-head attention: every query head has its own key/value head"
        : r.n_kv_heads === 1
          ? `multi-query attention: all ${r.n_heads} query heads share one key/value head`
          : `grouped-query attention: each key/value head is shared by ${r.group} query heads`;
    status.textContent =
      `Step ${t + 1} of ${nSteps}: “${r.tokens[t]}” is the new token. Its key and value rows are appended, ` +
      `so the cache holds ${t + 1} row${t ? "s" : ""} ${r.n_kv_heads > 1 ? `for each of the ${r.n_kv_heads} key/value heads` : "for its one key/value head"} (${kind}); ` +
      `its ${r.n_heads} query row${r.n_heads > 1 ? "s" : ""} attend${r.n_heads > 1 ? "" : "s"} to all ${t + 1} cached keys.`;
    drawCache(r);
    const diff = r.diffs[t];
    work.textContent =
      `This step projected ${rows(r.kv_rows.with_cache)} (one per key/value head); ` +
      `without the cache it would project ${rows(r.kv_rows.without_cache)}. Both ways its query rows take ` +
      `${int(r.scores)} dot products with the ${t + 1} keys. The cache holds 2 × ${r.n_kv_heads} × ${t + 1} × ${r.d_head} = ` +
      `${int(r.cache_floats[t])} numbers. Largest |cached − full| at this step: ${sci(diff)}.`;
    const steps = check.fill({
      caption:
        "Largest difference between each cached step and the same row of full causal attention (all heads, float64)",
      columns: ["Step", "Token", "Keys in the cache", "Largest |cached − full|"],
      rows: r.tokens.map((token, j) => [String(j + 1), token, String(j + 1), sci(r.diffs[j])]),
    });
    steps[t].style.fontWeight = "700";
    steps[t].setAttribute("aria-current", "step");
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    inputs: kit.inputs,
    controls,
    destroy: () => resize.disconnect(),
  };
}
