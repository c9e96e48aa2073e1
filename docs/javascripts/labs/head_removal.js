// Widget for the head_removal lab (labs_py/attention_labs/labs/head_removal.py): the
// reader's letters, and the trained model's four heads as small heatmaps, each with a
// switch that removes it; what the model now predicts against the intact model (a live
// readout and a table of its next-letter guesses), and a table of each head removed alone.
// Text alternatives: each heatmap's label and a table of every head's scores and how much
// its pattern moved. Found by labs/controller.js by name.
import { Heatmap } from "../renderers/heatmap.js";
import { controlKit } from "../ui/controls.js";
import { dataTable } from "../ui/data-table.js";
import { el } from "../ui/dom.js";

const HEADS = [
  [0, 0],
  [0, 1],
  [1, 0],
  [1, 1],
];
const name = (layer, head) => `off_l${layer}h${head}`;
const pct = (x) => (x === null ? "—" : `${(100 * x).toFixed(0)}%`);
const nats = (x) => (x === null ? "—" : x.toFixed(2));
const score = (x) => (x === null ? "no repeat" : Number(x).toFixed(2));

export function mount(body, lab) {
  const controls = el("div", "attn-lab__controls");
  const kit = controlKit(lab, controls);
  const spec = kit.spec.tokens;
  const letters = kit.field("tokens", "Letters", el("input"));
  Object.assign(letters, { type: "text", spellcheck: false, value: lab.params.tokens.join("") });
  letters.setAttribute("autocapitalize", "characters");
  const hint = el(
    "span",
    "attn-lab__hint",
    `${spec.min_items} to ${spec.max_items} letters A to Z, one token each (spaces are ignored); press Enter to run.`,
  );
  hint.id = kit.id("tokens-hint");
  letters.setAttribute("aria-describedby", hint.id);
  letters.parentElement.after(hint);
  letters.addEventListener("change", () =>
    lab.update({ tokens: Array.from(letters.value.replace(/\s+/g, "")) }),
  );
  body.append(controls);

  const readout = el("p", "attn-lab__cell attn-removal__readout");
  readout.setAttribute("aria-live", "polite");
  body.append(readout);

  // The four heads, each with its switch above its map.
  const grid = el("div", "attn-heads attn-removal__heads");
  Object.assign(grid.style, {
    display: "grid", // two columns (a layer per row) where they fit, else one
    gridTemplateColumns: "repeat(auto-fit, minmax(min(100%, 300px), 1fr))",
    maxWidth: "44rem",
    gap: "0.8rem",
  });
  body.append(grid);
  const cellInfo = el("p", "attn-lab__cell");
  cellInfo.setAttribute("aria-live", "polite");
  cellInfo.textContent =
    "Click a cell of a head, or focus it and use the arrow keys, to read its weight.";
  body.append(cellInfo);

  let result = null;
  const panels = HEADS.map(([layer, head], i) => {
    const figure = el("figure", "attn-heads__head");
    figure.style.margin = "0";
    const caption = el("figcaption");
    caption.style.fontSize = "0.65rem";
    const box = el("div");
    const toggle = kit.toggle(name(layer, head), `Switch off layer ${layer}, head ${head}`);
    figure.append(toggle.closest(".attn-lab__field"), caption, box);
    grid.append(figure);
    const heatmap = new Heatmap(box, {
      label: `Layer ${layer}, head ${head}: attention weights on your letters, one row per query, one column per key. Use the arrow keys to read cells.`,
      onSelect: (q, k) => {
        const t = result.tokens;
        const h = result.heads[i];
        const w = Number(h.weights[q][k]);
        cellInfo.textContent =
          k > q
            ? `Layer ${layer}, head ${head}: query “${t[q]}” (${q}) cannot see key “${t[k]}” (${k}): causal mask.`
            : `Layer ${layer}, head ${head}${h.off ? " (switched off)" : ""}: query “${t[q]}” (${q}) → key “${t[k]}” (${k}): weight ${w.toFixed(4)}.`;
      },
    });
    return { caption, heatmap, toggle };
  });

  const guesses = dataTable({
    label: "The model's guess of the next letter after each letter",
    className: "attn-lab__rows attn-removal__guesses",
  });
  const heads = dataTable({ label: "Every head now", className: "attn-lab__rows" });
  const alone = dataTable({ label: "Each head removed alone", className: "attn-lab__rows" });
  body.append(guesses.root, heads.root, alone.root);

  function render(res) {
    result = res;
    const t = res.tokens;
    letters.value = t.join("");
    const off = res.heads.filter((h) => h.off).map((h) => `layer ${h.layer}, head ${h.head}`);
    const who = off.length ? `With ${off.join(" and ")} switched off` : "With every head on";
    readout.textContent =
      res.copy_accuracy === null
        ? `${who}. No letter repeats, so there is nothing to copy: repeat a stretch of letters.`
        : `${who}, the model continues the repeat right ${pct(res.copy_accuracy)} of the time ` +
          `(intact: ${pct(res.intact.copy_accuracy)}); its loss on those letters is ` +
          `${nats(res.loss)} nats (intact: ${nats(res.intact.loss)}; a uniform guess: ` +
          `${nats(res.chance_loss)}).`;
    const masked = Array.from(res.masked, (row) => Array.from(row, Boolean));
    panels.forEach(({ caption, heatmap, toggle }, i) => {
      const h = res.heads[i];
      toggle.checked = h.off;
      const moved = h.changed > 5e-4 ? `moved by up to ${h.changed.toFixed(2)}` : "unchanged";
      caption.textContent =
        `Layer ${h.layer}, head ${h.head}${h.off ? " (off: output removed)" : ""} · ` +
        `induction ${score(h.induction)} · previous token ${score(h.previous_token)} · ${moved}`;
      heatmap.setData({
        rowLabels: t,
        colLabels: t,
        values: Array.from(h.weights, (r) => Array.from(r, Number)),
        masked,
        rowNotes: null,
      });
    });
    const p = res.p_right.map((x) => (x === null ? "—" : Number(x).toFixed(2)));
    guesses.fill({
      caption: "Next letter, as the model now guesses it",
      rows: [
        ["Letter", ...t],
        ["Next, guessed", ...res.predicted],
        ["P(right letter)", ...p],
      ],
    });
    heads.fill({
      caption: "Every head now: its scores, and how far its pattern moved from the intact model",
      columns: ["Head", "Switched off", "Induction", "Previous token", "Largest change"],
      rows: res.heads.map((h) => [
        `layer ${h.layer}, head ${h.head}`,
        h.off ? "yes" : "no",
        score(h.induction),
        score(h.previous_token),
        h.changed.toFixed(3),
      ]),
    });
    alone.fill({
      caption: "Each head removed alone (the others on)",
      columns: ["Removed", "Continues the repeat right", "Loss (nats)"],
      rows: [
        ["none (intact)", pct(res.intact.copy_accuracy), nats(res.intact.loss)],
        ...res.single.map((s) => [
          `layer ${s.layer}, head ${s.head}`,
          pct(s.copy_accuracy),
          nats(s.loss),
        ]),
      ],
    });
  }

  return {
    render,
    controls,
    inputs: kit.inputs,
    markInvalid: kit.markInvalid,
    heatmaps: panels.map((p) => p.heatmap),
    destroy: () => {
      for (const p of panels) p.heatmap.destroy();
    },
  };
}
