// Widget for the cross_attention lab (labs_py/attention_labs/labs/cross_attention.py):
// a translation pair shown as tokens (target = queries, source = keys and values), the
// rectangular [target query, source key] pattern (ui/pattern-view.js: heatmap, cell
// readout, table), the chosen query's row as bars (renderers/bar_chart.js, with its hidden
// table), the decoder's causal self-attention beside it for comparison, and a live
// summary of the masks, the row sums and the shapes. Tokens are text, never HTML.
import { barChart } from "../renderers/bar_chart.js";
import { controlKit } from "../ui/controls.js";
import { el } from "../ui/dom.js";
import { patternView } from "../ui/pattern-view.js";
import { integerField, reseedButton, tokenPicker } from "../ui/sentence.js";

/** A select for choice parameter `name`. */
function choiceInput(kit, lab, name, label) {
  const p = kit.spec[name];
  const select = kit.field(name, label, el("select"));
  for (const choice of p.choices) {
    const option = el("option", null, p.labels[choice] || choice);
    option.value = choice;
    select.append(option);
  }
  select.value = lab.params[name];
  return select;
}

/** One line of tokens as chips: "Source (English): the black cat ...". A new drawing
 * keeps the chips and writes only the text and classes that differ (a new seed changes
 * none of them). */
function tokenLine(className) {
  const line = el("p", `attn-cross__tokens ${className}`);
  const name = el("span", "attn-cross__side");
  const list = el("span", "attn-cross__list");
  line.append(name, list);
  return {
    line,
    show(label, tokens, marks) {
      if (name.textContent !== label) name.textContent = label;
      const chips = list.children;
      tokens.forEach((t, i) => {
        const chip = chips[i] || list.appendChild(el("span"));
        if (chip.textContent !== t) chip.textContent = t;
        const cls = `attn-cross__chip${marks?.[i] ? ` ${marks[i]}` : ""}`;
        if (chip.className !== cls) chip.className = cls;
      });
      while (chips.length > tokens.length) list.lastElementChild.remove();
    },
  };
}

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const pair = choiceInput(kit, lab, "pair", "Translation pair");
  const query = kit.field("query", "Target query (row)", el("select"));
  kit.temperature();
  integerField(kit, lab, "pad", "PAD tokens after the source");
  kit.toggle("source_padding_mask", "Source padding mask (hide PAD keys)");
  kit.toggle("causal", "Causal mask in cross-attention (a mistake)");
  const preset = choiceInput(kit, lab, "preset", "Queries");
  reseedButton(kit, lab, controls, "New random weights");
  body.append(controls);
  const showQuery = tokenPicker(query);
  let lengths = {}; // each pair's number of target tokens, from the result
  let lastQuery = null;

  // A new pair may be shorter: keep the query inside it in the same update.
  pair.addEventListener("change", () => {
    const changes = { pair: pair.value };
    const n = lengths[pair.value];
    if (n && lab.params.query >= n) changes.query = n - 1;
    lab.update(changes);
  });
  query.addEventListener("change", () => lab.update({ query: Number(query.value) }));
  preset.addEventListener("change", () => lab.update({ preset: preset.value }));

  const source = tokenLine("attn-cross__source");
  const target = tokenLine("attn-cross__target");
  body.append(source.line, target.line);

  const summary = el("p", "attn-lab__summary attn-cross__summary");
  summary.setAttribute("aria-live", "polite");
  body.append(summary);

  body.append(el("p", "attn-cross__title", "Cross-attention: target queries × source keys"));
  const cross = patternView(body, {
    label:
      "Cross-attention weights: one row per target token (query), one column per source token (key); masked cells are blank. Focus and use the arrow keys to read cells.",
  });

  const barsBox = el("div", "attn-lab__figure");
  body.append(barsBox);
  const bars = barChart(barsBox, {
    label: "The chosen target query's weights on each source key (its row of the pattern)",
    valueLabel: "weight",
    format: (v) => v.toFixed(3),
    domain: [0, 1],
  });

  body.append(
    el("p", "attn-cross__title", "For comparison: the decoder's self-attention (causal)"),
  );
  const self = patternView(body, {
    label:
      "The decoder's causal self-attention on the target: one row and one column per target token; cells above the diagonal are masked. Focus and use the arrow keys to read cells.",
  });

  const shapes = el("p", "attn-lab__cell attn-cross__shapes");
  body.append(shapes);

  function render(res) {
    const t = res.tokens;
    const kt = res.key_tokens;
    const [srcLang, tgtLang] = res.languages;
    lengths = res.target_lengths;
    showQuery(t, res.query);
    const hidden = new Set(res.unseen_keys);
    source.show(
      `Source (${srcLang}): keys and values`,
      kt,
      kt.map((_, j) => (hidden.has(j) ? "attn-cross__chip--hidden" : "")),
    );
    target.show(
      `Target (${tgtLang}): queries`,
      t,
      t.map((_, i) => (i === res.query ? "attn-cross__chip--query" : "")),
    );

    cross.render(res);
    self.render(res.self);
    // A new query row: select its top key (the cell readout names it); else keep the cell.
    if (res.query !== lastQuery || !cross.heatmap.selected)
      cross.heatmap.select(res.query, res.top_key[res.query]);
    lastQuery = res.query;

    bars.update({
      bars: kt.map((token, j) => ({
        label: `${j}: ${token}`,
        value: Number(res.weights[res.query][j]),
        highlight: j === res.top_key[res.query],
      })),
    });

    const sums = Array.from(res.row_sums, Number);
    const allOne = sums.every((s) => Math.abs(s - 1) < 1e-9);
    const q = res.query;
    const masks = [];
    if (res.source_padding_mask) masks.push("The source padding mask hides the PAD keys");
    else if (kt.includes("PAD")) masks.push("No padding mask: the PAD keys take weight");
    if (res.causal)
      masks.push(`${masks.length ? "a" : "A"} causal mask (wrongly) hides later source keys`);
    const unseen = res.unseen_keys.map((j) => kt[j]);
    summary.textContent =
      `${t.length} target queries × ${kt.length} source keys. ` +
      `${masks.length ? `${masks.join("; ")}. ` : ""}` +
      `${allOne ? "Every row sums to 1" : "Not every row sums to 1"}; ` +
      `${unseen.length ? unseen.length : "no"} source key${unseen.length === 1 ? "" : "s"} that no query can read` +
      `${unseen.length ? ` (${unseen.join(", ")})` : ""}. ` +
      `Query “${t[q]}”: top key “${kt[res.top_key[q]]}”, weight ${Number(res.weights[q][res.top_key[q]]).toFixed(3)}` +
      `${res.preset === "aligned" ? " (aligned by construction)." : " (random weights: not an alignment)."}`;
    shapes.textContent = res.shapes
      .map((s) => `${s.name} (${s.shape.join(" × ")}): ${s.note}`)
      .join(" · ");
  }

  return {
    render,
    markInvalid: kit.markInvalid,
    heatmap: cross.heatmap,
    selfHeatmap: self.heatmap,
    inputs: kit.inputs,
    controls,
    summary,
    destroy() {
      cross.destroy();
      self.destroy();
      bars.destroy();
    },
  };
}
